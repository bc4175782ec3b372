"""Fault suite: the caps hold on every backend. An answer stays under the
server's max_result_chars whatever the caller asks (maxFrames 1000, maxItems
5000, output of 1 MiB lines), and huge values (a 1M-element array, a 10 MB
string) answer in bounded time without blocking the next command."""

from __future__ import annotations

import json
import time

import pytest

from tests.support import require
from tests.support.mcp import PROGRAMS, call, in_process_client, line_of

CAP = 20_000  # config.max_result_chars' default
BOUND_S = 15.0


async def _capped_and_bounded(client, tool: str, args: dict) -> None:
    """The answer stays within the cap, comes within the bound, and is no traceback."""
    started = time.monotonic()
    answer = await call(client, tool, args, ok=False)
    elapsed = time.monotonic() - started
    text = json.dumps(answer.raw.structured_content or {})
    assert len(text) < CAP * 1.5, (tool, args, len(text))
    assert elapsed < BOUND_S, (tool, args, elapsed)
    assert "Traceback" not in answer.text, (tool, answer.text[:300])


async def _still_answers_and_ends(client) -> None:
    """After all that, the session answers at once, and ends."""
    started = time.monotonic()
    await call(client, "debug_status", {})
    assert time.monotonic() - started < 2
    await call(client, "debug_terminate", {})


@pytest.mark.parametrize("adapter", ["lldb-cli", pytest.param("lldb-dap",
                                                              marks=pytest.mark.slow)])
async def test_caps_hold_on_floods_and_huge_values(adapter, mcp_env, no_leftover_processes):
    from backends.adapters import find_lldb, find_lldb_dap

    from tests.support.native_build import c_program

    require((find_lldb() if adapter == "lldb-cli" else find_lldb_dap()) is not None, adapter)
    binary = c_program("native_flood")
    source = PROGRAMS / "native_flood.c"
    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "program": str(binary), "adapter": adapter,
            "breakpoints": [f"{source}:{line_of(source, 'LINE:deepest')}"]})
        assert "stop" in (await call(client, "debug_wait", {"timeoutMs": 30_000}))
        for tool, args in (
            ("debug_output", {}), ("debug_output", {"tail": 5}), ("debug_output", {"since": 0}),
            ("debug_stack", {"maxFrames": 1000}),
            ("debug_variables", {"frameIndex": 301, "maxItems": 5000}),
            ("debug_evaluate", {"expression": "big_string", "frameIndex": 301}),
            ("debug_evaluate", {"expression": "big_array", "frameIndex": 301}),
            ("debug_variables", {"frameIndex": 301, "path": "big_array", "maxItems": 5000}),
        ):
            await _capped_and_bounded(client, tool, args)
        await _still_answers_and_ends(client)


PY_FLOOD = """
import sys

def deep(n):
    if n == 0:
        return 0  # DEEPEST
    return deep(n - 1) + 1

big_list = list(range(1_000_000))
big_dict = {i: str(i) for i in range(200_000)}
big_string = "x" * 10_000_000
line = "y" * (1024 * 1024) + "\\n"
for _ in range(4):
    sys.stdout.write(line)
sys.stdout.flush()
deep(300)
"""


async def test_caps_hold_on_debugpy(tmp_path, mcp_env, no_leftover_processes):
    from tests.support.mcp import write_program

    program = write_program(tmp_path, "flood.py", PY_FLOOD)
    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "program": str(program), "breakpoints": [f"{program}:{line_of(program, '# DEEPEST')}"]})
        assert "stop" in (await call(client, "debug_wait", {"timeoutMs": 30_000}))
        top = 301  # the module's frame, below 300 calls of deep()
        for tool, args in (
            ("debug_output", {}), ("debug_output", {"tail": 5}), ("debug_output", {"since": 0}),
            ("debug_stack", {"maxFrames": 1000}),
            ("debug_variables", {"frameIndex": top, "maxItems": 5000}),
            ("debug_evaluate", {"expression": "big_string"}),
            ("debug_evaluate", {"expression": "big_list"}),
            ("debug_evaluate", {"expression": "big_dict"}),
            ("debug_variables", {"frameIndex": top, "path": "big_list", "maxItems": 5000}),
            ("debug_variables", {"frameIndex": top, "path": "big_dict", "maxItems": 5000}),
        ):
            await _capped_and_bounded(client, tool, args)
        await _still_answers_and_ends(client)
