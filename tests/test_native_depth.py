"""Disassembly, instruction steps, memory, watchpoints and core dumps, on the
backends whose debuggers have them (lldb-dap, lldb-cli, dlv), against the real
debuggers; and the clear refusal on the ones that do not."""

from __future__ import annotations

import pytest

from backends.adapters import find_dlv, find_lldb, find_lldb_dap
from backends.dap.debugpy_adapter import DebugpyBackend
from backends.dap.delve import DelveBackend
from backends.dap.lldb_dap import LldbDapBackend
from backends.errors import DebuggerError, NotSupported
from backends.lldb_cli.backend import LldbCliBackend
from backends.models import BreakpointSpec, DataBreakpointSpec, LaunchRequest
from tests.support import require
from tests.support.native_build import (
    EventLog,
    c_program,
    crash_core,
    go_program,
    line_of,
    source_path,
)

DEMO_C = source_path("native_demo.c")
DEMO_GO = source_path("go_demo.go")
LLDB_BACKENDS = {"lldb-dap": LldbDapBackend, "lldb-cli": LldbCliBackend}


@pytest.fixture(params=sorted(LLDB_BACKENDS))
def lldb_backend(request):
    finder = find_lldb_dap if request.param == "lldb-dap" else find_lldb
    require(finder() is not None, request.param)
    return LLDB_BACKENDS[request.param]


@pytest.fixture(scope="module")
def segfault_core(tmp_path_factory):
    program = c_program("native_segfault")
    return program, crash_core(program, tmp_path_factory.mktemp("c-core"))


async def _stopped_at(backend, events, path, line, program):
    async def configure():
        await backend.set_source_breakpoints(path, [BreakpointSpec(path=path, line=line)])

    await backend.launch(LaunchRequest(program=str(program)), configure)
    stop = await events.wait("stopped")
    frames, _ = await backend.stack_trace(stop.thread_id, 0, 1)
    return stop, frames[0]


async def test_disassemble_step_instruction_and_watch(lldb_backend, no_leftover_processes):
    events = EventLog()
    backend = lldb_backend(events)
    try:
        stop, frame = await _stopped_at(backend, events, DEMO_C,
                                        line_of("native_demo.c", "loop_body"),
                                        c_program("native_demo"))
        caps = backend.capabilities
        assert caps.disassemble and caps.instruction_step and caps.data_breakpoints

        # A function by name: its first instruction carries its name and first line.
        main = await backend.resolve_address("main", frame.id)
        listing = await backend.disassemble(main, 4)
        assert len(listing) == 4 and int(listing[0].address, 16) == int(main, 16)
        assert listing[0].symbol == "main" and listing[0].instruction.startswith("push")
        assert listing[0].location.line == line_of("native_demo.c", "loop_body") - 4  # `int main(void) {`
        # Around the pc: from the pc on, the first instruction is the pc's.
        here = await backend.disassemble(frame.instruction_pointer, 3)
        assert int(here[0].address, 16) == int(frame.instruction_pointer, 16)
        assert here[0].location and here[0].location.line == frame.location.line
        # Before the pc too: decoded from the function's start, so on instruction bounds.
        around = await backend.disassemble(frame.instruction_pointer, 4, offset=-2)
        assert [int(i.address, 16) for i in around[2:]] == [int(i.address, 16) for i in here[:2]]

        # stepi moves exactly one instruction, to the next one listed.
        await backend.step_instruction(stop.thread_id, over=False)
        assert (await events.wait("stopped")).reason == "step"
        frames, _ = await backend.stack_trace(stop.thread_id, 0, 1)
        assert int(frames[0].instruction_pointer, 16) == int(here[1].address, 16)
        # nexti too (no call here: the next instruction).
        await backend.step_instruction(stop.thread_id, over=True)
        await events.wait("stopped")
        frames, _ = await backend.stack_trace(stop.thread_id, 0, 1)
        assert int(frames[0].instruction_pointer, 16) == int(here[2].address, 16)

        # A watchpoint on a local stops where it is written; a bad one says why.
        states = await backend.set_data_breakpoints([
            DataBreakpointSpec(expression="global_counter", frame_id=frames[0].id),
            DataBreakpointSpec(expression="no_such_name", frame_id=frames[0].id),
        ])
        assert states[0].verified and states[0].size == 4 and states[0].type == "int"
        assert not states[1].verified and "no_such_name" in states[1].message
        before = (await backend.evaluate("global_counter", frames[0].id, "watch")).value
        await backend.set_source_breakpoints(DEMO_C, [])
        await backend.continue_(stop.thread_id)
        hit = await events.wait("stopped")
        assert hit.reason == "data breakpoint"
        frames, _ = await backend.stack_trace(hit.thread_id, 0, 1)
        after = (await backend.evaluate("global_counter", frames[0].id, "watch")).value
        assert int(after) == int(before) + 1
        # Memory at the watched address holds the new value.
        memory = await backend.read_memory(states[0].address, 4)
        assert int.from_bytes(memory, "little") == int(after)
        assert await backend.set_data_breakpoints([]) == []
    finally:
        await backend.disconnect(terminate=True)
        await backend.dispose()


async def test_core_dump_post_mortem(lldb_backend, segfault_core, no_leftover_processes):
    program, core = segfault_core
    events = EventLog()
    backend = lldb_backend(events)

    async def configure():
        return None

    try:
        await backend.launch(LaunchRequest(program=str(program), core_file=str(core)), configure)
        assert backend.post_mortem
        stop = await events.wait("stopped")
        assert "SIGSEGV" in (stop.text or stop.description or "")
        threads = await backend.threads()
        assert len(threads) == 1
        frames, _ = await backend.stack_trace(threads[0].id, 0, 2)
        assert [f.name for f in frames] == ["read_next_value", "main"]
        assert frames[0].location.line == line_of("native_segfault.c", "crash")
        locals_ = await backend.variables((await backend.scopes(frames[1].id))[0].ref)
        lonely = next(v for v in locals_ if v.name == "lonely")
        assert lonely.ref
        fields = {v.name: v.value for v in await backend.variables(lonely.ref)}
        assert fields["value"] == "1" and fields["next"].startswith("0x0")
        address = await backend.resolve_address("&lonely", frames[1].id)
        assert int.from_bytes(await backend.read_memory(address, 4), "little") == 1
        listing = await backend.disassemble(frames[0].instruction_pointer, 2)
        assert int(listing[0].address, 16) == int(frames[0].instruction_pointer, 16)
    finally:
        await backend.disconnect(terminate=True)
        await backend.dispose()
    assert core.exists()


async def test_core_file_that_is_missing_is_a_clear_error(lldb_backend, no_leftover_processes):
    backend = lldb_backend(EventLog())
    with pytest.raises(DebuggerError, match="no core file at"):
        await backend.launch(LaunchRequest(program=str(c_program("native_segfault")),
                                           core_file="/nonexistent/core"), _nothing)
    await backend.dispose()


async def _nothing() -> None:
    return None


@pytest.fixture(scope="module")
def dlv():
    require(find_dlv() is not None, "delve (dlv)")


async def test_delve_disassembles_and_steps_by_instruction(dlv, no_leftover_processes):
    events = EventLog()
    backend = DelveBackend(events)
    try:
        stop, frame = await _stopped_at(backend, events, DEMO_GO,
                                        line_of("go_demo.go", "loop_body"),
                                        go_program("go_demo"))
        assert backend.capabilities.disassemble and backend.capabilities.instruction_step
        here = await backend.disassemble(frame.instruction_pointer, 3)
        assert int(here[0].address, 16) == int(frame.instruction_pointer, 16)
        assert here[0].location.line == frame.location.line
        before = await backend.disassemble(frame.instruction_pointer, 3, offset=-2)
        assert int(before[2].address, 16) == int(frame.instruction_pointer, 16)
        await backend.step_instruction(stop.thread_id, over=False)
        await events.wait("stopped")
        frames, _ = await backend.stack_trace(stop.thread_id, 0, 1)
        assert int(frames[0].instruction_pointer, 16) == int(here[1].address, 16)
        # delve's DAP server has no watchpoints nor memory reads: it says so, by name.
        with pytest.raises(NotSupported, match="dlv"):
            await backend.set_data_breakpoints([DataBreakpointSpec(expression="accumulator")])
        with pytest.raises(NotSupported, match="dlv"):
            await backend.read_memory(frame.instruction_pointer, 4)
    finally:
        await backend.disconnect(terminate=True)
        await backend.dispose()


async def test_delve_opens_a_go_core(dlv, tmp_path, no_leftover_processes):
    program = go_program("go_crash")
    core = crash_core(program, tmp_path, {"GOTRACEBACK": "crash"})
    events = EventLog()
    backend = DelveBackend(events)
    try:
        await backend.launch(LaunchRequest(program=str(program), core_file=str(core)), _nothing)
        assert backend.post_mortem
        threads = await backend.threads()
        assert threads
        found = None
        for thread in threads:
            try:
                frames, _ = await backend.stack_trace(thread.id, 0, 20)
            except DebuggerError:
                continue  # a goroutine parked in the runtime may not unwind in a core
            found = next((f for f in frames if f.name == "main.readNextValue"), None)
            if found:
                break
        assert found is not None and found.location.line == line_of("go_crash.go", "crash")
        depth = await backend.evaluate("depth", found.id, "watch")
        assert depth.value == "2"
        assert await backend.disassemble(found.instruction_pointer, 2)
    finally:
        await backend.disconnect(terminate=True)
        await backend.dispose()


async def test_debugpy_names_itself_when_it_cannot(no_leftover_processes):
    backend = DebugpyBackend(EventLog())
    with pytest.raises(NotSupported, match="debugpy.*core dumps"):
        await backend.launch(LaunchRequest(program="x.py", core_file="core"), _nothing)
    with pytest.raises(NotSupported, match="debugpy.*step by instruction"):
        await backend.step_instruction(1, over=False)
    # (watchpoints it has once launched: tests/test_python_watch.py)
    await backend.dispose()
