"""delve (`dlv dap`) through the generic DAP backend, against real Go programs."""

from __future__ import annotations

import asyncio
import subprocess

import pytest

from backends.adapters import create_backend, find_dlv, select_adapter
from backends.dap.delve import DelveBackend
from backends.models import AttachRequest, BreakpointSpec, LaunchRequest
from backends.process import pid_alive
from tests.support import require
from tests.support.native_build import EventLog, go_program, line_of, source_path, tracer_of

GO_DEMO = source_path("go_demo.go")


@pytest.fixture(scope="module")
def demo():
    require(find_dlv() is not None, "delve (dlv)")
    return str(go_program("go_demo"))


async def nothing_to_configure() -> None:
    return None


async def test_registry_picks_dlv_for_a_go_binary(demo):
    assert select_adapter(None, demo, env={}) == "dlv"
    backend = create_backend("dlv", EventLog())
    assert isinstance(backend, DelveBackend)
    await backend.dispose()


async def test_the_go_flow(demo, no_leftover_processes):
    events = EventLog()
    backend = DelveBackend(events)
    loop_line = line_of("go_demo.go", "loop_body")
    states = {}

    async def configure():
        states["line"] = await backend.set_source_breakpoints(
            GO_DEMO, [BreakpointSpec(path=GO_DEMO, line=loop_line, condition="i == 3")])
        states["function"] = await backend.set_function_breakpoints(
            [BreakpointSpec(function="main.sumOfSquares")])

    try:
        await backend.launch(LaunchRequest(program=demo), configure)
        assert [(s.verified, s.line) for s in states["line"]] == [(True, loop_line)]
        assert states["function"][0].verified

        stop = await events.wait("stopped")
        assert stop.reason == "breakpoint"
        frames, _ = await backend.stack_trace(stop.thread_id, 0, 5)
        assert (frames[0].name, frames[0].location.line) == ("main.main", loop_line)
        assert frames[0].location.path == GO_DEMO
        # goroutines are threads
        threads = await backend.threads()
        assert stop.thread_id in [t.id for t in threads]
        assert any("Go" in t.name for t in threads)

        scopes = await backend.scopes(frames[0].id)
        assert [s.kind.value for s in scopes][:2] == ["locals", "globals"]
        local_vars = {v.name: v for v in await backend.variables(scopes[0].ref)}
        assert local_vars["i"].value == "3" and local_vars["accumulator"].value == "3"
        origin = local_vars["origin"]
        assert origin.type == "main.Point" and origin.ref > 0
        children = {v.name: v.value for v in await backend.variables(origin.ref)}
        assert children == {"X": "3", "Y": "4", "Label": '"origin"'}
        global_vars = {v.name: v.value for v in await backend.variables(scopes[1].ref)}
        assert global_vars.get("globalCounter") == "10"

        result = await backend.evaluate("origin.X * 10 + i", frames[0].id, "watch")
        assert result.value == "33"

        await backend.continue_(stop.thread_id)
        stop = await events.wait("stopped")
        frames, _ = await backend.stack_trace(stop.thread_id, 0, 2)
        assert [f.name for f in frames] == ["main.sumOfSquares", "main.main"]

        # A Go function breakpoint stops on the `func` line; the call is one line on.
        for _ in range(2):
            await backend.step_in(stop.thread_id)
            stop = await events.wait("stopped")
            frames, _ = await backend.stack_trace(stop.thread_id, 0, 2)
            assert stop.reason == "step"
            if frames[0].name == "main.square":
                break
        # delve stops on the `func` line of the callee, a line above its body
        body = line_of("go_demo.go", "square_body")
        assert frames[0].name == "main.square" and frames[0].location.line in (body - 1, body)

        await backend.step_out(stop.thread_id)
        stop = await events.wait("stopped")
        frames, _ = await backend.stack_trace(stop.thread_id, 0, 1)
        assert frames[0].name == "main.sumOfSquares"

        await backend.continue_(stop.thread_id)
        exited = await events.wait("exited")
        assert exited.exit_code == 0
        await events.wait("terminated")
        assert "accumulator=10 distance_squared=25 workers=30" in events.output("stdout")
        kinds = [e.kind for e in events.events]
        assert kinds.count("terminated") == 1
        assert kinds.index("exited") < kinds.index("terminated")
        assert "continued" not in kinds[kinds.index("exited"):]
    finally:
        await backend.disconnect(terminate=True)
        await backend.dispose()


async def test_attach_pause_then_detach_leaves_it_running(demo, no_leftover_processes):
    program = str(go_program("go_counter"))
    target = subprocess.Popen([program], stdout=subprocess.DEVNULL, start_new_session=True)
    events = EventLog()
    backend = DelveBackend(events)
    try:
        await asyncio.sleep(0.2)
        await backend.attach(AttachRequest(pid=target.pid), nothing_to_configure)
        assert tracer_of(target.pid) != 0
        await backend.set_function_breakpoints([BreakpointSpec(function="main.tick")])
        stop = await events.wait("stopped")
        frames, _ = await backend.stack_trace(stop.thread_id, 0, 2)
        assert [f.name for f in frames] == ["main.tick", "main.main"]
        await backend.set_function_breakpoints([])
        await backend.continue_(stop.thread_id)
        await asyncio.sleep(0.3)
        await backend.pause(None)
        stop = await events.wait("stopped")
        assert stop.reason == "pause"
        await backend.disconnect(terminate=False)
        await backend.dispose()
        await asyncio.sleep(0.3)
        assert pid_alive(target.pid) and tracer_of(target.pid) == 0
    finally:
        await backend.dispose()
        target.kill()
        target.wait()
