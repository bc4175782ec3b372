"""Exception breakpoints and changing values, through MCP (the tools generated
from the registry) against real debugpy and node: choose filters, stop on a
handled exception, remember the choice for the next launch, set a variable,
and clear errors where a debugger cannot."""

from __future__ import annotations

import shutil

from tests.conftest import require
from tests.support.mcp import PROGRAMS, call, fails, in_process_client, line_of, write_program

HANDLED = (PROGRAMS / "py_handled.py").read_text()


async def test_exception_filters_and_set_variable_on_debugpy(mcp_env, tmp_path, monkeypatch,
                                                             no_leftover_processes):
    from tui_debugger.config import reload_settings

    monkeypatch.setenv("TUI_DEBUGGER_PERSIST_BREAKPOINTS", "1")  # the choice is remembered
    reload_settings()
    program = write_program(tmp_path, "handled.py", HANDLED)
    at_sum = line_of(program, "@sum")
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(program), "cwd": str(tmp_path),
                                            "breakpoints": [f"{program}:{at_sum}"]})
        stop = await call(client, "debug_wait", {"timeoutMs": 15_000})
        assert stop["stop"]["location"]["line"] == at_sum

        listed = await call(client, "debug_exception_breakpoints", {})
        state = {f["id"]: f["enabled"] for f in listed["filters"]}
        assert state == {"raised": False, "uncaught": True, "userUnhandled": False}
        assert listed.text.startswith("Exceptions that stop the program")

        # Change values: a local, an item of a list; the program sees them.
        changed = await call(client, "debug_set_variable", {"path": "total", "value": "40"})
        assert changed["variable"]["value"] == "40" and changed.text.startswith("total = 40")
        await call(client, "debug_set_variable", {"path": "items[0]", "value": "100"})
        evaluated = await call(client, "debug_evaluate", {"expression": "total + sum(items)"})
        assert evaluated["value"] == "145"
        await fails(client, "debug_set_variable", {"path": "nothere", "value": "1"},
                    "invalid_input", "nothere", "total")

        # Stop on raised exceptions too: the handled one stops the program.
        chosen = await call(client, "debug_exception_breakpoints", {"filters": ["raised", "uncaught"]})
        assert {f["id"] for f in chosen["filters"] if f["enabled"]} == {"raised", "uncaught"}
        await fails(client, "debug_exception_breakpoints", {"filters": ["bogus"]},
                    "invalid_input", "raised", "uncaught")
        await call(client, "debug_breakpoint_remove", {"all": True})
        raised = await call(client, "debug_continue", {"waitMs": 15_000})
        assert raised["stop"]["reason"] == "exception", raised
        assert raised["stop"]["location"]["line"] == line_of(program, "@raise")
        assert "handled on purpose" in raised.text
        output_so_far = await call(client, "debug_output", {"since": 0})
        assert "result 145" in "".join(e["text"] for e in output_so_far["entries"])
        ended = await call(client, "debug_continue", {"waitMs": 15_000})
        assert ended["status"] == "terminated" and ended["exitCode"] == 0
        await call(client, "debug_terminate", {})

        # The choice is remembered with the program's breakpoints.
        await call(client, "debug_launch", {"program": str(program), "cwd": str(tmp_path),
                                            "sessionName": "again"})
        again = await call(client, "debug_wait", {"timeoutMs": 15_000})
        assert again["stop"]["reason"] == "exception", again
        listed = await call(client, "debug_exception_breakpoints", {})
        assert {f["id"] for f in listed["filters"] if f["enabled"]} == {"raised", "uncaught"}
        await call(client, "debug_exception_breakpoints", {"filters": []})
        ended = await call(client, "debug_continue", {"waitMs": 15_000})
        assert ended["status"] == "terminated"
        await call(client, "debug_terminate", {})


async def test_node_names_what_it_can_set(mcp_env, no_leftover_processes):
    # node sets variables since issue 33 (tests/test_native_agent.py); a name the
    # frame lacks is answered with the names it has.
    require(shutil.which("node") is not None, "node")
    program = PROGRAMS / "node" / "throws.js"
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(program), "stopOnEntry": True})
        await call(client, "debug_wait", {"timeoutMs": 15_000})
        listed = await call(client, "debug_exception_breakpoints", {})
        assert {f["id"] for f in listed["filters"]} >= {"all", "uncaught"}
        answer = await fails(client, "debug_set_variable", {"path": "x", "value": "1"},
                             "invalid_input", "No 'x' there")
        assert "tryCaught" in answer.text
        await call(client, "debug_terminate", {})
