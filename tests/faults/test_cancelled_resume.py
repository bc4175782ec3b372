"""A debug_continue cancelled by its client (notifications/cancelled) while it
waits for the stop still resumed the program: the activity log says who
resumed it, cancelled or not (a resume is logged as it happens, not when the
call answers, which may be a minute later or never)."""

from __future__ import annotations

import json
import time

from tests.test_mcp_stdio_transport import RawServer


def call(server: RawServer, ident: int, tool: str, arguments: dict) -> None:
    server.send(json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                            "params": {"name": tool, "arguments": arguments}}).encode() + b"\n")


def answer_to(server: RawServer, ident: int) -> dict:
    while True:
        message = server.answer()
        if message.get("id") == ident:
            return message


def test_a_cancelled_continue_is_in_the_activity(mcp_env, no_leftover_processes, tmp_path):
    program = tmp_path / "slow.py"
    program.write_text("import time\nfor i in range(600):\n    time.sleep(0.1)\n")
    server = RawServer()
    try:
        server.initialize()
        call(server, 1, "debug_launch", {"program": str(program), "stop_on_entry": True})
        assert not answer_to(server, 1)["result"].get("isError"), "launch failed"
        call(server, 2, "debug_continue", {"wait_ms": 60_000})
        deadline = time.monotonic() + 30
        status = {}
        while time.monotonic() < deadline:  # the continue is out: the program runs
            call(server, 3, "debug_status", {})
            status = answer_to(server, 3)["result"]["structuredContent"]
            if status.get("state") == "running":
                break
            time.sleep(0.1)
        assert status.get("state") == "running", status
        server.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                "params": {"requestId": 2, "reason": "the user stopped it"}}
                               ).encode() + b"\n")
        deadline = time.monotonic() + 30
        entries: list = []
        while time.monotonic() < deadline:
            call(server, 4, "debug_activity", {})
            entries = answer_to(server, 4)["result"]["structuredContent"]["entries"]
            if any(e["command"] == "continue" for e in entries):
                break
            time.sleep(0.2)
        # well before the continue's own 60 s wait would have ended
        (resumed,) = [e for e in entries if e["command"] == "continue"]
        assert resumed["origin"] == "mcp", resumed
        call(server, 5, "debug_terminate", {})
        answer_to(server, 5)
    finally:
        server.end() if server.proc.poll() is None else None
        server.kill()
