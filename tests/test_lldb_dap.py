"""lldb-dap through the generic DAP backend, against real C programs (and, where
lldb-dap's own thread timing decides what it sends, its traced traffic replayed)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from backends.adapters import create_backend, find_lldb_dap
from backends.dap.lldb_dap import LldbDapBackend
from backends.models import AttachRequest, BreakpointSpec, LaunchRequest, ScopeKind
from backends.process import pid_alive
from tests.support import require
from tests.support.native_build import (
    EventLog,
    c_program,
    line_of,
    run_c_flow,
    source_path,
    start_once_lldb_waits,
    unique_copy,
    tracer_of,
)

DEMO_C = source_path("native_demo.c")


@pytest.fixture(scope="module")
def lldb_dap():
    path = find_lldb_dap()
    require(path is not None, "lldb-dap")
    return path


async def nothing_to_configure() -> None:
    return None




async def test_registry_picks_lldb_dap_for_an_elf_binary(lldb_dap):
    from backends.adapters import select_adapter

    assert select_adapter(None, str(c_program("native_demo")), env={}) == "lldb-dap"
    backend = create_backend("lldb-dap", EventLog())
    assert isinstance(backend, LldbDapBackend)
    await backend.dispose()


async def test_the_c_flow(lldb_dap, no_leftover_processes):
    events = EventLog()
    backend = LldbDapBackend(events)
    try:
        seen = await run_c_flow(backend, events)
        assert [kind for _, kind in seen["scopes"]] == ["locals", "globals", "registers"]
    finally:
        await backend.disconnect(terminate=True)
        await backend.dispose()


async def test_hit_count_log_point_and_registers(lldb_dap, no_leftover_processes):
    events = EventLog()
    backend = LldbDapBackend(events)

    async def configure():
        await backend.set_source_breakpoints(DEMO_C, [
            BreakpointSpec(path=DEMO_C, line=line_of("native_demo.c", "loop_body"),
                           hit_condition="4"),
            BreakpointSpec(path=DEMO_C, line=line_of("native_demo.c", "square_body"),
                           log_message="square({value})"),
        ])

    try:
        await backend.launch(LaunchRequest(program=str(c_program("native_demo"))), configure)
        stop = await events.wait("stopped")
        frames, _ = await backend.stack_trace(stop.thread_id, 0, 1)
        assert (await backend.evaluate("i", frames[0].id, "watch")).value == "3"
        registers = [s for s in await backend.scopes(frames[0].id)
                     if s.kind is ScopeKind.registers]
        groups = await backend.variables(registers[0].ref)
        general = await backend.variables(groups[0].ref)
        assert any(v.name in ("rip", "pc") for v in general)
        await backend.set_source_breakpoints(DEMO_C, [
            BreakpointSpec(path=DEMO_C, line=line_of("native_demo.c", "square_body"),
                           log_message="square({value})"),
        ])
        await backend.continue_(None)
        await events.wait("exited")
        console = events.output("console")
        assert "square(3)" in console and "square(4)" in console
    finally:
        await backend.disconnect(terminate=True)
        await backend.dispose()


async def test_entry_segfault_disassembly_and_memory(lldb_dap, no_leftover_processes):
    events = EventLog()
    backend = LldbDapBackend(events)
    try:
        await backend.launch(
            LaunchRequest(program=str(c_program("native_segfault")), stop_on_entry=True),
            nothing_to_configure,
        )
        stop = await events.wait("stopped")
        assert stop.reason == "entry"
        await backend.continue_(None)
        stop = await events.wait("stopped")
        assert stop.reason == "exception"
        assert "SIGSEGV" in (stop.text or "") and "SIGSEGV" in (stop.description or "")
        frames, _ = await backend.stack_trace(stop.thread_id, 0, 2)
        assert [f.name for f in frames] == ["read_next_value", "main"]
        assert frames[0].location.line == line_of("native_segfault.c", "crash")
        assert backend.capabilities.disassemble and backend.capabilities.read_memory
        lines = await backend.disassemble(frames[0].instruction_pointer, 2)
        assert len(lines) == 2
        assert int(lines[0].address, 16) == int(frames[0].instruction_pointer, 16)
        memory = await backend.read_memory(frames[0].instruction_pointer, 4)
        assert len(memory) == 4
    finally:
        await backend.disconnect(terminate=True)
        await backend.dispose()
    assert not [e for e in events.events if e.kind == "output" and "PLEASE submit" in e.text]


async def test_attach_pause_then_detach_leaves_it_running(lldb_dap, no_leftover_processes):
    target = subprocess.Popen([str(c_program("native_counter"))], stdout=subprocess.DEVNULL,
                              start_new_session=True)
    events = EventLog()
    backend = LldbDapBackend(events)
    try:
        await backend.attach(AttachRequest(pid=target.pid), nothing_to_configure)
        assert tracer_of(target.pid) != 0
        await asyncio.sleep(0.2)
        await backend.pause(None)
        stop = await events.wait("stopped")
        assert stop.reason == "pause"
        frames, _ = await backend.stack_trace(stop.thread_id, 0, 20)
        assert frames  # where a pause lands varies (sleep, printf)
        await backend.disconnect(terminate=False)
        await backend.dispose()
        await asyncio.sleep(0.3)
        assert pid_alive(target.pid) and tracer_of(target.pid) == 0
    finally:
        await backend.dispose()
        target.kill()
        target.wait()


async def test_attach_waiting_for_a_name(lldb_dap, tmp_path, no_leftover_processes):
    program, name = unique_copy(c_program("native_counter"), tmp_path)
    events = EventLog()
    backend = LldbDapBackend(events)
    starter = asyncio.create_task(start_once_lldb_waits(backend, [program]))
    target = None
    try:
        await backend.attach(AttachRequest(wait_for=name), nothing_to_configure)
        target = await starter
        assert backend.debuggee_pid == target.pid
        await backend.disconnect(terminate=True)
        assert (await asyncio.to_thread(target.wait, 5)) is not None
    finally:
        await backend.dispose()
        if target is None and starter.done() and not starter.cancelled():
            target = starter.result()
        starter.cancel()
        if target is not None and target.poll() is None:
            target.kill()
            target.wait()


async def test_completions_of_a_local_and_a_member(lldb_dap, no_leftover_processes):
    events = EventLog()
    backend = LldbDapBackend(events)

    async def configure():
        await backend.set_source_breakpoints(DEMO_C, [
            BreakpointSpec(path=DEMO_C, line=line_of("native_demo.c", "after_loop"))])

    try:
        await backend.launch(LaunchRequest(program=str(c_program("native_demo"))), configure)
        stop = await events.wait("stopped")
        frames, _ = await backend.stack_trace(stop.thread_id, 0, 1)
        assert backend.capabilities.completions
        # lldb-dap answers the whole word, without a start: it replaces the word typed.
        found = await backend.completions("accum", 5, frames[0].id)
        assert "accumulator" in [c.text for c in found]
        members = await backend.completions("origin.", 7, frames[0].id)
        assert {"x", "y", "label"} <= {c.text for c in members}
    finally:
        await backend.disconnect(terminate=True)
        await backend.dispose()


#: What the replayed adapters below share: DAP's framing, an answer, a stop
#: on thread 4242, and the loop that reads each request (`request`, `command`).
FAKE_ADAPTER = r'''
import json, sys

def send(message):
    data = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
    sys.stdout.buffer.flush()

def answer(request, body=None):
    send({"type": "response", "request_seq": request["seq"], "command": request["command"],
          "success": True, "body": body or {}})

def stopped(reason, description):
    send({"type": "event", "event": "stopped", "body": {
        "reason": reason, "description": description, "threadId": 4242,
        "allThreadsStopped": True, "preserveFocusHint": False, "threadCausedFocus": True}})

def requests():
    while True:
        length = None
        while True:
            line = sys.stdin.buffer.readline()
            if not line:
                sys.exit(0)
            if line.strip() == b"":
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        request = json.loads(sys.stdin.buffer.read(length))
        yield request, request["command"]
'''


# lldb-dap 19's answers to a gdb-remote attach, as traced when its event thread
# read the connect's stop only after configurationDone: the entry stop told
# twice. Which of the two ways a run goes is lldb-dap's thread timing (4 loaded
# attaches in 13 told it twice), so the traffic is replayed here; after the
# continue the program stops with SIGSTOP again, a new stop.
TOLD_TWICE = FAKE_ADAPTER + r'''
for request, command in requests():
    if command == "initialize":
        answer(request, {"supportsConfigurationDoneRequest": True})
    elif command == "attach":
        answer(request)
        send({"type": "event", "event": "process", "body": {
            "name": "/remote/native_demo", "systemProcessId": 4242, "startMethod": "attach"}})
        send({"type": "event", "event": "initialized"})
    elif command == "configurationDone":
        answer(request)
        stopped("exception", "signal SIGSTOP")
        stopped("exception", "signal SIGSTOP")
    elif command == "exceptionInfo":
        answer(request, {"exceptionId": "signal", "description": "signal SIGSTOP",
                         "breakMode": "always"})
    elif command == "threads":
        answer(request, {"threads": [{"id": 4242, "name": "native_demo"}]})
    elif command == "continue":
        send({"type": "event", "event": "continued",
              "body": {"threadId": 4242, "allThreadsContinued": True}})
        answer(request, {"allThreadsContinued": True})
        stopped("exception", "signal SIGSTOP")
    elif command == "disconnect":
        send({"type": "event", "event": "terminated"})
        answer(request)
        sys.exit(0)
    else:
        answer(request)
'''


async def test_a_gdb_remote_entry_stop_told_twice_is_one_entry_stop(tmp_path,
                                                                    no_leftover_processes):
    adapter = tmp_path / "lldb_dap_told_twice.py"
    adapter.write_text(TOLD_TWICE)
    events = EventLog()
    backend = LldbDapBackend(events, adapter_argv=[sys.executable, str(adapter)])
    try:
        await backend.attach(AttachRequest(host="127.0.0.1", port=1234), nothing_to_configure)
        stop = await events.wait("stopped")
        assert stop.reason == "entry"
        # Answered after both stops were sent: both have been read and told.
        await backend.threads()
        await backend._drain_events(5)
        assert [e.reason for e in events.events if e.kind == "stopped"] == ["entry"]
        # The same words once it has run are a stop of their own, told as they are.
        await backend.continue_(None)
        stop = await events.wait("stopped")
        assert stop.reason == "exception" and stop.description == "signal SIGSTOP"
    finally:
        await backend.disconnect(terminate=False)
        await backend.dispose()


# lldb-dap 19's answers to an expression that crashes, typed in its repl with
# --unwind-on-error false: the "stopped" it tells for the crash comes from its
# event thread around the evaluate's answer (argv[2] "answer": right after it,
# as on an idle machine), or (argv[2] "hold", as with both cores loaded, 1 run
# in 15 of the forking-expression fault test) only after the unwind has held
# SIGSEGV. Every request is written to the log named on the command line, in
# the order the adapter reads them.
CRASH_TOLD_LATE = FAKE_ADAPTER + r'''
log = open(sys.argv[1], "a")
told_after = sys.argv[2]
SEGV = "signal SIGSEGV: address not mapped to object (fault address: 0x0)"
for request, command in requests():
    expression = (request.get("arguments") or {}).get("expression", "")
    print(expression or command, file=log, flush=True)
    if command == "initialize":
        answer(request, {"supportsConfigurationDoneRequest": True})
    elif command == "attach":
        answer(request)
        send({"type": "event", "event": "process", "body": {
            "name": "/native_counter", "systemProcessId": 4242, "startMethod": "attach"}})
        send({"type": "event", "event": "initialized"})
    elif command == "configurationDone":
        answer(request)
        stopped("breakpoint", "breakpoint 1.1")
    elif command == "threads":
        answer(request, {"threads": [{"id": 4242, "name": "native_counter"}]})
    elif command == "exceptionInfo":
        answer(request, {"exceptionId": "signal", "description": SEGV, "breakMode": "always"})
    elif command == "evaluate" and "dwim-print" in expression:
        answer(request, {"variablesReference": 0, "result":
            "(lldb) " + expression.lstrip("`") + "\nerror: Execution was interrupted, reason: "
            + SEGV + ".\nThe process has been left at the point where it was interrupted, "
            'use "thread return -x" to return to the state before expression evaluation.\n'})
        if told_after == "answer":
            stopped("exception", SEGV)  # the crash's own stop
    elif command == "evaluate" and "--pass false" in expression:
        answer(request, {"variablesReference": 0, "result": "(lldb) " + expression[1:]})
        if told_after == "hold":
            stopped("exception", SEGV)  # the crash's own stop, told late
    elif command == "continue":
        send({"type": "event", "event": "continued",
              "body": {"threadId": 4242, "allThreadsContinued": True}})
        answer(request, {"allThreadsContinued": True})
        stopped("breakpoint", "breakpoint 1.1")
    elif command == "disconnect":
        send({"type": "event", "event": "terminated"})
        answer(request)
        sys.exit(0)
    else:
        answer(request, {"variablesReference": 0, "result": ""})
'''


@pytest.mark.parametrize("told_after", ["answer", "hold"])
async def test_a_crashed_expressions_stop_is_not_the_programs(tmp_path, monkeypatch, told_after,
                                                              no_leftover_processes):
    """The crash's stop is the expression's: unwound, the program is where it
    was. Told to the session as a stop, it was read after the next continue
    had gone out (its exceptionInfo still on its way) and taken for that
    continue's stop: a loop's next hit missed (CI, 2026-11-30)."""
    import backends.dap.lldb_dap as lldb_dap

    monkeypatch.setattr(lldb_dap, "EXPRESSION_STOP_WAIT_S", 0.5)  # "hold" outlasts it
    adapter = tmp_path / "lldb_dap_crash_told_late.py"
    adapter.write_text(CRASH_TOLD_LATE)
    requests = tmp_path / "requests.log"
    events = EventLog()
    backend = LldbDapBackend(events, adapter_argv=[
        sys.executable, str(adapter), str(requests), told_after])
    try:
        await backend.attach(AttachRequest(pid=4242), nothing_to_configure)
        await events.wait("stopped")
        said = await backend.raw_command("dwim-print -- ((int(*)(void))0)()", 10)
        assert "returned to the state before" in said
        # The crash's stop is read; a round trip lets what it set off go out.
        await backend._drain_events(5)
        await backend.threads()
        assert backend._state == "stopped"
        await backend.continue_(None)
        await events.wait("stopped")
        await backend._drain_events(5)
        await backend.threads()
        stops = [(e.reason, e.description) for e in events.events if e.kind == "stopped"]
        assert stops == [("breakpoint", "breakpoint 1.1")] * 2, stops
        order = [line for line in requests.read_text().splitlines()
                 if "process handle" in line or line == "continue"]
        # SIGSEGV is kept from the program through the continue, and only then given back.
        assert order == ["`process handle SIGSEGV --pass false", "continue",
                         "`process handle SIGSEGV --pass true"], order
    finally:
        await backend.disconnect(terminate=False)
        await backend.dispose()
