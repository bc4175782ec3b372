"""The local socket protocol between a session's host and its other clients:
newline-delimited JSON, one message per line. Each message is a pydantic model
with a `type`; the models of each direction form one discriminated union, and
each side validates a line once into it and dispatches on its class.

client -> host (`Request`)
  Hello        {"type": "hello", "origin": "cli", "client": "cli-123", "subscribe": false,
                "register": true}
  Call         {"type": "call", "id": 1, "command": "next", "args": {...},
                "cwd": "/path", "origin": "mcp", "answer": "agent"?,
                "view": {"names": "mcp"}?}
  CommandLine  {"type": "cli", "id": 1, "argv": ["print", "x"], "cwd": "/path",
                "session": null, "columns": 80}     (cli.py's quick client, which
                writes it as plain JSON: it imports no pydantic)
host -> client (`Reply`)
  Welcome      {"type": "welcome", "session": "app", "pid": 123, "cli": 1, "state": "starting"}
  Result       {"type": "result", "id": 1, "ok": true, "result": {...}}
               {"type": "result", "id": 1, "ok": true, "agent": {"structured", "text"}}
               {"type": "result", "id": 1, "ok": true, "cli": {"text"|"json"|"stdout",
                "stderr", "rc", "wait_exit"} or {"fallback": true}}
               {"type": "result", "id": 1, "ok": false, "error": {"code", "message", "details"}}
  EventMessage {"type": "event", "event": {one of events.SessionEvent}}

Starting a host (host.py -> daemon.py, on the new process's stdin and stdout):
  HostSpec     {"command": "launch", "args": {...}, "cwd": "/path", "origin": "tui", "owner": 123}
  HostReady    {"ok": true, "result": {...}} or {"ok": false, "error": {...}}
"""

import json
import re
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from backends.models import empty_list

from ..events import SessionEvent

#: a call's id as the client chose it (a number; anything JSON allows is echoed)
CallId = Union[int, str, None]


class Hello(BaseModel):
    # "register" on the wire: a name BaseModel already has
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    type: Literal["hello"] = "hello"
    origin: str | None = None
    #: which front end: "origin-pid" (two TUIs are two clients); the CLI is one
    client: str | None = None
    subscribe: bool = False
    #: counted among the session's clients (a one-off look is not)
    registered: bool = Field(True, alias="register")


class Call(BaseModel):
    type: Literal["call"] = "call"
    id: CallId = None
    command: str = ""
    args: dict[str, Any] | None = None  # by alias, as the argument model reads them
    cwd: str | None = None
    origin: str | None = None
    #: "agent": answer what an agent reads (commands/agent.agent_answer) instead of the result
    answer: Literal["agent"] | None = None
    #: the caller named the session; else a command of one process acts on the
    #: one of the tree the caller is focused on (tree.focused)
    named: bool = False
    #: how the caller shows answers (registry.View.to_wire); None: its kind of front end's
    view: dict[str, Any] | None = None


class CommandLine(BaseModel):
    """A whole command line, parsed and run by the host (cliparse.run_on_host)."""

    type: Literal["cli"] = "cli"
    id: CallId = None
    argv: list[str] = Field(default_factory=empty_list)
    cwd: str | None = None
    #: the session the command line names (--session), None when none
    session: str | None = None
    columns: int | None = None


Request = Annotated[Union[Hello, Call, CommandLine], Field(discriminator="type")]


class Welcome(BaseModel):
    type: Literal["welcome"] = "welcome"
    session: str
    pid: int
    #: this host runs command lines (CommandLine) for the quick client
    cli: int = 1
    #: the session's state as the client subscribed: a stop it is in came before,
    #: and only what comes after it arrives as events
    state: str | None = None


class ErrorBody(BaseModel):
    code: str = "internal_error"
    message: str = "unknown error"
    details: dict[str, Any] | None = None


class AgentAnswer(BaseModel):
    structured: Any = None
    text: str = ""


class Result(BaseModel):
    """The answer to one Call or CommandLine: exactly one of result, agent, cli, error."""

    type: Literal["result"] = "result"
    id: CallId = None
    ok: bool
    result: dict[str, Any] | None = None
    agent: AgentAnswer | None = None
    #: what the quick client prints; plain JSON of its own (cli.py reads it without pydantic)
    cli: dict[str, Any] | None = None
    error: ErrorBody | None = None


class EventMessage(BaseModel):
    type: Literal["event"] = "event"
    event: SessionEvent


Reply = Annotated[Union[Welcome, Result, EventMessage], Field(discriminator="type")]


class HostSpec(BaseModel):
    """What host.py writes to a new host's stdin (daemon.py): the command that
    makes its session. host.py writes it as plain JSON, since the CLI imports
    host.py before pydantic; the host validates it here."""

    command: str
    args: dict[str, Any] | None = None
    cwd: str | None = None
    origin: str | None = None
    #: the TUI or MCP server that started the session: killed, it says no
    #: goodbye, and the host ends the session once no client is left
    owner: int | None = None
    #: when the owner started (procinfo.start_time), read by the owner itself:
    #: an owner killed before its host first looked is still known to be gone
    owner_started: int | None = None
    #: how the starter shows answers (registry.View.to_wire): the launch answers it
    view: dict[str, Any] | None = None
    #: the starter's client id (models.client_id): the launch's answer is its
    #: own, as its later calls are (the process it is focused on, tree.py)
    client: str | None = None
    #: the starter joins the session as soon as it is served (HostServing), while
    #: the start command goes on, rather than once that command is done (the TUI)
    announce: bool = False
    #: `tui-debugger start`'s whole argv, for the host to parse and run (cli.py's
    #: quick `start`; `command` and `args` are then its own), and the width of
    #: the client's terminal for argparse's usage
    cli: list[str] | None = None
    columns: int | None = None


class HostServing(BaseModel):
    """A line a host told `announce` writes before its HostReady: its session
    is served on its socket, under this name; the start command goes on.
    Read by host.py as plain JSON."""

    serving: str


class HostReady(BaseModel):
    """The one line a host writes to its starter: the start command's result
    by alias, or why it failed. Read by host.py as plain JSON."""

    ok: bool
    result: dict[str, Any] | None = None
    error: ErrorBody | None = None
    #: for a HostSpec with `cli`: what the client prints (stdout, stderr, rc)
    cli: dict[str, Any] | None = None
Message = Union[Hello, Call, CommandLine, Welcome, Result, EventMessage]

_REQUEST: TypeAdapter[Any] = TypeAdapter(Request)
_REPLY: TypeAdapter[Any] = TypeAdapter(Reply)
#: the `type`s of requests; a line with another is not ours, and is ignored
REQUEST_TYPES = frozenset({"hello", "call", "cli"})


def parse_request(message: dict[str, Any]) -> Hello | Call | CommandLine:
    """A client's message (decoded), validated; ValueError (pydantic's
    ValidationError) when its fields are not the protocol's."""
    return _REQUEST.validate_python(message)


def parse_reply(message: Any) -> Welcome | Result | EventMessage:
    """A host's message (decoded), validated once: an event arrives as its model."""
    return _REPLY.validate_python(message)


def parse_reply_line(line: bytes) -> Welcome | Result | EventMessage:
    """A host's line, parsed and validated in one pass (pydantic-core reads the
    JSON itself: half the time of json.loads, then validation). Its parser
    stops at 200 levels where json.loads goes on (a program's value may nest
    deeply), so what it refuses is read the other way before it is refused;
    ValueError when it is not a message of ours."""
    try:
        return _REPLY.validate_json(line)
    except ValueError:
        return parse_reply(decode(line))


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


def encode(message: Message) -> bytes:
    """One line. Fields left None are left out (a result carries one of its
    answers), except inside an event, where None is a value of the models."""
    exclude_none = not isinstance(message, EventMessage)
    return message.model_dump_json(exclude_none=exclude_none, fallback=str).encode() + b"\n"


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
