"""Fault suite: `restart` racing step and continue on lldb-dap. While the old
backend is ended and the new one starts, a step or continue found no backend
and failed with "continue failed unexpectedly: AssertionError()"; now each
call lands, or answers a typed error that says the session is restarting, and
the restarted session stops at its breakpoint again."""

from __future__ import annotations

import asyncio

import pytest

from tests.support import require
from tests.support.mcp import PROGRAMS, Answer, call, in_process_client, line_of

TYPED = {"invalid_input", "resource_busy", "timeout", "command_failed"}


@pytest.mark.slow  # about 30 s: two rounds of restarts of lldb-dap
async def test_restart_racing_step_and_continue(mcp_env, no_leftover_processes):
    from backends.adapters import find_lldb_dap

    from tests.support.native_build import c_program

    require(find_lldb_dap() is not None, "lldb-dap")
    binary = c_program("native_counter")
    source = PROGRAMS / "native_counter.c"
    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "program": str(binary), "adapter": "lldb-dap",
            "breakpoints": [f"{source}:{line_of(source, 'LINE:tick')}"]})
        assert "stop" in (await call(client, "debug_wait", {"timeoutMs": 20_000}))
        for _round in range(2):
            tools = ["debug_restart", "debug_continue", "debug_step_over", "debug_continue",
                     "debug_step_into", "debug_restart", "debug_continue"]
            answers = await asyncio.gather(*(
                client.call_tool(tool, {"waitMs": 3_000} if tool != "debug_restart" else {})
                for tool in tools))
            for tool, raw in zip(tools, answers):
                answer = Answer(raw)
                assert "AssertionError" not in answer.text and "Traceback" not in answer.text, (
                    tool, answer.text)
                if answer.is_error:
                    assert answer["code"] in TYPED, (tool, answer)
            # whatever landed, the session settles: stopped at its breakpoint, or running
            settled = await call(client, "debug_wait", {"timeoutMs": 15_000}, ok=False)
            assert not settled.is_error or settled["code"] == "timeout", settled
        await call(client, "debug_restart", {})
        assert "stop" in (await call(client, "debug_wait", {"timeoutMs": 20_000}))
        await call(client, "debug_terminate", {})
