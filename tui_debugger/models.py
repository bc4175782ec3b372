"""The models a session shows the world: its state, where it stopped, who is
connected, who did what. They travel on the session socket as JSON (inside the
events of events.py and the commands' results) and are read by the client, the
commands and the TUI's widgets, so they live apart from the session that
produces them.
"""

import os
import time
from contextvars import ContextVar
from enum import Enum
from typing import Literal

from pydantic import BaseModel, Field

from backends.models import SourceLocation, empty_list

Origin = str  # "tui", "cli", "mcp", "session" (the session itself), or "user"


class SessionState(str, Enum):
    idle = "idle"
    starting = "starting"
    running = "running"
    stopped = "stopped"
    terminated = "terminated"


class WatchChange(BaseModel):
    watch_id: int
    expression: str
    old: str | None = None
    new: str | None = None
    #: where it changed ("bank.py:14"), when the backend tells it (debugpy)
    at: str | None = None
    function: str | None = None
    thread_id: int | None = None
    #: a log-only watch's record, or its condition was false: the program went on
    stopped: bool = True
    note: str | None = None
    #: the process that changed it, when it is not the one the watch was set in
    #: (a forked child's copy): "calc.4242 (pid 4242)"
    process: str | None = None


class StopInfo(BaseModel):
    reason: str
    thread_id: int | None = None
    description: str | None = None
    text: str | None = None  # exception text or signal; kept until the next resume
    traceback: str | None = None  # an exception's, as the debugger formats it
    location: SourceLocation | None = None
    function: str | None = None
    breakpoint_ids: list[int] = Field(default_factory=empty_list)
    caused_by: Origin | None = None  # who resumed the program before this stop
    #: at a watchpoint stop: each watched value that changed, old and new
    watch_changes: list[WatchChange] = Field(default_factory=empty_list)
    #: after a step out: what the function left returned, as the debugger shows it
    return_value: str | None = None
    return_type: str | None = None
    #: the function that returned it
    returned_from: str | None = None
    #: other threads held at a breakpoint when this stop was read, not yet shown:
    #: the next continue shows the first of them instead of resuming
    held_threads: list[int] = Field(default_factory=empty_list)
    #: threads that reached a breakpoint while the program was being continued and
    #: went on with it, since the previous stop (counted in the breakpoints' hits)
    passed_threads: list[int] = Field(default_factory=empty_list)
    #: the adapter told of threads and this stop's is the only one alive: an
    #: agent's answer leaves its thread_id out (every tool defaults to it);
    #: with several threads it says which one stopped
    only_thread: bool = False
    at: float = Field(default_factory=time.time)


class Watch(BaseModel):
    """A watchpoint (data breakpoint) in the session: what is watched, where, and
    the value it had at the last stop."""

    id: int
    expression: str
    access: Literal["write", "read", "readWrite"] = "write"
    verified: bool = False
    message: str | None = None
    address: str | None = None
    size: int | None = None
    type: str | None = None
    value: str | None = None
    hits: int = 0
    set_by: Origin = "user"
    #: stop only when this is true (Python: `new`, `old` name the values)
    condition: str | None = None
    #: stop from this change on
    hit_count: int | None = None
    #: record each change, never stop
    log_only: bool = False
    #: Python: local, global, attribute or item
    kind: str | None = None
    #: the last changes, oldest first (capped at HISTORY_CAP), each with its line
    history: list[WatchChange] = Field(default_factory=empty_list)
    #: a copy this process got when it was forked: the pid of the process it was set in
    copied_from_pid: int | None = None


class ActivityEntry(BaseModel):
    at: float = Field(default_factory=time.time)
    origin: Origin
    command: str
    summary: str = ""
    ok: bool = True
    #: which front end (one TUI among two, one MCP server): "origin-pid"
    client: str | None = None
    seq: int = 0  # increasing; what each client has seen is counted by it


#: the front end a command runs for ("tui-1234"), set while it runs: who the
#: "others" are in its answer
CURRENT_CLIENT: ContextVar[str | None] = ContextVar("current_client", default=None)


def client_id(origin: str) -> str:
    """A front end's id: its origin and process (two TUIs are two clients).
    The CLI is one front end whatever process runs each of its commands."""
    return origin if origin == "cli" else f"{origin}-{os.getpid()}"


class ClientInfo(BaseModel):
    id: str
    origin: Origin
    connected_at: float = Field(default_factory=time.time)

