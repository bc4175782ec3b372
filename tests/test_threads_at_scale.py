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
@pytest.mark.xfail(strict=False, reason="known race (issue 32 open): a continue sent right after "
                   "a shown stop is sometimes refused as 'already running' while another "
                   "thread's hit arrives; see docs/backends.md")
async def test_ten_threads_fifty_ms_apart_give_ten_hits_mcp(no_leftover_processes, hits_program):
    async with in_process_client() as client:
        stops = await count_hits_mcp(client, hits_program, "stagger", 10)
        listed = await call(client, "debug_breakpoint_list")
        await call(client, "debug_terminate")
    assert listed["breakpoints"][0]["hits"] == 10, listed
    assert len(stops) == 10, stops
    assert len({thread for thread, _ in stops}) == 10
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


@pytest.mark.slow
async def test_lldb_dap_pthreads_every_hit_shown_mcp(no_leftover_processes):
    from tests.support.native_build import c_program

    program = c_program("native_thread_hits")
    source = PROGRAMS / "native_thread_hits.c"
    stops, hits, threads = await native_hits(program, source, "lldb-dap", "barrier", 10)
    assert len(set(stops)) == 10 and hits >= 7, (stops, hits)  # see docs/backends.md
    at_line = [t for t in threads if t.get("location") and t["location"]["line"] == hit_line(source)]
    assert at_line and all(t["stopped"] for t in at_line), threads


@pytest.mark.slow
async def test_delve_goroutines_every_hit_shown_mcp(no_leftover_processes):
    from tests.support.native_build import go_program

    program = go_program("go_thread_hits")
    source = PROGRAMS / "go_thread_hits.go"
    stops, hits, threads = await native_hits(program, source, "dlv", "stagger", 10)
    # delve shows each goroutine's hit by itself; on a loaded machine a few
    # fewer were seen (docs/backends.md, "Threads at one breakpoint elsewhere")
    assert len(set(stops)) >= 7 and hits == len(stops), (stops, hits)
    assert any(t.get("function") and "work" in t["function"] for t in threads), threads


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
    assert imported("import tui_debugger.daemon") <= {"backends.dap", "backends.cdp",
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
        assert "No stop yet after 5 s" in answer["message"] and "3.12" in answer["message"]
        await call(client, "debug_terminate")
