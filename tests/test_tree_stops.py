"""One program, many processes: a stop in any process of the tree answers the
parent's launch, continue, steps and await, naming the process; each client
acts on the process it was last answered (its focus) and is told of stops
elsewhere; a launched program's breakpoints outlive its run."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.support import marker_line
from tests.test_projects import CHILDREN, KINDS, _needs, tdb


@pytest.fixture
def children(tmp_path):
    for path in CHILDREN.iterdir():
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def size(answer) -> int:
    return len(json.dumps(answer.raw.model_dump(mode="json", by_alias=True, exclude_none=True),
                          separators=(",", ":")))


#: the kinds of child whose stop a launch answers: every kind (Node's children
#: are the CDP backend's, followed the same way)
TREE_KINDS = list(KINDS)
_CHEAP = {"subprocess.run"}
#: the CLI's quick loop keeps the pool it always ran
_CHEAP_CLI = {"pool-spawn"}


def tree_kinds(cheap: set[str]) -> list:
    return [pytest.param(k, id=k, marks=() if k in cheap else pytest.mark.slow)
            for k in TREE_KINDS]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kind", tree_kinds(_CHEAP))
async def test_the_launch_answers_with_a_childs_stop_and_the_next_calls_act_on_it(
        kind, children, mcp_env, no_leftover_processes):
    from tests.support.mcp import call, in_process_client

    _needs(kind)
    program, args, file, marker, after, name, value = KINDS[kind]
    line = marker_line(children / file, marker)
    after = marker_line(children / file, after)
    async with in_process_client() as client:
        launched = await call(client, "debug_launch", {
            "program": str(children / program), "args": args, "cwd": str(children),
            "breakpoints": [f"{children / file}:{line}"]})
        # The child's stop is the answer, named, with its place and locals.
        process = launched["process"]
        assert process["session"].startswith(launched["session"] + "."), launched.data
        assert process["pid"] and process["program"], launched.data
        assert launched["stop"]["location"]["line"] == line, launched.data
        assert launched["stop"]["reason"] == "breakpoint", launched.data
        assert launched["context"]["source"] and launched["context"].get("locals") is not None
        assert "No stop yet" not in launched.text and "Still starting" not in launched.text
        assert process["session"] in launched.text, launched.text
        # No session named: the step, the evaluation act on the child that stopped.
        stepped = await call(client, "debug_step_over", {})
        assert stepped["process"]["session"] == process["session"], stepped.data
        assert stepped["stop"]["location"]["line"] == after, stepped.data
        shown = await call(client, "debug_evaluate", {"expression": name})
        assert value in shown.text and shown["process"]["session"] == process["session"]
        # The whole tree goes on; the program ends.
        ended = await call(client, "debug_continue", {"all": True, "waitMs": 60_000})
        assert ended["status"] in ("terminated", "running"), ended.data
        await call(client, "debug_terminate", {})


@pytest.mark.timeout(240)
async def test_an_agent_finds_a_bug_only_a_pool_worker_shows_in_few_calls(
        children, mcp_env, no_leftover_processes):
    """The done-when of the feature: the evidence is in a ProcessPoolExecutor
    worker's locals; the agent reaches it with a handful of small answers."""
    from tests.support.mcp import call, in_process_client

    file = children / "pricing.py"
    calls, sizes, spent = 0, 0, 0.0

    async def tool(name: str, arguments: dict):
        nonlocal calls, sizes, spent
        started = time.monotonic()
        answer = await call(client, name, arguments)
        spent += time.monotonic() - started
        calls += 1
        sizes += size(answer)
        return answer

    async with in_process_client() as client:
        launched = await tool("debug_launch", {
            "program": str(file), "cwd": str(children),
            "breakpoints": [{"file": str(file), "line": marker_line(file, "@price"),
                             "condition": "item[0] > 2"}]})
        assert launched["process"]["session"] != launched["session"], launched.data
        assert launched["stop"]["location"]["line"] == marker_line(file, "@price")
        stepped = await tool("debug_step_over", {})
        stepped = await tool("debug_step_over", {})
        stepped = await tool("debug_step_over", {})
        assert stepped["stop"]["location"]["line"] == marker_line(file, "@discount"), stepped.data
        total = await tool("debug_evaluate", {"expression": "total"})
        assert "21" in total.text
        ended = await tool("debug_continue", {"waitMs": 30_000})
        assert ended["status"] == "terminated", ended.data
        await tool("debug_terminate", {})
    print(f"\nProcessPoolExecutor hunt: {calls} calls, {sizes} bytes, {spent:.2f} s of tool time")
    assert calls <= 12 and sizes <= 10_000, (calls, sizes)
    assert spent <= 60, spent  # 10 s on an idle machine; this one is shared


@pytest.mark.timeout(240)
async def test_each_client_keeps_its_focus_and_hears_of_stops_elsewhere(
        children, mcp_env, no_leftover_processes):
    import asyncio

    from tests.support.mcp import call, in_process_client

    file = children / "two_workers.py"
    line = marker_line(file, "@work")
    async with in_process_client() as client:
        first = await call(client, "debug_launch", {
            "program": str(file), "cwd": str(children), "breakpoints": [f"{file}:{line}"]})
        mine = first["process"]["session"]
        for _ in range(300):  # the other worker reaches the breakpoint too
            listed = (await call(client, "debug_sessions", {}))["sessions"]
            stopped = [s["name"] for s in listed if s.get("parent") and s["state"] == "stopped"]
            if len(stopped) == 2:
                break
            await asyncio.sleep(0.1)
        assert len(stopped) == 2, listed
        other = next(n for n in stopped if n != mine)
        # The call acts on this client's process and says the other stopped.
        seen = await call(client, "debug_evaluate", {"expression": "n"})
        assert seen["process"]["session"] == mine, seen.data
        told = seen.get("meanwhile") or first.get("meanwhile") or []
        assert any(other in note for note in told), (seen.data, first.data)
        # The CLI is another client: it was answered nothing, so its `await`
        # answers with a stop at once, whatever the agent's focus.
        import os

        env = {**os.environ, "TUI_DEBUGGER_SESSION": first["session"]}  # the agent's program
        waited = tdb(children, "await", "--json", timeout=60, env=env)
        assert json.loads(waited.stdout)["process"]["session"] in stopped, waited.stdout
        # Continuing this one answers with what the continue led to: its own
        # next stop, not the other worker's older one it was only told of.
        ret = marker_line(file, "@return")
        added = await call(client, "debug_breakpoint_add", {"file": str(file), "line": ret})
        own = await call(client, "debug_continue", {})
        assert own["process"]["session"] == mine, own.data
        assert own["stop"]["location"]["line"] == ret, own.data
        # Once it runs on without stopping, the held worker is the answer: never
        # forgotten, whatever the wait.
        nxt = await call(client, "debug_continue", {"waitMs": 3_000})
        assert nxt["process"]["session"] == other, nxt.data
        assert nxt["stop"]["location"]["line"] == line, nxt.data
        await call(client, "debug_breakpoint_remove", {"breakpointId": added["breakpoint"]["id"]})
        done = await call(client, "debug_continue", {"all": True, "waitMs": 60_000})
        assert done["status"] in ("terminated", "running"), done.data
        await call(client, "debug_terminate", {})


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kind", tree_kinds(_CHEAP_CLI))
def test_the_cli_start_and_await_answer_with_a_childs_stop(kind, children, no_leftover_daemons):
    _needs(kind)
    program, args, file, marker, after, name, value = KINDS[kind]
    line = marker_line(children / file, marker)
    after = marker_line(children / file, after)
    root = Path(program).stem
    started = tdb(children, "start", "--break", f"{file}:{line}", program, *args,
                  timeout=90).stdout
    try:
        # The child's stop is the answer: the process named, its place, its locals.
        head = started.splitlines()[0]
        named = re.match(rf"Session {re.escape(root)}: running; process ({re.escape(root)}\.\S+) "
                         r"\(pid \d+, .+\) stopped$", head)
        assert named, started
        process = named[1]
        assert "No stop yet" not in started and "Still starting" not in started, started
        at = re.compile(rf"\b{re.escape(file)}:{line}[,:]")  # Node's place has a column
        assert "Stopped (breakpoint #1) in " in started and at.search(started), started
        shown = started.split("\nLocals:\n", 1)
        assert len(shown) == 2 and shown[1].startswith("  ") and " = " in shown[1], started
        # `await` reports the same stop, in the same process.
        waited = tdb(children, "await").stdout
        assert waited.startswith(f"In process {process} "), waited
        assert "Stopped (breakpoint #1) in " in waited and at.search(waited), waited
        # No --session: the step and the print act on the child that stopped.
        stepped = tdb(children, "next").stdout
        assert stepped.startswith(f"In process {process} "), stepped
        assert "Stopped (step) in " in stepped, stepped
        assert re.search(rf"\b{re.escape(file)}:{after}[,:]", stepped), stepped
        printed = tdb(children, "print", name).stdout
        assert printed.startswith(f"[session {process}] {value}"), printed
        # The whole tree goes on; the program ends.
        ended = tdb(children, "continue", "--all", timeout=90).stdout
        if "Still running" in ended:
            ended = tdb(children, "await", "--session", root, "--timeout", "60", timeout=90).stdout
        assert "The program ended" in ended, ended
    finally:  # a failed check leaves no program behind
        tdb(children, "stop", check=False)
    assert json.loads(tdb(children, "sessions", "--json").stdout)["sessions"] == []


@pytest.mark.timeout(240)
def test_breakpoints_outlive_the_run_and_restart_uses_them(tmp_path, no_leftover_daemons):
    program = tmp_path / "short.py"
    program.write_text("x = 1\ny = x + 1\nprint(y)\n")
    tdb(tmp_path, "start", "short.py")
    ended = tdb(tmp_path, "await", timeout=60).stdout
    assert "ended" in ended, ended
    added = tdb(tmp_path, "break", "add", "short.py:2")
    assert added.returncode == 0 and "short.py:2" in added.stdout, added.stdout
    listed = tdb(tmp_path, "break", "list").stdout
    assert "short.py:2" in listed, listed
    restarted = tdb(tmp_path, "restart", timeout=90).stdout
    assert "Stopped (breakpoint #1)" in restarted and "short.py:2" in restarted, restarted
    tdb(tmp_path, "stop")


@pytest.mark.timeout(240)
async def test_an_agents_launch_gets_exactly_its_breakpoints_unless_it_asks_to_restore(
        tmp_path, mcp_env, monkeypatch, no_leftover_processes):
    from tests.support.mcp import call, in_process_client
    from tui_debugger.config import reload_settings

    monkeypatch.setenv("TUI_DEBUGGER_PERSIST_BREAKPOINTS", "1")
    reload_settings()
    program = tmp_path / "three.py"
    program.write_text("a = 1\nb = 2\nc = 3\nprint(a, b, c)\n")
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(program), "stopOnEntry": True})
        await call(client, "debug_breakpoint_add", {"file": str(program), "line": 3,
                                                    "condition": "b == 2"})
        await call(client, "debug_terminate", {})
        both = await call(client, "debug_launch", {"program": str(program),
                                                   "breakpoints": [f"{program}:2"],
                                                   "restoreBreakpoints": True})
        assert both["breakpoints"] == 2, both.data
        assert any(":3" in r and "last run" in r for r in both["restored"]), both.data
        await call(client, "debug_terminate", {})
        only = await call(client, "debug_launch", {"program": str(program),
                                                   "breakpoints": [f"{program}:2"]})
        assert only["breakpoints"] == 1 and "restored" not in only.data, only.data
        assert only["stop"]["location"]["line"] == 2
        await call(client, "debug_terminate", {})


@pytest.mark.timeout(240)
def test_exec_into_python_is_debugged_and_into_another_program_says_so(children,
                                                                      no_leftover_daemons):
    line = marker_line(children / "execs.py", "@again")
    started = tdb(children, "start", "--break", f"execs.py:{line}", "execs.py").stdout
    assert f"execs.py:{line}" in started and "Stopped (breakpoint #1)" in started, started
    stepped = tdb(children, "next").stdout
    assert "value (int) = 42" in stepped, stepped
    tdb(children, "stop")
    tdb(children, "start", "exec_native.py")
    for _ in range(60):  # the exec itself
        waited = tdb(children, "await", "--timeout", "0.5").stdout
        if "undebugged" in waited:
            break
    assert "exec'd into /" in waited and "sleep" in waited, waited
    said = tdb(children, "pause", check=False)
    assert "not Python" in said.stderr and said.returncode == 1, (said.stdout, said.stderr)
    tdb(children, "stop")
    assert json.loads(tdb(children, "sessions", "--json").stdout)["sessions"] == []


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_an_agent_is_told_a_program_that_execd_into_another_runs_undebugged(
        children, mcp_env, no_leftover_processes):
    import asyncio

    from tests.support.mcp import call, fails, in_process_client

    file = children / "exec_native.py"
    async with in_process_client() as client:
        # A breakpoint the exec leaves behind: the launch waits for its stop,
        # which cannot come (the exec is at once; the wait is a loaded machine's).
        launched = await call(client, "debug_launch", {
            "program": str(file), "cwd": str(children), "waitMs": 10_000,
            "breakpoints": [{"file": str(file), "line": marker_line(file, "@before-exec"),
                             "condition": "False"}]})
        assert launched["state"] == "running", launched.data
        assert "undebugged" in launched["message"] and "/sleep" in launched["message"], \
            launched.data
        said = launched["message"]  # not that pause interrupts, nor that tracing is slow
        assert "debug_pause interrupts" not in said and "traces every line" not in said, said
        status = await call(client, "debug_status", {})
        assert "undebugged" in status["message"], status.data
        waited = await call(client, "debug_wait", {"timeoutMs": 200})
        assert waited["status"] == "running" and "undebugged" in waited["message"], waited.data
        await fails(client, "debug_pause", {}, "invalid_input", "not Python")
        await call(client, "debug_terminate", {})
        for _ in range(100):
            listed = (await call(client, "debug_sessions", {}))["sessions"]
            if all(s.get("state") in (None, "terminated") for s in listed):
                break
            await asyncio.sleep(0.1)
        assert all(s.get("state") in (None, "terminated") for s in listed), listed


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_the_tui_says_why_a_program_that_execd_into_another_cannot_pause(
        children, no_leftover_processes):
    from tests.support.tui import wait_until
    from tui_debugger.tui.app import create_app

    app = create_app("launch", {"program": str(children / "exec_native.py")},
                     cwd=str(children))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state == "running", 60, "the program running")
        for _ in range(300):  # the exec itself, seen as any client sees it
            status = json.loads(tdb(children, "status", "--json").stdout)
            if "undebugged" in (status.get("message") or ""):
                break
            await pilot.pause(0.1)
        assert "undebugged" in (status.get("message") or ""), status
        await pilot.press("f6")
        await wait_until(pilot, lambda: any("not Python" in str(n.message)
                                            for n in app._notifications), 30,  # noqa: SLF001
                         "the refusal, in words")
        assert app.state == "running"
        tdb(children, "stop")
        await wait_until(pilot, lambda: app.state == "terminated", 60, "the program ended")


@pytest.mark.timeout(240)
async def test_the_tui_announces_a_stop_elsewhere_and_alt_n_shows_it(children,
                                                                    no_leftover_processes):
    from tests.support.tui import wait_until
    from tui_debugger.tui.app import create_app

    file = children / "two_workers.py"
    line = marker_line(file, "@work")
    app = create_app("launch", {"program": str(file), "breakpoints": [f"{file}:{line}"]},
                     cwd=str(children))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.state == "stopped" and app.link is not None
                         and "." in app.link.name and app.source.location_line == line, 60,
                         "the TUI on a worker's stop")
        first = app.link.name
        await wait_until(pilot, lambda: any(n != first for n in app._stopped_elsewhere), 60,
                         "the other worker's stop, told")
        other = next(n for n in app._stopped_elsewhere if n != first)
        await wait_until(pilot, lambda: app.status.elsewhere[0] == 1, 10, "the header's count")
        assert "1 more stopped: Alt+N" in str(app.status.render())
        await pilot.press("alt+n")
        await wait_until(pilot, lambda: app.link is not None and app.link.name == other
                         and app.state == "stopped", 30, "the other worker shown")
        # Going on in this one shows the one still stopped: focus follows the stop.
        await pilot.press("f5")
        await wait_until(pilot, lambda: app.link is not None and app.link.name == first
                         and app.state == "stopped", 30, "back on the first worker")
        await pilot.press("f5")
        await wait_until(pilot, lambda: app.link is not None and "." not in app.link.name
                         or app.state == "terminated", 60, "the program going on")


def test_py_spy_is_found_in_the_workers_environment(tmp_path, monkeypatch):
    """tui-debugger in an environment of its own (a venv, pipx): the py-spy a
    Ray worker's stack is read with is looked for beside the worker's Python."""
    import os
    import subprocess
    import sys

    from backends.ray.discover import find_py_spy

    ours = shutil.which("py-spy")
    assert ours, "py-spy is in the test environment (requirements)"
    cluster = tmp_path / "cluster-venv" / "bin"
    cluster.mkdir(parents=True)
    (cluster / "python").symlink_to(sys.executable)
    (cluster / "py-spy").symlink_to(ours)
    worker = subprocess.Popen([str(cluster / "python"), "-c", "import time; time.sleep(30)"])
    try:
        for _ in range(200):  # until it runs that Python (not still the fork of this one)
            if b"time.sleep" in open(f"/proc/{worker.pid}/cmdline", "rb").read():
                break
            time.sleep(0.01)
        monkeypatch.setenv("PATH", "/usr/bin:/bin")
        monkeypatch.setattr(sys, "executable", str(tmp_path / "tools" / "python"))
        assert find_py_spy(worker.pid) == str(cluster / "py-spy")
        assert find_py_spy(os.getpid()) is None or "cluster-venv" not in find_py_spy(os.getpid())
    finally:
        worker.kill()
        worker.wait()
