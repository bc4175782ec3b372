"""The Node.js backend over the Chrome DevTools Protocol, on real node
processes, and the debug-script flow (seeds/002) on it. TypeScript programs
are compiled with source maps (inline and in .map files) once per test run."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backends.cdp.backend import CdpBackend
from backends.cdp.conditions import build_condition, hit_test, split_log_message
from backends.cdp.script import inspector_port, run_debug_script_node
from backends.cdp.sourcemap import (
    SourceMap,
    decode_data_url,
    decode_mappings,
    decode_vlq,
    encode_vlq,
    file_url_to_path,
    find_source_mapping_url,
    path_to_file_url,
)
from backends.cdp.values import format_remote, remote_type
from backends.errors import CommandFailed, DependencyMissing, InvalidInput, Timeout
from backends.models import (
    AttachRequest,
    BreakpointSpec,
    LaunchRequest,
    ScopeKind,
    StoppedEvent,
)
from backends.process import pid_alive
from tests.support.node import (
    APP_TS,
    GEOMETRY_TS,
    ROOT,
    SCRIPT_JS,
    SESSION_JS,
    SPIN_JS,
    THROWS_JS,
    mark,
)

EVENT_TIMEOUT = 10.0


class Harness:
    """A backend and the events it emitted, with waits that always time out."""

    def __init__(self) -> None:
        self.events: list = []
        self.queue: asyncio.Queue = asyncio.Queue()
        self.backend = CdpBackend(self._emit)

    def _emit(self, event) -> None:
        self.events.append(event)
        self.queue.put_nowait(event)

    async def next(self, *kinds: str, timeout: float = EVENT_TIMEOUT):
        while True:
            event = await asyncio.wait_for(self.queue.get(), timeout)
            if event.kind in kinds:
                return event

    async def stop(self) -> StoppedEvent:
        event = await self.next("stopped", "terminated")
        assert event.kind == "stopped", f"program ended instead of stopping: {self.events}"
        return event

    async def top(self):
        frames, _ = await self.backend.stack_trace(1)
        return frames[0]

    async def locals(self, frame_id: int | None = None) -> dict:
        frame_id = frame_id or (await self.top()).id
        scopes = await self.backend.scopes(frame_id)
        return {v.name: v for v in await self.backend.variables(scopes[0].ref)}

    def output(self, category: str | None = None) -> str:
        return "".join(
            e.text for e in self.events
            if e.kind == "output" and (category is None or e.category == category)
        )

    async def run_to_end(self) -> tuple[int | None, list[str]]:
        """Continue through every remaining stop; the exit code and the kinds
        of the last events."""
        while True:
            event = await self.next("stopped", "exited", "terminated")
            if event.kind == "stopped":
                await self.backend.continue_(1)
                continue
            if event.kind == "exited":
                terminated = await self.next("terminated")
                return event.exit_code, [event.kind, terminated.kind]
            return None, [event.kind]


@pytest.fixture
async def harness(no_leftover_processes, node):
    h = Harness()
    yield h
    await h.backend.dispose()


def spec(path: Path, line: int, **extra) -> BreakpointSpec:
    return BreakpointSpec(path=str(path), line=line, **extra)


def breakpoints_at(h: Harness, path: Path, specs: list[BreakpointSpec], states: list):
    async def configure() -> None:
        states.extend(await h.backend.set_source_breakpoints(str(path), specs))

    return configure


async def nothing() -> None:
    return None


# ============================================================================ whole session


async def test_whole_session_breakpoints_stack_scopes_variables_evaluate_output_exit(harness):
    h = harness
    lines = {name: mark(SESSION_JS, name)
             for name in ("closure-body", "add-body", "main-return", "main-compute")}
    states: list = []
    await h.backend.launch(
        LaunchRequest(program=str(SESSION_JS)),
        breakpoints_at(h, SESSION_JS, [
            spec(SESSION_JS, lines["main-return"]),
            spec(SESSION_JS, lines["add-body"]),
            spec(SESSION_JS, lines["closure-body"]),
        ], states),
    )
    assert len(states) == 3 and all(s.backend_id for s in states)

    # Set before start, hit in program order: the closure, add three times, then main's return.
    stop = await h.stop()
    assert stop.reason == "breakpoint" and stop.hit_breakpoint_ids == [states[2].backend_id]
    top = await h.top()
    assert (top.name, top.location.path, top.location.line) == (
        "bump", str(SESSION_JS), lines["closure-body"])
    scopes = await h.backend.scopes(top.id)
    kinds = [s.kind for s in scopes]
    assert kinds[0] == ScopeKind.locals and ScopeKind.closure in kinds
    assert kinds[-1] == ScopeKind.globals and scopes[-1].expensive
    closure = next(s for s in scopes if s.kind == ScopeKind.closure)
    closure_vars = {v.name: v.value for v in await h.backend.variables(closure.ref)}
    assert closure_vars["count"] == "10"
    assert (await h.locals())["step"].value == "5"

    seen_adds = []
    for _ in range(3):
        await h.backend.continue_(1)
        stop = await h.stop()
        assert stop.hit_breakpoint_ids == [states[1].backend_id]
        frames, total = await h.backend.stack_trace(1)
        assert [f.name for f in frames[:3]] == ["add", "compute", "main"]
        assert frames[0].location.line == lines["add-body"]
        assert frames[2].location.line == lines["main-compute"]
        assert total and total >= 4
        variables = await h.locals(frames[0].id)
        seen_adds.append((variables["a"].value, variables["b"].value))
    assert seen_adds == [("0", "1"), ("1", "2"), ("3", "3")]

    await h.backend.continue_(1)
    stop = await h.stop()
    assert stop.hit_breakpoint_ids == [states[0].backend_id]
    variables = await h.locals()
    assert variables["result"].value == "6"
    listed = variables["list"]
    assert listed.type == "Array" and listed.ref > 0 and listed.indexed_count == 3
    assert listed.value == '[6, 15, "three"]'
    children = await h.backend.variables(listed.ref)
    assert [(c.name, c.value) for c in children if c.name.isdigit()] == [
        ("0", "6"), ("1", "15"), ("2", '"three"')]
    assert children[2].evaluate_name == "list[2]"

    # Objects: evaluated, expanded lazily, nested.
    config = await h.backend.evaluate("config", None)
    assert config.type == "Object" and config.ref > 0
    assert config.value.startswith('{name: "demo", sizes: ')
    fields = {v.name: v for v in await h.backend.variables(config.ref)}
    assert fields["name"].value == '"demo"'
    nested = fields["nested"]
    assert nested.ref > 0 and nested.evaluate_name == "config.nested"
    assert {v.name: v.value for v in await h.backend.variables(nested.ref)} == {
        "deep": "true", "label": '"inner"'}
    assert (await h.backend.evaluate("result * 2", None)).value == "12"
    with pytest.raises(CommandFailed, match="ReferenceError: missingName is not defined"):
        await h.backend.evaluate("missingName + 1", None)
    with pytest.raises(CommandFailed, match="Error: thrown on purpose"):
        await h.backend.evaluate("(() => { throw new Error('thrown on purpose') })()", None)

    await h.backend.continue_(1)
    exit_code, tail = await h.run_to_end()
    assert exit_code == 7 and tail == ["exited", "terminated"]
    assert "result 6\n" in h.output("stdout") and "raw write 3\n" in h.output("stdout")
    assert "warning: almost done\n" in h.output("stderr")
    assert "Debugger" not in h.output()  # the inspector's own chatter is not program output
    verified = [e for e in h.events if e.kind == "breakpoint"]
    assert {e.backend_id for e in verified} == {s.backend_id for s in states}
    assert all(e.state.verified for e in verified)
    assert {e.state.line for e in verified} == {lines["main-return"], lines["add-body"],
                                                lines["closure-body"]}
    with pytest.raises(CommandFailed):
        await h.backend.stack_trace(1)


async def test_step_in_over_out(harness):
    h = harness
    loop_call = mark(SESSION_JS, "loop-call")
    await h.backend.launch(
        LaunchRequest(program=str(SESSION_JS)),
        breakpoints_at(h, SESSION_JS, [spec(SESSION_JS, loop_call)], []),
    )
    await h.stop()
    assert (await h.top()).location.line == loop_call

    await h.backend.step_in(1)
    assert (await h.stop()).reason == "step"
    top = await h.top()
    assert (top.name, top.location.line) == ("add", mark(SESSION_JS, "add-body"))

    await h.backend.step_over(1)
    assert (await h.stop()).reason == "step"
    assert (await h.top()).location.line == mark(SESSION_JS, "add-return")
    assert (await h.locals())["sum"].value == "1"

    await h.backend.step_out(1)
    assert (await h.stop()).reason == "step"
    assert (await h.top()).name == "compute"
    with pytest.raises(CommandFailed, match="stale|gone"):
        await h.backend.scopes(top.id)  # a frame from before the step


async def test_conditions_hit_counts_and_logpoints(harness):
    h = harness
    states: list = []
    await h.backend.launch(
        LaunchRequest(program=str(SESSION_JS)),
        breakpoints_at(h, SESSION_JS, [
            spec(SESSION_JS, mark(SESSION_JS, "add-body"), condition="b === 3"),
            spec(SESSION_JS, mark(SESSION_JS, "loop-call"), hit_condition="== 2"),
            spec(SESSION_JS, mark(SESSION_JS, "main-log"),
                 log_message="total is {result} of {config.sizes.length} {'%s'}"),
            spec(SESSION_JS, mark(SESSION_JS, "compute-return"), hit_condition="bogus"),
        ], states),
    )
    assert not states[3].verified and "Hit condition 'bogus'" in states[3].message

    await h.stop()
    top = await h.top()
    assert top.location.line == mark(SESSION_JS, "loop-call")
    assert (await h.locals())["i"].value == "1"  # the second hit

    await h.backend.continue_(1)
    await h.stop()
    assert (await h.top()).name == "add"
    assert (await h.locals())["b"].value == "3"

    await h.backend.continue_(1)
    exit_code, _ = await h.run_to_end()
    assert exit_code == 7
    assert "total is 6 of 3 %s\n" in h.output("stdout")
    stops = [e for e in h.events if e.kind == "stopped"]
    assert len(stops) == 2  # the logpoint never stopped the program


async def test_replacing_a_files_breakpoints_removes_the_old_ones(harness):
    h = harness
    states: list = []
    await h.backend.launch(
        LaunchRequest(program=str(SESSION_JS), stop_on_entry=True),
        breakpoints_at(h, SESSION_JS, [spec(SESSION_JS, mark(SESSION_JS, "add-body"))], states),
    )
    entry = await h.stop()
    assert entry.reason == "entry"
    top = await h.top()
    assert top.location.path == str(SESSION_JS) and top.location.line == 5
    replaced = await h.backend.set_source_breakpoints(
        str(SESSION_JS), [spec(SESSION_JS, mark(SESSION_JS, "main-return"))])
    assert replaced[0].verified and replaced[0].line == mark(SESSION_JS, "main-return")
    await h.backend.continue_(1)
    stop = await h.stop()
    assert stop.hit_breakpoint_ids == [replaced[0].backend_id]
    assert (await h.top()).location.line == mark(SESSION_JS, "main-return")


async def test_pause_a_running_program_then_terminate(harness):
    h = harness
    await h.backend.launch(LaunchRequest(program=str(SPIN_JS)), nothing)
    await asyncio.sleep(0.2)
    with pytest.raises(CommandFailed, match="running"):
        await h.backend.stack_trace(1)
    await h.backend.pause(1)
    stop = await h.stop()
    assert stop.reason == "pause"
    assert (await h.top()).name == "spin"
    assert (await h.backend.evaluate("spins > 0", None)).value == "true"
    pid = h.backend.debuggee_pid
    await h.backend.disconnect(terminate=True)
    await h.next("exited")
    assert (await h.next("terminated")).reason == "terminated"
    assert not pid_alive(pid)


async def test_uncaught_exception_stops_with_its_text(harness):
    h = harness
    await h.backend.launch(LaunchRequest(program=str(THROWS_JS)), nothing)
    stop = await h.stop()
    assert stop.reason == "exception"
    assert stop.text == "RangeError: value 42 is above 3"
    top = await h.top()
    assert (top.name, top.location.line) == ("check", mark(THROWS_JS, "throw"))
    await h.backend.continue_(1)
    exit_code, _ = await h.run_to_end()
    assert exit_code == 1
    assert "RangeError: value 42 is above 3" in h.output("stderr")


async def test_all_exceptions_filter_stops_on_caught_ones(harness):
    h = harness
    assert [f.id for f in h.backend.capabilities.exception_filters] == ["uncaught", "all"]

    async def configure() -> None:
        await h.backend.set_exception_filters(["all"])

    await h.backend.launch(LaunchRequest(program=str(THROWS_JS)), configure)
    stop = await h.stop()
    assert stop.reason == "exception" and stop.text == "RangeError: value 99 is above 3"
    frames, _ = await h.backend.stack_trace(1)
    assert frames[1].location.line == mark(THROWS_JS, "caught-call")
    with pytest.raises(InvalidInput, match="Valid: all, uncaught"):
        await h.backend.set_exception_filters(["bogus"])
    await h.backend.set_exception_filters([])
    await h.backend.continue_(1)
    exit_code, _ = await h.run_to_end()
    assert exit_code == 1  # filters off: the uncaught one no longer stops


# ============================================================================ TypeScript


@pytest.mark.parametrize("kind", ["inline", "map"])
async def test_typescript_breakpoints_through_source_maps(harness, ts_builds, kind):
    h = harness
    program = ts_builds[kind] / "app.js"
    greet_line = mark(APP_TS, "greet-body")
    distance_line = mark(GEOMETRY_TS, "distance-body")
    people_line = mark(APP_TS, "people")
    app_states: list = []
    geometry_states: list = []

    async def configure() -> None:
        app_states.extend(await h.backend.set_source_breakpoints(
            str(APP_TS), [spec(APP_TS, greet_line), spec(APP_TS, people_line - 1)]))
        geometry_states.extend(await h.backend.set_source_breakpoints(
            str(GEOMETRY_TS), [spec(GEOMETRY_TS, distance_line)]))

    await h.backend.launch(LaunchRequest(program=str(program)), configure)
    # The line above `const people` is blank: that breakpoint moved down to it.
    stop = await h.stop()
    assert stop.hit_breakpoint_ids == [app_states[1].backend_id]
    assert (await h.top()).location.line == people_line
    await h.backend.continue_(1)
    names = []
    for _ in range(2):
        stop = await h.stop()
        assert stop.hit_breakpoint_ids == [app_states[0].backend_id]
        frames, _ = await h.backend.stack_trace(1)
        assert frames[0].name == "greet"
        assert (frames[0].location.path, frames[0].location.line) == (str(APP_TS), greet_line)
        assert frames[1].location.path == str(APP_TS)
        assert frames[1].location.line == mark(APP_TS, "loop-log") - 1
        person = (await h.locals(frames[0].id))["person"]
        fields = {v.name: v.value for v in await h.backend.variables(person.ref)}
        names.append(fields["name"])
        await h.backend.continue_(1)
    assert names == ['"Ada"', '"Linus"']

    stop = await h.stop()
    assert stop.hit_breakpoint_ids == [geometry_states[0].backend_id]
    top = await h.top()
    assert (top.name, top.location.path, top.location.line) == (
        "distance", str(GEOMETRY_TS), distance_line)
    assert (await h.backend.evaluate("dx * dx + dy * dy", None)).value == "25"
    await h.backend.continue_(1)
    exit_code, _ = await h.run_to_end()
    assert exit_code == 0 and "distance 5\n" in h.output("stdout")

    resolved = {e.backend_id: e.state.line for e in h.events if e.kind == "breakpoint"}
    assert resolved[app_states[0].backend_id] == greet_line
    assert resolved[app_states[1].backend_id] == people_line
    assert resolved[geometry_states[0].backend_id] == distance_line


# ============================================================================ attach


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_attach_to_a_listening_inspector(harness, node):
    h = harness
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        node, f"--inspect-brk=127.0.0.1:{port}", str(SESSION_JS),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        line = await asyncio.wait_for(proc.stderr.readline(), 10)
        assert b"Debugger listening" in line
        states: list = []
        await h.backend.attach(
            AttachRequest(host="localhost", port=port),
            breakpoints_at(h, SESSION_JS, [spec(SESSION_JS, mark(SESSION_JS, "main-return"))],
                           states),
        )
        await h.stop()
        assert (await h.locals())["result"].value == "6"
        await h.backend.continue_(1)
        await h.next("terminated")
        # Without the program's stdio, console calls arrive through the protocol.
        assert "result 6\n" in h.output("stdout")
        assert "warning: almost done\n" in h.output("stderr")
        assert await asyncio.wait_for(proc.wait(), 10) == 7
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_attach_by_pid_then_detach_leaves_the_program_running(harness, node):
    h = harness
    port = _free_port()
    # No inspector yet: SIGUSR1 opens it on --inspect-port.
    proc = await asyncio.create_subprocess_exec(
        node, f"--inspect-port=127.0.0.1:{port}", str(SPIN_JS),
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    try:
        # Running user code, so node's SIGUSR1 handler is in place.
        assert await asyncio.wait_for(proc.stdout.readline(), 10) == b"spinning\n"
        states: list = []
        await h.backend.attach(
            AttachRequest(pid=proc.pid, port=port),
            breakpoints_at(h, SPIN_JS, [spec(SPIN_JS, mark(SPIN_JS, "spin-body"))], states),
        )
        stop = await h.stop()
        assert stop.hit_breakpoint_ids == [states[0].backend_id]
        assert (await h.top()).name == "spin"
        await h.backend.disconnect(terminate=False)
        assert (await h.next("terminated")).reason == "detached"
        await asyncio.sleep(0.2)
        assert proc.returncode is None and pid_alive(proc.pid)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_attach_errors_say_what_to_do(harness):
    with pytest.raises(CommandFailed, match="No Node inspector answers"):
        await harness.backend.attach(AttachRequest(host="127.0.0.1", port=_free_port()), nothing)
    with pytest.raises(InvalidInput, match="needs a pid, or a host and port"):
        await CdpBackend(lambda e: None).attach(AttachRequest(), nothing)


async def test_launch_errors_say_what_to_do(harness, tmp_path):
    with pytest.raises(InvalidInput, match="Compile it"):
        await harness.backend.launch(LaunchRequest(program=str(APP_TS)), nothing)
    with pytest.raises(DependencyMissing, match="not found"):
        await CdpBackend(lambda e: None).launch(
            LaunchRequest(program=str(SESSION_JS),
                          extra={"runtimeExecutable": str(tmp_path / "no-node")}),
            nothing,
        )
    broken = tmp_path / "broken.js"
    broken.write_text("this is not javascript(\n")
    # A syntax error stops nothing before start: node reports it and exits.
    h = Harness()
    try:
        await h.backend.launch(LaunchRequest(program=str(broken)), nothing)
        exit_code, _ = await h.run_to_end()
        assert exit_code == 1 and "SyntaxError" in h.output("stderr")
    finally:
        await h.backend.dispose()


async def test_dispose_ends_a_paused_node(harness):
    h = harness
    await h.backend.launch(LaunchRequest(program=str(SESSION_JS), stop_on_entry=True), nothing)
    assert (await h.stop()).reason == "entry"
    pid = h.backend.debuggee_pid
    assert pid and pid_alive(pid)
    await h.backend.dispose()
    await h.backend.dispose()  # twice is harmless
    assert not pid_alive(pid)


# ============================================================================ debug-script


async def test_debug_script_collects_primitives_and_objects_in_hit_order(no_leftover_processes, node):
    command = f"node --inspect-brk=0 {SCRIPT_JS.relative_to(ROOT)}"
    line = mark(SCRIPT_JS, "visit")
    ratios = await run_debug_script_node(command, str(SCRIPT_JS), line, "ratio", 10_000,
                                         cwd=str(ROOT))
    assert ratios == [{"type": "number", "value": v} for v in (0.5, 1, 1.5)]
    items = await run_debug_script_node(
        command, str(SCRIPT_JS.relative_to(ROOT)), line, "item", 10_000, cwd=str(ROOT))
    assert items == [
        {"type": "object", "value": {"id": 1, "tags": ["a"]}},
        {"type": "object", "value": {"id": 2, "tags": ["b", "c"]}},
        {"type": "object", "value": {"id": 3, "tags": []}},
    ]
    mixed = await run_debug_script_node(
        command, str(SCRIPT_JS), line,
        "index === 0 ? label : index === 1 ? flag : index === 2 ? null : 0", 10_000, cwd=str(ROOT))
    assert mixed == [{"type": "string", "value": "item-1"}, {"type": "boolean", "value": True},
                     {"type": "object", "value": None}]


async def test_debug_script_fallbacks_and_fixed_port(no_leftover_processes, node):
    port = _free_port()
    command = f"node --inspect-brk={port} {SCRIPT_JS}"
    assert inspector_port(command) == port
    assert inspector_port("node app.js") == 9229
    results = await run_debug_script_node(
        command, str(SCRIPT_JS), mark(SCRIPT_JS, "visit"),
        "index === 0 ? BigInt(item.id) : index === 1 ? undefined : notDefined", 10_000)
    assert results == [
        {"type": "bigint", "value": "1n"},  # JSON.stringify throws: the raw value
        {"type": "undefined", "value": None},
        {"type": "error", "value": "ReferenceError: notDefined is not defined"},
    ]


@pytest.mark.parametrize("kind", ["inline", "map"])
async def test_debug_script_on_typescript(no_leftover_processes, ts_builds, kind):
    program = (ts_builds[kind] / "app.js").relative_to(ROOT)
    results = await run_debug_script_node(
        f"node --inspect-brk=0 {program}", str(APP_TS.relative_to(ROOT)),
        mark(APP_TS, "greet-body"), "person", 10_000, cwd=str(ROOT))
    assert results == [
        {"type": "object", "value": {"name": "Ada", "age": 36}},
        {"type": "object", "value": {"name": "Linus", "age": 28}},
    ]


async def test_debug_script_timeout(no_leftover_processes, node):
    with pytest.raises(Timeout) as caught:
        await run_debug_script_node(
            f"node --inspect-brk=0 {SPIN_JS}", str(SCRIPT_JS), mark(SCRIPT_JS, "visit"),
            "item", 800)
    assert caught.value.message == "Timeout waiting for breakpoint after 800ms"


async def test_debug_script_process_exit(no_leftover_processes, node):
    with pytest.raises(CommandFailed) as caught:
        await run_debug_script_node(
            f"node --inspect-brk=0 {SCRIPT_JS}", str(SCRIPT_JS), mark(SCRIPT_JS, "never"),
            "1", 10_000)
    assert caught.value.message == "Process exited before breakpoint was hit"
    assert caught.value.details.get("exit_code") == 0


async def test_debug_script_bad_input(no_leftover_processes):
    # Without --inspect-brk the contract falls back to the default port: the
    # command still runs under the debugger and its breakpoint is hit.
    results = await run_debug_script_node(f"node {SCRIPT_JS}", str(SCRIPT_JS),
                                          mark(SCRIPT_JS, "visit"), "1", 10_000)
    assert results and results[0] == {"type": "number", "value": 1}
    with pytest.raises(InvalidInput, match="quoting"):
        await run_debug_script_node("node --inspect-brk 'x", str(SCRIPT_JS), 1, "1", 1000)


# ============================================================================ pure parts


@given(st.lists(st.integers(min_value=-(2**31), max_value=2**31), min_size=1, max_size=6))
def test_vlq_round_trips(values):
    assert decode_vlq(encode_vlq(values)) == values


def test_vlq_known_values_and_mappings():
    assert decode_vlq("AAAA") == [0, 0, 0, 0]
    assert decode_vlq("AAgBC") == [0, 0, 16, 1]
    assert decode_vlq("D") == [-1]
    assert decode_vlq("2H") == [123]
    lines = decode_mappings("AAAA,EAAE;;AACA")
    assert [(m.generated_line, m.generated_column, m.original_line, m.original_column)
            for line in lines for m in line] == [(0, 0, 0, 0), (0, 2, 0, 2), (2, 0, 1, 2)]


def test_source_map_lookups_both_ways():
    sources_dir = "/project/src/"
    data = {
        "version": 3, "file": "out.js", "sourceRoot": "", "sources": ["../src/a.ts"],
        "names": ["greet"],
        # gen line 0 <- orig line 0; gen line 1 col 4 <- orig line 3 col 2 (name greet)
        "mappings": "AAAA;IAGEA",
    }
    source_map = SourceMap(data, "file:///project/dist/out.js.map")
    assert source_map.sources == [sources_dir + "a.ts"]
    position = source_map.original_position(1, 10)
    assert (position.source, position.line, position.column, position.name) == (
        "/project/src/a.ts", 3, 2, "greet")
    assert source_map.generated_positions("/project/src/a.ts", 3) == [(1, 4)]
    assert source_map.first_generated_position("/project/src/a.ts", 1) == (3, (1, 4))
    assert source_map.first_generated_position("/elsewhere.ts", 1) is None
    assert source_map.original_position(7, 0) is None


def test_source_map_urls_and_data():
    assert file_url_to_path("file:///a%20b/c.js") == "/a b/c.js"
    assert file_url_to_path("node:internal/timers") is None
    assert path_to_file_url("/a b/c.js") == "file:///a%20b/c.js"
    text = "x();\n//# sourceMappingURL=out.js.map\n"
    assert find_source_mapping_url(text) == "out.js.map"
    assert find_source_mapping_url("const s = '//# sourceMappingURL=no';") is None
    payload = "data:application/json;base64,eyJ2ZXJzaW9uIjozfQ=="
    assert json.loads(decode_data_url(payload)) == {"version": 3}
    assert decode_data_url("data:application/json,%7B%7D") == "{}"


def test_source_map_of_a_real_tsc_build(ts_builds):
    for kind in ("inline", "map"):
        script = ts_builds[kind] / "app.js"
        url = find_source_mapping_url(script.read_text())
        if kind == "map":
            source_map = SourceMap.from_json((script.parent / url).read_text(),
                                             path_to_file_url(str(script.parent / url)))
        else:
            source_map = SourceMap.from_json(decode_data_url(url), path_to_file_url(str(script)))
        assert source_map.sources == [str(APP_TS)]
        greet = mark(APP_TS, "greet-body") - 1
        generated_line, _ = source_map.generated_positions(str(APP_TS), greet)[0]
        assert "@mark greet-body" in script.read_text().splitlines()[generated_line]


def test_conditions():
    assert hit_test("3") == "n >= 3"
    assert hit_test("== 2") == "n === 2"
    assert hit_test("%4") == "n % 4 === 0"
    assert hit_test("< 5") == "n < 5"
    with pytest.raises(InvalidInput):
        hit_test("often")
    assert split_log_message("x={x}, obj={ {a: 1}.a }!") == (["x=", ", obj=", "!"], ["x", "{a: 1}.a"])
    assert split_log_message("no braces") == (["no braces"], [])
    assert build_condition(BreakpointSpec(path="a.js", line=1), "k") is None
    assert build_condition(BreakpointSpec(path="a.js", line=1, condition="x > 1"), "k") == "x > 1"
    logpoint = build_condition(BreakpointSpec(path="a.js", line=1, log_message="v {v}"), "k")
    assert "console.log" in logpoint and "return false" in logpoint


def test_value_formatting():
    assert format_remote({"type": "string", "value": 'a"b'}) == '"a\\"b"'
    assert format_remote({"type": "number", "value": 1.5, "description": "1.5"}) == "1.5"
    assert format_remote({"type": "number", "unserializableValue": "NaN"}) == "NaN"
    assert format_remote({"type": "undefined"}) == "undefined"
    assert format_remote({"type": "object", "subtype": "null", "value": None}) == "null"
    assert format_remote({"type": "function", "description": "function add(a, b) {\n}"}) == \
        "function add(a, b)"
    error = {"type": "object", "subtype": "error", "description": "Error: x\n    at y"}
    assert format_remote(error) == "Error: x"
    point = {"type": "object", "className": "Point", "description": "Point", "objectId": "1",
             "preview": {"type": "object", "description": "Point", "overflow": False,
                         "properties": [{"name": "x", "type": "number", "value": "1"},
                                        {"name": "label", "type": "string", "value": "p"}]}}
    assert format_remote(point) == 'Point {x: 1, label: "p"}'
    assert remote_type(point) == "Point"
    assert remote_type({"type": "object", "subtype": "null"}) == "null"


def test_the_registry_builds_this_backend(node):
    from backends.adapters import create_backend, select_adapter

    backend = create_backend("node", lambda e: None)
    assert isinstance(backend, CdpBackend) and backend.name == "node"
    assert backend.capabilities.log_points and backend.capabilities.hit_conditional_breakpoints
    assert select_adapter(None, "node", ["node", "--inspect-brk=9229", "app.js"]) == "node"
    argv = CdpBackend.launch_argv(
        LaunchRequest(program="node", args=["--inspect=9230", "app.js", "x"]), "/usr/bin/node")
    assert argv == ["node", "--inspect-publish-uid=stderr", "--inspect-brk=9230", "app.js", "x"]
    argv = CdpBackend.launch_argv(
        LaunchRequest(program="app.js", args=["x"], extra={"runtimeArgs": ["--no-warnings"]}),
        "/usr/bin/node")
    assert argv == ["/usr/bin/node", "--inspect-brk=127.0.0.1:0", "--inspect-publish-uid=stderr",
                    "--no-warnings", "app.js", "x"]
