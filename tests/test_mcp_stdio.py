"""`tui-debugger mcp` as a real process over stdio: through the SDK's client,
joined to a headless session the CLI drives in turns, and through a client we
did not write (the MCP Inspector's CLI)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import npm_install, one_at_a_time
from tests.support.mcp import PY_BASIC, ROOT, call, cli, cli_json, fails, line_of, stdio_params

INSPECTOR_VERSION = "2.12.0"
INSPECTOR_DIR = ROOT / "tests" / ".cache" / "mcp-inspector"
REL_BASIC = "tests/programs/py_basic.py"


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    from backends.process import pid_alive

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
async def test_stdio_server_session_and_script(mcp_env, no_leftover_processes):
    from mcp.client import Client

    scale_line = line_of(PY_BASIC, "@scale")
    async with Client(stdio_params()) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"debug_launch", "debug_tools", "debug_wait"} <= names
        assert "debug-script" not in names  # opened by name: debug_tools
        await call(client, "debug_tools", {"open": ["debug-script"]})
        names = {t.name for t in (await client.list_tools()).tools}
        assert "debug-script" in names
        script = await client.call_tool("debug-script", {
            "command": f"python {REL_BASIC}", "breakpoint": {"file": REL_BASIC, "line": scale_line},
            "expression": "value * factor", "timeout": 15_000})
        assert not script.is_error and script.content == []
        assert script.structured_content == {"results": [
            {"type": "int", "value": 2}, {"type": "int", "value": 4}, {"type": "int", "value": 6}]}

        await call(client, "debug_launch", {"program": REL_BASIC, "breakpoints": [f"{REL_BASIC}:{scale_line}"]})
        hit = await call(client, "debug_wait", {"timeoutMs": 15_000})
        assert hit["stop"]["location"]["line"] == scale_line
        variables = await call(client, "debug_variables", {})
        assert {v["name"] for v in variables["variables"]} >= {"value", "factor"}
        await fails(client, "debug_breakpoint_remove", {"breakpointId": 42}, "invalid_input", "42")
        await call(client, "debug_step_over", {})
        # The client leaves with the program still stopped: the server must end it.


@pytest.mark.slow
async def test_join_a_headless_session_driven_in_turns_with_the_cli(mcp_env, no_leftover_processes):
    """The person (here: the CLI) and the agent (the MCP server, joined through
    the session's socket) take turns; each sees the other's moves."""
    from mcp.client import Client

    scale_line = line_of(PY_BASIC, "@scale")
    call_line = line_of(PY_BASIC, "@loop-body")
    started = json.loads(cli("start", "--json", "--session", "pair", "--stop-on-entry", REL_BASIC).stdout)
    assert started["session"] == "pair"
    host_pid = started["hostPid"]
    try:
        async with Client(stdio_params("--session", "pair")) as client:
            entry = await call(client, "debug_wait", {"timeoutMs": 15_000})
            assert entry["stop"]["reason"] == "entry"
            # An agent's answer leaves out the host's pid and a client list of
            # only itself: debug_sessions names the host, the CLI lists clients.
            listed = (await call(client, "debug_sessions", {}))["sessions"]
            assert [s["pid"] for s in listed if s["name"] == "pair"] == [host_pid]
            joined = cli_json("status", "--session", "pair")["clients"]
            assert "mcp" in {c["origin"] for c in joined}  # joined at start

            # Agent's turn: a breakpoint and continue.
            await call(client, "debug_breakpoint_add", {"file": REL_BASIC, "line": scale_line})
            hit = await call(client, "debug_continue", {"waitMs": 15_000})
            assert hit["stop"]["location"]["line"] == scale_line

            # Person's turn: step over from the command line.
            stepped = cli_json("next")
            assert stepped["stop"]["location"]["line"] == scale_line + 1
            assert stepped["stop"]["caused_by"] == "cli"

            # The agent sees where the person left it, and who moved it.
            # (an agent's stop leaves caused_by out: another client's move is in `others`)
            context = await call(client, "debug_context", {})
            assert context["frame"]["line"] == scale_line + 1
            assert ("cli", "next") in {(e["origin"], e["command"]) for e in context["others"]}

            # Agent's turn again; the person sees it.
            back = await call(client, "debug_step_over", {})
            assert back["stop"]["function"] == "total"
            back_line = back["stop"]["location"]["line"]
            assert back_line in (call_line - 1, call_line)  # the loop, in the caller
            seen = cli_json("context")
            assert seen["frame"]["line"] == back_line and seen["stop"]["caused_by"] == "mcp"

            breakpoints = cli_json("break", "list")["breakpoints"]
            assert [bp["set_by"] for bp in breakpoints] == ["mcp"]
            activity = await call(client, "debug_activity", {})
            done = [(e["origin"], e["command"]) for e in activity["entries"]]
            assert ("mcp", "breakpoint_add") in done and ("mcp", "continue") in done
            assert ("cli", "next") in done and ("mcp", "next") in done
            assert done.index(("cli", "next")) < done.index(("mcp", "next"))

            # The person ends the program; the agent is told, and keeps serving. The
            # host stays while the agent is joined, so either may restart it.
            cli("stop")
            status = await call(client, "debug_status", {})
            assert status["state"] == "terminated", status
            assert "stopped by cli" in json.dumps(status.data), status
    finally:
        if not wait_gone(host_pid, 0.1):
            cli("stop", "--session", "pair", check=False)
            wait_gone(host_pid)


@pytest.mark.slow
def test_the_servers_launch_lives_in_a_host_that_outlives_a_killed_server_briefly(
        mcp_env, monkeypatch, no_leftover_daemons):
    """The server hosts nothing: its launch lives in a host process of its own,
    which ends the session once the server is killed outright (-9, no goodbye)
    and no client has come back within orphan_grace_s."""
    from backends.process import pid_alive
    from tui_debugger import paths

    monkeypatch.setenv("TUI_DEBUGGER_ORPHAN_GRACE_S", "1")
    server = subprocess.Popen(
        [sys.executable, "-m", "tui_debugger", "mcp"], cwd=ROOT, env=dict(os.environ),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def request(msg_id: int, method: str, params: dict) -> dict:
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method,
                                       "params": params}) + "\n")
        server.stdin.flush()
        while True:  # notifications (logging, progress) may come first
            answer = json.loads(server.stdout.readline())
            if answer.get("id") == msg_id:
                return answer

    try:
        request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "test", "version": "0"}})
        server.stdin.write(json.dumps({"jsonrpc": "2.0",
                                       "method": "notifications/initialized"}) + "\n")
        server.stdin.flush()
        launched = request(2, "tools/call", {"name": "debug_launch", "arguments": {
            "program": REL_BASIC, "stopOnEntry": True}})["result"]
        assert not launched.get("isError"), launched
        name = launched["structuredContent"]["session"]
        host = next(s.pid for s in paths.live_sessions() if s.name == name)
        assert host != server.pid and pid_alive(host)
        assert next(s for s in paths.live_sessions() if s.name == name).started_by == "mcp"
    finally:
        server.kill()
        server.wait(timeout=10)
    assert wait_gone(host, 20), "the host of the killed server's session kept it"


# ============================================================================ MCP Inspector


@pytest.fixture(scope="session")
def inspector() -> Path:
    """The Inspector's CLI, installed once into tests/.cache (gitignored)."""
    binary = INSPECTOR_DIR / "node_modules" / ".bin" / "mcp-inspector"
    with one_at_a_time("mcp-inspector"):
        _install_inspector(binary)
    return binary


def _install_inspector(binary: Path) -> None:
    npm_install(INSPECTOR_DIR, f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}", binary,
                "the MCP Inspector")


def run_inspector(binary: Path, *args: str, tools: str | None = None) -> subprocess.CompletedProcess:
    server = ["mcp", *(["--tools", tools] if tools else [])]
    return subprocess.run(
        [str(binary), "--cli", *args, "--", sys.executable, "-m", "tui_debugger", *server],
        cwd=ROOT, capture_output=True, text=True, timeout=120, env=dict(os.environ),
    )


def test_opening_tools_tells_the_client_the_list_changed(mcp_env):
    """A client of the 2025 protocol is told, as the capability it was offered says."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "debug_tools", "arguments": {"open": ["native"]}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    ]
    proc = subprocess.Popen([sys.executable, "-m", "tui_debugger", "mcp"], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdin and proc.stdout
        seen: list[dict] = []
        for message in lines:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            while "id" in message and not any(m.get("id") == message["id"] for m in seen):
                seen.append(json.loads(proc.stdout.readline()))
        assert seen[0]["result"]["capabilities"]["tools"]["listChanged"] is True
        assert "notifications/tools/list_changed" in [m.get("method") for m in seen]
        listed = {t["name"] for t in seen[-1]["result"]["tools"]}
        assert {"debug_watch", "debug_disassemble", "debug_launch"} <= listed
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=20)


@pytest.mark.slow
@pytest.mark.timeout(400)  # a fresh checkout downloads the Inspector first (npm, up to 300 s)
def test_mcp_inspector_cli_lists_and_calls_tools(mcp_env, inspector, no_leftover_processes):
    listed = run_inspector(inspector, "--method", "tools/list", "--strict")
    assert listed.returncode == 0, listed.stderr
    tools = {t["name"]: t for t in json.loads(listed.stdout)["tools"]}
    # The lean default set; debug-script is closed, named by debug_tools.
    assert {"debug_launch", "debug_step_over", "debug_tools"} <= set(tools)
    assert "debug-script" not in tools and "debug-script" in tools["debug_tools"]["description"]
    assert tools["debug_stack"]["annotations"]["readOnlyHint"] is True
    assert "error" not in listed.stderr.lower().replace("0 errors", "")
    # Opened from the start (`mcp --tools more`), it is listed with its output schema.
    more = run_inspector(inspector, "--method", "tools/list", "--strict", tools="more")
    assert more.returncode == 0, more.stderr
    assert "outputSchema" in {t["name"]: t for t in json.loads(more.stdout)["tools"]}["debug-script"]

    scale_line = line_of(PY_BASIC, "@scale")
    called = run_inspector(
        inspector, "--method", "tools/call", "--tool-name", "debug-script",
        "--tool-arg", f"command=python {REL_BASIC}",
        f'breakpoint={{"file": "{REL_BASIC}", "line": {scale_line}}}', "expression=value",
        "timeout=15000", tools="more")
    assert called.returncode == 0, called.stderr
    answer = json.loads(called.stdout)
    assert answer["content"] == [] and answer.get("isError") is False
    assert answer["structuredContent"] == {"results": [{"type": "int", "value": v} for v in (1, 2, 3)]}

    # A tool error reaches this client whole (its schema check passes: the
    # output schema allows the error shape), and the CLI exits non-zero.
    failed = run_inspector(inspector, "--method", "tools/call", "--tool-name", "debug_stack",
                           "--tool-arg", "maxFrames=0")
    assert failed.returncode != 0 and "tool_is_error" in failed.stderr, failed.stderr
    answer = json.loads(failed.stdout)
    assert answer["isError"] is True and answer["structuredContent"]["code"] == "invalid_input"
    assert "maxFrames" in answer["content"][0]["text"]


def server_pid() -> int:
    """The stdio MCP server's pid: the one child of this test process running
    `tui_debugger mcp` (an agent's status leaves out a client list of only itself)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and b"tui_debugger" in argv and b"mcp" in argv:
            found.append(int(entry.name))
    assert len(found) == 1, found
    return found[0]


async def host_pid_of(client, name: str | None = None) -> int:
    """A session's host, as debug_sessions names it (an agent's launch answer
    leaves hostPid out); without a name, the current session's."""
    sessions = (await call(client, "debug_sessions", {}))["sessions"]
    return next(s["pid"] for s in sessions if (s["name"] == name if name else s["current"]))


async def test_sigterm_ends_what_the_server_launched(mcp_env, tmp_path, no_leftover_processes):
    """Clients stop a stdio server with SIGTERM; its programs must not outlive it."""
    import signal

    from mcp.client import Client

    from backends.process import pid_alive

    program = tmp_path / "forever.py"
    program.write_text("import time\nwhile True:\n    time.sleep(0.05)\n")
    pids: dict[str, int] = {}
    started = time.monotonic()
    # The client sees its server vanish mid-session; what it raises then is not the point.
    with contextlib.suppress(Exception, BaseExceptionGroup):
        async with Client(stdio_params()) as client:
            launched = await call(client, "debug_launch", {"program": str(program)})
            for _ in range(100):  # the adapter reports the debuggee's pid soon after start
                status = await call(client, "debug_status", {})
                if status["pid"]:
                    break
                await asyncio.sleep(0.05)
            pids.update(host=await host_pid_of(client, launched["session"]),
                        debuggee=status["pid"], server=server_pid())
            assert pid_alive(pids["debuggee"]) and pids["server"] != pids["host"]
            os.kill(pids["server"], signal.SIGTERM)
            await asyncio.to_thread(wait_gone, pids["server"])
    assert set(pids) == {"host", "debuggee", "server"}
    assert time.monotonic() - started < 20, "the server waited for its client to hang up"
    # The session it launched lived in a host of its own, which it ended on its way out.
    assert wait_gone(pids["server"], 1) and wait_gone(pids["host"], 10)
    assert wait_gone(pids["debuggee"], 1)


def zombie_children(pid: int) -> list[int]:
    from backends.process import _zombie_children

    return sorted(_zombie_children(pid))


async def test_the_long_lived_server_reaps_the_programs_it_ran(mcp_env, no_leftover_processes):
    """Neither the hosts it started (each session's daemon) nor debug-script's
    programs pile up as zombies of the server over a long agent session."""
    import signal

    from mcp.client import Client

    scale_line = line_of(PY_BASIC, "@scale")
    async with Client(stdio_params()) as client:
        await call(client, "debug_launch", {"program": REL_BASIC, "sessionName": "keep",
                                            "stopOnEntry": True})
        server = server_pid()
        for i in range(2):
            script = await client.call_tool("debug-script", {
                "command": f"python {REL_BASIC}", "breakpoint": {"file": REL_BASIC, "line": scale_line},
                "expression": "value", "timeout": 15_000})
            assert not script.is_error
            await call(client, "debug_launch", {
                "program": REL_BASIC, "sessionName": f"run{i}", "stopOnEntry": True})
            host = await host_pid_of(client, f"run{i}")
            await call(client, "debug_terminate", {"debugSessionId": f"run{i}"})
            # The host of a terminated session stays while this server is joined
            # (debug_restart works after debug_terminate); ended, it is reaped.
            os.kill(host, signal.SIGTERM)
            assert wait_gone(host, 10)
        deadline = time.monotonic() + 10
        while zombie_children(server) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert zombie_children(server) == []
