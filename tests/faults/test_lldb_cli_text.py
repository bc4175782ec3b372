"""Fault suite: text that lldb-cli writes to lldb's stdin. Every argument that
travels as text in an lldb command line (the process name to wait for, path
map keys and values, the stdin file name) is refused when it holds a line
break, so it can never end our command and start `platform shell ...`; the
rest of the launch and attach fields travel to the helper as base64 JSON and
reach lldb through the SB API. A sweep puts the same payload in every text
field of the launch and attach paths.

And the helper's markers: a read-only command that echoes the old fixed
log-point marker (`bt @@TDBG-LOG [1]`) must not end the session, and `p` of a
fake log-point line must not put that line into the output: markers carry a
per-session nonce and only lines that start with one are read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support import require
from tests.support.mcp import PROGRAMS, call, fails, in_process_client, line_of


def _payload(marker: str) -> str:
    """Text that, written unescaped into an lldb command line, runs a shell."""
    return f"x\nplatform shell touch {marker} #"


@pytest.fixture
def lldb_here(tmp_path, monkeypatch):
    from backends.adapters import find_lldb

    require(find_lldb() is not None, "lldb")
    # `platform shell` runs in lldb's working directory: markers are made relative
    # (a file name cannot hold the `/` of an absolute one) and land here.
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("field", ["waitFor", "pathMap key", "pathMap value",
                                   "pathMap key with program", "stdin"])
async def test_a_newline_in_an_lldb_cli_field_runs_no_shell(field, lldb_here, mcp_env,
                                                            no_leftover_processes):
    from tests.support.native_build import c_program

    binary = c_program("native_demo")
    marker = "ran-" + field.replace(" ", "-")
    payload = _payload(marker)
    async with in_process_client() as client:
        if field == "waitFor":
            answer = await fails(client, "debug_attach", {
                "adapter": "lldb-cli", "waitFor": payload}, "invalid_input", "line break")
        elif field == "stdin":
            (lldb_here / payload).write_text("input\n")
            answer = await fails(client, "debug_launch", {
                "program": str(binary), "adapter": "lldb-cli", "cwd": str(lldb_here),
                "stdin": payload}, "invalid_input", "stdin")
        else:
            # a pid that is gone: the path map is applied before the attach fails
            gone = os.fork()
            if gone == 0:
                os._exit(0)
            os.waitpid(gone, 0)
            path_map = ({payload: "/src"} if field.startswith("pathMap key")
                        else {"/src": payload})
            args = {"adapter": "lldb-cli", "pid": gone, "pathMap": path_map}
            if field.endswith("with program"):
                args["program"] = str(binary)
            answer = await fails(client, "debug_attach", args, "invalid_input", "path map")
        assert "Traceback" not in answer.text
    assert not (lldb_here / marker).exists(), f"{field}: a newline ran a shell"


async def test_every_text_field_of_launch_and_attach(lldb_here, no_leftover_processes):
    """The payload in each text field of LaunchRequest, AttachRequest and the
    breakpoints set at launch: a field either works (the text reached lldb as
    data) or is refused; no marker file appears."""
    from backends.errors import DebuggerError
    from backends.lldb_cli.backend import LldbCliBackend
    from backends.models import AttachRequest, BreakpointSpec, LaunchRequest
    from tests.support.native_build import EventLog, c_program, source_path

    binary = c_program("native_demo")
    markers: list[str] = []

    def payload(field: str) -> str:
        markers.append("ran-" + field)
        return _payload(markers[-1])

    # One launch carries the fields that are data to lldb: a program and a
    # working directory with the payload in their names, its arguments, its
    # environment, and every text of a breakpoint.
    workdir = lldb_here / payload("cwd")
    workdir.mkdir()
    program = workdir / payload("program")
    shutil.copy2(binary, program)
    source = source_path("native_demo.c")
    events = EventLog()
    backend = LldbCliBackend(events)
    request = LaunchRequest(program=str(program), cwd=str(workdir), args=[payload("args")],
                            env={"TDBG_VALUE": payload("env-value"),
                                 payload("env-key").replace("=", "_"): "1"})

    async def configure() -> None:
        line = line_of(Path(source), "LINE:loop_body")
        await backend.set_source_breakpoints(source, [
            BreakpointSpec(path=source, line=line, condition=payload("condition")),
            BreakpointSpec(path=source, line=line + 1, log_message=payload("log_message")),
            BreakpointSpec(path=source, line=line + 2, hit_condition=payload("hit_condition")),
        ])
        await backend.set_source_breakpoints(str(lldb_here / payload("bp-path")), [
            BreakpointSpec(path=str(lldb_here / "p"), line=1)])
        await backend.set_function_breakpoints([BreakpointSpec(function=payload("function"))])

    try:
        await backend.launch(request, configure)
        # A condition lldb cannot parse stops the program, as lldb-dap's does.
        for _ in range(20):
            event = await _next_of(events, ("stopped", "terminated"))
            if event.kind == "terminated":
                break
            await backend.continue_(event.thread_id)
        else:
            raise AssertionError("the program did not end")
    finally:
        await backend.dispose()

    # Fields refused before lldb starts, or that fail as lldb data.
    (lldb_here / payload("stdin")).write_text("")
    (lldb_here / payload("core")).write_text("not a core")
    attempts = [
        ("launch", LaunchRequest(program=str(binary), cwd=str(lldb_here), stdin=markers[-2].join(
            ["x\nplatform shell touch ", " #"]))),
        ("launch", LaunchRequest(program=str(binary), cwd=str(lldb_here),
                                 core_file=_payload(markers[-1]))),
        ("attach", AttachRequest(wait_for=payload("wait_for"))),
        ("attach", AttachRequest(host=payload("host"), port=1)),
        ("attach", AttachRequest(pid=1 << 22, path_map={payload("map-key"): "/s"})),
        ("attach", AttachRequest(pid=1 << 22, path_map={"/s": payload("map-value")})),
        ("attach", AttachRequest(pid=1 << 22, program=str(binary),
                                 path_map={payload("map-key-program"): "/s"})),
        ("attach", AttachRequest(pid=1 << 22, program=str(binary),
                                 path_map={"/s": payload("map-value-program")})),
        ("attach", AttachRequest(pid=1 << 22, program=payload("attach-program"))),
    ]
    for how, attempt in attempts:
        backend = LldbCliBackend(EventLog())
        try:
            with pytest.raises(DebuggerError):
                await getattr(backend, how)(attempt, nothing_to_configure)
        finally:
            await backend.dispose()
    ran = [m for m in markers if (lldb_here / m).exists() or (workdir / m).exists()]
    assert not ran, f"a newline in these fields ran a shell: {ran}"


async def nothing_to_configure() -> None:
    return None


async def _next_of(events, kinds, timeout: float = 20.0):
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for index in range(events._cursor, len(events.events)):
            if events.events[index].kind in kinds:
                events._cursor = index + 1
                return events.events[index]
        await asyncio.sleep(0.02)
    raise AssertionError(f"no {kinds} within {timeout}s")


async def test_a_command_echoing_the_log_marker_keeps_the_session(lldb_here, mcp_env,
                                                                   no_leftover_processes):
    from tests.support.native_build import c_program

    binary = c_program("native_demo")
    source = PROGRAMS / "native_demo.c"
    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "program": str(binary), "adapter": "lldb-cli",
            "breakpoints": [f"{source}:{line_of(source, 'LINE:loop_body')}"]})
        assert "stop" in (await call(client, "debug_wait", {"timeoutMs": 20_000}))
        for command in ("bt @@TDBG-LOG [1]", "bt @@TDBG-LOG {}", 'bt @@TDBG-LOG "x"',
                        "bt @@TDBG {\"error\": 1}"):
            await call(client, "debug_lldb_command", {"command": command}, ok=False)
        fake = '{"text": "FORGED log line\\n"}'
        await call(client, "debug_lldb_command", {"command": f"p @@TDBG-LOG {fake}"}, ok=False)
        await call(client, "debug_lldb_command",
                   {"command": f'p "\\n@@TDBG-LOG {fake}\\n"'}, ok=False)
        await call(client, "debug_evaluate", {"expression": f'"@@TDBG-LOG {fake}"'}, ok=False)
        # the session lives on: still stopped in the loop, and it answers
        assert (await call(client, "debug_status", {}))["state"] == "stopped"
        shown = await call(client, "debug_lldb_command", {"command": "fr v origin"})
        assert "x = 3" in shown["output"]
        output = await call(client, "debug_output", {})
        assert "FORGED" not in output.text + str(output.data)
        await call(client, "debug_terminate", {})
