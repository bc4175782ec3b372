"""The warm screen (tui_debugger/warm_screen.py, cli/screen.py): a TUI started
by `run` in a terminal starts a process with the TUI imported, and the next
`run` of the same user, project and environment hands it its terminal: that
process is the second TUI, the terminal's resize reaches it, its exit code is
`run`'s. Another environment starts its TUI itself and leaves the warm screen
alone. It ends on its idle time after its TUI ended, and on `warm stop`. The
real executable in tmux (a controlling terminal, its signals)."""

from __future__ import annotations

import contextlib
import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import require_executable
from tests.support.tmux import Tmux, processes_with
from tests.test_warm_host import wait_for as wait_until
from tests.test_warm_host import warm_on  # noqa: F401 - a fixture
from tui_debugger import paths, warm, warm_screen


def stop_screens(timeout: float = 30.0) -> None:
    """`warm stop` for the warm screen, until no warm screen of this test's
    runtime directory runs: a TUI may have started one a moment before (it
    is then starting, and stop ends it too)."""
    runtime = f"TUI_DEBUGGER_RUNTIME_DIR={os.environ['TUI_DEBUGGER_RUNTIME_DIR']}".encode()
    deadline = time.monotonic() + timeout
    while True:
        warm_screen.stop()
        left = [p for p in processes_with(runtime.decode())
                if b"tui_debugger.cli.screen" in _cmdline(p)]
        if not left:
            return
        assert time.monotonic() < deadline, f"warm screens left: {left}"
        time.sleep(0.05)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.fixture
def warm_work(warm_on):
    """test_warm_host's warm processes on (and stopped after), the screens too."""
    return warm_on


def wait_for(predicate, timeout: float = 60.0, what: str = ""):
    return wait_until(predicate, timeout, what)


@contextlib.contextmanager
def shell(tmp_path: Path, work: Path, script: str, size=(100, 30)) -> Iterator[Tmux]:
    """A tmux window running `script` in sh, with this test's environment
    (the server is started by this test, so it has it) and a marker; at the
    end its server killed (a TUI still running ends: its terminal is gone),
    the warm processes stopped, and no process with the marker left."""
    tmux = Tmux(require_executable("tmux"), tmp_path / "tmux.sock")
    marker = f"TUI_TMUX_TEST={uuid.uuid4().hex}"
    tmux.run("new-session", "-d", "-s", "tui", "-x", str(size[0]), "-y", str(size[1]),
             "-c", str(work), "-e", marker, "-e", "TERM=xterm-256color",
             # (pytest's COLUMNS and LINES would fix the size the TUI reads on a resize)
             "env", "-u", "COLUMNS", "-u", "LINES", "sh", "-c", script)
    tmux.marker = marker  # every process the window starts carries it
    try:
        yield tmux
    finally:
        tmux.run("kill-server", check=False)
        wait_for(lambda: not [s for s in paths.live_sessions() if s.state != "terminated"], 60,
                 "the sessions' end")
        warm.stop()
        stop_screens()
    wait_for(lambda: not processes_with(marker), 30, "no process of the test's left")


def ready_screen():
    """The warm screen's description once it has imported the TUI."""
    info = warm_screen.status()
    return info if info and info.get("ready") else None


def tty_of(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/fd/0")


def run_line(extra: str = "") -> str:
    return f"{extra}{sys.executable} -m tui_debugger run --stop-on-entry py_basic.py"


@pytest.mark.timeout(240)
def test_the_next_run_is_the_warm_screens_in_the_same_terminal(warm_work, tmp_path):
    work = warm_work
    done = tmp_path / "done.txt"
    script = (f"{run_line()}; echo first=$? >> {done}; "
              f"{run_line()}; echo second=$? >> {done}; "
              f"{run_line('OTHER_VARIABLE=1 ')}; echo third=$? >> {done}; sleep 120")
    with shell(tmp_path, work, script) as tmux:
        tmux.wait_for(lambda s: "STOPPED" in s, "the first TUI's entry stop", 90)
        screen = wait_for(ready_screen, what="a warm screen, started by the first TUI")
        z = screen["pid"]
        assert screen["project"] == paths.project_of(str(work))
        assert screen.get("until") is None  # its idle time starts when that TUI ends
        tmux.run("send-keys", "-t", "tui", "C-q")
        wait_for(lambda: done.exists() and "first=0" in done.read_text(), what="the first's end")
        # The second `run` is the warm screen, in this terminal.
        tmux.wait_for(lambda s: "STOPPED" in s and "entry" in s, "the second TUI's stop", 90)
        assert paths.pid_alive(z) and (warm_screen.status() or {}).get("pid") != z
        clients = [p for p in processes_with(tmux.marker) if p != z
                   and b"tui_debugger\x00run" in Path(f"/proc/{p}/cmdline").read_bytes()]
        assert clients and all(tty_of(p) == tty_of(z) for p in clients), (clients, z)
        # The terminal's resize reaches it: the header is laid out anew, wider.
        width = max(len(row) for row in tmux.screen().splitlines())
        assert width <= 100
        tmux.run("resize-window", "-t", "tui", "-x", "140", "-y", "36")
        tmux.wait_for(lambda s: max(len(r.rstrip()) for r in s.splitlines()) > 110,
                      "the TUI laid out at the new width", 30)
        # It started the next warm screen in turn.
        following = wait_for(lambda: (ready_screen() or {}).get("pid") not in (None, z)
                             and ready_screen(), what="the next warm screen, ready")
        tmux.run("send-keys", "-t", "tui", "C-q")
        wait_for(lambda: "second=0" in done.read_text(), what="the second's end, its code")
        wait_for(lambda: not paths.pid_alive(z), 30, "the taken warm screen's end")
        # Another environment: its TUI is its own; the warm screen waits on.
        tmux.wait_for(lambda s: "STOPPED" in s and "entry" in s, "the third TUI's stop", 90)
        assert (warm_screen.status() or {}).get("pid") == following["pid"]
        log = Path(following["log"]).read_text()
        assert "not taken: another environment (OTHER_VARIABLE)" in log, log
        tmux.run("send-keys", "-t", "tui", "C-q")
        wait_for(lambda: "third=0" in done.read_text(), what="the third's end")


@pytest.mark.timeout(180)
def test_a_warm_screen_ends_its_idle_time_after_its_tui(warm_work, tmp_path, monkeypatch):
    work = warm_work
    monkeypatch.setenv("TUI_DEBUGGER_WARM_IDLE_S", "2")
    with shell(tmp_path, work, f"{run_line()}; sleep 120") as tmux:
        tmux.wait_for(lambda s: "STOPPED" in s, "the TUI's entry stop", 90)
        z = wait_for(ready_screen, what="a warm screen")["pid"]
        assert paths.pid_alive(z)
        tmux.run("send-keys", "-t", "tui", "C-q")
        wait_for(lambda: not paths.pid_alive(z), 60, "the warm screen's end after its idle time")
        assert warm_screen.status() is None
        assert not (paths.runtime_dir() / warm_screen.PLACE.socket).exists()


@pytest.mark.timeout(180)
def test_warm_stop_ends_the_warm_screen_too(warm_work, tmp_path):
    from tests.test_cli import tdb

    work = warm_work
    with shell(tmp_path, work, f"{run_line()}; sleep 120") as tmux:
        tmux.wait_for(lambda s: "STOPPED" in s, "the TUI's entry stop", 90)
        z = wait_for(ready_screen, what="a warm screen")["pid"]
        tmux.run("send-keys", "-t", "tui", "C-q")
        listed = wait_for(lambda: "the TUI warm in pid" in (s := tdb(work, "sessions").stdout)
                          and s, what="sessions naming it")
        assert f"the TUI warm in pid {z}" in listed
        said = tdb(work, "warm", "stop").stdout
        assert f"Warm screen {z} ended." in said, said
        assert not paths.pid_alive(z)


def test_the_warm_sockets_are_no_sessions_and_no_session_takes_their_names(monkeypatch,
                                                                           tmp_path):
    """A waiting warm host's and warm screen's sockets answer no session
    request: the listing never probes them (each probe waited its full time
    for an answer, a second per socket on every listing), never counts their
    descriptions as sessions, and a program named warm.py or screen.py gets
    another session name."""
    listeners = [warm.Listener.claim(), warm.Listener.claim(warm_screen.PLACE)]
    assert all(listeners)
    try:
        for listener in listeners:
            listener.describe({"pid": os.getpid()})
        probed: list[str] = []
        real = paths.socket_answers
        monkeypatch.setattr(paths, "socket_answers", lambda p: probed.append(p.name) or real(p))
        assert paths.live_sessions() == []
        assert probed == []
        assert not paths.several_live()
        assert paths.unique_name("warm", set()) == "warm-2"
        assert paths.unique_name("screen", set()) == "screen-2"
    finally:
        for listener in listeners:
            listener.release()


@pytest.mark.timeout(120)
def test_a_warm_screen_still_starting_is_not_taken_and_warm_stop_ends_it(warm_work):
    """While it imports the TUI it is described as starting: a `run` starts
    its own TUI rather than wait for it, and `warm stop` ends it all the same."""
    import subprocess

    proc = subprocess.Popen([sys.executable, "-P", "-m", "tui_debugger.cli.screen"],
                            cwd=warm_work, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        starting = wait_for(warm_screen.status, what="the screen described")
        if not starting.get("ready"):  # (on a fast machine it may be ready already)
            assert warm_screen.take_and_run(["run", "x.py"]) is None
        assert warm_screen.stop() == proc.pid
        assert proc.wait(timeout=30) is not None
        assert warm_screen.status() is None
    finally:
        proc.kill()
        proc.wait()


_REHEARSE = """
import json, sys, time
from tui_debugger.cli import screen
screen._import_the_tui()
from pydantic import BaseModel
from tui_debugger.tui.widgets import source_view
started = time.monotonic()
screen._rehearse()
took = time.monotonic() - started
def ours(cls, seen):
    for sub in cls.__subclasses__():
        if sub not in seen:
            seen.add(sub)
            ours(sub, seen)
    return seen
incomplete = [m.__name__ for m in ours(BaseModel, set()) if not m.__pydantic_complete__
              and m.__module__.startswith(("tui_debugger.", "backends."))]
print(json.dumps({"took": took, "incomplete": incomplete, "lexer": ".py" in source_view._lexers}))
"""


@pytest.mark.timeout(120)
def test_the_warm_screen_rehearses_the_first_screen_without_a_session(isolated_runtime, tmp_path):
    """Before a `run` takes it, the warm screen runs the TUI's first screen
    once, headless (what a first screen does the first time in a process:
    CSS, lazy imports, caches, Python's lexer, the models pydantic completes
    at first use). That run joins no session and starts none, draws nothing
    on any terminal and says nothing."""
    import json
    import subprocess

    done = subprocess.run([sys.executable, "-c", _REHEARSE], cwd=tmp_path, capture_output=True,
                          text=True, timeout=100, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout  # nothing but the test's own line
    result = json.loads(lines[0])
    assert result["lexer"] and result["incomplete"] == [], result
    assert result["took"] < 30, result  # it ended after its first paint, not on its guard
    assert paths.live_sessions() == [] and not list(paths.runtime_dir().glob("*.sock"))
