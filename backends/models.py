"""Domain models shared by every backend and every front end.

These are the only shapes that cross the backend boundary. A backend that can
fill a field fills it; one that cannot leaves the documented default, so the
session and the front ends never ask which backend they are talking to.
"""

import sys
import types
from enum import Enum
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field


def _without_pydantic_plugins() -> None:
    """Our models are the debugger's own, built in its own processes: a pydantic
    plugin installed beside it (one that traces or logs validations) has
    nothing of the user's to observe there. Looking for plugins reads every
    installed distribution's entry points when the first model is built: 4-5
    ms of each process's start (the TUI's, the host's, the MCP server's) in a
    venv of 60 distributions, more in a larger one; and pydantic's loader
    imports importlib.metadata to do it, 10-11 ms more. So, while nothing has
    imported that loader yet, a loader that finds no plugins takes its place
    (pydantic imports it by name, `from ._loader import get_plugins`, when it
    builds a model's validator). The debuggee is another process and keeps
    its plugins. A pydantic whose loader is already loaded is told it has no
    plugins; one without this loader is left as it is."""
    name = "pydantic.plugin._loader"
    loaded = sys.modules.get(name)
    if loaded is None:
        import importlib.util

        try:
            found = importlib.util.find_spec(name) is not None  # finds, does not import
        except ImportError:  # pragma: no cover - pydantic moved it
            found = False
        if found:
            none = types.ModuleType(name, "No pydantic plugins in the debugger's own processes.")
            none.get_plugins = lambda: ()  # type: ignore[attr-defined]
            none._plugins = {}  # type: ignore[attr-defined]
            sys.modules[name] = none
        return
    if getattr(loaded, "_plugins", False) is None:
        loaded._plugins = {}


_without_pydantic_plugins()


def empty_list() -> list:
    """A new `[]`: the default_factory of our models' list fields. pydantic
    reads each factory's signature at every schema it builds, and a builtin
    `list`'s is parsed from its text (~0.1 ms a field, ~10 ms of a start);
    a function's is read from its code."""
    return []


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, defer_build=True)


# --------------------------------------------------------------------------- sources


class SourceLocation(Model):
    """A place in source code. `path` is absolute when the backend knows the file;
    `source_reference` is set instead for sources that exist only in the adapter
    (generated code, disassembly)."""

    path: str | None = None
    line: int = 0
    column: int = 0
    name: str | None = None
    source_reference: int | None = None

    def short(self) -> str:
        import os

        where = os.path.basename(self.path) if self.path else (self.name or "<unknown>")
        return f"{where}:{self.line}" if self.line else where


# --------------------------------------------------------------------------- breakpoints


class BreakpointSpec(Model):
    """What a user asked for. Exactly one of (`path` + `line`) or `function`."""

    path: str | None = None
    line: int | None = None
    function: str | None = None
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None
    enabled: bool = True


class BreakpointState(Model):
    """What the backend answered for one spec, in the order the specs were given."""

    verified: bool = False
    line: int | None = None  # where the adapter actually placed it
    message: str | None = None  # why it is unverified, in the adapter's words
    backend_id: int | str | None = None


class Breakpoint(Model):
    """A breakpoint in the session's registry: the spec, its state, and who set it."""

    id: int
    spec: BreakpointSpec
    verified: bool = False
    line: int | None = None
    message: str | None = None
    set_by: str = "user"
    hits: int = 0

    @property
    def kind(self) -> Literal["line", "function"]:
        return "function" if self.spec.function else "line"

    def describe(self) -> str:
        spec = self.spec
        if spec.function:
            where = f"function {spec.function}"
        else:
            where = f"{spec.path}:{spec.line}"
            if self.line and self.line != spec.line:
                where += f" (moved to line {self.line})"
        extras = []
        if spec.condition:
            extras.append(f"if {spec.condition}")
        if spec.hit_condition:
            extras.append(f"hit {spec.hit_condition}")
        if spec.log_message:
            extras.append(f"log {spec.log_message!r}")
        if not spec.enabled:
            extras.append("disabled")
        if not self.verified and (spec.enabled or self.message not in (None, "disabled")):
            # (a disabled one is not sent: "unverified: disabled" said it twice, and
            # read as a failure)
            extras.append("unverified" + (f": {self.message}" if self.message else ""))
        return where + (" [" + ", ".join(extras) + "]" if extras else "")


# --------------------------------------------------------------------------- threads & stack


class Thread(Model):
    id: int
    name: str = ""
    stopped: bool | None = None  # None when the backend does not say
    #: why it is stopped (breakpoint, step, pause...), when it stopped on its own
    reason: str | None = None
    #: held at a breakpoint it reached while another thread's stop was shown; the
    #: next continue shows it
    held: bool = False
    #: its innermost frame with a source line (function, file:line), when stopped
    function: str | None = None
    location: SourceLocation | None = None


class Frame(Model):
    """One stack frame. `id` is the backend's handle (valid until the next resume);
    `index` is its position, 0 being the innermost."""

    id: int
    index: int
    name: str
    location: SourceLocation | None = None
    module: str | None = None
    instruction_pointer: str | None = None
    presentation: str | None = None  # "subtle" / "label" frames are library or glue code


class ScopeKind(str, Enum):
    locals = "locals"
    arguments = "arguments"
    globals = "globals"
    registers = "registers"
    closure = "closure"
    other = "other"


class Scope(Model):
    name: str
    kind: ScopeKind = ScopeKind.other
    ref: int  # variables reference; pass to Backend.variables
    expensive: bool = False
    named_count: int | None = None
    indexed_count: int | None = None


class Variable(Model):
    """A value. `ref` > 0 means it has children, fetched lazily with
    Backend.variables(ref)."""

    name: str
    value: str
    type: str | None = None
    ref: int = 0
    named_count: int | None = None
    indexed_count: int | None = None
    evaluate_name: str | None = None


class Instruction(Model):
    """One machine instruction. `location` is set where the debug info maps the
    instruction to a source line (the first instruction of each line, at least)."""

    address: str  # hex, "0x..."
    instruction: str  # mnemonic and operands, as the debugger prints them
    bytes: str | None = None  # hex bytes separated by spaces
    symbol: str | None = None  # function (+offset) the instruction belongs to
    location: SourceLocation | None = None


AccessType = Literal["write", "read", "readWrite"]


class DataBreakpointSpec(Model):
    """A watchpoint: stop when the memory behind `expression` is accessed.
    `frame_id` is the frame whose scope the expression is read in."""

    expression: str
    access: AccessType = "write"
    frame_id: int | None = None
    #: once known, the watched bytes themselves: re-sent after the frame is gone
    address: str | None = None
    size: int | None = None
    #: the session's id of the watch (a backend that keeps watches by id: debugpy)
    key: int | None = None
    #: stop only when this is true (Python: `new` and `old` are the values)
    condition: str | None = None
    #: stop from this change on (1: the first)
    hit_count: int | None = None
    #: record each change with its line, never stop
    log_only: bool = False


class DataBreakpointState(Model):
    verified: bool = False
    message: str | None = None
    address: str | None = None  # where the watched bytes start
    size: int | None = None
    type: str | None = None  # the expression's type, to read the value back
    backend_id: int | str | None = None
    #: the value when it was set, read by the backend (debugpy)
    value: str | None = None
    #: what it is (debugpy: local, global, attribute, item)
    kind: str | None = None


class Completion(Model):
    """One completion proposal (DAP CompletionItem). `text` replaces the `length`
    characters of the typed text that begin at `start` (0-based); without
    `start` it goes in at the cursor."""

    label: str
    text: str
    type: str | None = None
    start: int | None = None
    length: int = 0


class EvalResult(Model):
    value: str
    type: str | None = None
    ref: int = 0
    named_count: int | None = None
    indexed_count: int | None = None


# --------------------------------------------------------------------------- requests


#: LaunchRequest.stdin: keep the program's input open for Backend.send_input.
STDIN_PIPE = "pipe"


class LaunchRequest(Model):
    program: str
    args: list[str] = Field(default_factory=empty_list)
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    stop_on_entry: bool = False
    #: a core dump of `program`: post-mortem, inspection only, no run control
    core_file: str | None = None
    #: the program's standard input: None, end of file at once (never a terminal or
    #: pipe the program could wait on forever unasked); STDIN_PIPE, a pipe the front
    #: ends write to (Backend.send_input), where the backend can; else a file to read
    stdin: str | None = None
    # Adapter-specific fields from a launch configuration (launch.json), passed through.
    extra: dict[str, Any] = Field(default_factory=dict)


class AttachRequest(Model):
    pid: int | None = None
    host: str | None = None
    port: int | None = None
    wait_for: str | None = None  # process name to wait for (lldb)
    program: str | None = None  # executable, when the backend needs symbols up front
    #: remote source path prefix -> local prefix, for a program built elsewhere
    path_map: dict[str, str] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)


# --------------------------------------------------------------------------- capabilities


class ExceptionFilter(Model):
    id: str
    label: str
    default: bool = False


class Capabilities(Model):
    """What a backend can do. Each flag defaults to the answer that makes the
    front ends hide or refuse the feature (a documented no-op default)."""

    conditional_breakpoints: bool = False
    hit_conditional_breakpoints: bool = False
    log_points: bool = False
    function_breakpoints: bool = False
    pause: bool = True
    terminate: bool = True
    restart: bool = False
    step_back: bool = False
    set_variable: bool = False
    raw_commands: bool = False  # Backend.raw_command runs the debugger's own command language
    disassemble: bool = False
    read_memory: bool = False
    attach_pid: bool = False
    attach_wait_for: bool = False
    attach_remote: bool = False  # attach HOST:PORT (a gdb-remote, dlv, debugpy or node server)
    instruction_step: bool = False  # Backend.step_instruction
    data_breakpoints: bool = False  # Backend.set_data_breakpoints
    #: the backend tells each change itself (WatchChangeEvent), with its place;
    #: the session does not read the values again at a stop (debugpy)
    data_breakpoint_events: bool = False
    core_files: bool = False  # LaunchRequest.core_file
    program_input: bool = False  # LaunchRequest.stdin and Backend.send_input
    completions: bool = False  # Backend.completions
    goto: bool = False  # Backend.goto: move the next statement to a line (DAP gotoTargets + goto)
    exception_filters: list[ExceptionFilter] = Field(default_factory=empty_list)


# --------------------------------------------------------------------------- events


class StoppedEvent(Model):
    kind: Literal["stopped"] = "stopped"
    reason: str  # breakpoint, step, exception, pause, entry, signal, goto, function breakpoint ...
    thread_id: int | None = None
    description: str | None = None
    text: str | None = None  # exception message / signal name
    #: an exception's traceback as the debugger formats it (DAP exceptionInfo details)
    traceback: str | None = None
    all_threads_stopped: bool = True
    hit_breakpoint_ids: list[int | str] = Field(default_factory=empty_list)  # backend ids
    #: the thread stopped, but a continue on its way let it go on at once (debugpy
    #: resumes every stopped thread): a hit to report, not a stop to show
    let_go: bool = False
    #: with let_go: it was paused as the continue went out and let go before
    #: its place could be read, so a breakpoint hit there (if it was on one's
    #: line) went on unseen: told, never silently lost
    place_unread: bool = False


class ContinuedEvent(Model):
    kind: Literal["continued"] = "continued"
    thread_id: int | None = None
    all_threads_continued: bool = True


class OutputEvent(Model):
    kind: Literal["output"] = "output"
    category: str = "stdout"  # stdout, stderr, console (adapter messages), important
    text: str


class ExitedEvent(Model):
    kind: Literal["exited"] = "exited"
    exit_code: int | None = None


class TerminatedEvent(Model):
    kind: Literal["terminated"] = "terminated"
    reason: str | None = None
    #: the debugger itself died (crashed, was killed), not the program
    adapter_died: bool = False


class BreakpointChangedEvent(Model):
    kind: Literal["breakpoint"] = "breakpoint"
    backend_id: int | str
    state: BreakpointState
    reason: str = "changed"


class ThreadEvent(Model):
    kind: Literal["thread"] = "thread"
    thread_id: int
    reason: Literal["started", "exited"]


class ChildProcessEvent(Model):
    """The program started a child process that the debugger follows (debugpy's
    `startDebugging`): a session of its own attaches to it with `attach`."""

    kind: Literal["child"] = "child"
    pid: int | None = None
    #: the process that started it, when it is not the announcing session's own
    #: (a grandchild announces itself to the root's session: Node)
    parent_pid: int | None = None
    name: str = ""
    attach: AttachRequest


class WatchChangeEvent(Model):
    """A watched value changed (or the watch ended: `gone` says why), told by
    the backend before the stop it causes, if it causes one."""

    kind: Literal["watch_change"] = "watch_change"
    key: int
    old: str | None = None
    new: str | None = None
    location: SourceLocation | None = None
    function: str | None = None
    thread_id: int | None = None
    hit: int = 0
    #: the program stops for it (else a log-only watch's record, or a condition false)
    stopped: bool = False
    note: str | None = None
    gone: str | None = None


class CopiedWatch(Model):
    """A watch a forked child process holds, copied from its parent with the
    rest of its memory (debugpy: the agent's state)."""

    key: int
    expression: str
    condition: str | None = None
    hit_count: int | None = None
    log_only: bool = False
    kind: str | None = None
    value: str | None = None
    hits: int = 0
    #: the process it was set in
    origin_pid: int | None = None


class WatchesCopiedEvent(Model):
    """This process was forked from one with watches: it holds copies of them,
    and tells their changes as its own (WatchChangeEvent)."""

    kind: Literal["watches_copied"] = "watches_copied"
    watches: list[CopiedWatch] = Field(default_factory=empty_list)
    pid: int | None = None


BackendEvent = Annotated[
    Union[
        StoppedEvent,
        ContinuedEvent,
        OutputEvent,
        ExitedEvent,
        TerminatedEvent,
        BreakpointChangedEvent,
        ThreadEvent,
        ChildProcessEvent,
        WatchChangeEvent,
        WatchesCopiedEvent,
    ],
    Field(discriminator="kind"),
]
