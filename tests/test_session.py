"""The session and the command layer, against real debugpy, in one process."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from backends.errors import DebuggerError, ErrorCode
from tests.support import marker_line
from tui_debugger.host.hub import Hub
from tui_debugger.models import ClientInfo, client_id
from tui_debugger.client.router import join
from tui_debugger.session import SessionState

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture
def workdir(tmp_path):
    for name in ("py_basic.py", "py_threads.py", "py_raise.py", "py_output.py"):
        shutil.copy(PROGRAMS / name, tmp_path / name)
    return tmp_path


@pytest.fixture
async def hub():
    hub = Hub(serve=True)
    yield hub
    await hub.close_all()


class InProcess:
    """A front end's hold on a session hosted in this test process: its calls
    run here, and it is one of the session's clients (as a TUI would be)."""

    def __init__(self, hub: Hub, session, origin: str):
        self.hub, self.session, self.origin = hub, session, origin
        session.add_client(ClientInfo(id=client_id(origin), origin=origin))

    async def call(self, command: str, args: dict | None = None):
        return await _call(self.hub, command, args or {}, session=self.session)


async def launch(hub: Hub, workdir: Path, program: str, **args) -> InProcess:
    result = await _call(hub, "launch", {"program": str(workdir / program), **args}, cwd=str(workdir))
    return InProcess(hub, hub.sessions[result.session], "tui")


async def _call(hub: Hub, command: str, args: dict, cwd: str | None = None, session=None):
    from tui_debugger.execute import execute

    return await execute(hub, command, args, origin="tui", client_cwd=cwd, session=session)


async def test_breakpoint_stop_inspect_step_and_end(no_leftover_processes, hub, workdir):
    program = workdir / "py_basic.py"
    loop_line = marker_line(program, "@loop-body")
    link = await launch(hub, workdir, "py_basic.py", breakpoints=[f"py_basic.py:{loop_line}"])
    session = link.session
    events = session.subscribe()

    stop = await link.call("await", {"timeoutMs": 15000})
    assert stop.status == "stopped", stop
    assert stop.stop.reason == "breakpoint"
    assert stop.stop.location.line == loop_line
    assert stop.stop.breakpoint_ids == [1]
    assert [s.line for s in stop.context.source if s.current] == [loop_line]

    locals_ = await link.call("variables", {})
    by_name = {v.name: v for v in locals_.variables}
    assert by_name["acc"].value == "0" and by_name["values"].has_children

    drilled = await link.call("variables", {"path": "values"})
    items = {v.name: v.value for v in drilled.variables}
    assert (items["0"], items["1"], items["2"]) == ("1", "2", "3")

    value = await link.call("evaluate", {"expression": "acc + v * 100"})
    assert value.value == "100"

    with pytest.raises(DebuggerError) as err:
        await link.call("evaluate", {"expression": "1 / 0"})
    assert "ZeroDivisionError" in str(err.value)
    assert session.state == SessionState.stopped  # a failed request loses nothing

    stack = await link.call("stack", {})
    assert [f.name for f in stack.frames][:2] == ["total", "main"]

    up = await link.call("frame", {"offset": 1})
    assert up.frame.name == "main"
    main_vars = await link.call("variables", {"names": ["point", "items"]})
    assert {v.name for v in main_vars.variables} == {"point", "items"}
    await link.call("frame", {"index": 0})

    step = await link.call("step", {})  # into scale()
    assert step.status == "stopped"
    assert step.stop.function == "scale"
    out = await link.call("finish", {})
    assert out.status == "stopped" and out.stop.function == "total"

    await link.call("breakpoint_remove", {"all": True})
    done = await link.call("continue", {"waitMs": 15000})
    assert done.status == "terminated" and done.exit_code == 0

    output = await link.call("output", {})
    assert "answer=12" in "".join(e.text for e in output.entries)

    kinds = []
    while not events._queue.empty():
        event = events._queue.get_nowait()
        if event is not None:
            kinds.append(event.kind)
    assert "stopped" in kinds and "continued" in kinds and "terminated" in kinds
    await link.call("terminate", {})


async def test_conditions_hit_counts_logpoints_and_bad_lines(no_leftover_processes, hub, workdir):
    program = workdir / "py_basic.py"
    count_line = marker_line(program, "@count")
    link = await launch(hub, workdir, "py_basic.py", stopOnEntry=True)
    first = await link.call("await", {"timeoutMs": 15000})
    assert first.status == "stopped" and first.stop.reason == "entry"

    cond = await link.call("breakpoint_add", {"file": "py_basic.py", "line": count_line, "condition": "n == 3"})
    assert cond.breakpoint.verified
    log_line = marker_line(program, "@loop-body")
    logpoint = await link.call("breakpoint_add", {"file": str(program), "line": log_line,
                                                  "logMessage": "v is {v}"})
    assert logpoint.breakpoint.verified

    # A line with no code: the adapter's answer (moved or unverified) is reported.
    no_code = marker_line(program, "@no-code")
    moved = await link.call("breakpoint_add", {"file": str(program), "line": no_code})
    bp = moved.breakpoint
    assert (bp.line and bp.line != no_code) or not bp.verified
    assert moved.note
    await link.call("breakpoint_remove", {"breakpointId": bp.id})

    with pytest.raises(DebuggerError) as err:
        await link.call("breakpoint_add", {"file": "no_such_file.py", "line": 3})
    assert err.value.code == ErrorCode.invalid_input and "No such file" in err.value.message
    with pytest.raises(DebuggerError):
        await link.call("breakpoint_remove", {"breakpointId": 99})

    hit = await link.call("continue", {"waitMs": 15000})
    assert hit.status == "stopped"
    assert hit.stop.location.line == count_line
    n = await link.call("evaluate", {"expression": "n"})
    assert n.value == "3"

    output = await link.call("output", {})
    logged = "".join(e.text for e in output.entries)
    assert "v is 1" in logged and "v is 3" in logged

    await link.call("breakpoint_remove", {"all": True})
    hits = await link.call("breakpoint_add", {"file": str(program), "line": count_line, "hitCondition": "2"})
    assert hits.breakpoint.verified
    await link.call("terminate", {})
    assert link.session.state == SessionState.terminated


async def test_uncaught_exception_stops_with_its_text(no_leftover_processes, hub, workdir):
    link = await launch(hub, workdir, "py_raise.py")
    stop = await link.call("await", {"timeoutMs": 15000})
    assert stop.status == "stopped"
    assert stop.stop.reason == "exception"
    assert "ValueError" in (stop.stop.text or "") and "bad value 3" in stop.stop.text
    # The reason stays readable until the next resume.
    status = await link.call("status", {})
    assert "bad value 3" in status.stop.text
    context = await link.call("context", {})
    assert context.stop.text == stop.stop.text
    await link.call("terminate", {})


async def test_threads_are_listed_and_selectable(no_leftover_processes, hub, workdir):
    program = workdir / "py_threads.py"
    line = marker_line(program, "@all-started")
    link = await launch(hub, workdir, "py_threads.py", breakpoints=[f"py_threads.py:{line}"])
    stop = await link.call("await", {"timeoutMs": 15000})
    assert stop.status == "stopped"
    threads = await link.call("threads", {})
    names = {t.name for t in threads.threads}
    assert {"worker-0", "worker-1", "worker-2"} <= names
    main = next(t for t in threads.threads if t.selected)
    assert main.id == stop.stop.thread_id
    await link.call("terminate", {})


async def test_ended_session_answers_clearly(no_leftover_processes, hub, workdir):
    link = await launch(hub, workdir, "py_output.py")
    # sys.exit(3) is how a program means to end: no exception stop, just the code.
    done = await link.call("await", {"timeoutMs": 15000})
    assert done.status == "terminated" and done.exit_code == 3
    with pytest.raises(DebuggerError) as err:
        await link.call("continue", {})
    assert "ended" in err.value.message and "start" in err.value.message
    paused = await link.call("status", {})
    assert paused.state == "terminated"
    await link.call("terminate", {})


async def test_running_program_refuses_inspection_and_pause_stops_it(no_leftover_processes, hub, workdir):
    script = workdir / "spin.py"
    script.write_text("import time\nn = 0\nwhile True:\n    n += 1\n    time.sleep(0.01)\n")
    link = await launch(hub, workdir, "spin.py")
    with pytest.raises(DebuggerError) as err:
        await link.call("stack", {})
    assert "running" in err.value.message and "pause" in err.value.message
    cont = await link.call("status", {})
    assert cont.state == "running"
    paused = await link.call("pause", {"waitMs": 10000})
    assert paused.status == "stopped" and paused.stop.reason == "pause"
    running = await link.call("continue", {"waitMs": 200})
    assert running.status == "running" and "debug_wait" in running.message
    await link.call("terminate", {})


@pytest.mark.slow
async def test_two_named_sessions_and_socket_join(no_leftover_processes, hub, workdir):
    a = await launch(hub, workdir, "py_basic.py", stopOnEntry=True, sessionName="alpha")
    b = await launch(hub, workdir, "py_output.py", sessionName="beta")
    assert set(hub.sessions) == {"alpha", "beta"}
    done = await b.call("await", {"timeoutMs": 15000})
    assert done.status == "terminated" and done.exit_code == 3
    out = await b.call("output", {})
    # stdout and stderr are separate pipes: their relative order is not guaranteed.
    assert sorted(e.category for e in out.entries if "hello" in e.text) == ["stderr", "stdout"]
    # A second front end joins alpha through its socket and sees a move made here.
    joined = await join("alpha", "mcp")
    try:
        await a.call("await", {"timeoutMs": 15000})
        events = joined.events()
        step = await a.call("next", {})
        assert step.status == "stopped"
        seen = []
        async def collect():
            async for event in events:
                seen.append(event)
                if event.kind == "stopped":
                    return
        await asyncio.wait_for(collect(), 10)
        assert seen[-1].origin == "tui"
        remote_ctx = await joined.call("context", {})
        assert remote_ctx.stop.location.line == step.stop.location.line
        # The agent's answer says what the person did meanwhile.
        assert [e.command for e in remote_ctx.others if e.origin == "tui"][-1] == "next"
        await joined.call("next", {})
        activity = [e for e in hub.sessions["alpha"].activity]
        assert [e.origin for e in activity if e.command == "next"] == ["tui", "mcp"]
    finally:
        await joined.close()
    await a.call("terminate", {})
    await b.call("terminate", {})


async def test_a_stops_locals_are_read_once_for_the_tui_and_shared_while_on_their_way(
        no_leftover_processes, hub, workdir):
    """With a TUI joined, the session reads the stop's locals as the stop is
    published; the TUI's request, and any other at the same time, share that one
    adapter request. Without a TUI nothing is read that nobody asked for."""
    program = workdir / "py_basic.py"
    loop_line = marker_line(program, "@loop-body")
    link = await launch(hub, workdir, "py_basic.py", breakpoints=[f"py_basic.py:{loop_line}"])
    session = link.session
    assert (await link.call("await", {"timeoutMs": 15000})).status == "stopped"
    backend = session.backend
    reads: list[int] = []
    real_variables = backend.variables

    async def counting(ref, *args, **kwargs):
        reads.append(ref)
        return await real_variables(ref, *args, **kwargs)

    backend.variables = counting
    assert any(c.origin == "tui" for c in session.clients.values())  # the InProcess handle's
    generation = session.run_generation
    await link.call("next", {"waitMs": 0})  # answered at once, with no locals in it
    assert await session.wait_for_stop(10, since_generation=generation + 1)
    first, second = await asyncio.gather(link.call("variables", {}), link.call("variables", {}))
    assert [v.name for v in first.variables] == [v.name for v in second.variables]
    assert len(reads) == 1, reads  # the prefetch's, shared by both calls
    reads.clear()
    generation = session.run_generation
    await link.call("next", {"waitMs": 0})
    assert await session.wait_for_stop(10, since_generation=generation + 1)
    await asyncio.sleep(0.2)
    assert len(reads) == 1, reads  # read with nobody asking yet: the TUI will

    # A read that fails is forgotten, not cached: the next one asks again.
    async def failing(ref, *args, **kwargs):
        raise DebuggerError("the adapter is busy", code=ErrorCode.timeout)

    backend.variables = failing
    await link.call("next", {"waitMs": 10_000})
    await asyncio.sleep(0.1)  # the prefetch failed
    backend.variables = counting
    reads.clear()
    assert (await link.call("variables", {})).variables
    assert len(reads) == 1

    # No TUI: a stop reads no locals of its own accord.
    for client in [c for c in session.clients.values() if c.origin == "tui"]:
        session.remove_client(client.id)
    reads.clear()
    generation = session.run_generation
    await link.call("next", {"waitMs": 0})  # answered at once, with no locals in it
    assert await session.wait_for_stop(10, since_generation=generation + 1)
    await asyncio.sleep(0.1)
    assert reads == []
    await link.call("terminate", {})


async def test_stack_and_variables_asked_while_a_step_runs_answer_its_stop(
        no_leftover_processes, hub, workdir):
    """The TUI asks for a step's stack and locals as soon as the step is under
    way (waitMs 0): each waits for the stop on its way and answers that stop,
    never the one before it nor "the program is running"."""
    program = workdir / "py_basic.py"
    loop_line = marker_line(program, "@loop-body")
    link = await launch(hub, workdir, "py_basic.py", breakpoints=[f"py_basic.py:{loop_line}"])
    stop = await link.call("await", {"timeoutMs": 15000})
    assert stop.status == "stopped" and stop.stop.location.line == loop_line
    changed = 0
    for _ in range(4):
        answered = await link.call("next", {"waitMs": 0})
        assert answered.status == "running"  # it did not wait for the stop
        stack, variables = await asyncio.gather(link.call("stack", {}),
                                                link.call("variables", {}))
        assert link.session.state == SessionState.stopped
        assert stack.frames[0].line == link.session.stop.location.line
        again = await link.call("variables", {})  # asked with the stop on screen
        assert [(v.name, v.value) for v in variables.variables] == \
            [(v.name, v.value) for v in again.variables]
        changed += any(v.changed for v in variables.variables)
    assert changed  # the loop's values moved, and each answer had the new ones
    await link.call("terminate", {})


async def test_a_steps_locals_asked_with_its_stack_are_the_stops_own(
        no_leftover_processes, hub, workdir):
    """debugpy keeps a frame's id and its locals' reference from stop to stop
    (Backend.stop_ids_carry_over): a step's scopes and locals are asked for by
    the last stop's ids right behind its stack, and used only when the stack
    and the scopes show them this stop's. Into a call, inside it, out of it
    and on through the loop, each answer holds its own frame's locals."""
    program = workdir / "py_basic.py"
    loop_line = marker_line(program, "@loop-body")
    scale_line = marker_line(program, "@scale")
    await _call(hub, "launch", {"program": str(program),
                                "breakpoints": [f"py_basic.py:{loop_line}"]}, cwd=str(workdir))
    [session] = hub.sessions.values()

    async def agent(command: str, args: dict | None = None):
        from tui_debugger.execute import execute

        return await execute(hub, command, args or {}, origin="mcp", session=session)

    stop = await agent("await", {"timeoutMs": 15000})
    assert stop.status == "stopped" and stop.stop.location.line == loop_line
    await agent("breakpoint_remove", {"all": True})
    assert session.backend.stop_ids_carry_over
    client = session.backend.client
    sent, answered = [], []
    real_send, real_dispatch = client.send_request, client._dispatch

    def send(command, arguments=None, timeout=None):
        sent.append((command, len(answered)))
        return real_send(command, arguments, timeout)

    def dispatch(message):
        if message.get("type") == "response":
            answered.append(message.get("command"))
        return real_dispatch(message)

    client.send_request, client._dispatch = send, dispatch

    async def names(answer) -> set[str]:
        # The step's answer lists what changed; `variables` the whole locals,
        # from the stop's cache, where what was asked for ahead is put.
        shown = {v.name for v in answer.context.locals}
        listed = {v.name for v in (await agent("variables")).variables
                  if not v.name.startswith("(return)")}
        assert shown - {"(return) scale"} <= listed
        return listed

    into = await agent("step")
    assert into.stop.location.line == scale_line and into.stop.function == "scale"
    assert await names(into) == {"value", "factor"}  # not total()'s, asked for ahead
    inside = await agent("next")
    assert inside.stop.location.line == scale_line + 1
    assert await names(inside) == {"value", "factor", "result"}
    out = await agent("finish")
    assert out.stop.function == "total" and {"acc", "values"} <= await names(out)
    for _ in range(3):
        sent.clear()
        answered.clear()
        on = await agent("next")
        assert on.stop.function == "total" and {"acc", "values", "i", "v"} <= await names(on)
        # In the loop the locals went out with the stack, before its answer.
        after = {command: seen for command, seen in sent}
        assert "stackTrace" in answered and "variables" in after
        assert after["variables"] <= answered.index("stackTrace"), (sent, answered)
    await agent("terminate")


def test_each_move_of_another_client_is_told_once_the_newest_five():
    """others_since_last_call: what the other clients did since this one's last
    call (not the session's own doings, not its own), the newest `limit` of
    them, oldest first; a client's first call tells what came after it joined."""
    from tui_debugger.session import Session

    session = Session("news")
    session.record_activity("tui", "next", client="tui-1")
    session.add_client(ClientInfo(id="agent-1", origin="mcp"))
    assert session.others_since_last_call("agent-1") == []  # before it joined: not news
    for i in range(8):
        session.record_activity("tui", f"break {i}", client="tui-1")
    session.record_activity("mcp", "next", client="agent-1")
    session.record_activity("session", "hit passed")
    told = session.others_since_last_call("agent-1")
    assert [e.command for e in told] == [f"break {i}" for i in range(3, 8)]
    assert session.others_since_last_call("agent-1") == []  # each move told once
    session.record_activity("tui", "continue", client="tui-1")
    assert [e.command for e in session.others_since_last_call("agent-1", limit=2)] == ["continue"]
    assert [e.command for e in session.others_since_last_call("tui-1")] == []
