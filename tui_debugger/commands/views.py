"""Result models: what every front end receives. Capped and redacted where
they carry program data, so no answer is 200,000 characters long."""

from typing import Any, Literal

from pydantic import Field, PrivateAttr

from backends.models import Breakpoint, SourceLocation, empty_list

from ..output import OutputLine
from ..models import ActivityEntry, ClientInfo, StopInfo, Watch
from .registry import ActionResult, Result, ResultPart


class FrameView(ResultPart):
    index: int
    name: str
    file: str | None = None
    line: int | None = None
    selected: bool = False
    has_source: bool = False


class VariableView(ResultPart):
    name: str
    value: str
    type: str | None = None
    path: str  # pass as `path` to drill down
    has_children: bool = False
    child_count: int | None = None
    changed: bool = False
    value_truncated: bool = False


class SourceLineView(ResultPart):
    line: int
    text: str
    current: bool = False
    breakpoint: bool = False


class ContextResult(Result):
    session: str
    state: str
    file: str | None = Field(None, description="the file shown, when asked for by name")
    #: the stop is in the frame of this client's last answer (a step's): its
    #: file and function were said there, so an agent's answer says the line
    _same_frame: bool = PrivateAttr(default=False)
    stop: StopInfo | None = None
    thread_id: int | None = None
    frame: FrameView | None = None
    source: list[SourceLineView] = Field(default_factory=empty_list)
    source_note: str | None = None
    locals: list[VariableView] = Field(default_factory=empty_list)
    locals_note: str | None = None
    exit_code: int | None = None
    others: list[ActivityEntry] = Field(
        default_factory=empty_list,
        description="what other clients (the person's TUI, the CLI, an agent) did lately",
    )


class SessionStatus(ActionResult):
    session: str
    state: str
    adapter: str | None = None
    program: str | None = None
    pid: int | None = None
    host_pid: int | None = None
    stop: StopInfo | None = None
    exit_code: int | None = None
    terminated_reason: str | None = None
    breakpoints: int = 0
    output_cursor: int = 0
    clients: list[ClientInfo] = Field(default_factory=empty_list)
    selected_thread_id: int | None = None
    selected_frame_index: int = 0
    post_mortem: bool = False  # a core dump: it reads, it does not run
    root_without_program: bool = Field(False, description="the session stands for a tree of "
                                       "processes (a Ray cluster): it runs no program itself, "
                                       "its child sessions do")
    python: str | None = Field(None, description="the interpreter that runs a Python program, "
                               "and why that one")
    capabilities: list[str] = Field(default_factory=empty_list, description="what the debugger "
                                    "under the session can do: its Capabilities flags that are on")
    python_short: str | None = Field(None, description="the same, short, when it is not "
                                     "tui-debugger's own environment")
    message: str | None = None
    restored: list[str] = Field(default_factory=empty_list,
                                description="breakpoints brought back from the last run")
    context: ContextResult | None = Field(None, description="where it stopped, after a launch that stopped")
    #: A restart that runs under the same adapter and interpreter as before: an
    #: agent's answer does not say them again (its launch answer did).
    _as_before: bool = PrivateAttr(default=False)


class SessionListEntry(ResultPart):
    name: str
    pid: int  # the process hosting the session
    program: str | None = None
    adapter: str | None = None
    state: str | None = None
    program_pid: int | None = None  # the program's, while it runs or is stopped
    created_at: float
    current: bool = False  # the one this client reaches without naming one
    parent: str | None = Field(None, description="the session of the parent process (a child "
                               "process's session)")
    project: str | None = None  # the project it was started from
    this_project: bool = False  # started from the asking client's project
    started_by: str | None = None  # tui / cli / mcp


class WarmHostView(ResultPart):
    """The user's warm host (tui_debugger/warm.py): a host kept for the next session."""
    pid: int | None = Field(None, description="the warm host's pid (none: only a warm screen waits)")
    project: str | None = None
    python: str | None = None
    until: float | None = Field(None, description="when it ends unless a session takes it (epoch s)")
    screen: int | None = Field(None, description="the pid of the warm screen: the TUI imported, "
                               "for the next `run` in a terminal")


class WarmStopped(Result):
    stopped: bool
    pid: int | None = None
    screen: int | None = Field(None, description="the warm screen's pid, if one was ended too")


class SessionList(Result):
    sessions: list[SessionListEntry]
    warm_host: WarmHostView | None = None


class BreakpointResult(ActionResult):
    breakpoint: Breakpoint
    note: str | None = None


class BreakpointList(Result):
    breakpoints: list[Breakpoint]


class BreakpointsRemoved(ActionResult):
    removed: list[int]
    remaining: int


class RunResult(ActionResult):
    """The answer to continue / step / await: where the program stopped, or that
    it is still running (then call debug_wait), or that it ended."""

    status: Literal["stopped", "running", "terminated"]
    command: str
    waited_ms: int = 0
    stop: StopInfo | None = None
    context: ContextResult | None = None
    exit_code: int | None = None
    message: str | None = None
    others: list[ActivityEntry] = Field(
        default_factory=empty_list,
        description="what other clients (the person's TUI, the CLI, an agent) did lately",
    )


class StackResult(Result):
    thread_id: int
    frames: list[FrameView]
    total: int | None = None
    truncated: bool = False


class VariablesResult(Result):
    frame_index: int
    scope: str
    path: str | None = None
    scopes: list[str] = Field(default_factory=empty_list)
    variables: list[VariableView]
    total: int | None = None
    truncated: bool = False
    note: str | None = None


class EvaluateResult(ActionResult):
    expression: str
    value: str
    type: str | None = None
    has_children: bool = False
    children: list[VariableView] = Field(default_factory=empty_list)
    children_total: int | None = None
    value_truncated: bool = False


class CompletionView(ResultPart):
    label: str
    text: str = Field(description="replaces `length` characters of the text from `start`")
    start: int = Field(description="0-based offset in the text")
    length: int = 0
    type: str | None = None


class CompletionsResult(Result):
    supported: bool = Field(description="false: the debugger does not complete; the items are "
                            "the frame's names (a value's members after a dot) that fit")
    items: list[CompletionView] = Field(default_factory=empty_list)


class ThreadView(ResultPart):
    id: int
    name: str
    selected: bool = False
    stopped: bool | None = None
    #: why it stopped (breakpoint, step, pause...), when it stopped on its own
    reason: str | None = None
    #: held at a breakpoint, not yet shown: the next continue stops there
    held: bool = False
    #: its innermost frame with a source line, while stopped
    function: str | None = None
    location: SourceLocation | None = None


class ThreadsResult(Result):
    threads: list[ThreadView]


class FrameSelected(ActionResult):
    frame: FrameView
    context: ContextResult | None = None


class OutputResult(Result):
    entries: list[OutputLine]
    next_cursor: int = Field(description="pass as `since` to read only newer output")
    dropped: int = Field(description="entries evicted from the buffer before you read them")
    truncated: bool = Field(description="more output is waiting after next_cursor")
    earlier_lines: int = Field(0, description="lines kept before the ones shown (a tail)")
    note: str | None = Field(None, description="what came before and how to page, for a tail")


class RawCommandResult(ActionResult):
    command: str
    output: str
    unsafe: bool = False
    truncated: bool = False


class AdapterView(ResultPart):
    name: str
    available: bool
    path: str | None = None
    version: str | None = None
    install_hint: str = ""
    note: str = ""


class DoctorResult(Result):
    adapters: list[AdapterView]
    python: str
    platform: str
    program_python: str | None = Field(None, description="the Python that would run a Python "
                                       "program started from here, and why that one")
    warm_host: WarmHostView | None = None


class ScriptHit(ResultPart):
    type: str
    value: Any = None


class ScriptResult(Result):
    results: list[ScriptHit]


class TraceResult(ActionResult):
    """debug_trace: the expression's typed value at each hit, in order."""

    results: list[ScriptHit]
    status: Literal["running", "stopped", "terminated"] = Field(
        description="the program after the trace: running on, stopped elsewhere, or ended")
    message: str | None = None


class ActivityResult(Result):
    entries: list[ActivityEntry]
    earlier: int = Field(0, description="entries that matched before the ones shown")
    note: str | None = None


class InstructionView(ResultPart):
    address: str
    instruction: str
    bytes: str | None = None
    symbol: str | None = None
    current: bool = False  # the frame's pc
    #: set on the first instruction of each source line: where it comes from
    file: str | None = None
    line: int | None = None
    source: str | None = None  # that line's text, when the file is here


class DisassemblyResult(Result):
    target: str  # what was asked: a function, an address, or the frame
    pc: str | None = None
    instructions: list[InstructionView] = Field(default_factory=empty_list)


class MemoryResult(Result):
    expression: str
    address: str
    count: int
    hex: str  # the bytes as hex, two digits each
    rows: list[str] = Field(default_factory=empty_list)  # 16 bytes a row: address, hex, ASCII


class WatchResult(ActionResult):
    watches: list[Watch] = Field(default_factory=empty_list)
    removed: list[Watch] = Field(default_factory=empty_list)
    message: str | None = None
class ExceptionFilterView(ResultPart):
    id: str
    label: str
    enabled: bool
    default: bool = False


class ExceptionBreakpointsResult(ActionResult):
    filters: list[ExceptionFilterView]
    message: str


class SetVariableResult(ActionResult):
    variable: VariableView
    message: str


class InputSent(ActionResult):
    message: str
