"""Real projects: the program runs under the user's Python (its venv, with its
packages), not tui-debugger's; pytest; restart; partial lines."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import marker_line
from tests.support.pyenvs import PACKAGE, base_python, project_venv

PROGRAMS = Path(__file__).parent / "programs"


def tdb(cwd: Path, *args: str, env: dict | None = None, check: bool = True,
        timeout: float = 60) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"tui-debugger {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def without_venv() -> dict[str, str]:
    """The environment of a user with no venv active (the test runner's is)."""
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    return env


@pytest.fixture
def project(tmp_path):
    shutil.copy(PROGRAMS / "py_project_app.py", tmp_path / "app.py")
    return tmp_path


def test_library_code_is_stepped_into_and_stopped_in_only_when_asked(project,
                                                                   no_leftover_daemons):
    """By default a session skips library code (debugpy's justMyCode): a step
    into a library call stays in the user's code, and a breakpoint in the
    library says, in our words, how to stop there. `--no-just-my-code` (MCP
    justMyCode: false) steps into the venv's package, and restart keeps it.
    Non-Python programs are told it is not theirs."""
    venv = project_venv("3.12")
    line = marker_line(project / "app.py", "@table")
    env = without_venv()
    python = ["--python", str(venv / "bin" / "python")]
    library = next(venv.glob(f"lib/python3.12/site-packages/{PACKAGE}/__init__.py"))

    tdb(project, "start", *python, "--break", f"app.py:{line}", "app.py", env=env)
    stepped = tdb(project, "step", env=env).stdout
    assert "app.py" in stepped.splitlines()[0] and PACKAGE not in stepped.splitlines()[0]
    said = tdb(project, "break", "add", f"{library}:2", env=env).stdout
    assert "--no-just-my-code" in said and "justMyCode false" in said
    assert "launch.json)" not in said and len(said.strip().splitlines()) <= 2, said
    tdb(project, "break", "remove", "--all", env=env)  # kept for the next run else
    tdb(project, "stop", env=env)

    tdb(project, "start", *python, "--no-just-my-code", "--break", f"app.py:{line}", "app.py",
        env=env)
    for run in ("the launch", "a restart"):
        stepped = tdb(project, "step", env=env).stdout.splitlines()[0]
        assert f"{PACKAGE}/__init__.py" in stepped, (run, stepped)
        if run == "the launch":
            assert f"app.py:{line}" in tdb(project, "restart", env=env).stdout
    tdb(project, "stop", env=env)

    refused = tdb(project, "start", "--no-just-my-code", str(PROGRAMS / "node" / "spin.js"),
                  env=env, check=False)
    assert refused.returncode != 0 and "is for Python programs" in refused.stderr + refused.stdout


# ---------------------------------------------------------------- choosing the interpreter


def test_the_interpreter_is_chosen_in_the_documented_order(tmp_path):
    from backends.errors import InvalidInput
    from backends.python_env import find_python

    v312, v313 = project_venv("3.12"), project_venv("3.13")
    nested = tmp_path / "proj" / "src" / "pkg"
    nested.mkdir(parents=True)
    (tmp_path / "proj" / ".venv").symlink_to(v313)
    env = {"PATH": os.environ["PATH"]}

    explicit = find_python(str(v312 / "bin" / "python"), str(nested), env={
        **env, "VIRTUAL_ENV": str(v313)})
    assert explicit.source == "--python" and explicit.version.startswith("3.12.")
    # a venv's directory stands for its interpreter
    assert find_python(str(v312), str(nested), env=env).version.startswith("3.12.")

    active = find_python(None, str(nested), env={**env, "VIRTUAL_ENV": str(v312)})
    assert active.source == "$VIRTUAL_ENV" and active.version.startswith("3.12.")

    above = find_python(None, str(nested), env=env)
    assert above.source == ".venv above the program" and above.version.startswith("3.13.")
    assert above.path == str(tmp_path / "proj" / ".venv" / "bin" / "python3")

    bare = tmp_path / "bare"
    bare.mkdir()
    on_path = find_python(None, str(bare), env={"PATH": str(Path(base_python("3.12")).parent)})
    assert on_path.source == "python3 on PATH" and on_path.version.startswith("3.12.")

    own = find_python(None, str(bare), env={"PATH": str(tmp_path / "nothing")})
    assert own.source == "tui-debugger's own Python" and own.is_ours

    with pytest.raises(InvalidInput, match="no Python interpreter at"):
        find_python(str(tmp_path / "nope" / "python"), str(bare), env=env)
    with pytest.raises(InvalidInput, match="does not run as a Python interpreter"):
        find_python("/bin/true", str(bare), env=env)


@pytest.mark.slow
@pytest.mark.timeout(240)  # several real sessions, one after another
@pytest.mark.parametrize("version", ["3.12", "3.13"])
def test_the_program_runs_in_its_own_venv(version, project, no_leftover_daemons):
    """The user's venv (a Python other than ours, with a package from PyPI and no
    debugpy): chosen by --python for 3.12, found as .venv beside the program for
    3.13; the stop, status and doctor say which."""
    venv = project_venv(version)
    line = marker_line(project / "app.py", "@table")
    env = without_venv()
    if version == "3.12":
        chosen = ["--python", str(venv / "bin" / "python")]
        source = "--python"
    else:
        (project / ".venv").symlink_to(venv)
        chosen, source = [], ".venv above the program"
    assert subprocess.run([str(venv / "bin" / "python"), "-c", "import debugpy"],
                          capture_output=True).returncode != 0
    started = tdb(project, "start", *chosen, "--break", f"app.py:{line}", "app.py", env=env).stdout
    assert f"●> {line}" in started
    assert f"python: Python {version}." in started and f"({source})" in started
    assert f"{PACKAGE}/__init__.py" in started and str(project_venv(version).name) in started \
        or ".venv" in started
    status = json.loads(tdb(project, "status", "--json", env=env).stdout)
    assert status["python"].startswith(f"Python {version}.")
    assert status["pythonShort"].startswith(f"py{version}")
    assert "exit code 0" in tdb(project, "continue", env=env).stdout
    out = tdb(project, "output", env=env).stdout
    assert f"python      {version}" in out
    tdb(project, "stop", env=env)
    if version == "3.13":
        doctor = tdb(project, "doctor", env=env).stdout
        assert f"run under Python {version}." in doctor and "(.venv above the program)" in doctor


# ---------------------------------------------------------------- pytest


@pytest.fixture
def calc(tmp_path):
    shutil.copy(PROGRAMS / "py_pytest_calc.py", tmp_path / "test_calc.py")
    return tmp_path


@pytest.mark.slow
@pytest.mark.timeout(240)  # several real sessions, one after another
def test_pytest_stops_at_a_failing_assertion_and_an_error(calc, no_leftover_daemons):
    """`start -m pytest` passes pytest's own flags on, and a failing test stops in
    the test's frame with the assertion's text, as `pytest --pdb` would."""
    failing = marker_line(calc / "test_calc.py", "@assert")
    error = marker_line(calc / "test_calc.py", "@error")
    tdb(calc, "start", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_calc.py")
    stop = tdb(calc, "await", "--timeout", "30").stdout
    assert f"in test_add at test_calc.py:{failing}" in stop, stop
    assert "AssertionError: assert -1 == 5" in stop and "result (int) = -1" in stop
    assert "note:" not in stop and "Current frame" not in stop
    assert tdb(calc, "bt").stdout.splitlines()[0].startswith("* #0 test_add")
    stop = tdb(calc, "continue", "--wait-ms", "30000").stdout
    assert f"in test_error at test_calc.py:{error}" in stop and "KeyError: 'missing'" in stop
    assert "exit code 1" in tdb(calc, "continue", "--wait-ms", "30000").stdout
    out = tdb(calc, "output").stdout
    assert "2 failed, 1 passed" in out and "unrecognized arguments" not in out
    tdb(calc, "stop")


async def test_pytest_through_mcp(calc, mcp_env, no_leftover_processes):
    from tests.support.mcp import call, in_process_client

    failing = marker_line(calc / "test_calc.py", "@assert")
    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "module": "pytest", "args": ["-q", "-p", "no:cacheprovider", "test_calc.py::test_add"],
            "cwd": str(calc)})
        stop = await call(client, "debug_wait", {"timeoutMs": 30_000})
        assert stop["stop"]["reason"] == "exception", stop
        assert stop["stop"]["function"] == "test_add"
        assert stop["stop"]["location"]["line"] == failing
        assert "assert -1 == 5" in stop["stop"]["text"]
        value = await call(client, "debug_evaluate", {"expression": "result"})
        assert "-1" in value.text
        await call(client, "debug_terminate", {})


# ---------------------------------------------------------------- restart


@pytest.fixture
def basic(tmp_path):
    shutil.copy(PROGRAMS / "py_basic.py", tmp_path / "py_basic.py")
    return tmp_path


def test_restart_after_the_program_ended_keeps_breakpoints_and_filters(basic,
                                                                        no_leftover_daemons):
    line = marker_line(basic / "py_basic.py", "@call-total")
    tdb(basic, "start", "--break", f"py_basic.py:{line}", "py_basic.py")
    tdb(basic, "break", "exceptions", "raised", "uncaught")
    assert "exit code 0" in tdb(basic, "continue", "--wait-ms", "20000").stdout
    assert "hits=1" in tdb(basic, "break", "list").stdout
    again = tdb(basic, "restart").stdout
    assert f"●> {line}" in again, again
    assert "hits=1" in tdb(basic, "break", "list").stdout  # the new run's own count
    assert "raised" in tdb(basic, "break", "exceptions").stdout
    assert "--- restarted by cli ---" in tdb(basic, "output").stdout
    tdb(basic, "stop")


async def test_restart_after_stop_through_mcp(basic, mcp_env, no_leftover_processes):
    from tests.support.mcp import call, in_process_client

    line = marker_line(basic / "py_basic.py", "@loop-body")
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(basic / "py_basic.py"),
                                            "breakpoints": [f"{basic / 'py_basic.py'}:{line}"]})
        ended = await call(client, "debug_terminate", {})
        assert ended["state"] == "terminated"
        again = await call(client, "debug_restart", {})
        assert again["state"] == "stopped" and again["stop"]["location"]["line"] == line
        assert again["pid"] > 0 and "adapter" not in again and "python" not in again  # as before
        await call(client, "debug_terminate", {})


@pytest.mark.slow
@pytest.mark.timeout(240)  # several real sessions, one after another
async def test_tui_restarts_after_stop_and_follows_a_restart_by_another_client(
        basic, no_leftover_processes):
    from tests.support.tui import wait_until
    from tui_debugger.tui.app import create_app

    line = marker_line(basic / "py_basic.py", "@call-total")
    program = basic / "py_basic.py"
    app = create_app("launch", {"program": str(program), "breakpoints": [f"{program}:{line}"]},
                     cwd=str(basic))

    def stopped_at_line() -> bool:
        return app.state == "stopped" and app.source.location_line == line

    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, stopped_at_line, 30, "the first stop")
        for again in ("ctrl+shift+f5", "f5"):
            await pilot.press("shift+f5")
            await wait_until(pilot, lambda: app.state == "terminated", 20, "the stop")
            await pilot.press(again)
            await wait_until(pilot, stopped_at_line, 30, f"the stop after {again}")
        # Another client restarts it: this TUI follows.
        name = app.link.name
        await pilot.press("f5")
        await wait_until(pilot, lambda: app.state == "terminated", 20, "the end")
        import asyncio

        done = await asyncio.to_thread(tdb, basic, "restart", "--session", name)
        assert f"●> {line}" in done.stdout
        await wait_until(pilot, stopped_at_line, 30, "the stop after a restart by the CLI")
        assert app.status.exit_code is None


# ---------------------------------------------------------------- partial lines


async def test_a_prompt_without_a_newline_shows_at_once_in_the_tui(tmp_path,
                                                                     no_leftover_processes):
    from tests.support.tui import wait_until
    from tui_debugger.tui.app import create_app
    from tui_debugger.tui.messages import SendInput
    from tui_debugger.tui.widgets.output_pane import OutputPane

    program = tmp_path / "ask.py"
    program.write_text('name = input("name? ")\nprint("hello", name)\n')
    app = create_app("launch", {"program": str(program), "stdin": "pipe"}, cwd=str(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        log = app.query_one(OutputPane).log_view
        await wait_until(pilot, lambda: log.open_line == ("stdout", "name? "), 30,
                         "the prompt in the Output pane")
        assert app.state == "running"
        assert ("stdout", "name? ") not in list(log.lines)  # its line is still open
        app.query_one(OutputPane).post_message(SendInput("Ada"))
        await wait_until(pilot, lambda: ("stdout", "hello Ada") in list(log.lines), 30,
                         "the answer")
        assert log.open_line is None and ("stdout", "name? ") in list(log.lines)


async def test_a_prompt_without_a_newline_reaches_debug_output(tmp_path, mcp_env,
                                                                 no_leftover_processes):
    import asyncio

    from tests.support.mcp import call, in_process_client

    program = tmp_path / "ask.py"
    program.write_text('name = input("name? ")\nprint("hello", name)\n')
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(program), "stdin": "pipe"})
        text = ""
        for _ in range(300):
            out = await call(client, "debug_output", {})
            text = "".join(e["text"] for e in out["entries"])
            if text:
                break
            await asyncio.sleep(0.1)
        assert text == "name? "
        await call(client, "debug_terminate", {})


# ---------------------------------------------------------------- child processes

CHILDREN = PROGRAMS / "children"


@pytest.fixture
def children(tmp_path):
    for path in CHILDREN.iterdir():
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def wait_for_stopped_child(cwd: Path, timeout: float = 60) -> dict:
    """The first child process's session that stopped, from `sessions` and `status`."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listed = json.loads(tdb(cwd, "sessions", "--json").stdout)["sessions"]
        for entry in listed:
            if entry.get("parent"):
                status = json.loads(tdb(cwd, "status", "--session", entry["name"], "--json",
                                        check=False).stdout or "{}")
                if status.get("state") == "stopped":
                    return {**entry, "status": status, "listed": listed}
        time.sleep(0.3)
    raise AssertionError(f"no child process stopped within {timeout} s: {listed}")


def hit_and_step_in_a_child(cwd: Path, program: str, args: list[str], file: str,
                            marker: str, after: str) -> dict:
    line, next_line = marker_line(cwd / file, marker), marker_line(cwd / file, after)
    tdb(cwd, "start", "--break", f"{file}:{line}", program, *args)
    child = wait_for_stopped_child(cwd)
    assert child["status"]["stop"]["location"]["line"] == line
    assert child["status"]["stop"]["location"]["path"].endswith(file)
    root = next(e for e in child["listed"] if not e.get("parent"))
    assert root["current"] and not child["current"]  # the default stays the program's
    stepped = tdb(cwd, "next", "--session", child["name"]).stdout
    assert "Stopped (step) in " in stepped, stepped
    assert f"{file}:{next_line}," in stepped or f"{file}:{next_line}:" in stepped, stepped
    status = json.loads(tdb(cwd, "status", "--json").stdout)
    assert status["session"] == root["name"]  # no --session: the root
    tdb(cwd, "stop")  # the root: the tree ends with it
    listed = json.loads(tdb(cwd, "sessions", "--json").stdout)["sessions"]
    assert listed == [], listed
    return child


@pytest.mark.slow
@pytest.mark.timeout(240)  # several real sessions, one after another
@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_a_breakpoint_in_a_pool_worker(method, children, no_leftover_daemons):
    child = hit_and_step_in_a_child(children, "pool.py", [method], "pool.py", "@worker",
                                    "@worker-return")
    assert "multiprocessing" in child["program"] or "pool.py" in child["program"]


@pytest.mark.slow
@pytest.mark.timeout(240)  # several real sessions, one after another
def test_a_breakpoint_in_a_subprocess_run_child(children, no_leftover_daemons):
    child = hit_and_step_in_a_child(children, "run_child.py", [], "child.py", "@child",
                                    "@child-print")
    assert child["program"] == "child.py 7"
    assert "access" not in json.dumps(child)  # pydevd's token never shows


@pytest.mark.slow
@pytest.mark.timeout(240)  # several real sessions, one after another
def test_a_breakpoint_behind_a_django_style_reloader(children, no_leftover_daemons):
    hit_and_step_in_a_child(children, "reloader.py", [], "reloader.py", "@serve", "@serve-return")


@pytest.mark.slow
@pytest.mark.timeout(240)  # several real sessions, one after another
def test_a_breakpoint_in_an_os_fork_child(children, no_leftover_daemons):
    hit_and_step_in_a_child(children, "forks.py", [], "forks.py", "@forked", "@forked-return")


@pytest.mark.timeout(240)  # several real sessions, one after another
@pytest.mark.slow
@pytest.mark.parametrize("how", ["fork", "spawn"])
def test_a_breakpoint_in_a_node_child(how, children, no_leftover_daemons):
    from tests.support import require

    require(shutil.which("node") is not None, "node")
    child = hit_and_step_in_a_child(children, "fork.js", [how], "worker.js", "@worker",
                                    "@worker-answer")
    assert child["program"] == "worker.js 7", child
    assert child["adapter"] == "node", child
    assert "ws://" not in json.dumps(child)  # the inspector's URL is a secret


#: each kind of child process: (program, its args, file of the breakpoint, its
#: marker, the line a step reaches, a name there and its value)
KINDS = {
    "pool-fork": ("pool.py", ["fork"], "pool.py", "@worker", "@worker-return", "n", "3"),
    "pool-spawn": ("pool.py", ["spawn"], "pool.py", "@worker", "@worker-return", "n", "3"),
    "pool-forkserver": ("pool.py", ["forkserver"], "pool.py", "@worker", "@worker-return",
                        "n", "3"),
    "subprocess.run": ("run_child.py", [], "child.py", "@child", "@child-print", "value", "7"),
    "reloader": ("reloader.py", [], "reloader.py", "@serve", "@serve-return", "port", "8000"),
    "node-fork": ("fork.js", ["fork"], "worker.js", "@worker", "@worker-answer", "value", "7"),
    "ProcessPoolExecutor": ("executor.py", [], "executor.py", "@worker", "@worker-return",
                            "n", "3"),
    "os.fork": ("forks.py", [], "forks.py", "@forked", "@forked-return", "n", "7"),
    # the process re-executes itself: the new image, same pid, is a process of its own
    "exec": ("execs.py", [], "execs.py", "@again", "@again-print", "value", "42"),
}
#: the cheap ones run every time; the rest are `slow`
_CHEAP = {"subprocess.run", "node-fork"}


def kinds():
    return [pytest.param(kind, id=kind, marks=() if kind in _CHEAP else pytest.mark.slow)
            for kind in KINDS]


def _needs(kind: str) -> None:
    if kind.startswith("node"):
        from tests.support import require

        require(shutil.which("node") is not None, "node")


@pytest.mark.timeout(240)  # several real sessions, one after another
@pytest.mark.parametrize("kind", kinds())
async def test_a_child_process_through_mcp(kind, children, mcp_env, no_leftover_processes):
    import asyncio

    from tests.support.mcp import call, in_process_client

    _needs(kind)
    program, args, file, marker, after, name, value = KINDS[kind]
    line = marker_line(children / file, marker)
    after = marker_line(children / file, after)
    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "program": str(children / program), "args": args, "cwd": str(children),
            "breakpoints": [f"{children / file}:{line}"], "waitMs": 0})
        stop = None
        for _ in range(600):  # the first child that stops (a pool has a helper or two)
            listed = (await call(client, "debug_sessions", {}))["sessions"]
            for child in [s for s in listed if s.get("parent")]:
                status = await call(client, "debug_status", {"debugSessionId": child["name"]})
                if status.get("state") == "stopped":
                    stop = status
                    break
            if stop:
                break
            await asyncio.sleep(0.1)
        assert stop is not None, listed
        root = next(s for s in listed if not s.get("parent"))
        parents = {s["name"]: s.get("parent") for s in listed}
        up = child["name"]
        while parents.get(up):  # a forkserver's worker is the fork server's child
            up = parents[up]
        assert up == root["name"] and child["parent"] in parents, listed
        assert stop["stop"]["location"]["line"] == line, stop
        assert stop["stop"]["location"]["path"].endswith(file), stop
        stepped = await call(client, "debug_step_over", {"debugSessionId": child["name"]})
        assert stepped["stop"]["location"]["line"] == after
        shown = await call(client, "debug_evaluate", {"expression": name,
                                                      "debugSessionId": child["name"]})
        assert value in shown.text
        await call(client, "debug_terminate", {})  # the root's: its children end too
        for _ in range(100):
            listed = (await call(client, "debug_sessions", {}))["sessions"]
            if not any(s.get("parent") for s in listed):
                break
            await asyncio.sleep(0.1)
        assert all(s.get("state") in (None, "terminated") for s in listed), listed
        assert not any(s.get("parent") for s in listed), listed


@pytest.mark.slow
@pytest.mark.timeout(240)  # several real sessions, one after another
@pytest.mark.parametrize("kind", kinds())
async def test_the_tui_follows_a_stop_into_a_child_and_back(kind, children,
                                                           no_leftover_processes):
    from tests.support.tui import wait_until
    from tui_debugger.tui.app import create_app

    _needs(kind)
    program, args, file, marker, after, _name, _value = KINDS[kind]
    line = marker_line(children / file, marker)
    after = marker_line(children / file, after)
    app = create_app("launch", {"program": str(children / program), "args": args,
                                "breakpoints": [f"{children / file}:{line}"]},
                     cwd=str(children))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state == "stopped" and app.link is not None
                         and "." in app.link.name and app.source.location_line == line, 60,
                         "the TUI on the child's stop")
        root, child = app.link.name.split(".")[0], app.link.name
        await pilot.press("f10")
        await wait_until(pilot, lambda: app.state == "stopped"
                         and app.source.location_line == after, 30, "the step in the child")
        await pilot.press("f5")  # the child ends: back to the parent, which ends too
        # Back on the child's parent: the program, or (forkserver) the fork
        # server, whose own end may come with the whole tree's.
        await wait_until(pilot, lambda: app.link is not None and app.link.name != child and (
            app.link.name == root or app.link.name.startswith(root + ".")), 60,
            "the TUI back on the parent")
        await wait_until(pilot, lambda: app.state == "terminated", 60, "the parent's end")


@pytest.mark.timeout(240)
async def test_the_threads_pane_shows_the_processes_and_switches_between_them(
        children, no_leftover_processes):
    import contextlib

    from textual.widgets import TabbedContent

    from tests.support import require
    from tests.support.tui import wait_until
    from tui_debugger.tui.app import create_app

    require(shutil.which("node") is not None, "node")
    line = marker_line(children / "worker.js", "@worker")
    app = create_app("launch", {"program": str(children / "fork.js"), "args": ["fork"],
                                "breakpoints": [f"{children / 'worker.js'}:{line}"]},
                     cwd=str(children))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state == "stopped" and app.link is not None
                         and "." in app.link.name, 60, "the TUI on the child's stop")
        child = app.link.name
        root = child.split(".")[0]
        app.query_one("#nav-tabs", TabbedContent).active = "tab-threads"
        table = app.query_one("#threads")

        def keys() -> list[str]:
            return [str(k.value) for k in table.rows]

        await wait_until(pilot, lambda: keys()[:2] == [f"session:{root}", f"session:{child}"],
                         30, "the processes in the Threads pane")
        cells = [table.get_row(f"session:{name}") for name in (root, child)]
        assert cells[0][3] == root and cells[0][2] == "running", cells
        assert str(cells[1][0]).startswith("◆ └ pid ") and cells[1][1] == "worker.js 7", cells
        assert cells[1][2] == "stopped", cells
        assert keys()[2:] == ["1"]  # the child's thread, under it
        table.focus()
        # Choose the parent's process (a refresh of the pane may put the cursor
        # back on the selected thread before Enter: then choose again).
        for _ in range(5):
            table.move_cursor(row=0)
            await pilot.pause()
            if table.cursor_row == 0:
                await pilot.press("enter")
                with contextlib.suppress(AssertionError):
                    await wait_until(pilot, lambda: app.link is not None
                                     and app.link.name == root, 10, "the TUI on the parent")
            if app.link is not None and app.link.name == root:
                break
        assert app.link is not None and app.link.name == root


def test_threads_pane_with_processes_snapshot(snap_compare):
    from textual.app import App, ComposeResult

    from tui_debugger.commands.views import ThreadView
    from tui_debugger.tui.widgets.threads_pane import ProcessRow, ThreadsPane

    class Scene(App):
        def compose(self) -> ComposeResult:
            yield ThreadsPane(id="threads")

        def on_mount(self) -> None:
            self.query_one(ThreadsPane).show_threads(
                [ThreadView(id=1, name="main", selected=True, stopped=True)], (1, "breakpoint"),
                [ProcessRow("fork", 0, 4100, "/home/me/fork.js", "running", False),
                 ProcessRow("fork.4188", 1, 4188, "worker.js 7", "stopped", True),
                 ProcessRow("fork.4190", 1, 4190, "worker.js 8", "running", False)])

    assert snap_compare(Scene(), terminal_size=(80, 10))


@pytest.mark.slow
@pytest.mark.timeout(240)  # several real sessions, one after another
@pytest.mark.parametrize("adapter", ["lldb-dap", "dlv"])
async def test_a_backend_that_does_not_follow_children_says_so_once(adapter, mcp_env,
                                                                    no_leftover_processes):
    from tests.support.mcp import call, in_process_client
    from tests.support.native_build import c_program, go_program, line_of

    if adapter == "dlv":
        from backends.adapters import find_dlv
        from tests.support import require

        require(find_dlv() is not None, "delve (dlv)")
        program, source = go_program("go_fork"), "go_fork.go"
    else:
        from tests.support import require_executable

        require_executable("lldb-dap-19", "lldb-dap")
        program, source = c_program("native_fork"), "native_fork.c"
    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "program": str(program), "adapter": adapter,
            "breakpoints": [f"{PROGRAMS / source}:{line_of(source, 'after')}"],
            "waitMs": 60_000})
        status = await call(client, "debug_status", {})
        assert status["state"] == "stopped", status
        out = await call(client, "debug_output", {})
        said = [e["text"] for e in out["entries"] if "does not follow child processes" in e["text"]]
        assert len(said) == 1 and adapter in said[0] and "tui-debugger attach" in said[0], said
        await call(client, "debug_terminate", {})
