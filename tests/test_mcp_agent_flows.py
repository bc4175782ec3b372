"""The calls an agent makes first, back to back with no sleeps, each decided by
the last answer: a launch that will stop answers with the stop, the calls that
follow never race it, and every answer stays lean (measured in bytes)."""

from __future__ import annotations

import json

import pytest

from tests.support import require, require_executable
from tests.support.mcp import (
    PROGRAMS,
    PY_BASIC,
    Answer,
    call,
    fails,
    in_process_client,
    line_of,
    write_program,
)

BUDGET = 4096  # bytes of one answer, text and structured content together


def size(answer: Answer) -> int:
    return len(json.dumps(answer.raw.model_dump(mode="json", by_alias=True, exclude_none=True),
                          separators=(",", ":")))


async def test_output_defaults_to_the_newest_whole_lines(mcp_env, tmp_path, no_leftover_processes):
    program = write_program(tmp_path, "chatty.py", """
        for i in range(100_000):
            print(f"line {i} of the chatty program")
    """)
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(program)})
        ended = await call(client, "debug_wait", {"timeoutMs": 30_000})
        assert ended["status"] == "terminated"
        newest = await call(client, "debug_output", {})
        assert size(newest) <= BUDGET
        lines = "".join(e["text"] for e in newest["entries"]).splitlines()
        assert lines[-1] == "line 99999 of the chatty program"
        assert all(line.startswith("line ") and line.endswith(" program") for line in lines)
        # Hints in MCP's own spelling (camelCase arguments), not the CLI's flags.
        assert "earlier line(s) not shown" in newest.text and "`since: " in newest["note"]
        assert "`head: " in newest["note"] and "--" not in newest["note"]
        assert newest["earlierLines"] > 90_000 or newest.text.count("dropped")
        five = await call(client, "debug_output", {"tail": 5})
        assert "".join(e["text"] for e in five["entries"]) == "".join(
            f"line {i} of the chatty program\n" for i in range(99_995, 100_000))
        forward = await call(client, "debug_output", {"since": five["nextCursor"]})
        assert forward["entries"] == []
        await fails(client, "debug_output", {"since": 1, "tail": 3}, "invalid_input",
                    "cannot start at a cursor", "head")
        # From the start, in pieces: the first lines, then on from the cursor.
        first = await call(client, "debug_output", {"head": 3})
        texts = "".join(e["text"] for e in first["entries"])
        dropped_before = first.get("dropped", 0)
        if not dropped_before:
            assert texts == "".join(f"line {i} of the chatty program\n" for i in range(3))
        assert texts.count("\n") == 3 and "`since: " in first.text
        more = await call(client, "debug_output", {"since": first["nextCursor"], "head": 2})
        assert "".join(e["text"] for e in more["entries"]).count("\n") == 2


async def test_truncation_notes_give_true_lengths(mcp_env, tmp_path, no_leftover_processes):
    program = write_program(tmp_path, "big.py", """
        big = "x" * 1_000_000
        table = {i: i for i in range(200_000)}
        items = [{"id": i, "name": f"item number {i}"} for i in range(50)]
        print(len(big))  # @stop
    """)
    async with in_process_client() as client:
        stopped = await call(client, "debug_launch", {
            "program": str(program), "breakpoints": [f"{program}:{line_of(program, '@stop')}"]})
        assert stopped["state"] == "stopped" and size(stopped) <= BUDGET
        # Not the debugger's own cut as if it were the value's length; a step's
        # answer stays fast (no evaluation), debug_context asks for the truth.
        shown = {v["name"]: v["value"] for v in stopped["context"]["locals"]}
        assert "(at least " in shown["big"] and "more chars)" not in shown["big"]
        context = await call(client, "debug_context", {})
        assert "(1,000,000 chars in all)" in {v["name"]: v["value"]
                                              for v in context["locals"]}["big"]
        table = await call(client, "debug_variables", {"path": "table", "maxItems": 3})
        assert table["total"] == 200_000 and "of 200,000" in table["note"]
        big = await call(client, "debug_evaluate", {"expression": "big"})
        assert "(1,000,000 chars in all)" in big["value"] and size(big) <= BUDGET
        # A list answers with its value; children only on request, by path.
        listed = await call(client, "debug_evaluate", {"expression": "items"})
        assert listed["hasChildren"] and "children" not in listed.data and size(listed) <= BUDGET
        some = await call(client, "debug_evaluate", {"expression": "items", "children": 3})
        assert len(some["children"]) == 3
        one = await call(client, "debug_evaluate", {"expression": "items[2]['name']"})
        assert one["value"] == "'item number 2'"


# ============================================================================ first calls, every adapter


def _target(adapter: str):
    """(program, source, a line inside the loop) for each adapter's example."""
    if adapter == "debugpy":
        return PY_BASIC, PY_BASIC, line_of(PY_BASIC, "@loop-body")
    if adapter in ("lldb-dap", "lldb-cli"):
        from backends.adapters import find_lldb, find_lldb_dap
        from tests.support.native_build import c_program

        require((find_lldb_dap() if adapter == "lldb-dap" else find_lldb()) is not None, adapter)
        source = PROGRAMS / "native_demo.c"
        return c_program("native_demo"), source, line_of(source, "LINE:loop_body")
    if adapter == "dlv":
        from backends.adapters import find_dlv
        from tests.support.native_build import go_program

        require(find_dlv() is not None, "dlv")
        source = PROGRAMS / "go_demo.go"
        return go_program("go_demo"), source, line_of(source, "LINE:loop_body")
    require_executable("node")
    source = PROGRAMS / "node" / "script_target.js"
    return source, source, line_of(source, "@mark visit")


@pytest.mark.parametrize("adapter", ["debugpy", "lldb-dap", "lldb-cli", "dlv", "node"])
async def test_the_natural_first_calls_never_race_the_program(adapter, mcp_env, no_leftover_processes):
    program, source, line = _target(adapter)
    async with in_process_client() as client:
        # stopOnEntry: the answer is the entry stop, so a step can follow at once.
        entry = await call(client, "debug_launch", {"program": str(program), "adapter": adapter,
                                                     "stopOnEntry": True, "sessionName": "entry"})
        assert entry["state"] == "stopped" and entry["stop"]["reason"] == "entry", entry.text
        assert size(entry) <= BUDGET
        # A step that has not stopped yet: the next inspection waits for it.
        await call(client, "debug_step_over", {"waitMs": 0})
        context = await call(client, "debug_context", {})
        assert context["state"] == "stopped" and context["stop"]["reason"] == "step"
        stepped = await call(client, "debug_step_over", {})
        assert "stop" in stepped and stepped["stop"]["location"]["line"] > 0
        assert size(stepped) <= BUDGET
        # Ended by the stop: every backend says who stopped it, not the signal the
        # session sent (LLDB's "exit code 9", debugpy's 247, delve's no status at
        # all were a bare code or nothing).
        ended = await call(client, "debug_terminate", {})
        assert ended["ended"] == "stopped by mcp", ended
        assert "stopped by mcp" in ended.text and "SIGKILL" not in ended.text
        assert "pid" not in ended.data

        # Breakpoints in the launch, with a hit condition (delve has none: its
        # breakpoint says so, unverified); continue right after.
        hit = await call(client, "debug_launch", {
            "program": str(program), "adapter": adapter, "sessionName": "bp",
            "breakpoints": [{"file": str(source), "line": line,
                             **({} if adapter == "dlv" else {"hitCondition": "2"})}]})
        assert hit["state"] == "stopped" and hit["stop"]["reason"] == "breakpoint", hit.text
        assert hit["stop"]["location"]["line"] == line
        assert "debug_continue" not in hit.get("nextSteps", [])
        again = await call(client, "debug_continue", {})
        assert "stop" in again or again["status"] == "terminated"


def _running_target(adapter: str):
    """A program that runs long enough to be paused, for each adapter."""
    if adapter == "debugpy":
        return PROGRAMS / "py_sleep.py"
    if adapter == "node":
        require_executable("node")
        return PROGRAMS / "node" / "spin.js"
    _target(adapter)  # skips (fails under CI) when the debugger is missing
    from tests.support.native_build import c_program, go_program

    return go_program("go_counter") if adapter == "dlv" else c_program("native_counter")


@pytest.mark.parametrize("adapter", ["debugpy", "lldb-dap", "lldb-cli", "dlv", "node"])
async def test_a_pause_right_after_launch_stops_and_never_at_line_zero(
        adapter, mcp_env, no_leftover_processes):
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(_running_target(adapter)),
                                            "adapter": adapter})
        paused = await call(client, "debug_pause", {})
        assert "stop" in paused and paused["stop"]["reason"] == "pause", paused.text
        location = paused["stop"].get("location")
        assert location is None or location["line"] > 0
        assert ":0," not in paused.text.splitlines()[0]
        await call(client, "debug_terminate", {})


# ============================================================================ sessions tell the truth


async def test_others_are_what_other_clients_did_since_this_clients_last_call(
        mcp_env, no_leftover_processes):
    from tui_debugger.client.router import join

    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(PY_BASIC), "stopOnEntry": True,
                                            "sessionName": "shared"})
        # A person's TUI joins through the socket and steps twice.
        person = await join("shared", "tui")
        try:
            status = await call(client, "debug_status", {})
            assert {c["origin"] for c in status["clients"]} >= {"mcp", "tui"}
            await person.call("next", {"wait_ms": 0})
            await person.call("next")
            first = await call(client, "debug_step_over", {})
            meanwhile = [line for line in first.text.splitlines() if line.startswith("Meanwhile")]
            assert meanwhile and meanwhile[0].count("tui next") == 2, first.text
            assert "wait_ms" not in meanwhile[0]
            # Told once: the next answer has nothing new to tell.
            second = await call(client, "debug_step_over", {})
            assert "Meanwhile" not in second.text and "others" not in second.data
        finally:
            await person.close()


async def test_restored_breakpoints_are_listed_never_doubled_and_yield_to_explicit_ones(
        mcp_env, monkeypatch, no_leftover_processes):
    from tui_debugger.config import reload_settings

    monkeypatch.setenv("TUI_DEBUGGER_PERSIST_BREAKPOINTS", "1")
    reload_settings()
    line = line_of(PY_BASIC, "@scale")
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(PY_BASIC), "stopOnEntry": True})
        await call(client, "debug_breakpoint_add", {"file": str(PY_BASIC), "line": line,
                                                    "condition": "value > 100"})
        await call(client, "debug_terminate", {})

        # The plain breakpoint asked for now wins over the saved conditional one.
        explicit = await call(client, "debug_launch", {
            "program": str(PY_BASIC), "breakpoints": [f"{PY_BASIC}:{line}"]})
        assert explicit["state"] == "stopped" and explicit["stop"]["location"]["line"] == line
        assert explicit["breakpoints"] == 1 and "restored" not in explicit.data
        await call(client, "debug_terminate", {})

        # Restored: listed in the launch answer, and adding it again adds nothing.
        again = await call(client, "debug_launch", {"program": str(PY_BASIC)})
        assert len(again["restored"]) == 1 and f":{line}" in again["restored"][0]
        assert "restored" in again.text and again["state"] == "stopped"
        same = await call(client, "debug_breakpoint_add", {"file": str(PY_BASIC), "line": line})
        assert "Already set" in same.text
        listed = await call(client, "debug_breakpoint_list", {})
        assert len(listed["breakpoints"]) == 1
        await call(client, "debug_terminate", {})


# ============================================================================ trace


@pytest.mark.parametrize("adapter", ["debugpy", "lldb-dap", "node"])
async def test_trace_collects_typed_values_without_anyone_pressing_continue(
        adapter, mcp_env, no_leftover_processes):
    program, source, line = _target(adapter)
    expression, expected = {
        "debugpy": ("v", [{"type": "int", "value": v} for v in (1, 2, 3)]),
        "lldb-dap": ("i * 2", [{"type": "int", "value": v} for v in (0, 2, 4)]),
        "node": ("label", [{"type": "string", "value": f"item-{i}"} for i in (1, 2, 3)]),
    }[adapter]
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(program), "adapter": adapter,
                                            "stopOnEntry": True})
        traced = await call(client, "debug_trace", {"file": str(source), "line": line,
                                                    "expression": expression, "maxHits": 3})
        assert traced["results"] == expected, traced.text
        assert traced["status"] in ("running", "terminated") and size(traced) <= BUDGET
        # The trace's own breakpoint is gone; the hits are in the activity log
        # (the TUI's activity pane shows them as they come).
        assert (await call(client, "debug_breakpoint_list", {}))["breakpoints"] == []
        log = await call(client, "debug_activity", {})
        assert sum(1 for e in log["entries"] if e["command"] == "trace") >= 3


async def test_trace_stops_early_when_the_program_stops_elsewhere(mcp_env, no_leftover_processes):
    loop_line = line_of(PY_BASIC, "@loop-body")
    count_line = line_of(PY_BASIC, "@count")
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(PY_BASIC),
                                            "breakpoints": [f"{PY_BASIC}:{count_line}"]})
        # Stopped at @count, after the loop: the trace continues, the program
        # stops at @count again (the person's breakpoint), and the trace ends there.
        quiet = await call(client, "debug_trace", {"file": str(PY_BASIC), "line": loop_line,
                                                   "expression": "acc", "timeoutMs": 5000})
        assert quiet["results"] == [] and quiet["status"] == "stopped"
        # The stop that ended it is named: which breakpoint, where.
        assert "then stopped (breakpoint #1)" in quiet.text and f":{count_line}" in quiet.text
        await fails(client, "debug_trace", {"file": str(PY_BASIC), "line": 3}, "invalid_input",
                    "expression")


def test_a_second_tui_is_not_you():
    from tui_debugger.models import ActivityEntry, ClientInfo, client_id
    from tui_debugger.tui.widgets.activity_pane import who_did
    from tui_debugger.tui.widgets.status_bar import StatusBar

    mine = ActivityEntry(origin="tui", command="next", client=client_id("tui"))
    theirs = ActivityEntry(origin="tui", command="next", client="tui-1")
    agent = ActivityEntry(origin="mcp", command="next", client="mcp-2")
    assert [who_did(e) for e in (mine, theirs, agent)] == ["you", "tui", "agent"]
    bar = StatusBar()
    bar.set_clients([ClientInfo(id=client_id("tui"), origin="tui"),
                     ClientInfo(id="tui-1", origin="tui"), ClientInfo(id="mcp-2", origin="mcp")])
    assert bar.clients == ("agent", "tui")


# ============================================================================ where exactly, and every local


async def test_node_block_scopes_columns_and_nested_values(mcp_env, tmp_path,
                                                           no_leftover_processes):
    """`let`/`const` of the innermost blocks are locals and `names` finds them; two
    steps inside one `for (...)` header differ by their column; an array holds
    its nested arrays one level deep."""
    require_executable("node")
    program = write_program(tmp_path, "blocks.js", """
        function work (items) {
          let total = 0
          for (let i = 0; i < items.length; i++) {
            const item = items[i]
            total += item  // @inner
          }
          return total
        }
        const nested = [0, 2, [3, [4, 5]], {a: [1, 2]}]
        for (const name of ['a', 'b']) {
          const range = [1, 2]
          work(range)  // @loop
        }
        console.log(nested.length)
    """)
    async with in_process_client() as client:
        at_loop = await call(client, "debug_launch", {"program": str(program), "breakpoints": [
            f"{program}:{line_of(program, '@loop')}", f"{program}:{line_of(program, '@inner')}"]})
        shown = {v["name"] for v in at_loop["context"]["locals"]}
        assert {"name", "range", "nested"} <= shown, shown
        value = await call(client, "debug_evaluate", {"expression": "nested"})
        assert value["value"] == "[0, 2, [3, Array(2)], {a: Array(2)}]", value
        inner = await call(client, "debug_continue", {})
        assert {"i", "item", "total"} <= {v["name"] for v in inner["context"]["locals"]}
        found = await call(client, "debug_variables", {"names": ["i", "item"]})
        assert sorted(v["name"] for v in found["variables"]) == ["i", "item"]
        header = [await call(client, "debug_step_over", {}) for _ in range(2)]
        # Both in the `for (...)` header of line 3: the column tells them apart,
        # and the file and function of the last answer are not said again.
        assert [h["stop"]["location"]["line"] for h in header] == [3, 3]
        assert header[0]["stop"]["location"]["column"] != header[1]["stop"]["location"]["column"]
        assert header[0].text != header[1].text and header[1].text.startswith(
            "Stopped at line 3:")
        assert "path" not in header[1]["stop"]["location"] and "function" not in header[1]["stop"]
        await call(client, "debug_terminate", {})


async def test_a_function_breakpoint_shows_the_body(mcp_env, tmp_path, no_leftover_processes):
    program = write_program(tmp_path, "fb.py", '''
        def compute(a, b):
            """Add two numbers.

            A docstring that runs on.
            """
            s = a + b  # @body
            return s


        print(compute(1, 2))
    ''')
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(program), "stopOnEntry": True})
        await call(client, "debug_breakpoint_add", {"function": "compute"})
        hit = await call(client, "debug_continue", {})
        assert hit["stop"]["function"] == "compute", hit
        source = hit["context"]["source"]
        assert "s = a + b" in source and "docstring" not in source, source
        # Activity, the default answer, stays small.
        log = await call(client, "debug_activity", {})
        assert size(log) <= 1_500 and "at" not in log["entries"][0]
        await call(client, "debug_terminate", {})


async def test_a_step_answer_says_only_what_moved(mcp_env, tmp_path, no_leftover_processes):
    """The shape of the answers of a step-through (issue 31's hunt): a stop is
    said by `stop` alone, a completed step by its place alone, the unchanged
    locals by their count; what launch said, restart does not say again; a
    killed program's end is one phrase."""
    program = write_program(tmp_path, "many.py", """
        def helper():
            return 2  # @helper


        def work(a, b=None, c=None, d=None, e=None, f=0, g=0, h=0):
            total = a  # @first
            total += 1
            total += helper()
            return total


        def main():
            print(work(40))  # @call


        main()
    """)
    first = line_of(program, "@first")
    async with in_process_client() as client:
        launched = await call(client, "debug_launch", {
            "program": str(program), "breakpoints": [f"{program}:{line_of(program, '@call')}"]})
        assert launched["stop"]["reason"] == "breakpoint" and launched["adapter"] == "debugpy"
        assert launched["python"] and launched["state"] == "stopped"
        inside = await call(client, "debug_step_into", {})
        # Stopped (the stop says it) by the step asked for (no reason): a new
        # frame, so where and every local.
        assert "status" not in inside and "reason" not in inside["stop"], inside
        assert inside["stop"]["function"] == "work" and inside["stop"]["location"]["line"] == first
        assert inside.text.startswith("Stopped in work at "), inside.text
        assert "localsByValue" in inside["context"] and "unchanged" not in inside["context"]
        stepped = await call(client, "debug_step_over", {})
        # The same frame: the line, the local that is new, the count of the rest.
        assert stepped.data["stop"] == {"location": {"line": first + 1}}, stepped
        assert stepped.text.startswith(f"Stopped at line {first + 1}"), stepped.text
        assert [v["name"] for v in stepped["context"]["locals"]] == ["total"]
        assert stepped["context"]["unchanged"] == 8 and "localsNote" not in stepped["context"]
        await call(client, "debug_step_over", {})
        # A breakpoint reached during a step keeps its reason.
        await call(client, "debug_breakpoint_add", {"file": str(program),
                                                    "line": line_of(program, "@helper")})
        held = await call(client, "debug_step_over", {})
        assert held["stop"]["reason"] == "breakpoint" and held["stop"]["function"] == "helper"
        assert (await call(client, "debug_evaluate", {"expression": "40 + 2"})).data == {
            "value": "42"}  # an int: the value says its type
        found = await call(client, "debug_variables", {"frameIndex": 1, "names": ["total"]})
        assert [v["name"] for v in found["variables"]] == ["total"] and "scopes" not in found
        missing = await call(client, "debug_variables", {"names": ["nowhere"]})
        assert missing["variables"] == [] and missing["scopes"], missing  # where else to look
        again = await call(client, "debug_restart", {})
        assert again["stop"]["reason"] == "breakpoint" and again["pid"] > 0, again
        assert "adapter" not in again and "python" not in again, again  # as launch said
        ended = await call(client, "debug_terminate", {})
        assert ended["ended"] == "stopped by mcp" and "exitCode" not in ended, ended
        assert "terminatedReason" not in ended, ended
