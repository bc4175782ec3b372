"""The TUI is always a client: `run` and `attach` start a host process (a
daemon) and join it. Quitting ends what the TUI started and leaves what it
joined; a TUI killed outright leaves its session to the host, which a second
TUI can rejoin and which ends it once no client has come back within a grace
(orphan_grace_s); SIGTERM and SIGHUP quit as the person would. Nothing outlives the host.
The real executable runs in a pseudo-terminal here, as a person runs it."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from backends.process import pid_alive
from tests.support import processes_tagged
from tests.support.tui import wait_until
from tui_debugger import paths
from tui_debugger.tui.app import create_app

pytestmark = pytest.mark.usefixtures("no_leftover_daemons")

PROGRAM = """\
import time
n = 0
while True:
    n += 1  # loop
    time.sleep(0.05)
"""


def program(tmp_path: Path) -> Path:
    path = tmp_path / "spin.py"
    path.write_text(PROGRAM)
    return path


def cli(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def host_pid(name: str) -> int:
    return next(s.pid for s in paths.live_sessions() if s.name == name)


def wait_for(predicate, timeout: float, what) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, \
            f"timed out after {timeout} s waiting for {what() if callable(what) else what}"
        time.sleep(0.05)


class Terminal:
    """The real `tui-debugger` in a pseudo-terminal, its screen drained so it
    never blocks on a full terminal."""

    def __init__(self, *args: str, cwd: Path) -> None:
        master, slave = pty.openpty()
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
        self.proc = subprocess.Popen([sys.executable, "-m", "tui_debugger", *args], cwd=cwd,
                                     stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True)
        os.close(slave)
        self.master = master
        self.screen = bytearray()
        self._stop = threading.Event()
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            if not select.select([self.master], [], [], 0.1)[0]:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.screen += chunk

    def hang_up(self) -> None:
        """The terminal's other end closes, as a window does. The drain stops
        first: a read blocked on the master keeps it open after a close."""
        self._stop.set()
        self._drain.join(timeout=5)
        os.close(self.master)
        self.master = -1

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        if self.master >= 0:
            os.close(self.master)


@pytest.fixture
def terminals():
    opened: list[Terminal] = []
    yield lambda *args, cwd: opened.append(Terminal(*args, cwd=cwd)) or opened[-1]
    for terminal in opened:
        terminal.close()


def session_stopped(cwd: Path, session: str | None = None) -> bool:
    """The session (default: the one of `cwd`'s project) is stopped."""
    status = cli("status", "--json", *(["--session", session] if session else []), cwd=cwd,
                 timeout=30)
    return status.returncode == 0 and '"state": "stopped"' in status.stdout


async def test_quitting_ends_what_it_started_and_leaves_what_it_joined(tmp_path):
    tui = _mine_beside_joined(tmp_path)
    async with tui.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: tui.state == "stopped", what="the entry stop")
        # The TUI hosts nothing: its session lives in a daemon of its own.
        mine = host_pid("mine")
        assert mine != os.getpid() and pid_alive(mine)
        await tui.switch_session("joined")
        await wait_until(pilot, lambda: tui.link.name == "joined" and tui.state == "stopped",
                         what="the joined session")
        await tui.action_quit()
    wait_for(lambda: not pid_alive(mine), 10, "the host of the TUI's session to exit")
    assert [s.name for s in paths.live_sessions()] == ["joined"]
    assert session_stopped(tmp_path)
    assert cli("stop", "--session", "joined", cwd=tmp_path).returncode == 0


def _mine_beside_joined(tmp_path: Path):
    """A session "joined" started by the CLI, stopped on entry, and a TUI that
    will launch its own ("mine") of the same program."""
    prog = program(tmp_path)
    joined = cli("start", "--session", "joined", "--stop-on-entry", str(prog), cwd=tmp_path)
    assert joined.returncode == 0, joined.stderr
    return create_app("launch", {"program": str(prog), "stop_on_entry": True,
                                 "session_name": "mine"}, None, cwd=str(tmp_path))


async def test_a_switch_that_lands_while_the_tui_closes_is_dropped(tmp_path, monkeypatch):
    """A child's stop or end switches the screen to another session; one whose
    join answers while the app closes (the end of a test, a quit) found its
    panes gone and failed the app with "No nodes match 'SourceView'". It is
    dropped, and the sessions end or stay as quitting leaves them."""
    import asyncio

    from tui_debugger.tui import session_link

    tui = _mine_beside_joined(tmp_path)
    real_join = session_link.join
    joins: list[str] = []

    async def join_answering_as_the_app_closes(name, *args, **kwargs):
        link = await real_join(name, *args, **kwargs)
        if name == "joined":
            joins.append(name)
            try:
                while tui.is_running:  # the join answers once the app has begun closing
                    await asyncio.sleep(0.01)
            except BaseException:
                # Cancelled with the app's workers, as a real join cancelled
                # while it connects closes its connection (RemoteSession.connect):
                # left open, the "joined" host waited for this client after `stop`.
                await link.close()
                raise
        return link

    monkeypatch.setattr(session_link, "join", join_answering_as_the_app_closes)
    async with tui.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: tui.state == "stopped", what="the entry stop")
        mine = host_pid("mine")
        tui.run_worker(tui.switch_session("joined"), group="switch")
        await wait_until(pilot, lambda: joins, what="the switch's join")
    wait_for(lambda: not pid_alive(mine), 10, "the host of the TUI's session to exit")
    assert [s.name for s in paths.live_sessions()] == ["joined"]
    assert session_stopped(tmp_path)
    assert cli("stop", "--session", "joined", cwd=tmp_path).returncode == 0


async def test_a_quit_during_a_switch_closes_the_connection_it_was_leaving(tmp_path):
    """A quit that cancels a switch after its sync, before it has left the
    previous session, left that connection open until the collector freed it;
    meanwhile the previous session's host, ended, waited on it as on a client
    (a full run's leftover check once found one alive 5 s after its test).
    The quit closes it."""
    import asyncio

    tui = _mine_beside_joined(tmp_path)
    reached: list[bool] = []

    async def stuck_after_the_sync():
        reached.append(True)
        await asyncio.Event().wait()  # until the app's close cancels the switch

    async with tui.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: tui.state == "stopped", what="the entry stop")
        mine = host_pid("mine")
        leaving = tui.link
        assert leaving is not None
        tui._stops_elsewhere_now = stuck_after_the_sync
        tui.run_worker(tui.switch_session("joined"), group="switch")
        await wait_until(pilot, lambda: reached, what="the switch past its sync")
        await tui.action_quit()
        # Closed by the quit itself, not by the collector some time after.
        writer = leaving.remote._writer
        assert writer is not None and writer.is_closing()
    wait_for(lambda: not pid_alive(mine), 10, "the host of the TUI's session to exit")
    assert [s.name for s in paths.live_sessions()] == ["joined"]
    assert cli("stop", "--session", "joined", cwd=tmp_path).returncode == 0


async def test_a_switch_the_apps_close_overtakes_midway_is_dropped(tmp_path):
    """The app may begin closing at any await of a switch, not only its join:
    a child's end switched back to the parent as a test ended, and the
    switch's sync, after the panes were made anew, found them gone ("No nodes
    match 'StatusBar'"), failing the app. The switch is dropped as above."""
    import asyncio

    from tui_debugger.tui.widgets.status_bar import StatusBar

    tui = _mine_beside_joined(tmp_path)
    real_sync = tui._sync_all
    synced: list[bool] = []

    async def sync_once_the_app_closes():
        if tui.link is not None and tui.link.name == "joined":
            synced.append(True)
            while not tui.closing or tui.query(StatusBar):  # the panes go
                await asyncio.sleep(0)
        return await real_sync()

    async with tui.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: tui.state == "stopped", what="the entry stop")
        mine = host_pid("mine")
        tui._sync_all = sync_once_the_app_closes
        tui.run_worker(tui.switch_session("joined"), group="switch")
        await wait_until(pilot, lambda: synced, what="the switch's sync")
    wait_for(lambda: not pid_alive(mine), 10, "the host of the TUI's session to exit")
    assert [s.name for s in paths.live_sessions()] == ["joined"]
    assert cli("stop", "--session", "joined", cwd=tmp_path).returncode == 0


@pytest.mark.slow
def test_a_killed_tui_leaves_its_session_to_the_host_for_a_while(
        tmp_path, monkeypatch, terminals, isolated_runtime):
    # The grace a killed TUI's session gets (the idle time stays at its default).
    monkeypatch.setenv("TUI_DEBUGGER_ORPHAN_GRACE_S", "8")
    prog = program(tmp_path)
    tui = terminals("run", "--session", "kept", str(prog), cwd=tmp_path)
    wait_for(lambda: session_stopped(tmp_path), 30, "the TUI's session to stop on entry")
    host = host_pid("kept")
    assert host != tui.proc.pid

    tui.proc.kill()  # no chance to clean up
    tui.proc.wait(timeout=10)
    assert session_stopped(tmp_path), "the host keeps the session"

    # A second TUI rejoins meanwhile, and leaves it running.
    again = terminals("ui", "--session", "kept", cwd=tmp_path)
    wait_for(lambda: any(c["origin"] == "tui" for c in clients(tmp_path)), 20,
             lambda: f"the rejoin; the screen: {bytes(again.screen[-3000:])!r}")
    again.proc.send_signal(signal.SIGTERM)
    assert again.proc.wait(timeout=20) == 0
    assert pid_alive(host) and session_stopped(tmp_path)

    # With no client back within the grace, the host ends it and exits.
    wait_for(lambda: not pid_alive(host), 30, "the host to end the abandoned session")
    assert paths.live_sessions() == []
    wait_for(lambda: not processes_tagged(str(isolated_runtime)), 10, "every process to end")


def clients(cwd: Path) -> list[dict]:
    import json

    status = cli("status", "--json", cwd=cwd, timeout=30)
    return json.loads(status.stdout).get("clients", []) if status.returncode == 0 else []


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_quits_the_tui_and_ends_what_it_started(tmp_path, terminals, sig):
    prog = program(tmp_path)
    joined = cli("start", "--session", "other", "--stop-on-entry", str(prog), cwd=tmp_path)
    assert joined.returncode == 0, joined.stderr
    tui = terminals("run", "--session", "signalled", str(prog), cwd=tmp_path)
    wait_for(lambda: any(s.name == "signalled" for s in paths.live_sessions())
             and session_stopped(tmp_path, "signalled"), 30, "the TUI's session")
    host = host_pid("signalled")
    tui.proc.send_signal(sig)
    # SIGTERM quits as `q` does; SIGHUP (no terminal left to restore) leaves at once.
    assert tui.proc.wait(timeout=20) == (0 if sig == signal.SIGTERM else 128 + signal.SIGHUP)
    wait_for(lambda: not pid_alive(host), 10, "the host of the TUI's session to exit")
    # It removed nothing it does not own: the other session is live and answers.
    assert [s.name for s in paths.live_sessions()] == ["other"]
    assert cli("status", "--session", "other", cwd=tmp_path).returncode == 0
    assert cli("stop", "--session", "other", cwd=tmp_path).returncode == 0


def test_a_terminal_closed_without_a_hang_up_ends_the_tui_and_its_session(tmp_path, terminals):
    # A pseudo-terminal that is not the TUI's controlling terminal (the TUI
    # runs in a session of its own, as under a harness or an editor) sends no
    # SIGHUP when its other end closes. Textual's input thread then read
    # end-of-file in a loop: the TUI spun at a whole core, and it and its
    # session lived on.
    prog = program(tmp_path)
    runtime = Path(os.environ["TUI_DEBUGGER_RUNTIME_DIR"])
    tui = terminals("run", "--session", "orphaned", str(prog), cwd=tmp_path)
    wait_for(lambda: any(s.name == "orphaned" for s in paths.live_sessions())
             and session_stopped(tmp_path, "orphaned"), 30, "the TUI's session")
    wait_for(lambda: b"STOPPED" in tui.screen, 15, "the stop on screen")
    tui.hang_up()
    assert tui.proc.wait(timeout=20) == 128 + signal.SIGHUP
    wait_for(lambda: not paths.live_sessions() and not processes_tagged(str(runtime)), 15,
             lambda: f"the session to end: {paths.live_sessions()}")


@pytest.mark.slow
@pytest.mark.parametrize("while_importing", [True, False], ids=["importing", "mounting"])
def test_a_sigterm_while_the_tui_starts_ends_what_it_started(tmp_path, terminals,
                                                             while_importing):
    # The session's host starts before the TUI imports Textual, and is often up
    # before the app handles signals itself: a `kill` then must still end it.
    prog = program(tmp_path)
    runtime = Path(os.environ["TUI_DEBUGGER_RUNTIME_DIR"])
    tui = terminals("run", "--session", "early", "--stop-on-entry", str(prog), cwd=tmp_path)
    if while_importing:  # as soon as the host exists: Textual is still being imported
        wait_for(lambda: any(runtime.glob("daemon-*.log")), 30, "the TUI's host")
    else:  # once the session is up, whatever the TUI has done by then
        wait_for(lambda: any(s.name == "early" for s in paths.live_sessions()), 30,
                 "the TUI's session")
    tui.proc.send_signal(signal.SIGTERM)
    assert tui.proc.wait(timeout=30) == 0, bytes(tui.screen[-3000:]).decode(errors="replace")
    wait_for(lambda: not paths.live_sessions() and not processes_tagged(str(runtime)), 15,
             lambda: f"the session to end: {paths.live_sessions()}")


async def test_the_tui_joins_its_session_while_its_launch_goes_on(tmp_path):
    """The TUI's host says its session's name as soon as the session is served
    (`announce`), before the launch is done: the TUI joins then, fills its panes
    and paints the first stop from its event as it comes, instead of after the
    launch's answer, the join and the first reads one after another. The
    launch's answer still comes after. Here the program's Python takes 2 s to
    start (a wrapper, as pyenv's shim is a script), so the launch is surely still
    going when the name comes."""
    from tui_debugger.host.start import PendingHost
    from tui_debugger.client.router import join

    slow = tmp_path / "slow-python"
    slow.write_text(f"#!/bin/sh\nsleep 2\nexec {sys.executable} \"$@\"\n")
    slow.chmod(0o755)
    pending = PendingHost("launch", {"program": str(program(tmp_path)), "stop_on_entry": True,
                                     "wait_ms": 0, "python": str(slow)},
                          cwd=str(tmp_path), origin="tui", owned=True, announce=True)
    link = None
    try:
        name = await pending.serving()
        assert name == "spin"
        link = await join(name, "tui")
        status = await link.call("status")
        assert status.state == "starting", status
        result = await pending.ready()
        assert result["session"] == name and result["adapter"] == "debugpy"
    finally:
        if link is not None:
            await link.close()
            if any(s.name == "spin" for s in paths.live_sessions()):
                cli("stop", "--session", "spin", cwd=tmp_path)
        else:
            await pending.abandon()


def test_a_launch_that_fails_once_its_session_is_served_says_why(tmp_path, terminals):
    """The session is served (and the TUI may have joined it) before the launch
    finds what is wrong (here the program's input file is missing): the TUI
    leaves with the launch's own message, not with the join's "no session"."""
    terminal = terminals("run", "--stdin", str(tmp_path / "missing.txt"), str(program(tmp_path)),
                         cwd=tmp_path)
    assert terminal.proc.wait(timeout=60) == 1
    wait_for(lambda: b"to give the program as its stdin" in terminal.screen, 10,
             lambda: bytes(terminal.screen[-600:]))
    assert b"No live session" not in terminal.screen
