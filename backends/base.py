"""The one async contract every backend implements.

The session owns state (breakpoint registry, selected thread and frame, output
buffer); a backend owns a debugger process and translates. A backend never
imports from tui_debugger and never knows which front end asked.

Lifecycle:

    backend = SomeBackend(emit)            # emit(event) is called for every event
    await backend.launch(request, configure)   # or attach(request, configure)
        # the backend starts its debugger, then awaits `configure()` exactly once,
        # at the moment breakpoints and exception filters may be set (for DAP:
        # after `initialized`, before `configurationDone`). The session's
        # configure sets every breakpoint it holds through the methods below.
    ... run control and inspection ...
    await backend.disconnect(terminate=True)   # or terminate=False to detach
    await backend.dispose()                    # never raises; ends every child

Run-control methods return once the debugger accepted the request; the stop that
follows arrives as a StoppedEvent. Inspection methods raise DebuggerError (with
a code) when the program is running or a handle is stale.
"""

from __future__ import annotations

import abc
from typing import Awaitable, Callable, ClassVar

from .errors import NotSupported
from .models import (
    AttachRequest,
    BackendEvent,
    BreakpointSpec,
    BreakpointState,
    Capabilities,
    Completion,
    DataBreakpointSpec,
    DataBreakpointState,
    EvalResult,
    Frame,
    Instruction,
    LaunchRequest,
    Scope,
    Thread,
    Variable,
)

EventSink = Callable[[BackendEvent], None]
Configure = Callable[[], Awaitable[None]]


class Backend(abc.ABC):
    #: adapter name as users type it: debugpy, lldb-dap, lldb-cli, dlv, node, simctl
    name: ClassVar[str] = "backend"

    #: a frame that is still there at the next stop keeps its id, and its locals
    #: their reference (pydevd names a frame by the frame object): a session may
    #: ask for the last stop's locals by those ids before the stack answers, and
    #: uses the answers only once the stack and the scopes show them the same
    #: (a class default; DapBackend derives it from its adapter)
    stop_ids_carry_over: bool = False

    def __init__(self, emit: EventSink) -> None:
        self._emit = emit
        self.capabilities = Capabilities()
        #: pids of processes this backend started (adapter, debuggee); for status and tests
        self.child_pids: list[int] = []
        #: the debuggee's pid once known
        self.debuggee_pid: int | None = None
        #: a core dump is open: everything reads, nothing runs
        self.post_mortem = False
        #: a step resumes only the stepping thread, so threads held at a breakpoint
        #: stay there through it (debugpy with steppingResumesAllThreads off);
        #: otherwise a step lets them run past their hit
        self.steps_keep_others_held = False
        #: the program's child processes are followed: each is announced with a
        #: ChildProcessEvent and becomes a session of the tree (debugpy, a
        #: launched Node); otherwise the session says once that they are not
        self.follows_children = False
        #: attaching to HOST:PORT (a gdb-remote server, dlv's) finds the program
        #: stopped where the server holds it, so the session waits for that stop
        self.remote_attach_stops = False

    def emit(self, event: BackendEvent) -> None:
        self._emit(event)

    def not_supported(self, ability: str) -> NotSupported:
        """The typed refusal of an optional ability this backend lacks (its
        Capabilities flag is False), in this backend's words: what a base
        method below raises, and what the session raises without calling it."""
        return NotSupported(UNSUPPORTED[ability].format(name=self.name))

    def slow_first_stop_hint(self, program_python: str | None) -> str | None:
        """Why a launch's first stop may be slow with this debugger, added to
        the session's notice when it waits long for it. `program_python`: the
        version line of the program's interpreter, when known. Default: nothing."""
        return None

    def running(self) -> bool:
        """The adapter has told that no thread is stopped any more (its
        `continued` may still be on its way to the session)."""
        return False

    # ----------------------------------------------------------------- start/end

    @abc.abstractmethod
    async def launch(self, request: LaunchRequest, configure: Configure) -> None: ...

    @abc.abstractmethod
    async def attach(self, request: AttachRequest, configure: Configure) -> None: ...

    @abc.abstractmethod
    async def disconnect(self, terminate: bool) -> None:
        """End the debug session: kill the debuggee (terminate=True) or leave it
        running (terminate=False, i.e. detach)."""

    @abc.abstractmethod
    async def dispose(self) -> None:
        """Best effort, never raises: close connections and end every child process."""

    # ----------------------------------------------------------------- breakpoints

    @abc.abstractmethod
    async def set_source_breakpoints(
        self, path: str, specs: list[BreakpointSpec]
    ) -> list[BreakpointState]:
        """Replace all breakpoints in `path` with `specs` (DAP semantics). Returns one
        state per spec, in order. Disabled specs are not sent and come back unverified.
        `path` is absolute and normal: the command layer made it so where it entered."""

    async def set_function_breakpoints(self, specs: list[BreakpointSpec]) -> list[BreakpointState]:
        """Replace all function breakpoints with `specs`."""
        if specs:
            raise NotSupported(
                f"The {self.name} backend has no function breakpoints; use FILE:LINE instead."
            )
        return []

    async def set_exception_filters(self, filter_ids: list[str]) -> None:
        """Which exceptions stop the program (ids from capabilities.exception_filters)."""
        return None

    async def send_input(self, text: str, eof: bool = False) -> None:
        """Write `text` to the program's standard input (launched with stdin=STDIN_PIPE);
        `eof` closes it afterwards."""
        raise NotSupported(
            f"The {self.name} backend cannot give a program its input; use a terminal, or "
            "read a file in the program."
        )

    async def set_variable(self, container_ref: int, name: str, value: str) -> Variable:
        """Give the child `name` of the container `container_ref` a new value (an
        expression in the program's language); answers the variable as it is now."""
        raise NotSupported(
            f"The {self.name} backend cannot change a variable; assign it in the console "
            "(e.g. `x = 5` in Python) where the language allows."
        )

    async def return_value(self, thread_id: int) -> Variable | None:
        """What the function a step out just left returned, where the debugger
        knows it (lldb: the thread's stop return value). None: not known."""
        return None

    # ----------------------------------------------------------------- run control

    @abc.abstractmethod
    async def continue_(self, thread_id: int | None) -> None: ...

    @abc.abstractmethod
    async def step_over(self, thread_id: int) -> None: ...

    @abc.abstractmethod
    async def step_in(self, thread_id: int) -> None: ...

    @abc.abstractmethod
    async def step_out(self, thread_id: int) -> None: ...

    @abc.abstractmethod
    async def pause(self, thread_id: int | None) -> None: ...

    # ----------------------------------------------------------------- inspection

    @abc.abstractmethod
    async def threads(self) -> list[Thread]: ...

    @abc.abstractmethod
    async def stack_trace(
        self, thread_id: int, start: int = 0, levels: int = 20
    ) -> tuple[list[Frame], int | None]:
        """Frames `start`..`start+levels` of a stopped thread, and the total frame
        count when the backend knows it."""

    @abc.abstractmethod
    async def scopes(self, frame_id: int) -> list[Scope]: ...

    @abc.abstractmethod
    async def variables(self, ref: int, start: int = 0, count: int = 0) -> list[Variable]:
        """Children of a scope or a structured value. count=0 means all; a backend
        that cannot page returns all and the session slices."""

    @abc.abstractmethod
    async def evaluate(
        self, expression: str, frame_id: int | None, context: str = "repl"
    ) -> EvalResult:
        """Evaluate in a frame (context: repl, watch, hover, clipboard). An
        expression that raises is a DebuggerError whose message is the error text."""

    # ----------------------------------------------------------------- optional

    async def raw_command(self, command: str, timeout: float) -> str:
        """The debugger's own command language (LLDB). DAP backends run it through
        evaluate in the repl context where the adapter supports that."""
        raise NotSupported(
            f"The {self.name} backend has no raw command language; use evaluate instead."
        )

    async def completions(self, text: str, column: int, frame_id: int | None) -> list[Completion]:
        """What could complete `text` at `column` (0-based: the cursor's offset in
        the text) in a frame's scope. Where Capabilities.completions is False this
        answers nothing; the front ends then complete from the frame's names."""
        return []

    async def source(self, source_reference: int) -> str:
        raise NotSupported(f"The {self.name} backend cannot fetch source by reference.")

    async def disassemble(self, address: str, count: int = 32, offset: int = 0) -> list[Instruction]:
        """`count` instructions from `offset` instructions after (or, negative,
        before) `address` (hex)."""
        raise self.not_supported("disassemble")

    async def resolve_address(self, expression: str, frame_id: int | None) -> str:
        """The address (hex) a function name or an address expression stands for."""
        raise NotSupported(f"The {self.name} backend cannot resolve addresses.")

    async def read_memory(self, address: str, count: int) -> bytes:
        raise self.not_supported("read_memory")

    async def step_instruction(self, thread_id: int, over: bool) -> None:
        """One machine instruction; `over` steps over calls (nexti), else into (stepi)."""
        raise NotSupported(
            f"The {self.name} backend cannot step by instruction; use lldb-dap, lldb-cli "
            "or dlv for native code."
        )

    async def set_data_breakpoints(
        self, specs: list[DataBreakpointSpec]
    ) -> list[DataBreakpointState]:
        """Replace all watchpoints with `specs`; one state per spec, in order."""
        if specs:
            raise self.not_supported("data_breakpoints")
        return []

    async def restart(self) -> None:
        raise NotSupported(f"The {self.name} backend cannot restart; stop and run again.")

    async def goto(self, thread_id: int, path: str, line: int) -> None:
        """Move the thread's next statement to path:line without running the code
        between (set next statement); its stop follows, reason "goto"."""
        raise NotSupported(
            f"The {self.name} backend cannot jump to a line (set next statement); "
            "use debugpy, or run to the line instead (until)."
        )


#: Backend.not_supported's words for each optional ability, by its Capabilities flag
UNSUPPORTED: dict[str, str] = {
    "disassemble": ("The {name} backend cannot disassemble; use lldb-dap, lldb-cli or dlv "
                    "for native code."),
    "read_memory": "The {name} backend cannot read memory; use lldb-dap or lldb-cli.",
    "data_breakpoints": ("The {name} backend has no watchpoints (data breakpoints); use lldb-dap "
                         "or lldb-cli, or a conditional breakpoint where the value changes."),
}
