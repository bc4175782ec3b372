"""Threads at one breakpoint (issue: hits lost, a continue that never answers):
every hit is shown, each thread's state and place is listed, and no run call
waits past its bound. Real debugpy, lldb-dap and delve."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.support import marker_line
from tests.support.mcp import call, in_process_client

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture
def hits_program(tmp_path):
    target = tmp_path / "py_thread_hits.py"
    shutil.copy(PROGRAMS / "py_thread_hits.py", target)
    return target


async def count_hits_mcp(client, program: Path, mode: str, count: int, **launch) -> list:
    """Launch with a breakpoint on the hit line and continue until the end;
    answers the (thread, line) of each stop. Every continue must answer within
    its waitMs (plus the machine's slack)."""
    line = marker_line(program, "@hit")
    launched = await call(client, "debug_launch", {
        "program": str(program), "args": [mode, str(count)], "breakpoints": [f"{program}:{line}"],
        **launch})
    stops = []
    answer = launched
    for _ in range(count + 5):
        status = "stopped" if "stop" in answer else answer.get("status") or answer.get("state")
        if status == "stopped":
            stop = answer["stop"]
            stops.append((stop["thread_id"], stop.get("breakpoint_ids")))
            # Threads that hit while a continue was on its way went on with it:
            # told with the next stop, as hits of breakpoint 1.
            stops += [(thread, "passed") for thread in stop.get("passed_threads") or []]
        elif status == "running":
            answer = await call(client, "debug_wait", {"timeoutMs": 20000})
            continue
        else:
            told = re.search(r"went on: ([\d, ]+)", answer.get("message") or "")
            stops += [(int(t), "passed") for t in told.group(1).split(",")] if told else []
            break
        started = time.monotonic()
        answer = await call(client, "debug_continue", {"waitMs": 5000})
        assert time.monotonic() - started < 8, "debug_continue outlived its waitMs"
    return stops


@pytest.mark.slow
async def test_ten_threads_fifty_ms_apart_give_ten_hits_mcp(no_leftover_processes, hits_program):
    async with in_process_client() as client:
        stops = await count_hits_mcp(client, hits_program, "stagger", 10)
        listed = await call(client, "debug_breakpoint_list")
        activity = await call(client, "debug_activity", {"last": 200})
        await call(client, "debug_terminate")
    # A thread that pydevd suspends for the all-stop's pause on the hit line in
    # the very moment the continue lets every thread go loses its place with
    # its frames (1 run in ~30 with three test files at once): that hit is not
    # shown, but said to be possibly unseen. Every other hit is shown.
    unseen = [e["summary"] for e in activity["entries"] if e["command"] == "hit unseen?"]
    assert len(unseen) <= 1, unseen
    assert listed["breakpoints"][0]["hits"] == 10 - len(unseen), (listed, stops, unseen)
    assert len(stops) == 10 - len(unseen), (stops, unseen)
    assert len({thread for thread, _ in stops}) == 10 - len(unseen)
    assert any(ids == [1] for _, ids in stops), stops


@pytest.mark.slow
async def test_hundred_threads_at_a_barrier_give_hundred_hits_mcp(no_leftover_processes, hits_program):
    async with in_process_client() as client:
        stops = await count_hits_mcp(client, hits_program, "barrier", 100)
        listed = await call(client, "debug_breakpoint_list")
        await call(client, "debug_terminate")
    assert listed["breakpoints"][0]["hits"] == 100, listed
    assert len({thread for thread, _ in stops}) == 100


@pytest.mark.slow
async def test_threads_list_each_state_and_place_mcp(no_leftover_processes, hits_program):
    line = marker_line(hits_program, "@hit")
    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "program": str(hits_program), "args": ["barrier", "4"],
            "breakpoints": [f"{hits_program}:{line}"]})
        for _ in range(100):  # the other three reach the line moments later
            listed = (await call(client, "debug_threads"))["threads"]
            if sum(bool(t.get("held")) for t in listed) == 3:
                break
        await call(client, "debug_terminate")
    workers = [t for t in listed if t["name"].startswith("worker")]
    assert len(workers) == 4
    for thread in workers:
        assert thread["stopped"] and thread["reason"] == "breakpoint", thread
        assert thread["function"] == "work" and thread["location"]["line"] == line, thread
    assert sum(bool(t.get("held")) for t in workers) == 3
    main = next(t for t in listed if t["name"] == "MainThread")
    assert main["stopped"] is False  # it waits in join, running


@pytest.mark.slow
async def test_continue_answers_within_its_bound_when_debugpy_does_not(no_leftover_processes, hits_program):
    """debugpy's own all-stop mode (what it does by default) stops answering
    `continue` when threads reach a breakpoint while others are held (debugpy
    issue 2048). Asked for that mode, every continue still answers within its
    waitMs, and terminate ends the session at once."""
    line = marker_line(hits_program, "@hit")
    (hits_program.parent / ".vscode").mkdir()
    (hits_program.parent / ".vscode" / "launch.json").write_text(json.dumps({"configurations": [{
        "name": "all-stop", "type": "debugpy", "request": "launch", "program": str(hits_program),
        "args": ["stagger", "20"], "stopAllThreadsOnSuspend": True,
        "steppingResumesAllThreads": True}]}))
    unanswered = 0
    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "launchConfig": "all-stop", "cwd": str(hits_program.parent),
            "breakpoints": [f"{hits_program}:{line}"]})
        answer = await call(client, "debug_wait", {"timeoutMs": 10000})
        status = "stopped" if "stop" in answer else answer["status"]
        for _ in range(25):
            if status == "terminated":
                break
            if status == "running":
                answer = await call(client, "debug_wait", {"timeoutMs": 1000})
                status = "stopped" if "stop" in answer else answer["status"]
                continue
            started = time.monotonic()
            answer = await call(client, "debug_continue", {"waitMs": 1000})
            assert time.monotonic() - started < 3, "debug_continue outlived its waitMs"
            status = "stopped" if "stop" in answer else answer["status"]
            if "has not answered continue" in (answer.get("message") or ""):
                unanswered += 1
                # The session stays usable: its state reads at once, pause answers.
                started = time.monotonic()
                await call(client, "debug_pause", {"waitMs": 500}, ok=False)
                assert time.monotonic() - started < 3, "debug_pause outlived its waitMs"
                break
        started = time.monotonic()
        await call(client, "debug_terminate")
        assert time.monotonic() - started < 3, "debug_terminate waited on the adapter"
    print("continues debugpy left unanswered:", unanswered)


def hit_line(source: Path) -> int:
    return next(n for n, text in enumerate(source.read_text().splitlines(), 1) if "@hit" in text)


async def native_hits(program: Path, source: Path, adapter: str, mode: str, count: int):
    async with in_process_client() as client:
        line = hit_line(source)
        launched = await call(client, "debug_launch", {
            "program": str(program), "args": [mode, str(count)], "adapter": adapter,
            "breakpoints": [f"{source}:{line}"]})
        stops, answer = [], launched
        for _ in range(count + 5):
            status = "stopped" if "stop" in answer else answer.get("status") or answer.get("state")
            if status == "running":
                answer = await call(client, "debug_wait", {"timeoutMs": 20000})
                continue
            if status != "stopped":
                break
            stops.append(answer["stop"]["thread_id"])
            if len(stops) == 1:
                first_threads = (await call(client, "debug_threads"))["threads"]
            started = time.monotonic()
            answer = await call(client, "debug_continue", {"waitMs": 5000})
            assert time.monotonic() - started < 8, "debug_continue outlived its waitMs"
        listed = await call(client, "debug_breakpoint_list")
        await call(client, "debug_terminate")
    return stops, listed["breakpoints"][0]["hits"], first_threads


def native_program(adapter: str) -> tuple[Path, Path]:
    """The built program and its source: C with pthreads for lldb-dap,
    goroutines for delve."""
    from tests.support.native_build import c_program, go_program

    if adapter == "lldb-dap":
        return c_program("native_thread_hits"), PROGRAMS / "native_thread_hits.c"
    return go_program("go_thread_hits"), PROGRAMS / "go_thread_hits.go"


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("adapter,mode,count", [
    ("lldb-dap", "stagger", 10), ("lldb-dap", "barrier", 100),
    ("dlv", "stagger", 10), ("dlv", "barrier", 100)])
async def test_native_threads_every_hit_shown_mcp(no_leftover_processes, adapter, mode, count):
    program, source = native_program(adapter)
    stops, hits, threads = await native_hits(program, source, adapter, mode, count)
    if adapter == "lldb-dap":
        # lldb-dap stops every thread and tells each one's stop: all held, each
        # shown by a continue. Its hit count may read fewer (docs/backends.md).
        assert len(set(stops)) == count, (stops, hits)
        at_line = [t for t in threads if t.get("location") and t["location"]["line"] == hit_line(source)]
        assert at_line and all(t["stopped"] for t in at_line), threads
    else:
        # delve reports one goroutine's hit per stop and steps every other one
        # sitting on a breakpoint past it on continue; the backend reads where
        # the goroutines on a thread are at each stop and holds those hits
        # (docs/backends.md, "Threads at one breakpoint elsewhere"). Each hit
        # once: none lost, none told twice.
        assert len(stops) == len(set(stops)) == count and hits == count, (stops, hits)
        assert any(t.get("function") and "work" in t["function"] for t in threads), threads


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_delve_conditional_breakpoint_holds_no_goroutine_by_place_alone(no_leftover_processes):
    """Goroutines on a conditional breakpoint's line are not hits by place: the
    ones whose condition is false are never shown, held or counted."""
    program, source = native_program("dlv")
    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "program": str(program), "args": ["barrier", "20"], "adapter": "dlv",
            "breakpoints": [{"file": str(source), "line": hit_line(source),
                             "condition": "index%2 == 0"}]})
        answer = await call(client, "debug_wait", {"timeoutMs": 20000})
        seen = []
        for _ in range(25):
            # an answer with a stop is a stopped one (it says no status then)
            status = answer.get("status") or ("stopped" if "stop" in answer else None)
            if status == "running":
                answer = await call(client, "debug_wait", {"timeoutMs": 20000})
                continue
            if status != "stopped":
                break
            seen.append(answer["stop"]["thread_id"])
            index = await call(client, "debug_evaluate", {"expression": "index"})
            assert int(index["value"]) % 2 == 0, (seen, index)
            answer = await call(client, "debug_continue", {"waitMs": 5000})
        listed = await call(client, "debug_breakpoint_list")
        await call(client, "debug_terminate")
    assert seen and len(seen) == len(set(seen)) <= 10, seen
    assert listed["breakpoints"][0]["hits"] == len(seen), listed


@pytest.mark.slow
@pytest.mark.timeout(180)  # a dozen CLI processes, each a Python start-up
def test_cli_threads_show_state_and_place_and_continue_shows_each_hit(no_leftover_daemons, hits_program):
    import subprocess
    import sys

    def tdb(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=hits_program.parent,
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    line = marker_line(hits_program, "@hit")
    tdb("start", "--break", f"{hits_program.name}:{line}", hits_program.name, "barrier", "5")
    tdb("await")
    threads = ""
    for _ in range(50):  # the other four reach the line moments later
        threads = tdb("threads")
        if threads.count("held: breakpoint") == 4:
            break
    assert threads.count("held: breakpoint (next continue)") == 4, threads
    assert threads.count(f"work {hits_program.name}:{line}") == 5, threads
    seen = set()
    for _ in range(4):
        answer = tdb("continue")
        assert "Stopped (breakpoint #1)" in answer, answer
        seen.add(re.search(r"thread (\d+)", answer).group(1))
    assert len(seen) == 4
    assert "The program ended" in tdb("continue")
    tdb("stop")


@pytest.mark.slow
async def test_tui_threads_pane_shows_each_thread_state_and_place(hits_program):
    from tests.support.tui import wait_until
    from tui_debugger.tui.app import create_app
    from tui_debugger.tui.widgets.threads_pane import ThreadsPane

    line = marker_line(hits_program, "@hit")
    app = create_app("launch", {"program": str(hits_program), "args": ["barrier", "4"],
                                "breakpoints": [f"{hits_program}:{line}"]},
                     cwd=str(hits_program.parent))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.state == "stopped" and app.source.location_line == line,
                         what="the first hit")
        await pilot.press("alt+h")
        threads = app.query_one(ThreadsPane)

        def rows():
            return [[str(cell) for cell in threads.get_row_at(r)] for r in range(threads.row_count)]

        # Kept current: the other three arrive held while the first stop is shown.
        await wait_until(pilot, lambda: sum(r[2].startswith("held") for r in rows()) == 3,
                         what="three threads held at the breakpoint")
        workers = [r for r in rows() if r[1].startswith("worker")]
        assert all(r[3].startswith("work ") and r[3].endswith(f"{hits_program.name}:{line}")
                   for r in workers), workers
        first = app.stop_info.thread_id
        await pilot.press("f5")  # shows the next held hit: nothing runs
        await wait_until(pilot, lambda: app.state == "stopped" and app.stop_info is not None
                         and app.stop_info.thread_id != first, what="the next held hit")
        await app.action_quit()


@pytest.mark.slow
@pytest.mark.timeout(300)  # a CLI process per hit, each a Python start-up
@pytest.mark.parametrize("adapter,mode", [("lldb-dap", "barrier"), ("dlv", "stagger"), ("dlv", "barrier")])
def test_cli_native_threads_each_hit_shown(no_leftover_daemons, tmp_path, adapter, mode):
    import subprocess
    import sys

    def tdb(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    program, source = native_program(adapter)
    line = hit_line(source)
    tdb("start", "--adapter", adapter, "--break", f"{source}:{line}", str(program), mode, "10")
    answer = tdb("await")
    assert f"work {source}:{line}" in tdb("threads") or f"work {source.name}:{line}" in tdb("threads")
    seen = []
    for _ in range(15):
        hit = re.search(r"Stopped \(breakpoint #1\) in \S*work\S* at \S+?:(\d+)(?::\d+)?, thread (\d+)", answer)
        if hit is None:
            break
        assert int(hit.group(1)) == line, answer
        seen.append(hit.group(2))
        answer = tdb("continue")
        if "Stopped" not in answer and "ended" not in answer:
            answer = tdb("await")
    assert "The program ended" in answer, answer
    tdb("stop")
    assert len(set(seen)) == len(seen) == 10, seen


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("adapter,mode", [("lldb-dap", "barrier"), ("dlv", "stagger"), ("dlv", "barrier")])
async def test_tui_native_threads_each_hit_shown(tmp_path, adapter, mode):
    from tests.support.tui import wait_until
    from tui_debugger.tui.app import create_app
    from tui_debugger.tui.widgets.threads_pane import ThreadsPane

    program, source = native_program(adapter)
    line = hit_line(source)
    app = create_app("launch", {"program": str(program), "args": [mode, "10"], "adapter": adapter,
                                "breakpoints": [f"{source}:{line}"]}, cwd=str(tmp_path))
    seen = []
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("alt+h")
        threads = app.query_one(ThreadsPane)
        for _ in range(15):
            await wait_until(pilot, lambda: app.state == "terminated" or (
                app.state == "stopped" and app.stop_info is not None
                and app.stop_info.thread_id not in seen), what="the next hit", timeout=60)
            if app.state == "terminated":
                break
            assert app.source.location_line == line
            seen.append(app.stop_info.thread_id)
            # The Threads pane shows the stopped thread in work at the line.
            await wait_until(pilot, lambda: any(
                "work " in str(threads.get_row_at(r)[3]) and
                str(threads.get_row_at(r)[3]).endswith(f"{source.name}:{line}")
                for r in range(threads.row_count)), what="the thread's place in the Threads pane")
            await pilot.press("f5")
        await app.action_quit()
    assert len(set(seen)) == len(seen) == 10, seen


IMPORTS = """
import atexit, runpy, sys
def report():
    heavy = ("textual", "mcp", "backends.dap", "backends.cdp", "backends.lldb_cli", "backends.simctl")
    sys.stderr.write("IMPORTED " + " ".join(m for m in heavy if m in sys.modules) + "\\n")
atexit.register(report)
sys.argv = ["tui-debugger", *sys.argv[1:]]
{body}
"""


def test_nothing_heavy_is_imported_where_unused(tmp_path):
    import subprocess
    import sys

    from tests.conftest import ROOT

    def imported(body: str, *args: str) -> set[str]:
        done = subprocess.run([sys.executable, "-c", IMPORTS.replace("{body}", body), *args],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60,
                              env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
        line = next(l for l in done.stderr.splitlines() if l.startswith("IMPORTED"))
        return set(line.split()[1:])

    # A CLI client (here: no session to reach) loads no TUI, no MCP, no debugger.
    assert imported("import contextlib\nwith contextlib.suppress(SystemExit):\n"
                    "    runpy.run_module('tui_debugger', run_name='__main__')", "sessions") == set()
    # The host of a session loads its debugger's backend when it starts one, never the TUI.
    assert imported("import tui_debugger.host.daemon") <= {"backends.dap", "backends.cdp",
                                                      "backends.lldb_cli", "backends.simctl"}


@pytest.mark.slow
async def test_a_launch_that_waits_long_for_its_first_stop_says_so(no_leftover_processes, tmp_path):
    program = tmp_path / "late.py"
    program.write_text("import time\ntime.sleep(8)\nx = 1  # @late\n")
    async with in_process_client() as client:
        answer = await call(client, "debug_launch", {
            "program": str(program), "waitMs": 6000,
            "breakpoints": [f"{program}:{marker_line(program, '@late')}"]})
        assert answer["state"] == "running", answer
        assert "No stop yet after 5 s" in answer["message"] and "traces every line" in answer["message"]
        await call(client, "debug_terminate")


@pytest.mark.slow
def test_cli_start_that_waits_long_for_its_first_stop_says_so(no_leftover_daemons, tmp_path):
    import subprocess
    import sys

    program = tmp_path / "late.py"
    program.write_text("import time\ntime.sleep(12)\nx = 1  # @late\n")

    def tdb(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    started = tdb("start", "--break", f"late.py:{marker_line(program, '@late')}", "late.py")
    tdb("stop")
    assert "No stop yet after 5 s" in started, started
    assert "on Python 3.11 debugpy traces every line of all code" in started, started


@pytest.mark.slow
async def test_tui_launch_that_waits_long_for_its_first_stop_says_so(no_leftover_processes, tmp_path):
    from tests.support.tui import wait_until
    from tui_debugger.tui.app import create_app

    program = tmp_path / "late.py"
    program.write_text("import time\ntime.sleep(20)\nx = 1  # @late\n")
    app = create_app("launch", {"program": str(program),
                                "breakpoints": [f"{program}:{marker_line(program, '@late')}"]},
                     cwd=str(tmp_path))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: any("No stop yet after 5 s" in str(n.message)
                                            for n in app._notifications), timeout=15,
                         what="the notice of a long wait for the first stop")
        assert app.state != "stopped"
        await app.action_quit()


@pytest.mark.slow
async def test_first_stop_notice_names_the_programs_python(no_leftover_processes, tmp_path):
    """A program run by another Python than debugpy's: the notice says its
    tracer has no compiled speed-ups there (the 100,000-line module's minutes)."""
    from tests.support.pyenvs import base_python

    program = tmp_path / "late.py"
    program.write_text("import time\ntime.sleep(8)\nx = 1  # @late\n")
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "launch.json").write_text(json.dumps({"configurations": [{
        "name": "py312", "type": "debugpy", "request": "launch", "program": str(program),
        "python": base_python("3.12")}]}))
    async with in_process_client() as client:
        answer = await call(client, "debug_launch", {
            "launchConfig": "py312", "cwd": str(tmp_path), "waitMs": 6000,
            "breakpoints": [f"{program}:{marker_line(program, '@late')}"]})
        await call(client, "debug_terminate")
    message = answer["message"]
    assert "on Python 3.12 debugpy traces every line of the code holding a breakpoint" in message, message
    assert "without its compiled speed-ups" in message, message
