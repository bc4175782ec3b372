"""The same C flow on both LLDB backends gives the same answers through the
Backend API: a front end cannot tell lldb-cli from lldb-dap."""

from __future__ import annotations

import pytest

from backends.adapters import find_lldb, find_lldb_dap
from backends.dap.lldb_dap import LldbDapBackend
from backends.lldb_cli.backend import LldbCliBackend
from backends.models import LaunchRequest
from tests.support import require
from tests.support.native_build import EventLog, c_program, run_c_flow


async def flow_on(backend_class) -> tuple[dict, EventLog]:
    events = EventLog()
    backend = backend_class(events)
    try:
        return await run_c_flow(backend, events), events
    finally:
        await backend.disconnect(terminate=True)
        await backend.dispose()


@pytest.fixture(scope="module")
def both_backends():
    require(find_lldb() is not None, "lldb")
    require(find_lldb_dap() is not None, "lldb-dap")


async def test_the_c_flow_reads_the_same_on_both(both_backends, no_leftover_processes):
    cli, cli_events = await flow_on(LldbCliBackend)
    dap, dap_events = await flow_on(LldbDapBackend)
    for key in ("line_breakpoints", "function_breakpoints", "stops", "frames", "scopes",
                "variables", "evaluate", "exit_code"):
        assert cli[key] == dap[key], key
    # the event sequences match too, output aside (lldb-dap runs the program on a pty)
    def sequence(events):
        return [(e.kind, getattr(e, "reason", None)) for e in events.events
                if e.kind not in ("output", "breakpoint")]
    assert sequence(cli_events) == sequence(dap_events)


async def test_stop_reasons_for_entry_and_pause_agree(both_backends, no_leftover_processes):
    import asyncio

    seen = {}
    for backend_class in (LldbCliBackend, LldbDapBackend):
        events = EventLog()
        backend = backend_class(events)

        async def nothing():
            return None

        try:
            await backend.launch(
                LaunchRequest(program=str(c_program("native_counter")), stop_on_entry=True),
                nothing)
            entry = await events.wait("stopped")
            await backend.continue_(entry.thread_id)
            await asyncio.sleep(0.3)
            await backend.pause(None)
            paused = await events.wait("stopped")
            frames, _ = await backend.stack_trace(paused.thread_id, 0, 20)
            # where the pause lands varies (in sleep, in printf); that it has a stack does not
            seen[backend_class.name] = (entry.reason, paused.reason, bool(frames))
        finally:
            await backend.disconnect(terminate=True)
            await backend.dispose()
    assert seen["lldb-cli"] == seen["lldb-dap"] == ("entry", "pause", True)
