"""Fault suite: what LLDB's expression family may do without allowUnsafe, pinned.

The decision (docs/reliability.md, "Expressions in native programs"): an
expression in a native program runs as the program, with everything it can
do; `p`, `expression`, `call`, `po`, `dwim-print`, `parray` and debug_evaluate
on lldb-cli and lldb-dap call functions, system() and creat() included,
without allowUnsafe. What the allowlist guards is LLDB's own command language
(a shell, Python, files written by LLDB), not the program's. This test fails
the day that changes, so the documentation is changed with it."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.support import require
from tests.support.mcp import PROGRAMS, call, in_process_client, line_of


@pytest.mark.parametrize("adapter", ["lldb-cli", "lldb-dap"])
async def test_expressions_call_into_the_program_without_allow_unsafe(
        adapter, mcp_env, no_leftover_processes):
    from backends.adapters import find_lldb, find_lldb_dap

    from tests.support.native_build import c_program

    require((find_lldb() if adapter == "lldb-cli" else find_lldb_dap()) is not None, adapter)
    binary = c_program("native_demo")
    source = PROGRAMS / "native_demo.c"
    made = Path(tempfile.mkdtemp(prefix="tdbg-expr-"))
    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "program": str(binary), "adapter": adapter,
            "breakpoints": [f"{source}:{line_of(source, 'LINE:loop_body')}"]})
        assert "stop" in (await call(client, "debug_wait", {"timeoutMs": 20_000}))
        attempts = [("debug_evaluate", {"expression": f'(int)creat("{made}/evaluate", 0600)'})]
        for n, command in enumerate(("p", "expression --", "call", "po", "dwim-print --")):
            attempts.append(("debug_lldb_command",
                             {"command": f'{command} (int)creat("{made}/cmd{n}", 0600)'}))
        for tool, args in attempts:
            answer = await call(client, tool, args)
            assert not answer.get("unsafe"), answer  # not marked: no consent was needed
        assert sorted(p.name for p in made.iterdir()) == [
            "cmd0", "cmd1", "cmd2", "cmd3", "cmd4", "evaluate"]
        # the program is where it was, and runs on
        assert (await call(client, "debug_evaluate", {"expression": "i"}))["value"].endswith("0")
        await call(client, "debug_terminate", {})
