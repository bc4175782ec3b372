"""The MCP server in process, through the SDK's client, against real debugpy:
the generated tools, a whole session, bad input, and the agent-safety rules."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.mcp import (
    PY_BASIC,
    Answer,
    PROGRAMS,
    call,
    fails,
    in_process_client,
    line_of,
    write_program,
)

DESIGN_TOOLS = {
    "debug_launch", "debug_attach", "debug_attach_sim", "debug_detach", "debug_terminate",
    "debug_sessions", "debug_breakpoint_add", "debug_breakpoint_remove", "debug_breakpoint_list",
    "debug_continue", "debug_step_over", "debug_step_into", "debug_step_out", "debug_pause",
    "debug_wait", "debug_context", "debug_stack", "debug_variables", "debug_evaluate",
    "debug_threads", "debug_output", "debug_lldb_command", "debug-script",
}
# DESIGN.md's argument table, camelCase.
DESIGN_ARGS = {
    "debug_launch": {"program", "args", "cwd", "env", "adapter", "stopOnEntry", "launchConfig", "sessionName"},
    "debug_attach": {"pid", "host", "port", "adapter", "sessionName"},
    "debug_attach_sim": {"simulatorId", "simulatorName", "bundleId", "pid", "waitFor",
                         "continueOnAttach", "makeCurrent"},
    "debug_breakpoint_add": {"file", "line", "function", "condition", "hitCondition", "logMessage"},
    "debug_breakpoint_remove": {"breakpointId", "all"},
    "debug_continue": {"threadId", "waitMs", "all"},
    "debug_step_over": {"threadId", "waitMs"},
    "debug_wait": {"timeoutMs"},
    "debug_stack": {"threadId", "maxFrames"},
    "debug_variables": {"frameIndex", "scope", "path", "names", "maxItems"},
    "debug_evaluate": {"expression", "frameIndex"},
    "debug_output": {"since", "limit"},
    "debug_lldb_command": {"command", "timeoutMs", "allowUnsafe"},
    "debug-script": {"command", "breakpoint", "expression", "timeout"},
}


async def test_tools_are_generated_from_the_registry(mcp_env):
    from mcp.client import Client

    from tui_debugger.commands import registry
    from tui_debugger.mcp.server import DEFAULT_TOOLS, TOOLS_TOOL, create_server

    changed: list[str] = []

    async def on_message(message) -> None:
        changed.append(type(getattr(message, "root", message)).__name__)

    async with create_server() as front:
        async with Client(front.server, message_handler=on_message) as client:
            listed = (await client.list_tools()).tools
            # The lean default set: tools/list under 12 KB compact, as sent, and
            # every other tool named in debug_tools, which opens it.
            size = len(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True)
                                   for t in listed], separators=(",", ":")).encode())
            assert size <= 12_000, size
            first = {t.name: t for t in listed}
            assert set(first) == set(DEFAULT_TOOLS) | {TOOLS_TOOL}
            closed = {c.mcp for c in registry.all_commands() if c.mcp} - set(DEFAULT_TOOLS)
            assert all(name in first[TOOLS_TOOL].description for name in closed)
            # A closed tool answers when called by name all the same.
            doctor = await call(client, "debug_doctor", {})
            assert doctor["adapters"]
            bad = await fails(client, TOOLS_TOOL, {"open": ["nosuch"]})
            assert bad["code"] == "invalid_input" and "native" in bad.text
            opened = await call(client, TOOLS_TOOL, {"open": ["native", "debug_threads"]})
            assert "debug_watch" in opened["opened"] and "debug_threads" in opened["opened"]
            await call(client, TOOLS_TOOL, {"open": ["all"]})
            tools = {t.name: t for t in (await client.list_tools()).tools}
    commands = {c.mcp: c for c in registry.all_commands() if c.mcp}
    assert set(tools) == set(commands) and DESIGN_TOOLS <= set(tools)
    for name, args in DESIGN_ARGS.items():
        assert args <= set(tools[name].input_schema["properties"]), name
    for name, tool in tools.items():
        cmd = commands[name]
        props = tool.input_schema["properties"]
        assert (name in ("debug-script", "debug_launch", "debug_attach", "debug_attach_sim")) == (
            "debugSessionId" not in props), name
        assert tool.description == cmd.mcp_description and len(tool.description) > 30
        # One or two sentences: what the tool is for; the rest is in docs/mcp.md.
        assert len(tool.description) <= 200, name
        assert bool(tool.annotations and tool.annotations.read_only_hint) is cmd.read_only
        assert bool(tool.annotations and tool.annotations.destructive_hint) is (
            cmd.destructive and not cmd.read_only)
        assert all("_" not in key for key in props), (name, props.keys())  # camelCase
        if name != "debug-script":
            assert tool.output_schema is None, name
    assert tools["debug_stack"].annotations.read_only_hint is True
    assert tools["debug_terminate"].annotations.destructive_hint is True
    assert tools["debug_step_over"].annotations is None
    assert set(tools["debug-script"].input_schema["required"]) == {
        "command", "breakpoint", "expression", "timeout"}
    script_out = tools["debug-script"].output_schema
    assert set(script_out["$defs"]["ScriptResult"]["properties"]) == {"results"}
    assert script_out["$defs"]["ToolError"]["required"] == ["error"]
    assert [arm["$ref"] for arm in script_out["anyOf"]] == [
        "#/$defs/ScriptResult", "#/$defs/ToolError"]


@pytest.mark.slow
async def test_a_whole_session(mcp_env, no_leftover_processes):
    scale_line = line_of(PY_BASIC, "@scale")
    count_line = line_of(PY_BASIC, "@count")
    async with in_process_client() as client:
        launched = await call(client, "debug_launch", {"program": str(PY_BASIC), "stopOnEntry": True})
        assert launched["session"] == "py_basic" and launched["adapter"] == "debugpy"
        # A launch that will stop answers with the stop: the next call cannot race it.
        assert launched["state"] == "stopped" and launched["stop"]["reason"] == "entry"
        assert "stop" not in launched["context"] and "->" in launched["context"]["source"]
        # The data is in structuredContent; the text is one line that says where.
        assert launched.text.startswith("Session py_basic: stopped. Stopped (entry)")
        assert "\n" not in launched.text
        entry = await call(client, "debug_wait", {"timeoutMs": 10_000})
        assert "stop" in entry and entry["stop"]["reason"] == "entry"

        added = await call(client, "debug_breakpoint_add", {"file": str(PY_BASIC), "line": scale_line})
        assert added["breakpoint"]["verified"] and added["breakpoint"]["set_by"] == "mcp"
        hit = await call(client, "debug_continue", {"waitMs": 10_000})
        assert "stop" in hit and hit["stop"]["reason"] == "breakpoint"
        assert hit["stop"]["location"]["line"] == scale_line
        assert "nextSteps" not in hit.data  # obvious after a stop: look, step, continue
        assert "stop" not in hit["context"]  # the stop is said once

        context = await call(client, "debug_context", {"lines": 2})
        assert context["frame"]["name"] == "scale"
        current = [s for s in context["source"].splitlines() if s.startswith(("->", "●>"))]
        assert current and current[0][2:].lstrip().startswith(f"{scale_line}|")
        # More lines is a question about the code: the locals are not said again.
        assert "locals" not in context.data and "debug_variables" in context["localsNote"]
        assert context.text.startswith("Stopped (breakpoint #") and " in scale at " in context.text
        whole = await call(client, "debug_context", {})
        assert {v["name"]: v["value"] for v in whole["locals"]} == {"value": "1", "factor": "2"}
        # Any file's lines, stopped or not, without a stop there: the stop's line marked.
        other = await call(client, "debug_context", {"file": f"{PY_BASIC}:{count_line}",
                                                     "lines": 1})
        shown = other["source"].splitlines()
        assert len(shown) == 3 and f"{count_line}|" in shown[1] and "locals" not in other.data
        assert other["file"] == str(PY_BASIC)
        await fails(client, "debug_context", {"file": "no_such_file.py:3"}, "invalid_input",
                    "FILE:LINE")

        stack = await call(client, "debug_stack", {"maxFrames": 2})
        assert [f["name"] for f in stack["frames"]] == ["scale", "total"] and stack["truncated"]

        caller = await call(client, "debug_variables", {"frameIndex": 2, "names": ["point", "items"]})
        assert [v["name"] for v in caller["variables"]] == ["items", "point"]
        drilled = await call(client, "debug_variables", {"frameIndex": 2, "path": "items[1]['nested']"})
        assert [v["value"] for v in drilled["variables"] if v["name"].startswith("[") or
                v["name"].isdigit()][:2] == ["1", "2"]

        evaluated = await call(client, "debug_evaluate", {"expression": "value * factor + 40"})
        assert evaluated["value"] == "42" and evaluated.text.startswith("42 (int)")
        assert "type" not in evaluated  # the value says it

        stepped = await call(client, "debug_step_over", {})
        assert "stop" in stepped and stepped["stop"]["location"]["line"] == scale_line + 1
        out_of = await call(client, "debug_step_out", {})
        assert out_of["stop"]["function"] == "total"

        await call(client, "debug_breakpoint_remove", {"all": True})
        await call(client, "debug_breakpoint_add", {"file": str(PY_BASIC), "line": count_line,
                                                   "condition": "n == 3"})
        conditional = await call(client, "debug_continue", {"waitMs": 10_000})
        assert conditional["context"]["locals"] and any(
            v["name"] == "n" and v["value"] == "3" for v in conditional["context"]["locals"])

        await call(client, "debug_breakpoint_remove", {"all": True})
        ended = await call(client, "debug_continue", {"waitMs": 10_000})
        assert ended["status"] == "terminated" and ended["exitCode"] == 0

        output = await call(client, "debug_output", {"since": 0})
        printed = "".join(e["text"] for e in output["entries"])
        assert "answer=12 count=10 items=3" in printed and output["dropped"] == 0
        again = await call(client, "debug_output", {"since": output["nextCursor"]})
        assert again["entries"] == [] and again.text

        activity = await call(client, "debug_activity", {})
        assert {"mcp"} == {e["origin"] for e in activity["entries"]}
        assert "continue" in [e["command"] for e in activity["entries"]]
        done = await call(client, "debug_terminate", {})
        assert done["state"] == "terminated"


async def test_sessions_launched_here_can_be_joined(mcp_env, no_leftover_processes):
    """A person opens the agent's session (`tui-debugger ui` joins through the
    socket) and sees what the agent does, attributed to it."""
    from tui_debugger.client.router import join

    async with in_process_client(session="shared") as client:
        # --session NAME: the first launch without a sessionName creates NAME.
        launched = await call(client, "debug_launch", {"program": str(PY_BASIC), "stopOnEntry": True})
        assert launched["session"] == "shared"
        await call(client, "debug_wait", {"timeoutMs": 10_000})
        person = await join("shared", "tui")
        try:
            events = person.events()
            await call(client, "debug_step_over", {})
            seen = []

            async def until_attributed() -> None:
                # The activity is logged as the step resumes, before its stop.
                async for event in events:
                    seen.append(event)
                    if (any(e.kind == "activity" and e.origin == "mcp" for e in seen)
                            and any(e.kind == "stopped" and e.origin == "mcp" for e in seen)):
                        return

            await asyncio.wait_for(until_attributed(), 10)
            logged = [e for e in seen if e.kind == "activity" and e.origin == "mcp"]
            assert logged[-1].entry.command == "next"
            status = await person.call("status")
            assert "tui" in {c.origin for c in status.clients}
        finally:
            await person.close()
        listed = await call(client, "debug_sessions", {})
        assert [s["name"] for s in listed["sessions"] if s.get("current")] == ["shared"]
        await call(client, "debug_terminate", {"debugSessionId": "shared"})


async def test_bad_input_is_an_error_and_the_server_keeps_serving(mcp_env, tmp_path,
                                                                  no_leftover_processes):
    spin = write_program(tmp_path, "spin.py", """
        import time
        while True:
            time.sleep(0.01)
    """)
    async with in_process_client() as client:
        await fails(client, "debug_stack", {}, "invalid_input", "no live session", "debug_launch")
        await fails(client, "debug_launch", {}, "invalid_input", "program")
        await fails(client, "debug_launch", {"program": str(tmp_path / "missing.py")},
                    "invalid_input", "no such program")
        await fails(client, "debug_launch", {"program": str(spin), "stopOnEntry": "often"},
                    "invalid_input", "stopOnEntry")
        await fails(client, "debug_launch", {"program": str(spin), "colour": "red"},
                    "invalid_input", "colour", "unknown argument")
        await fails(client, "debug-script", {"command": "python x.py"}, "invalid_input",
                    "breakpoint", "expression", "timeout")

        await call(client, "debug_launch", {"program": str(spin)})
        await fails(client, "debug_stack", {}, "invalid_input", "running", "debug_pause", "debug_wait")
        await fails(client, "debug_variables", {}, "invalid_input", "running")
        await fails(client, "debug_stack", {"maxFrames": "ten"}, "invalid_input", "maxFrames")
        await fails(client, "debug_breakpoint_add", {"file": str(spin), "line": 3, "function": "main"},
                    "invalid_input", "not both")
        await fails(client, "debug_breakpoint_add", {"line": 3}, "invalid_input", "file")
        await fails(client, "debug_breakpoint_remove", {"breakpointId": 1, "all": True},
                    "invalid_input", "not both")
        await fails(client, "debug_breakpoint_remove", {"breakpointId": 99}, "invalid_input",
                    "no breakpoint 99")
        await fails(client, "debug_frame", {"index": 1, "offset": 1}, "invalid_input", "not both")
        await fails(client, "debug_status", {"debugSessionId": "nope"}, "invalid_input", "nope", "spin")
        await fails(client, "debug_status", {"debugSessionId": 7}, "invalid_input", "debugSessionId")
        # not an LLDB session: the text goes to debugpy's REPL, which does not run while running
        await fails(client, "debug_lldb_command", {"command": "platform shell ls"}, "invalid_input",
                    "running")

        status = await call(client, "debug_status", {})
        assert status["state"] == "running"
        paused = await call(client, "debug_pause", {})
        assert "stop" in paused
        await call(client, "debug_terminate", {})
        await fails(client, "debug_continue", {}, "invalid_input", "ended", "debug_launch")


async def test_agent_safety(mcp_env, tmp_path, monkeypatch, no_leftover_processes):
    """Bounded waits, capped values with filters, output cursors with dropped
    counts, redaction."""
    from tui_debugger.config import reload_settings

    monkeypatch.setenv("TUI_DEBUGGER_OUTPUT_MAX_ENTRIES", "10")
    reload_settings()
    program = write_program(tmp_path, "secrets.py", """
        import sys, time
        password = "hunter2hunter2"
        token_count = 5
        big = "x" * 50_000
        table = {f"k{i}": i for i in range(300)}
        for i in range(30):
            print(f"line {i}", flush=True)
            time.sleep(0.01)  # one output event each: the adapter joins what comes at once
        print("Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123", flush=True)
        print("api_key=sk-abcdefghijklmnopqrstuvwxyz", flush=True)
        n = 0
        while True:
            n += 1  # @spin
            time.sleep(0.01)
    """)
    spin_line = line_of(program, "@spin")
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(program),
                                            "breakpoints": [f"{program}:{spin_line}"]})
        stop = await call(client, "debug_wait", {"timeoutMs": 10_000})
        assert "stop" in stop

        values = await call(client, "debug_variables", {"names": ["password", "token_count", "big"]})
        by_name = {v["name"]: v for v in values["variables"]}
        assert by_name["password"]["value"] == "'[REDACTED]'" and "hunter2" not in values.text
        assert by_name["token_count"]["value"] == "5"
        assert by_name["big"]["valueTruncated"] and len(by_name["big"]["value"]) < 1_200
        assert "more chars" in by_name["big"]["value"]
        page = await call(client, "debug_variables", {"path": "table", "maxItems": 5})
        assert page["truncated"] and page["total"] >= 300 and len(page["variables"]) == 5
        assert "`start: 5`" in page["note"] and "names/path" in page["note"]
        assert "hunter2" not in (await call(client, "debug_evaluate", {"expression": "password"})).text

        output = await call(client, "debug_output", {"since": 0})
        assert output["dropped"] > 0 and str(output["dropped"]) in output.text, output
        newer = await call(client, "debug_output", {"since": output["nextCursor"]})
        assert newer["dropped"] == 0 and newer["entries"] == []
        printed = "".join(e["text"] for e in output["entries"])
        assert "Bearer [REDACTED]" in printed and "line 29" in printed
        assert "abcdefghijklmnop" not in printed + output.text

        await call(client, "debug_breakpoint_remove", {"all": True})
        running = await call(client, "debug_continue", {"waitMs": 200})
        assert running["status"] == "running" and "debug_wait" in running["message"]
        assert running["waitedMs"] < 2_000
        assert running["nextSteps"][:2] == ["debug_wait", "debug_pause"]
        waited = await call(client, "debug_wait", {"timeoutMs": 300})
        assert waited["status"] == "running"
        # Calls run concurrently: a pause ends a wait that is in progress.
        waiting = asyncio.ensure_future(call(client, "debug_wait", {"timeoutMs": 20_000}))
        await asyncio.sleep(0.2)
        paused = await call(client, "debug_pause", {})
        assert "stop" in paused and paused["stop"]["reason"] == "pause"
        woken = await asyncio.wait_for(waiting, 10)
        assert "stop" in woken and woken["waitedMs"] < 10_000
        await call(client, "debug_terminate", {})


async def test_uncaught_exception_stops_and_its_reason_stays(mcp_env, no_leftover_processes):
    program = PROGRAMS / "py_raise.py"
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(program)})
        stop = await call(client, "debug_wait", {"timeoutMs": 10_000})
        assert "stop" in stop and stop["stop"]["reason"] == "exception"
        assert "bad value 3" in stop["stop"]["text"] and "bad value 3" in stop.text
        context = await call(client, "debug_context", {})
        assert context["stop"]["reason"] == "exception" and "ValueError" in context.text
        await call(client, "debug_variables", {})
        status = await call(client, "debug_status", {})
        assert "bad value 3" in status["stop"]["text"]
        ended = await call(client, "debug_continue", {"waitMs": 10_000})
        assert ended["status"] == "terminated" and ended["exitCode"] == 1
        assert "exit code 1" in ended.text


async def test_lldb_command_behind_the_allowlist(mcp_env, no_leftover_processes):
    from backends.adapters import find_lldb_dap

    from tests.support import require
    from tests.support.native_build import c_program

    require(find_lldb_dap() is not None, "lldb-dap")
    binary = c_program("native_demo")
    source = PROGRAMS / "native_demo.c"
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(binary), "breakpoints": [
            f"{source}:{line_of(source, 'LINE:loop_body')}"]})
        assert "stop" in (await call(client, "debug_wait", {"timeoutMs": 15_000}))
        shown = await call(client, "debug_lldb_command", {"command": "frame variable origin"})
        assert "x = 3, y = 4" in shown["output"] and not shown.get("unsafe")
        denied = await fails(client, "debug_lldb_command", {"command": "memory write &i 0x1"},
                             "command_denied", "allowUnsafe", "read-only allowlist")
        assert denied["details"]["command"] == "memory write"
        forced = await call(client, "debug_lldb_command", {"command": "register read rip",
                                                           "allowUnsafe": True})
        assert not forced.get("unsafe")  # on the allowlist: nothing to mark
        unsafe = await call(client, "debug_lldb_command", {"command": "memory write &i 0x1",
                                                           "allowUnsafe": True})
        assert unsafe["unsafe"] and unsafe.text.startswith("[UNSAFE]")
        logged = [e["summary"] for e in (await call(client, "debug_activity", {}))["entries"]]
        assert any(s.startswith("[UNSAFE] memory write") for s in logged)
        await call(client, "debug_terminate", {})


async def test_http_transport(mcp_env, no_leftover_processes):
    """`--transport http` serves the same tools (streamable HTTP), only to a
    client that sends the token it printed once and stored 0600."""
    import re
    import stat

    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    from tests.support.mcp import free_port, http_server
    from tui_debugger.paths import runtime_dir

    port = free_port()
    async with http_server(port) as banner:
        token = re.search(r"Bearer (\S+)`", banner).group(1)
        token_file = runtime_dir() / "mcp-http.token"
        assert token_file.read_text().strip() == token
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        url = f"http://127.0.0.1:{port}/mcp"
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"}}}
        accept = {"accept": "application/json, text/event-stream"}
        async with httpx2.AsyncClient(timeout=10) as raw:
            for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": token},
                            {"authorization": f"Basic {token}"}):
                answer = await raw.post(url, json=initialize, headers={**accept, **headers})
                assert answer.status_code == 401 and "Bearer" in answer.json()["error"], headers
            # a web page's request (DNS rebinding, or a cross-origin POST) is refused too
            for headers in ({"host": "evil.example:80"}, {"origin": "http://evil.example"}):
                answer = await raw.post(url, json=initialize, headers={
                    **accept, "authorization": f"Bearer {token}", **headers})
                assert answer.status_code in (400, 403, 421), headers
        async with httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert "debug_tools" in names and "debug_launch" in names
                doctor = await call(client, "debug_doctor", {})
                assert any(a["name"] == "debugpy" and a["available"] for a in doctor["adapters"])
    # a second start keeps the token (clients stay configured) and does not show it again
    async with http_server(port) as banner:
        assert token not in banner and str(token_file) in banner


def test_values_named_like_secrets_are_redacted():
    from tui_debugger.redact import redact_named

    assert redact_named("password", "'hunter2hunter2'") == "'[REDACTED]'"
    assert redact_named("db_password", '0x0000555555556008 "pw123"') == '0x0000555555556008 "[REDACTED]"'
    assert redact_named("self.api_token", "b'abc'") == "b'[REDACTED]'"
    assert redact_named("token_count", "5") == "5"  # a number is not a secret
    assert redact_named("author", "'Jane'") == "'Jane'"
    assert redact_named("secrets", "{'a': 1}") == "{'a': 1}"  # containers: drill in to see
    assert redact_named("header", "Bearer abcdefghijklmnop") == "Bearer [REDACTED]"


def test_answer_reads_errors_and_text():
    from mcp.types import CallToolResult, TextContent

    answer = Answer(CallToolResult(content=[TextContent(type="text", text="boom")],
                                   structured_content={"error": "boom", "code": "timeout"},
                                   is_error=True))
    assert answer.is_error and answer["code"] == "timeout" and answer.text == "boom"
