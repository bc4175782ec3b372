"""The session socket under bad input: garbage lines, unknown commands, wrong
arguments, a client that vanishes mid-call. The host answers or ignores, and
keeps serving."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from tui_debugger import paths
from tui_debugger.execute import execute
from tui_debugger.host.hub import Hub

PROGRAMS = Path(__file__).parent / "programs"


async def _read_result(reader: asyncio.StreamReader, call_id: int) -> dict:
    while True:
        line = await asyncio.wait_for(reader.readline(), 10)
        assert line, "the host closed the connection"
        message = json.loads(line)
        if message.get("type") == "result" and message.get("id") == call_id:
            return message


async def test_host_survives_bad_input(no_leftover_processes, tmp_path):
    shutil.copy(PROGRAMS / "py_basic.py", tmp_path / "py_basic.py")
    hub = Hub(serve=True)
    try:
        status = await execute(hub, "launch", {"program": str(tmp_path / "py_basic.py"),
                                               "stopOnEntry": True, "sessionName": "wire"},
                               origin="cli")
        sock = paths.socket_path(status.session)

        # A client that sends garbage and leaves in the middle of a call.
        reader, writer = await asyncio.open_unix_connection(str(sock))
        writer.write(b"this is not json\n{\"type\": \"call\", \"id\": 1, \"command\": \"await\", "
                     b"\"args\": {\"timeoutMs\": 60000}}\n")
        await writer.drain()
        writer.close()

        reader, writer = await asyncio.open_unix_connection(str(sock))
        writer.write(b'{"type": "hello", "origin": "cli"}\n')
        writer.write(b"\xff\xfe garbage\n[1, 2, 3]\n")
        calls = [
            {"type": "call", "id": 10, "command": "no_such_command", "args": {}},
            {"type": "call", "id": 11, "command": "breakpoint_add", "args": {"line": "twelve"}},
            {"type": "call", "id": 12, "command": "variables", "args": {"maxItems": -3}},
            {"type": "call", "id": 13, "command": "await", "args": {"timeoutMs": 15000}},
        ]
        for call in calls:
            writer.write(json.dumps(call).encode() + b"\n")
        await writer.drain()
        unknown = await _read_result(reader, 10)
        assert not unknown["ok"] and unknown["error"]["code"] == "invalid_input"
        assert "Unknown command 'no_such_command'" in unknown["error"]["message"]
        wrong = await _read_result(reader, 11)
        assert not wrong["ok"] and "line" in wrong["error"]["message"]
        negative = await _read_result(reader, 12)
        assert not negative["ok"] and "maxItems" in negative["error"]["message"]
        stopped = await _read_result(reader, 13)
        assert stopped["ok"] and stopped["result"]["status"] == "stopped"
        writer.close()

        # The session is as it was: still stopped at entry, still answering.
        session = hub.sessions[status.session]
        context = await execute(hub, "context", {}, origin="tui", session=session)
        assert context.state == "stopped" and context.stop.reason == "entry"
        await execute(hub, "terminate", {}, origin="tui", session=session)
    finally:
        await hub.close_all()


def test_a_reply_line_reads_as_before_however_deep_or_odd():
    """A client parses a host's line in one pass (pydantic-core); what that
    parser refuses and json.loads reads (a program's value nested past 200
    levels, NaN) reads the same as before; what is not ours is a ValueError."""
    import pytest

    from tui_debugger.host import wire

    deep = json.loads("[" * 500 + "]" * 500)
    line = json.dumps({"type": "result", "id": 1, "ok": True, "result": {"v": deep}}).encode()
    reply = wire.parse_reply_line(line + b"\n")
    assert isinstance(reply, wire.Result) and reply.result == {"v": deep}
    odd = b'{"type": "result", "id": 2, "ok": true, "result": {"x": NaN}}'
    assert wire.parse_reply_line(odd).result["x"] != wire.parse_reply_line(odd).result["x"]
    for line in (b'{"type": "nope"}', b"not json", b'{"type": "result"}'):
        with pytest.raises(ValueError):
            wire.parse_reply_line(line)
    plain = {"type": "result", "id": 3, "ok": True,
             "agent": {"structured": {"status": "stopped", "n": [1, 2.5, None]}, "text": "t"}}
    assert wire.parse_reply_line(json.dumps(plain).encode()) == wire.parse_reply(plain)


async def test_a_join_cancelled_before_its_welcome_closes_its_connection(tmp_path, monkeypatch):
    """A join cancelled while it waits for the host's welcome (a TUI's switch
    as the app closes) leaves no connection open: the host counts an open one
    as a client and stays for it, even after `stop`."""
    from tui_debugger.client.remote import RemoteSession

    short = Path("/tmp") / f"tdbg-join-{tmp_path.name[-12:]}.sock"  # a socket path's 108 bytes
    monkeypatch.setattr(paths, "socket_path", lambda name: short)
    greeted, closed = asyncio.Event(), asyncio.Event()

    async def silent_host(reader, writer):
        await reader.readline()  # the hello; no welcome is ever sent
        greeted.set()
        await reader.read()  # returns at the client's end of the connection
        closed.set()
        writer.close()

    server = await asyncio.start_unix_server(silent_host, path=str(short))
    try:
        joining = asyncio.create_task(RemoteSession.connect("joined", "tui", timeout=30))
        await asyncio.wait_for(greeted.wait(), 5)  # it waits for the welcome now
        joining.cancel()
        await asyncio.gather(joining, return_exceptions=True)
        await asyncio.wait_for(closed.wait(), 5)
    finally:
        server.close()
        short.unlink(missing_ok=True)
