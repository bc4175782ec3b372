"""The local socket protocol between a session's host and its other clients:
newline-delimited JSON, one object per line.

client -> host   {"type": "hello", "origin": "cli", "client": "cli-123", "subscribe": false}
                 {"type": "call", "id": 1, "command": "next", "args": {...},
                  "cwd": "/path", "origin": "mcp"}
host -> client   {"type": "welcome", "session": "app", "pid": 123}
                 {"type": "result", "id": 1, "ok": true, "result": {...}}
                 {"type": "result", "id": 1, "ok": false, "error": {"code", "message", "details"}}
                 {"type": "event", "event": {SessionEvent}}
"""

from __future__ import annotations

import json
from typing import Any

MAX_LINE = 64 * 1024 * 1024
#: The longest line a client may send (a call and its arguments): one call
#: cannot make its host read, parse and hold more than this.
MAX_REQUEST = 1024 * 1024


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), default=str).encode() + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    return json.loads(line)
