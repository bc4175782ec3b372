"""tools/call answered beside the SDK's dispatch (mcp/stdio.py, _ToolCalls):
taken only once the SDK has settled the connection and only when the SDK
would take the call as it stands, answered as the SDK answers, in both
protocol eras, cancelled unanswered, and everything else left to the SDK."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import mcp_types
import pytest
from mcp.server.lowlevel import Server
from mcp_types import CallToolResult, TextContent, jsonrpc_message_adapter

from tests.test_mcp_stdio_transport import INITIALIZE, INITIALIZED, RawServer, request, tool
from tui_debugger.mcp import stdio as mcp_transport
from tui_debugger.mcp.server import TOOLS_TOOL

MODERN = "2026-07-28"


def envelope(params: dict[str, Any], version: str = MODERN) -> dict[str, Any]:
    return {**params, "_meta": {
        mcp_types.PROTOCOL_VERSION_META_KEY: version,
        mcp_types.CLIENT_CAPABILITIES_META_KEY: {},
        mcp_types.CLIENT_INFO_META_KEY: {"name": "tool-calls-test", "version": "0"}}}


def call(msg_id: Any, name: str, arguments: Any = None, *, modern: bool = False,
         **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, **extra}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
            "params": envelope(params) if modern else params}


class Front:
    """A front end that answers every call at once with its name and arguments,
    or holds a call until released (`held`)."""

    def __init__(self) -> None:
        self.server: Server[Any] = Server("tool-calls-test", version="1")
        self.calls: list[tuple[str, Any]] = []
        self.held: asyncio.Event | None = None

    def answers_directly(self, tool: Any) -> bool:
        return isinstance(tool, str) and tool != TOOLS_TOOL

    @staticmethod
    def plain_result(structured: dict[str, Any], text: str) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=structured)

    async def answer(self, name: str, arguments: Any) -> CallToolResult | tuple[dict, str]:
        """An agent's plain answer, (structured, text); a CallToolResult for
        a tool whose name starts with "result_" (as an error or a script's)."""
        self.calls.append((name, arguments))
        if self.held is not None:
            await self.held.wait()
        plain = ({"name": name, "arguments": arguments}, f"{name} \u00e9")
        return self.plain_result(*plain) if name.startswith("result_") else plain


@pytest.fixture
async def wire():
    """A _ToolCalls over a real pipe: (the calls, the front, read the written lines)."""
    read_fd, write_fd = os.pipe()
    out = mcp_transport._WireOut(write_fd)
    front = Front()
    calls = mcp_transport._ToolCalls(front, out)

    def lines() -> list[dict[str, Any]]:
        os.set_blocking(read_fd, False)
        try:
            data = os.read(read_fd, 1 << 20)
        except BlockingIOError:
            return []
        return [json.loads(line) for line in data.splitlines()]

    yield calls, front, lines
    calls.cancel_all()
    out.close()
    os.close(read_fd)
    os.close(write_fd)


def given(calls: mcp_transport._ToolCalls, message: dict[str, Any]) -> None:
    calls.given(jsonrpc_message_adapter.validate_python(message, by_name=False))


def handshake(calls: mcp_transport._ToolCalls, version: str = "2025-06-18") -> None:
    given(calls, json.loads(INITIALIZE))
    calls.answered(jsonrpc_message_adapter.validate_python(
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version, "capabilities": {},
                                               "serverInfo": {"name": "s", "version": "1"}}},
        by_name=False))
    given(calls, json.loads(INITIALIZED))


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_handshake_call_is_taken_only_once_the_handshake_is_done(wire):
    calls, front, lines = wire
    assert not calls.take(call(1, "debug_status"))  # the SDK's: nothing settled yet
    given(calls, json.loads(INITIALIZE))
    assert not calls.take(call(2, "debug_status"))  # answered, not yet acknowledged
    calls.answered(jsonrpc_message_adapter.validate_python(
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18",
                                               "capabilities": {},
                                               "serverInfo": {"name": "s", "version": "1"}}},
        by_name=False))
    assert not calls.take(call(3, "debug_status"))
    given(calls, json.loads(INITIALIZED))
    assert calls.take(call(4, "debug_status", {"session": "a"}))
    await settle()
    assert front.calls == [("debug_status", {"session": "a"})]
    assert lines() == [{"jsonrpc": "2.0", "id": 4, "result": {
        "content": [{"type": "text", "text": "debug_status \u00e9"}],
        "structuredContent": {"name": "debug_status", "arguments": {"session": "a"}},
        "isError": False}}]


async def test_what_the_sdk_would_refuse_or_must_see_is_left_to_it(wire):
    calls, front, _lines = wire
    handshake(calls)
    left = [
        call(1, TOOLS_TOOL, {"open": ["native"]}),  # may change the list: the SDK notifies
        call(2, 7),  # a name that is not a string: the SDK's error
        call(3, "debug_status", [1, 2]),  # arguments not an object
        call(4, "debug_status", modern=True),  # the other era's envelope on this connection
        {"jsonrpc": "2.0", "id": True, "method": "tools/call", "params": {"name": "x"}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call"},  # no params
        {"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 7, "method": "ping"},
    ]
    for message in left:
        assert not calls.take(message), message
    front.held = asyncio.Event()
    assert calls.take(call(8, "debug_status"))
    assert not calls.take(call(8, "debug_status")), "an id still running: the SDK's to judge"
    front.held.set()
    await settle()
    assert front.calls == [("debug_status", None)]


async def test_a_version_whose_shape_differs_stays_with_the_sdk(wire, monkeypatch):
    calls, _front, _lines = wire
    real = mcp_types.methods.serialize_server_result

    def renamed(method: str, version: str, result: dict[str, Any]) -> dict[str, Any]:
        shaped = real(method, version, result)
        if version == "2025-03-26":  # a version whose answers the SDK would reshape
            shaped["structured"] = shaped.pop("structuredContent", None)
        return shaped
    monkeypatch.setattr(mcp_types.methods, "serialize_server_result", renamed)
    handshake(calls, "2025-03-26")
    assert not calls.take(call(1, "debug_status"))
    handshake(calls, "2025-06-18")
    assert calls.take(call(2, "debug_status"))


async def test_a_cancelled_call_is_never_answered(wire):
    calls, front, lines = wire
    handshake(calls)
    front.held = asyncio.Event()
    assert calls.take(call("slow", "debug_await"))
    await settle()
    assert calls.take({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": "slow", "reason": "no longer needed"}})
    front.held.set()
    await settle()
    assert lines() == [] and not calls.running
    # A cancel for an id not taken here is the SDK's.
    assert not calls.take({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": "other"}})


async def test_a_modern_call_is_taken_once_the_first_request_settled_the_era(wire):
    calls, front, lines = wire
    assert not calls.take(call(1, "debug_status", modern=True))
    given(calls, call(1, "debug_status", modern=True))  # the SDK served the first one
    assert calls.take(call(2, "debug_status", {}, modern=True))
    assert not calls.take(call(3, "debug_status")), "no envelope: the SDK's error"
    assert not calls.take(call(4, "debug_status", modern=True) | {
        "params": envelope({"name": "debug_status"}, "2099-01-01")}), "a version it does not serve"
    await settle()
    [answer] = lines()
    assert answer["result"]["resultType"] == "complete"
    assert answer["result"]["_meta"] == {
        mcp_types.SERVER_INFO_META_KEY: {"name": "tool-calls-test", "version": "1"}}
    assert front.calls == [("debug_status", {})]


# ---------------------------------------------------------------- the real server


def _without_id(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if key != "id"}


CALLS = [
    ("debug_status", {}),  # no session: an error answer
    ("debug_sessions", {}),
    ("debug_nonesuch", {}),
    ("debug_breakpoint_add", {"line": "not a number"}),
]


def test_the_server_answers_a_handshake_call_as_the_sdk_does(mcp_env, no_leftover_processes):
    """The same calls before `notifications/initialized` (the SDK answers
    them: the handshake is not acknowledged yet) and after (answered beside
    it): the same answers."""
    server = RawServer()
    try:
        server.send(INITIALIZE)
        assert server.answer()["id"] == 0
        for msg_id, (name, arguments) in enumerate(CALLS, 1):
            server.send(tool(msg_id, name, arguments))
        by_sdk = {answer["id"]: answer for answer in server.answers(len(CALLS))}
        server.send(INITIALIZED)
        for msg_id, (name, arguments) in enumerate(CALLS, 101):
            server.send(tool(msg_id, name, arguments))
        beside = {answer["id"]: answer for answer in server.answers(len(CALLS))}
        for msg_id, (name, _arguments) in enumerate(CALLS, 1):
            assert _without_id(beside[msg_id + 100]) == _without_id(by_sdk[msg_id]), name
        assert server.end() == 0
    finally:
        server.kill()


def test_the_server_answers_a_modern_call_as_the_sdk_does(mcp_env, no_leftover_processes):
    """The 2026 era: a connection's first request is the SDK's (it settles
    the era), the same call again is answered beside it: the same answers. A
    server a call, so that each call has the SDK's answer to compare."""
    for name, arguments in CALLS:
        server = RawServer()
        try:
            answers = []
            for msg_id in (1, 2):
                server.send(request(msg_id, "tools/call",
                                    envelope({"name": name, "arguments": arguments})))
                answers.append(server.answer())
            assert _without_id(answers[0]) == _without_id(answers[1]), name
            assert answers[0]["result"]["resultType"] == "complete"
            assert server.end() == 0
        finally:
            server.kill()


async def test_an_answer_that_cannot_be_encoded_is_an_error_not_silence(wire, monkeypatch):
    calls, front, lines = wire
    handshake(calls)

    class Unencodable:
        def model_dump(self, **_kwargs: Any) -> dict[str, Any]:
            raise ValueError("not JSON")

    async def broken(name: str, arguments: Any) -> Any:
        return Unencodable()
    monkeypatch.setattr(front, "answer", broken)
    assert calls.take(call(9, "debug_status"))
    await settle()
    [answer] = lines()
    assert answer["id"] == 9 and answer["error"]["code"] == -32603
    assert "debug_status" in answer["error"]["message"]

    async def unencodable_plain(name: str, arguments: Any) -> Any:
        return {"values": {1, 2}}, "a set is not JSON"
    monkeypatch.setattr(front, "answer", unencodable_plain)
    assert calls.take(call(10, "debug_status"))
    await settle()
    [answer] = lines()
    assert answer["id"] == 10 and answer["error"]["code"] == -32603


async def test_a_plain_answer_and_a_result_are_written_as_the_sdk_would(wire):
    """An agent's plain answer (structured, text) is written without a
    CallToolResult made of it, the same as the SDK would write that result;
    a CallToolResult (an error's, a script's) is dumped as the SDK does."""
    calls, front, lines = wire
    handshake(calls)
    assert calls.take(call(11, "debug_status", {"x": "\u00e9"}))
    assert calls.take(call(12, "result_error"))
    await settle()
    plain, result = lines()
    assert plain["result"] == {
        "content": [{"type": "text", "text": "debug_status \u00e9"}],
        "structuredContent": {"name": "debug_status", "arguments": {"x": "\u00e9"}},
        "isError": False}
    sdk = mcp_types.methods.serialize_server_result("tools/call", "2025-06-18", front.plain_result(
        {"name": "result_error", "arguments": None}, "result_error \u00e9").model_dump(
            by_alias=True, mode="json", exclude_none=True))
    assert result["result"] == sdk
