"""Fault suite: bad input at every edge gets a clear, typed answer within its
bound, and the server goes on serving.

* raw JSON-RPC garbage on the stdio transport (not JSON, params that are not an
  object, "jsonrpc": "1.0", a lone surrogate): a JSON-RPC error each;
* every tool's every argument fuzzed with bad values (Hypothesis, derandomized:
  the same cases run every time, so a failure replays) against a live session;
* special files as breakpoint targets, strict types, an empty session id,
  arguments too large for any edge (MCP, socket, CLI).
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.mcp import PROGRAMS, call, fails, in_process_client

ROOT = Path(__file__).resolve().parents[2]
PY_SLEEP = PROGRAMS / "py_sleep.py"
BOUND_S = 10.0  # every answer of a bad call arrives within this


def _stdio_server(env_dir: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tui_debugger", "mcp"], cwd=ROOT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "TUI_DEBUGGER_RUNTIME_DIR": str(env_dir)})


def _send(proc: subprocess.Popen, line: str) -> None:
    proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
    proc.stdin.flush()


def _answer(proc: subprocess.Popen, timeout: float = BOUND_S) -> dict | None:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        return None
    return json.loads(proc.stdout.readline())


def test_raw_jsonrpc_garbage_is_answered(tmp_path):
    proc = _stdio_server(tmp_path / "rt")
    try:
        _send(proc, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "fault", "version": "0"}}}))
        assert _answer(proc)["id"] == 1
        _send(proc, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        cases = [
            ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"debug_evaluate",'
             '"arguments":{"expression":"\\ud800"}}}', 2, -32602),
            ('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":[1,2]}', 3, -32602),
            ('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"}', 4, -32602),
            ('{"jsonrpc":"1.0","id":5,"method":"tools/list"}', 5, -32600),
            ("not json at all", None, -32700),
            ("[1, 2, 3]", None, -32600),
            ('{"jsonrpc":"2.0","id":6,"method":7}', 6, -32600),
            ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"debug_status",'
             '"arguments":{"debugSessionId":"\\udfff"}}}', 7, -32602),
            # answered with its id, or its caller would wait for ever
            ('{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{}}' + " " * 5_000_000,
             8, -32600),
        ]
        for line, msg_id, code in cases:
            started = time.monotonic()
            _send(proc, line)
            answer = _answer(proc)
            assert answer is not None, f"no answer to {line[:80]!r}"
            assert time.monotonic() - started < BOUND_S
            assert answer["id"] == msg_id and answer["error"]["code"] == code, answer
            assert "Traceback" not in answer["error"]["message"]
        # still serving
        _send(proc, json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}))
        assert "tools" in _answer(proc)["result"]
    finally:
        proc.kill()
        proc.wait(10)


async def test_special_files_are_no_breakpoint_targets(mcp_env, no_leftover_processes):
    async with in_process_client() as client:
        for special in ("/dev/zero", "/dev/urandom", "/tmp"):
            started = time.monotonic()
            await fails(client, "debug_launch", {
                "program": str(PY_SLEEP), "breakpoints": [f"{special}:5"]},
                "invalid_input")
            assert time.monotonic() - started < BOUND_S
        await call(client, "debug_launch", {"program": str(PY_SLEEP), "stopOnEntry": True})
        for special in ("/dev/zero", "/dev/urandom", "/tmp"):
            started = time.monotonic()
            await fails(client, "debug_breakpoint_add", {"file": special, "line": 5},
                        "invalid_input", "not a source file")
            await fails(client, "debug_run_to", {"file": special, "line": 5},
                        "invalid_input", "not a source file")
            assert time.monotonic() - started < BOUND_S
        assert (await call(client, "debug_breakpoint_list", {})).get("breakpoints", []) == []
        await call(client, "debug_terminate", {})


async def test_types_are_strict_and_an_empty_session_id_is_refused(mcp_env,
                                                                   no_leftover_processes):
    async with in_process_client() as client:
        await fails(client, "debug_attach", {"pid": "1"}, "invalid_input", "pid")
        await fails(client, "debug_attach", {"pid": True}, "invalid_input", "pid")
        await call(client, "debug_launch", {"program": str(PY_SLEEP), "stopOnEntry": True})
        await fails(client, "debug_terminate", {"debugSessionId": ""}, "invalid_input", "empty")
        await fails(client, "debug_stack", {"maxFrames": "5"}, "invalid_input", "maxFrames")
        assert (await call(client, "debug_status", {}))["state"] == "stopped"  # not ended
        await call(client, "debug_terminate", {})


async def test_arguments_too_large_are_refused_at_once(mcp_env, no_leftover_processes):
    big = "x" * 10_000_000
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(PY_SLEEP), "stopOnEntry": True})
        for tool, args in (("debug_evaluate", {"expression": big}),
                           ("debug_lldb_command", {"command": big}),
                           ("debug_breakpoint_add", {"file": big, "line": 1})):
            started = time.monotonic()
            await fails(client, tool, args, "invalid_input", "limit")
            assert time.monotonic() - started < 2.0, tool
        assert (await call(client, "debug_status", {}))["state"] == "stopped"
        # debug-script splits its command like a shell: not 200 KB of it, on the loop
        started = time.monotonic()
        answer = await call(client, "debug-script", {
            "command": "python " + "x" * 200_000, "breakpoint": {"file": str(PY_SLEEP), "line": 1},
            "expression": "1", "timeout": 1000}, ok=False)
        assert answer.is_error and "limit" in answer.text, answer.text
        assert time.monotonic() - started < 2.0
        await call(client, "debug_terminate", {})


def test_the_cli_refuses_a_huge_command_and_a_busy_host_says_busy(tmp_path):
    """Through the socket: a call over the request cap is refused before it is
    sent; a host that accepts but does not answer is reported busy, not a
    traceback."""
    import socket

    from tui_debugger import paths

    env = {**os.environ, "TUI_DEBUGGER_RUNTIME_DIR": str(tmp_path / "rt")}
    os.environ["TUI_DEBUGGER_RUNTIME_DIR"] = env["TUI_DEBUGGER_RUNTIME_DIR"]
    # a host that listens and never answers (its event loop is stuck)
    sock_path = paths.socket_path("stuck")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    server.listen()
    paths.write_meta("stuck", {"pid": os.getpid(), "program": "x", "adapter": "debugpy"})
    try:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "tui_debugger", "status", "--session",
                               "stuck"], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=30)
        assert time.monotonic() - started < 20
        assert done.returncode != 0 and "busy" in done.stderr and "Traceback" not in done.stderr
    finally:
        server.close()
        paths.remove_files("stuck")


# ============================================================================ fuzz

BAD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30), st.just("\ud800"), st.just(""), st.just("x" * 300_000),
    st.just("/dev/zero"), st.just("../" * 50),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(),
                                                          max_size=2),
)
# Tools whose well-typed values could start, end or attach to something real:
# they get the values of the wrong type only (and are covered by the cases above).
ENDS_OR_STARTS = {"debug_launch", "debug_attach", "debug_attach_sim", "debug_terminate",
                  "debug_detach", "debug-script", "debug_core"}


class _LiveServer:
    """An in-process MCP server with a stopped debugpy session, on a loop in a
    thread, so Hypothesis' synchronous examples can call it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.stop: asyncio.Event | None = None
        self.client = None
        self.tools: dict = {}
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self._main(),),
                                       daemon=True)

    async def _main(self) -> None:
        self.stop = asyncio.Event()
        async with in_process_client() as client:
            self.client = client
            self.tools = {t.name: t for t in (await client.list_tools()).tools}
            source = PROGRAMS / "py_basic.py"
            await call(client, "debug_launch", {"program": str(source), "stopOnEntry": True})
            self.ready.set()
            await self.stop.wait()
            await client.call_tool("debug_terminate", {})

    def call(self, tool: str, args: dict, timeout: float):
        return asyncio.run_coroutine_threadsafe(self.client.call_tool(tool, args),
                                                self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(30)


@pytest.fixture
def live_server(mcp_env, no_leftover_processes):
    server = _LiveServer()
    server.thread.start()
    assert server.ready.wait(30), "the session did not start"
    yield server
    server.close()


def _wrong_type(schema: dict, value) -> bool:
    kinds = {"integer": int, "number": (int, float), "string": str, "boolean": bool,
             "array": list, "object": dict}
    wanted = schema.get("type")
    if not isinstance(wanted, str) or wanted not in kinds:
        return True
    ok = isinstance(value, kinds[wanted]) and not (wanted in ("integer", "number")
                                                   and isinstance(value, bool))
    return not ok


def test_every_argument_of_every_tool_fuzzed(live_server):
    _fuzz(live_server, 250)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_argument_of_every_tool_fuzzed_long(live_server):
    _fuzz(live_server, 4000)


def _fuzz(live_server, examples: int) -> None:
    tools = live_server.tools
    cases = sorted((name, arg) for name, tool in tools.items()
                   for arg in tool.input_schema.get("properties", {}))

    @settings(max_examples=examples, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=st.sampled_from(cases), value=BAD_VALUES)
    def one(case, value):
        tool, arg = case
        schema = tools[tool].input_schema["properties"][arg]
        if tool in ENDS_OR_STARTS and not _wrong_type(schema, value):
            return
        if arg == "debugSessionId" and isinstance(value, str) and value.strip():
            return  # a name: "no such session", covered elsewhere
        started = time.monotonic()
        result = live_server.call(tool, {arg: value}, timeout=60)
        elapsed = time.monotonic() - started
        text = " ".join(getattr(c, "text", "") for c in result.content)
        assert "Traceback" not in text and "internal_error" not in json.dumps(
            result.structured_content or {}), (tool, arg, repr(value)[:80], text[:300])
        assert elapsed < 35, (tool, arg, repr(value)[:80], elapsed)
        if result.is_error:
            assert text.strip(), (tool, arg)

    one()
    # alive and still stopped where it was
    status = live_server.call("debug_status", {}, timeout=20)
    assert not status.is_error
