"""Sessions belong to their project: a client without --session reaches only a
session started from its own project (the git top level of its working
directory, else the directory), never the newest of another project. Real
`tui-debugger` processes, real daemons, real debugpy; MCP in-process and over
stdio."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.mcp import call, fails, in_process_client, stdio_params

PROGRAM = "x = 1\ny = 2\nprint(x + y)\n"


def tdb(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"tui-debugger {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def tdb_json(cwd: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    return json.loads(tdb(cwd, *args, "--json", env=env).stdout)


@pytest.fixture
def projects(tmp_path):
    """Project A, a git repository whose client works in a subdirectory, and
    project B, a plain directory, each with a session started from it; and a
    directory of neither."""
    a, b, elsewhere = tmp_path / "a", tmp_path / "b", tmp_path / "elsewhere"
    (a / "src" / "deep").mkdir(parents=True)
    b.mkdir()
    elsewhere.mkdir()
    subprocess.run(["git", "init", "-q", str(a)], check=True)
    (a / "src" / "alpha.py").write_text(PROGRAM)
    (b / "beta.py").write_text(PROGRAM)
    tdb(a / "src", "start", "--session", "alpha", "--stop-on-entry", "alpha.py")
    tdb(b, "start", "--session", "beta", "--stop-on-entry", "beta.py")
    yield a, b, elsewhere
    for name in ("alpha", "beta"):
        tdb(elsewhere, "stop", "--session", name, check=False)


@pytest.mark.slow
@pytest.mark.timeout(180)  # a dozen `tui-debugger` processes and two MCP servers
async def test_each_project_reaches_its_own_session(no_leftover_daemons, projects, monkeypatch):
    a, b, elsewhere = projects
    client_a = a / "src" / "deep"  # the client works below the session's directory

    # CLI: each acts on its own; a breakpoint lands in its own program only.
    assert tdb_json(client_a, "status")["session"] == "alpha"
    assert tdb_json(b, "status")["session"] == "beta"
    added = tdb(client_a, "break", "add", "../alpha.py:2")
    assert added.stdout.startswith("[session alpha] ")  # two are live: the answer says which
    assert [bp["spec"]["path"] for bp in tdb_json(client_a, "break", "list")["breakpoints"]] == \
        [str(a / "src" / "alpha.py")]
    assert tdb_json(b, "break", "list")["breakpoints"] == []

    # `sessions` marks those of the asking project, and the one it reaches.
    listed = {s["name"]: s for s in tdb_json(client_a, "sessions")["sessions"]}
    assert listed["alpha"]["thisProject"] and listed["alpha"]["current"]
    assert listed["alpha"]["project"] == str(a) and listed["alpha"]["startedBy"] == "cli"
    assert not listed["beta"]["thisProject"] and not listed["beta"]["current"]

    # A directory of neither project reaches neither: a typed error listing both.
    refused = tdb(elsewhere, "status", "--json", check=False)
    assert refused.returncode == 1
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "invalid_input"
    assert {s["name"]: (s["state"], s["project"]) for s in error["details"]["sessions"]} == {
        "alpha": ("stopped", str(a)), "beta": ("stopped", str(b))}
    assert "--session" in refused.stderr and "TUI_DEBUGGER_SESSION" in refused.stderr

    # TUI_DEBUGGER_SESSION pins a shell to one session, as --session does.
    pinned = tdb(elsewhere, "status", env={"TUI_DEBUGGER_SESSION": "beta"})
    assert pinned.stdout.startswith("[session beta] Session beta: stopped")
    gone = tdb(elsewhere, "status", env={"TUI_DEBUGGER_SESSION": "gamma"}, check=False)
    assert gone.returncode == 1 and "TUI_DEBUGGER_SESSION" in gone.stderr

    # MCP: a server started in each project joins that project's session.
    from mcp.client import Client

    async with Client(stdio_params(cwd=client_a)) as client:
        context = await call(client, "debug_context", {})
        assert context["session"] == "alpha" and context.text.startswith("[session alpha] ")
        assert "alpha.py" in json.dumps(context.data) and "beta.py" not in context.text
    monkeypatch.chdir(b)
    async with in_process_client() as client:
        assert (await call(client, "debug_status", {}))["session"] == "beta"
        listed = {s["name"]: s for s in (await call(client, "debug_sessions", {}))["sessions"]}
        assert listed["beta"]["thisProject"] and not listed["alpha"].get("thisProject")
    monkeypatch.chdir(elsewhere)
    async with in_process_client() as client:
        refused = await fails(client, "debug_status", {}, "invalid_input", "alpha", "beta",
                              "debugSessionId")
        assert len(refused["details"]["sessions"]) == 2


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_two_sessions_in_one_project(tmp_path, no_leftover_daemons, monkeypatch):
    """Several sessions in the project: a client that started or joined one stays
    on it; one that did not is told to name one."""
    (tmp_path / "one.py").write_text(PROGRAM)
    (tmp_path / "two.py").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    try:
        async with in_process_client() as client:
            launched = await call(client, "debug_launch", {"program": "one.py", "stopOnEntry": True})
            assert launched["session"] == "one" and launched["state"] == "stopped"
            assert not launched.text.startswith("[session")  # the only live session
            await asyncio.to_thread(tdb, tmp_path, "start", "--session", "two",
                                    "--stop-on-entry", "two.py")
            # The server stays on the session it launched, and says so.
            status = await call(client, "debug_status", {})
            assert status["session"] == "one" and status.text.startswith("[session one] ")
            stepped = await call(client, "debug_step_over", {})
            assert stepped["session"] == "one" and stepped["stop"]["location"]["line"] == 2

            # The CLI, which started neither, is told to name one.
            # (In a thread: this process must keep answering for what it hosts.)
            refused = await asyncio.to_thread(tdb, tmp_path, "status", check=False)
            assert refused.returncode == 1
            assert "2 sessions are live in this project" in refused.stderr
            assert "  one  stopped" in refused.stderr and "  two  stopped" in refused.stderr
            assert tdb_json(tmp_path, "status", "--session", "two")["session"] == "two"
            assert "started by mcp" in refused.stderr

            # So is a second MCP server started there.
            async with in_process_client() as other:
                await fails(other, "debug_status", {}, "invalid_input", "one", "two",
                            "debugSessionId")
                assert (await call(other, "debug_status",
                                   {"debugSessionId": "two"}))["session"] == "two"
    finally:
        tdb(tmp_path, "stop", "--session", "two", check=False)


@pytest.mark.slow
async def test_ui_offers_the_live_sessions_of_other_projects(tmp_path, no_leftover_daemons):
    """`ui` with no session of its project opens none by itself: it offers the
    live ones, and opens the one picked."""
    from tests.support.tui import wait_until
    from tui_debugger.tui.app import create_app
    from tui_debugger.tui.widgets.session_picker import SessionPicker

    other = tmp_path / "other"
    other.mkdir()
    (other / "gamma.py").write_text(PROGRAM)
    await asyncio.to_thread(tdb, other, "start", "--session", "gamma", "--stop-on-entry",
                            "gamma.py")
    try:
        app = create_app("join", {}, None, cwd=str(tmp_path))
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                             and app.screen.query("#picker-list"), what="the session picker")
            assert app.link is None and "gamma" in str(app.screen.query_one("#picker-list")
                                                        .get_option("gamma").prompt)
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.link is not None and app.link.name == "gamma"
                             and app.state == "stopped", what="the picked session")
            await app.action_quit()
    finally:
        await asyncio.to_thread(tdb, other, "stop", "--session", "gamma", check=False)


def test_several_live_sees_each_session_come_and_go_at_once():
    """several_live (whether an answer names its session) keeps its count only
    while the runtime directory stays as it was: a session's file added or
    removed right after a count, within the same clock tick, is seen."""
    from tui_debugger import paths

    run_dir = paths.runtime_dir()
    tick = time.time_ns()  # a coarse clock: two changes in one tick, one mtime
    (run_dir / "one.json").write_text("{}")
    os.utime(run_dir, ns=(tick, tick))
    assert not paths.several_live()
    (run_dir / "two.json").write_text("{}")
    os.utime(run_dir, ns=(tick, tick))
    assert paths.several_live()
    settled = time.time_ns() - 10 * paths._SETTLED_NS
    os.utime(run_dir, ns=(settled, settled))  # long unchanged: the count is kept
    assert paths.several_live() and paths._listed == (settled, True)
    (run_dir / "two.json").unlink()
    assert not paths.several_live()
    (run_dir / "three.json").write_text("{}")
    assert paths.several_live()


def _meta_state(name: str) -> str | None:
    from tui_debugger import paths

    try:
        return json.loads(paths.meta_path(name).read_text()).get("state")
    except (OSError, ValueError):
        return None


def _until_meta_says(name: str, state: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while _meta_state(name) != state:
        assert time.monotonic() < deadline, f"{name}.json says {_meta_state(name)!r}, not {state!r}"
        time.sleep(0.02)


def test_a_step_leaves_the_session_file_alone_and_a_run_is_written(
        tmp_path, no_leftover_daemons):
    """<name>.json (what `sessions` reads in another process) is not rewritten
    by a step, whose state goes to running and back within milliseconds: each
    write and rename cost the host's step CPU on a disk, and made every client
    counting the live sessions list the directory again. A state that holds
    (the program running, then paused) is written."""
    from tui_debugger import paths

    (tmp_path / "spin.py").write_text(
        "import time\nx = 0\nx += 1\nx += 2\nx += 3\nwhile True:\n    time.sleep(0.01)\n")
    tdb(tmp_path, "start", "--session", "meta", "--stop-on-entry", "spin.py")
    try:
        _until_meta_says("meta", "stopped")
        path = paths.meta_path("meta")
        before = path.stat()
        for _ in range(3):
            assert tdb_json(tmp_path, "next", "--session", "meta")["status"] == "stopped"
        after = path.stat()
        assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
        listed = tdb_json(tmp_path, "sessions")
        assert [s["state"] for s in listed["sessions"] if s["name"] == "meta"] == ["stopped"]

        tdb(tmp_path, "continue", "--session", "meta", "--wait-ms", "0")
        _until_meta_says("meta", "running")
        tdb(tmp_path, "pause", "--session", "meta")
        _until_meta_says("meta", "stopped")
    finally:
        tdb(tmp_path, "stop", "--session", "meta", check=False)
    assert not paths.meta_path("meta").exists()


async def test_one_sessions_settling_state_holds_no_other_sessions_file_back(monkeypatch):
    """Two sessions of one host: while one's running (after a stop) is held
    back to settle, the other's end is written at once; running is written
    once it holds; a stop is written at once (a client listing the sessions
    right after it reads it stopped); a step's run and stop again write
    nothing; a call that waits for the writes (meta_written) gets what is
    settling written without waiting for it. The writer thread is held up
    right after each rename (as a loaded machine may), so a step taken the
    moment the file says stopped must find that stop noted already."""
    from tui_debugger.host import hub as hub_module
    from tui_debugger import paths
    from tui_debugger.host.hub import Hub
    from tui_debugger.models import SessionState

    monkeypatch.setattr(hub_module, "META_SETTLE_S", 1.0)  # a wide margin on a loaded machine
    write_meta = paths.write_meta

    def slow_after_the_rename(name, info):
        write_meta(name, info)
        time.sleep(0.05)

    monkeypatch.setattr(paths, "write_meta", slow_after_the_rename)
    hub = Hub(serve=True)
    busy, other = await hub.create_session("busy"), await hub.create_session("other")
    try:
        async def written(name: str, state: str, within: float = 10.0) -> None:
            deadline = time.monotonic() + within
            while _meta_state(name) != state:
                assert time.monotonic() < deadline, (name, _meta_state(name), state)
                await asyncio.sleep(0.01)

        for session in (busy, other):
            session.set_state(SessionState.stopped)
            await written(session.name, "stopped")
        started = time.monotonic()
        busy.set_state(SessionState.running)
        other.set_state(SessionState.terminated)
        await written("other", "terminated")
        assert time.monotonic() - started < hub_module.META_SETTLE_S
        assert _meta_state("busy") == "stopped"  # still settling
        await written("busy", "running")  # held long enough
        started = time.monotonic()
        busy.set_state(SessionState.stopped)
        await written("busy", "stopped")  # at once, not after a second
        assert time.monotonic() - started < hub_module.META_SETTLE_S
        # What the file says is what the hub decides the next step's writes by.
        assert hub._meta_written["busy"]["state"] == "stopped"  # noqa: SLF001
        before = paths.meta_path("busy").stat().st_mtime_ns
        for _ in range(5):  # a step, five times: back where the file says
            busy.set_state(SessionState.running)
            busy.set_state(SessionState.stopped)
        await hub.meta_written()
        assert paths.meta_path("busy").stat().st_mtime_ns == before
        busy.set_state(SessionState.running)
        await hub.meta_written()  # not held back when a caller waits for it
        assert _meta_state("busy") == "running"
    finally:
        await hub.close_all()
