"""The local socket protocol between a session's host and its other clients:
newline-delimited JSON, one object per line.

client -> host   {"type": "hello", "origin": "cli", "client": "cli-123", "subscribe": false}
                 {"type": "call", "id": 1, "command": "next", "args": {...},
                  "cwd": "/path", "origin": "mcp", "view": {"names": "mcp"}}
                 {"type": "cli", "id": 1, "argv": ["print", "x"], "cwd": "/path",
                  "session": null, "columns": 80}     (cli.py's quick client)
host -> client   {"type": "welcome", "session": "app", "pid": 123, "cli": 1}
                 {"type": "result", "id": 1, "ok": true, "result": {...}}
                 {"type": "result", "id": 1, "ok": true, "cli": {"text"|"json"|"stdout",
                  "stderr", "rc", "wait_exit"} or {"fallback": true}}
                 {"type": "result", "id": 1, "ok": false, "error": {"code", "message", "details"}}
                 {"type": "event", "event": {SessionEvent}}
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_LINE = 64 * 1024 * 1024
#: The longest line a client may send (a call and its arguments): one call
#: cannot make its host read, parse and hold more than this.
MAX_REQUEST = 1024 * 1024
#: How deep a message may nest (objects and arrays). Our deepest real argument
#: (a launch configuration's env inside a JSON-RPC envelope) is under 10; past
#: ~1,000 levels the parser and every recursive walk after it (validation,
#: encoding an error that echoes the input) raise RecursionError.
MAX_DEPTH = 64


class TooDeep(ValueError):
    """A message nested deeper than MAX_DEPTH."""

    def __init__(self) -> None:
        super().__init__(f"a message nested deeper than {MAX_DEPTH} levels; send a flatter one")


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), default=str).encode() + b"\n"


def decode(line: bytes | str, max_depth: int | None = None) -> Any:
    """One message; ValueError (TooDeep for nesting) when it is not one. A host
    reading requests passes MAX_DEPTH; a client trusts its host's answers (a
    program's value may nest deeply) as far as the parser goes."""
    try:
        message = json.loads(line)
    except RecursionError:
        raise TooDeep() from None
    if max_depth is not None and too_deep(message, max_depth):
        raise TooDeep()
    return message


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests objects and arrays deeper than `limit` (no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list)))
    return False


_ID = r'(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")'
_ID_FIRST = re.compile(r'\s*\{(?:\s*"(?:jsonrpc|method|type|command)"\s*:\s*"[^"\\]{0,200}"\s*,)*'
                       r'\s*"id"\s*:\s*' + _ID)
_ID_LAST = re.compile(r'"id"\s*:\s*' + _ID + r'\s*\}\s*$')


def message_id(line: str) -> int | str | None:
    """The id of a message too large or too deep to parse, when it stands
    where clients put it: first among the top-level keys, or last. (A key
    "id" nested in the arguments is neither.)"""
    found = _ID_FIRST.match(line, 0, 65536) or _ID_LAST.search(line, max(0, len(line) - 4096))
    if found is None:
        return None
    return json.loads(found.group(1))
