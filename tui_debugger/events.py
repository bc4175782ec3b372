"""What a session tells its subscribers: one pydantic model per kind of event,
joined in one discriminated union (`SessionEvent`, told apart by `kind`).

The session publishes these models; its host dumps them onto the socket and a
client validates each line once, back into the same model (host/wire.py). A
consumer dispatches on the event's class through a table, never on a string
in an if-ladder: `handlers[type(event)](event)`.

Every event carries `seq` (increasing per session, set when published) and
`origin`: who caused it (tui, cli, mcp, web, user), or "session" for what the
session or the program did by itself.
"""

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, TypeAdapter

from backends.models import Breakpoint, SourceLocation, empty_list

from .models import ActivityEntry, ClientInfo, Origin, SessionState, StopInfo, Watch
from .output import OutputLine


class Event(BaseModel):
    seq: int = 0
    origin: Origin = "session"


class State(Event):
    """The state machine moved (idle → starting → running ⇄ stopped → terminated)."""

    kind: Literal["state"] = "state"
    state: SessionState


class Stopped(Event):
    """The program stopped; the stop carries its place, so a front end paints it
    before it asks for anything else."""

    kind: Literal["stopped"] = "stopped"
    stop: StopInfo


class Continued(Event):
    """The program runs again; `how` is the resume asked for (continue, next,
    step_in, ...), continue when the program went on by itself."""

    kind: Literal["continued"] = "continued"
    thread_id: int | None = None
    how: str = "continue"


class Output(Event):
    kind: Literal["output"] = "output"
    line: OutputLine


class Breakpoints(Event):
    """The whole registry after a change (a front end replaces its list)."""

    kind: Literal["breakpoints"] = "breakpoints"
    breakpoints: list[Breakpoint] = Field(default_factory=empty_list)


class Threads(Event):
    """A thread started or exited, or was held at a breakpoint beside the shown stop."""

    kind: Literal["threads"] = "threads"
    thread_id: int | None = None
    reason: str | None = None  # started, exited, held


class Activity(Event):
    """A command some client ran (or the session's own note)."""

    kind: Literal["activity"] = "activity"
    entry: ActivityEntry


class Selection(Event):
    """Someone selected a thread or a frame. `placed`: the event says where the
    selection is (its location, None for a frame without source), so every
    source pane moves there; without it only the stack and variables follow."""

    kind: Literal["selection"] = "selection"
    thread_id: int | None = None
    frame_index: int = 0
    placed: bool = False
    location: SourceLocation | None = None
    function: str | None = None


class Exited(Event):
    kind: Literal["exited"] = "exited"
    exit_code: int | None = None


class Terminated(Event):
    kind: Literal["terminated"] = "terminated"
    reason: str | None = None
    exit_code: int | None = None


class Clients(Event):
    """Who is joined, after one joined or left."""

    kind: Literal["clients"] = "clients"
    clients: list[ClientInfo] = Field(default_factory=empty_list)


class Watches(Event):
    kind: Literal["watches"] = "watches"
    watches: list[Watch] = Field(default_factory=empty_list)


class Values(Event):
    """A value was changed in the program: every pane that shows values reads them again."""

    kind: Literal["values"] = "values"
    name: str = ""
    value: str | None = None


class ExceptionFilters(Event):
    kind: Literal["exception_filters"] = "exception_filters"
    filters: list[str] = Field(default_factory=empty_list)


class Process(Event):
    """A process of the session's tree (tree.py) started, stopped, went on or ended; told
    on every session of the tree, so a client of one follows the others."""

    kind: Literal["process"] = "process"
    session: str
    parent: str | None = None
    pid: int | None = None
    #: "running": it went on after a stop (the program's other processes' clients
    #: show its state live)
    event: Literal["started", "stopped", "running", "ended"]
    reason: str | None = None
    location: SourceLocation | None = None
    function: str | None = None
    exit_code: int | None = None
    #: the notification to show, when the tree has a better one than the default
    text: str | None = None


class Notice(Event):
    """Something a person should be told (a launch waiting long for its first stop)."""

    kind: Literal["notice"] = "notice"
    text: str = ""
    title: str | None = None  # what it is about; none: the wait for the first stop


SessionEvent = Annotated[
    Union[State, Stopped, Continued, Output, Breakpoints, Threads, Activity, Selection,
          Exited, Terminated, Clients, Watches, Values, ExceptionFilters, Process, Notice],
    Field(discriminator="kind"),
]

_ADAPTER: TypeAdapter[Any] = TypeAdapter(SessionEvent)


def parse(data: Any) -> SessionEvent:
    """One event from its JSON form (a dict), validated into its model."""
    return _ADAPTER.validate_python(data)


__all__ = [
    "Activity", "Breakpoints", "Clients", "Continued", "Event", "ExceptionFilters", "Exited",
    "Notice", "Output", "Process", "Selection", "SessionEvent", "State", "Stopped",
    "Terminated", "Threads", "Values", "Watches", "parse",
]
