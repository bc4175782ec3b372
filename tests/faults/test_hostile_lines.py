"""Fault suite, round two: one hostile line on a transport.

A stdio line nested hundreds or thousands of levels deep, or longer than the
limit, is answered (with the request's id where it has one), and the MCP
server and the session it hosts serve on; the same nesting on a session's
socket is answered with an error rather than a silent hang-up; debug-script's
timeout must be a finite number; a start failure always says why."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.faults.test_bad_input import BOUND_S, _answer, _send, _stdio_server
from tests.support.mcp import PROGRAMS, call, fails, in_process_client

PY_SLEEP = PROGRAMS / "py_sleep.py"


def _initialize(proc: subprocess.Popen) -> None:
    _send(proc, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "fault", "version": "0"}}}))
    assert _answer(proc)["id"] == 1
    _send(proc, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))


def _tool_call(msg_id: int, name: str, arguments: dict | str) -> str:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s",'
            '"arguments":%s}}' % (msg_id, name, args))


def _nested(depth: int) -> str:
    return '{"expression":' + "[" * depth + "1" + "]" * depth + "}"


def test_deep_nesting_on_stdio_is_answered_and_the_session_survives(tmp_path):
    proc = _stdio_server(tmp_path / "rt")
    try:
        _initialize(proc)
        _send(proc, _tool_call(2, "debug_launch", {"program": str(PY_SLEEP),
                                                   "stopOnEntry": True}))
        launched = _answer(proc, 60)
        assert launched is not None and launched["id"] == 2, launched
        assert not launched["result"].get("isError"), launched
        for n, depth in enumerate([200, 500, 999, 1000, 5000, 100_000]):
            started = time.monotonic()
            _send(proc, _tool_call(10 + n, "debug_evaluate", _nested(depth)))
            answer = _answer(proc)
            assert answer is not None, f"no answer to {depth} levels"
            assert answer["id"] == 10 + n, answer
            assert "error" in answer or answer["result"].get("isError"), answer
            assert time.monotonic() - started < BOUND_S
            # the server, and the session it hosts, still serve
            _send(proc, _tool_call(100 + n, "debug_status", {}))
            status = _answer(proc)
            assert status is not None and status["id"] == 100 + n, status
            assert status["result"]["structuredContent"]["state"] == "stopped", status
        assert proc.poll() is None
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def test_a_line_over_the_limit_is_answered_with_its_id(tmp_path):
    proc = _stdio_server(tmp_path / "rt")
    try:
        _initialize(proc)
        for msg_id, line in [
            (5, _tool_call(5, "debug_evaluate", {"expression": "x" * 5_000_000})),
            # the id after a big params, as some clients write it
            (6, '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"debug_evaluate",'
                '"arguments":{"expression":"' + "y" * 5_000_000 + '"}},"id":6}'),
        ]:
            _send(proc, line)
            answer = _answer(proc)
            assert answer is not None and answer["id"] == msg_id, answer
            assert answer["error"]["code"] == -32600
        _send(proc, _tool_call(7, "debug_sessions", {}))
        assert _answer(proc)["id"] == 7
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


async def test_deep_nesting_on_the_session_socket_gets_an_error(mcp_env,
                                                                no_leftover_processes):
    from tui_debugger.paths import live_sessions

    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(PY_SLEEP), "stopOnEntry": True})
        [live] = live_sessions()
        path = live.socket

        def talk() -> list[dict]:
            answers = []
            with socket.socket(socket.AF_UNIX) as sock:
                sock.settimeout(BOUND_S)
                sock.connect(str(path))
                sock.sendall(b'{"type":"hello","origin":"cli","register":false}\n')
                reader = sock.makefile("rb")
                answers.append(json.loads(reader.readline()))
                for depth in (500, 5000, 200_000):
                    args = "[" * depth + "]" * depth
                    sock.sendall(('{"type":"call","id":%d,"command":"evaluate","args":'
                                  '{"expression":%s}}\n' % (depth, args)).encode())
                    line = reader.readline()
                    assert line, f"the host hung up on {depth} levels"
                    answers.append(json.loads(line))
                sock.sendall(b'{"type":"call","id":9,"command":"status","args":{}}\n')
                answers.append(json.loads(reader.readline()))
            return answers

        answers = await asyncio.to_thread(talk)
        assert answers[0]["type"] == "welcome"
        for answer in answers[1:4]:
            assert answer["ok"] is False and answer["error"]["code"] == "invalid_input", answer
        assert answers[4]["ok"] is True and answers[4]["id"] == 9
        await call(client, "debug_terminate", {})


@pytest.mark.parametrize("timeout", ["1e309", "Infinity", "-Infinity", "NaN", "1e300"])
async def test_debug_script_timeout_must_be_finite(timeout, mcp_env, tmp_path,
                                                   no_leftover_processes):
    """The JSON-RPC line as an SDK client cannot write it (Infinity, NaN), so sent
    through the stdio server."""
    program = tmp_path / "prog.py"
    program.write_text("x = 1\nprint(x)\n")
    proc = _stdio_server(tmp_path / "rt")
    try:
        _initialize(proc)
        line = _tool_call(2, "debug-script", '{"command":"python3 %s","breakpoint":{"file":'
                          '"%s","line":2},"expression":"x","timeout":%s}'
                          % (program, program, timeout))
        started = time.monotonic()
        _send(proc, line)
        answer = _answer(proc, 20)
        assert answer is not None, f"no answer for timeout {timeout}"
        assert time.monotonic() - started < BOUND_S
        result = answer.get("result") or {}
        assert result.get("isError") or "error" in answer, answer
        text = json.dumps(answer)
        assert "timeout must be" in text and "nanms" not in text, answer
        assert result["structuredContent"]["code"] == "invalid_input", answer
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


async def test_a_debugger_that_prints_nothing_gets_a_reason(mcp_env, monkeypatch,
                                                            no_leftover_processes):
    monkeypatch.setenv("TUI_DEBUGGER_DLV_PATH", "/bin/true")
    async with in_process_client() as client:
        error = await fails(client, "debug_launch", {"program": "/bin/true", "adapter": "dlv"},
                            "command_failed")
        message = error["error"]
        assert not message.rstrip().endswith(":"), message
        assert "exited with code 0" in message, message
