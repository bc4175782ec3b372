"""Odd MCP requests get an answer that says what is wrong: a tools/call before
the handshake, `arguments` that are a list, a fractional id (the SDK dropped
it unanswered); and debug_breakpoint_list's text says how many it holds."""

from __future__ import annotations

import json

from tests.test_mcp_stdio_transport import INITIALIZED, RawServer


def send(server: RawServer, message: dict) -> None:
    server.send(json.dumps(message).encode() + b"\n")


def status_call(ident, arguments) -> dict:
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
            "params": {"name": "debug_status", "arguments": arguments}}


INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def test_odd_requests_are_answered_with_what_is_wrong(mcp_env, no_leftover_processes):
    server = RawServer()
    try:
        send(server, status_call(1, {}))
        early = server.answer()
        assert early["id"] == 1 and early["error"]["code"] == -32602, early
        assert "initialize" in early["error"]["message"], early
        send(server, INITIALIZE)
        assert server.answer()["id"] == 0
        server.send(INITIALIZED)
        send(server, status_call(2, [1]))
        listed = server.answer()
        assert listed["id"] == 2 and listed["error"]["code"] == -32602, listed
        assert '"arguments" must be an object' in listed["error"]["message"], listed
        send(server, status_call(2.5, {}))
        fractional = server.answer()
        assert fractional["id"] is None and fractional["error"]["code"] == -32600, fractional
        assert '"id" must be a string or an integer' in fractional["error"]["message"]
        send(server, status_call(3, {}))  # the connection goes on
        assert server.answer()["id"] == 3
    finally:
        server.kill()


def test_the_breakpoint_list_text_says_how_many(mcp_env, no_leftover_processes, tmp_path):
    program = tmp_path / "many.py"
    program.write_text("".join(f"x{i} = {i}\n" for i in range(30)))
    server = RawServer()
    try:
        send(server, INITIALIZE)
        assert server.answer()["id"] == 0
        server.send(INITIALIZED)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "debug_launch", "arguments": {"program": str(program), "stop_on_entry": True}}}
        send(server, call)
        assert not server.answer()["result"].get("isError")
        for line in range(2, 27):
            send(server, {"jsonrpc": "2.0", "id": 100 + line, "method": "tools/call", "params": {
                "name": "debug_breakpoint_add", "arguments": {"file": str(program), "line": line}}})
            answer = server.answer()
            assert not answer["result"].get("isError"), answer
        send(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "debug_breakpoint_list", "arguments": {}}})
        result = server.answer()["result"]
        assert len(result["structuredContent"]["breakpoints"]) == 25
        text = result["content"][0]["text"]
        assert "(+24 more)" in text, text
        send(server, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "debug_terminate", "arguments": {}}})
        server.answer()
    finally:
        server.end() if server.proc.poll() is None else None
        server.kill()
