"""Fault suite: an expression that forks does not wedge a native session.
`(int)system("true")` evaluated at a breakpoint makes the program vfork; LLDB
stopped the expression with "interrupted, reason: vfork", after which
`continue` never reached the next breakpoint (lldb-cli, lldb-dap) and a pause
on lldb-dap said the program ended with exit code -1. On a loaded machine the
call itself outlasted lldb-cli's 0.5 s for an expression."""

from __future__ import annotations

import time

import pytest

from tests.support import require
from tests.support.mcp import PROGRAMS, call, in_process_client, line_of


def _said(answer) -> str:
    """All an answer says: its text (one line) and what its data holds."""
    parts = [answer.text] + [str(answer.get(key) or "") for key in ("value", "output", "error")]
    return "\n".join(parts)


@pytest.mark.parametrize("adapter", ["lldb-cli", "lldb-dap"])
@pytest.mark.parametrize("tool", ["debug_evaluate", "debug_lldb_command"])
async def test_an_expression_that_forks_leaves_the_session_working(
        adapter, tool, mcp_env, no_leftover_processes):
    from backends.adapters import find_lldb, find_lldb_dap

    from tests.support.native_build import c_program

    require((find_lldb() if adapter == "lldb-cli" else find_lldb_dap()) is not None, adapter)
    binary = c_program("native_counter")
    source = PROGRAMS / "native_counter.c"
    tick = line_of(source, "LINE:tick")
    run = ({"expression": "{}"} if tool == "debug_evaluate" else {"command": "p {}"})

    async def run_text(text: str):
        key, template = next(iter(run.items()))
        started = time.monotonic()
        answer = await call(client, tool, {key: template.format(text)}, ok=False)
        assert time.monotonic() - started < 15, answer
        assert "Traceback" not in _said(answer)
        return answer

    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "program": str(binary), "adapter": adapter, "breakpoints": [f"{source}:{tick}"]})
        assert "stop" in (await call(client, "debug_wait", {"timeoutMs": 20_000}))
        forked = await run_text('(int)system("true")')
        # the call finished (system() answered 0), it was not interrupted
        assert not forked.is_error and "vfork" not in _said(forked), forked
        said = forked.get("value") or forked.get("output") or ""
        assert said.rstrip().endswith("0"), forked
        assert (await call(client, "debug_status", {}))["state"] == "stopped"
        # a call of over half a second finishes (SBFrame's default stopped it at 0.5 s,
        # and on a loaded machine even system("true"))
        slow = await run_text("(int)usleep(800000)")
        assert not slow.is_error and "interrupted" not in _said(slow), slow
        assert (slow.get("value") or slow.get("output") or "").rstrip().endswith("0"), slow
        # continue reaches the next hit of the breakpoint
        again = await call(client, "debug_continue", {"waitMs": 15_000})
        assert "stop" in again, again
        assert (await call(client, "debug_evaluate", {"expression": "ticks"}))["value"] \
            .endswith("1")
        # an expression that crashes still leaves the program where it was, alive
        crashed = await run_text("((int(*)(void))0)()")
        assert crashed.is_error or "SIGSEGV" in _said(crashed), crashed
        assert "thread return" not in _said(crashed), crashed
        again = await call(client, "debug_continue", {"waitMs": 15_000})
        assert "stop" in again, again
        assert (await call(client, "debug_evaluate", {"expression": "ticks"}))["value"] \
            .endswith("2")
        # and a pause while it runs stops it
        await call(client, "debug_breakpoint_remove", {"all": True})
        running = await call(client, "debug_continue", {"waitMs": 300})
        assert running["status"] == "running", running
        paused = await call(client, "debug_pause", {"waitMs": 10_000})
        assert "stop" in paused, paused
        await call(client, "debug_terminate", {})
