"""Fault suite: evaluate tells the truth. An error is the user's one line
(type: message), not the adapter's traceback; while the program runs the
answer says so; an evaluate racing a step never answers NameError for a name
that exists."""

from __future__ import annotations

import asyncio

from tests.support.mcp import call, fails, in_process_client, line_of, write_program

LOOP = """
import time
total = 0
for i in range(1000):
    total += i  # BODY
time.sleep(30)  # END
"""


async def test_evaluate_errors_and_races(tmp_path, mcp_env, no_leftover_processes):
    program = write_program(tmp_path, "loop.py", LOOP)
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(program),
                                            "breakpoints": [f"{program}:{line_of(program, '# BODY')}"]})
        assert "stop" in (await call(client, "debug_wait", {"timeoutMs": 15_000}))
        syntax = await fails(client, "debug_evaluate", {"expression": "V 1 +"}, "command_failed")
        assert syntax.text.strip().startswith("SyntaxError") and "pydevd" not in syntax.text
        assert "\n" not in syntax.text.strip()
        name = await fails(client, "debug_evaluate", {"expression": "nope"}, "command_failed")
        assert name.text.startswith("NameError") and "Traceback" not in name.text
        # racing: steps and evaluates of a name that exists, at once
        for _ in range(8):
            step = asyncio.create_task(client.call_tool("debug_step_over", {"waitMs": 5_000}))
            value = await call(client, "debug_evaluate", {"expression": "total"}, ok=False)
            if value.is_error:
                assert "running" in value.text and "NameError" not in value.text, value.text
            else:
                assert int(value["value"]) >= 0
            await step
        # while running: said, not evaluated on the adapter's own thread
        await call(client, "debug_breakpoint_remove", {"all": True})
        await call(client, "debug_continue", {"waitMs": 0})
        running = await fails(client, "debug_evaluate", {"expression": "total"}, "invalid_input")
        assert "running" in running.text
        await call(client, "debug_terminate", {})
