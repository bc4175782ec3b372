"""The one command registry. Each command is declared once: id, typed argument
model, typed result model, handler, help, read-only flag, and its names in each
front end. The CLI subcommands, the TUI bindings and palette, and the MCP tools
are all generated from these declarations.

The declarations live in the area modules of this package (lifecycle,
breakpoints, control, inspect, tools); the package imports them all before
anything can look a command up here.
"""

import argparse
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema
from pydantic.alias_generators import to_camel

from backends.models import empty_list

if TYPE_CHECKING:
    from ..session import Session


class Args(BaseModel):
    """Argument models: snake_case in Python and on the CLI (--kebab-case),
    camelCase on the wire and in MCP (as in DAP and XcodeBuildMCP)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", defer_build=True
    )


class NoArgs(Args):
    pass


class ProcessRef(BaseModel):
    """A process of a program's tree (tree.py): its session, pid and program."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, defer_build=True)
    session: str
    pid: int | None = None
    program: str | None = None


class ResultPart(BaseModel):
    """A piece a result holds (a frame, a variable, a hit): a result's own
    fields, the process and what happened meanwhile, are the whole answer's."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, defer_build=True)


class Result(BaseModel):
    # Built on first use: a CLI command needs two or three of these models, not all.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, defer_build=True)
    #: the process the call acted on (or whose stop answers it), when the
    #: program has several (tree.py); set by execute. Not in a result's JSON
    #: schema (debug-script's output schema is its own results)
    process: SkipJsonSchema[ProcessRef | None] = None
    #: stops in the program's other processes this client has not been told of
    meanwhile: SkipJsonSchema[list[str]] = Field(default_factory=empty_list)

    def as_json(self) -> dict[str, Any]:
        """The result as its callers read it (by alias, JSON values), without the
        tree's fields when they are unset: a one-process program's answers, and
        debug-script's (whose shape is seeds/002's exactly), carry neither."""
        return without_unset_tree_fields(self.model_dump(mode="json", by_alias=True))


def without_unset_tree_fields(data: Any) -> Any:
    """`data` (a Result's dump) without `process: null` and `meanwhile: []`, at
    every depth: the views a result holds (frames, variables, hits) are
    Results too, and each would carry both."""
    if isinstance(data, dict):
        if "meanwhile" in data and "process" in data:
            if data["process"] is None:
                del data["process"]
            if not data["meanwhile"]:
                del data["meanwhile"]
        for value in data.values():
            without_unset_tree_fields(value)
    elif isinstance(data, list):
        for item in data:
            without_unset_tree_fields(item)
    return data


class ActionResult(Result):
    """Results of commands that change state carry what usually follows."""

    next_steps: list[str] = Field(
        default_factory=empty_list,
        description="tools that usually follow (MCP names), only where the next step is not obvious")


class SessionHost(Protocol):
    """What a command may ask of the process that hosts its session: hub.Hub,
    in a daemon. Declared here, so the commands need not import the hosting
    layer above them (which imports them)."""

    sessions: "dict[str, Session]"
    current: str | None
    origins: dict[str, dict[str, str]]

    async def create_session(self, name: str | None, hint: str = "session", *,
                             cwd: str | None = None, origin: str | None = None) -> "Session": ...

    async def close_session(self, name: str) -> None: ...

    def update_meta(self, session: "Session") -> None: ...

    async def meta_written(self) -> None: ...

    def local(self, name: str | None) -> "Session | None": ...


@dataclass(frozen=True)
class View:
    """How the caller shows an answer: a rendering option its front end sends
    with its calls (the MCP server's and the CLI's routers, the CLI's quick
    path on the host, the TUI's joins), so that what differs between front
    ends is theirs to say and no command tests who called. A call that says
    nothing gets its kind of front end's (`View.of`)."""

    #: how hints name commands and arguments: "mcp" (tool names, camelCase),
    #: "cli" (command words, --options); None: command words, camelCase
    names: str | None = None
    #: the caller shows each scope in a pane of its own, cuts values at its
    #: width and keeps the whole activity log on screen: the block scopes are
    #: not merged into the locals, no value's true length is asked for (an
    #: evaluation each), and the activity answers its last 100 entries unbudgeted
    panes: bool = False

    def to_wire(self) -> dict[str, Any]:
        # vars, not asdict (a deep copy of flat fields, 1% of an MCP server's time per call)
        return {k: v for k, v in vars(self).items() if v}

    @classmethod
    def from_wire(cls, raw: Any) -> "View | None":
        if not isinstance(raw, dict):
            return None
        names = raw.get("names")
        return cls(names=names if names in ("mcp", "cli") else None,
                   panes=raw.get("panes") is True)

    @classmethod
    def of(cls, origin: str | None) -> "View":
        """What a front end of this kind shows, for a call that does not say
        (a client of an older version, a script that joins under a front
        end's name): declared here once, so no command asks who called."""
        return FRONT_END_VIEWS.get(origin or "", cls())


FRONT_END_VIEWS: dict[str, View] = {
    "mcp": View(names="mcp"), "cli": View(names="cli"),
    "tui": View(panes=True), "web": View(panes=True),  # the TUI, in a terminal or a browser
}


#: the View of the call running (set by execute, as models.CURRENT_CLIENT is),
#: for what a command builds deep below its handler (the context of a stop)
CURRENT_VIEW: ContextVar[View] = ContextVar("current_view", default=View())


@dataclass
class CommandContext:
    hub: SessionHost | None  # the sessions this process hosts; None in a front end
    origin: str  # tui / cli / mcp: who did it, for the activity log
    session: "Session | None" = None
    client_cwd: str | None = None  # where relative paths from this client are rooted
    session_name: str | None = None
    view: View = field(default_factory=View)  # how the caller shows the answer


Handler = Callable[[CommandContext, Any], Awaitable[Result]]


@dataclass
class CliSpec:
    """How the command appears on the command line. `path` is the subcommand words
    (e.g. ("break", "add")); `positional` names argument fields taken positionally;
    `build`/`adapt` override generation for commands whose CLI shape differs from
    their argument model (FILE:LINE, PROGRAM ARGS...)."""

    path: tuple[str, ...]
    aliases: tuple[tuple[str, ...], ...] = ()
    positional: tuple[str, ...] = ()
    build: Callable[[argparse.ArgumentParser], None] | None = None
    adapt: Callable[[argparse.Namespace], dict[str, Any]] | None = None
    fixed: dict[str, Any] = field(default_factory=dict)  # args preset by this CLI form
    help: str | None = None  # this form's one line, where it differs from the command's


@dataclass
class Command:
    id: str
    help: str  # one line, for --help, the palette and `?`
    args: type[Args]
    result: type[Result]
    handler: Handler
    description: str = ""  # for agents: when to use it and what comes back
    read_only: bool = False
    destructive: bool = False
    needs_session: bool = True  # resolves a session before the handler runs
    creates_session: bool = False
    cli: list[CliSpec] = field(default_factory=list)
    mcp: str | None = None
    keys: tuple[str, ...] = ()  # default TUI bindings (the keymap can override)
    tui_action: bool = True  # offered in the TUI palette and bindable
    #: the session states in which the command applies (None: any); front ends grey
    #: it out otherwise, and the session refuses it with a message that says why
    applies_in: frozenset[str] | None = None
    next_steps: Callable[[Any], list[str]] | None = None  # ids of commands that usually follow
    log_activity: bool = True

    @property
    def mcp_description(self) -> str:
        return (self.description or self.help).strip()


REGISTRY: dict[str, Command] = {}


def register(command: Command) -> Command:
    if command.id in REGISTRY:
        raise ValueError(f"command {command.id} declared twice")
    REGISTRY[command.id] = command
    return command


def get(command_id: str) -> Command:
    try:
        return REGISTRY[command_id]
    except KeyError:
        from backends.errors import InvalidInput

        raise InvalidInput(
            f"Unknown command {command_id!r}. Commands: {', '.join(sorted(REGISTRY))}."
        ) from None


def all_commands() -> list[Command]:
    return list(REGISTRY.values())


def next_step_models(cmd: Command, result: Any) -> list[str]:
    """The MCP names of the tools that usually follow (at most three): a
    compact hint, since its text rides on every answer."""
    if cmd.next_steps is None:
        return []
    steps: list[str] = []
    for target_id in cmd.next_steps(result):
        target = REGISTRY.get(target_id)
        if target is not None:
            steps.append(target.mcp or target.id)
    return steps[:3]
