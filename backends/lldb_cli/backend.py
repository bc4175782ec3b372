"""The LLDB CLI backend: one long-lived `lldb --no-lldbinit` per session.

How it drives lldb (details and measurements in docs/backends/native.md):

- lldb runs in synchronous mode (`SetAsync(False)`): with piped stdin an
  asynchronous lldb hands lines written while the program runs to the program,
  and the protocol hangs. In synchronous mode a `process continue` or a step
  returns only when the program stops, so a run command holds the command
  channel until then; `continue_()` returns once it is written and a waiter
  task reports the stop.
- A paused program is asked for with a byte on a FIFO that a thread inside
  lldb's Python reads; it calls SBProcess.SendAsyncInterrupt. SIGINT to lldb
  does nothing in this mode.
- Structured data (threads, frames, variables, breakpoints) comes from the
  Python helper tui_debugger_lldb.py as JSON; raw commands are the only text
  that reaches a person unparsed.
- The program's stdout and stderr go to two FIFOs in a private directory
  (target.output-path / error-path, backends/program_pipes.py), read into
  OutputEvents as written; the program reads /dev/null, never lldb's stdin.
  FIFOs, not files: a program flooding its output wrote 2.8 GB to $TMPDIR in
  9 s; a pipe holds 64 KiB and the program waits for us to read, as it would
  on a terminal.

The class is one mixin per job, each typing its `self` as host.LldbHost:
lifecycle.py (launch, attach, core files, disconnect, dispose), breakpoints.py,
run_control.py (continue, steps, pause, raw commands; each run followed to its
stop), inspection.py (threads, frames, values, memory) and lldb_process.py
(the lldb process and the commands sent to it). Its state is set here.
"""

from __future__ import annotations

import asyncio

from ..base import Backend, EventSink
from ..models import Capabilities, Thread
from ..process import ChildProcess
from ..program_pipes import ProgramPipes
from .breakpoints import BreakpointsMixin, parse_hit_condition
from .inspection import SCOPE_KINDS, InspectionMixin
from .lifecycle import EXIT_STATUS_RE, LifecycleMixin
from .lldb_process import HELPER, HELPER_PATH, NOT_STARTED, RUNNING, LldbProcessMixin
from .protocol import LldbChannel, Markers
from .run_control import LEFT_IN_EXPRESSION, UNWOUND, RunControlMixin

__all__ = [
    "EXIT_STATUS_RE", "HELPER", "HELPER_PATH", "LEFT_IN_EXPRESSION", "NOT_STARTED", "RUNNING",
    "SCOPE_KINDS", "UNWOUND", "LldbCliBackend", "parse_hit_condition",
]


class LldbCliBackend(LifecycleMixin, BreakpointsMixin, RunControlMixin, InspectionMixin,
                     LldbProcessMixin, Backend):
    name = "lldb-cli"

    def __init__(
        self,
        emit: EventSink,
        lldb_argv: list[str] | None = None,
        *,
        startup_timeout: float = 20.0,
        command_timeout: float = 30.0,
    ) -> None:
        super().__init__(emit)
        # A gdb-remote server holds its program stopped until we continue it.
        self.remote_attach_stops = True
        self.capabilities = Capabilities(
            conditional_breakpoints=True,
            hit_conditional_breakpoints=True,
            log_points=True,
            function_breakpoints=True,
            pause=True,
            terminate=True,
            raw_commands=True,
            disassemble=True,
            read_memory=True,
            attach_pid=True,
            attach_wait_for=True,
            attach_remote=True,
            instruction_step=True,
            data_breakpoints=True,
            core_files=True,
            set_variable=True,
        )
        self._lldb_argv = list(lldb_argv) if lldb_argv else None
        self.startup_timeout = startup_timeout
        self.command_timeout = command_timeout
        self._child: ChildProcess | None = None
        self._channel: LldbChannel | None = None
        self._markers = Markers()
        self._workdir: str | None = None
        self._interrupt_fd: int | None = None
        # idle -> stopped <-> running -> exited/detached; "dead" when lldb went away
        self._state = "idle"
        self._run_task: asyncio.Task[None] | None = None
        self._run_done: asyncio.Event = asyncio.Event()
        self._pause_requested = False
        self._quiet_interrupt = False
        self._quiet_stopped = False
        self._stop_on_entry = False
        self._first_stop = True
        #: the signal the last stop was at (a death by it follows as its number)
        self._last_stop_signal: int | None = None
        self._stop_id: int | None = None
        self._threads_seen: list[Thread] = []
        self._source_breakpoints: dict[str, list[int]] = {}
        self._function_breakpoints: list[int] = []
        self._breakpoint_seen: dict[int, tuple[bool, int | None]] = {}
        self._terminated = False
        self._pipes: ProgramPipes | None = None
        self._tail_task: asyncio.Task[None] | None = None
        self._pid_task: asyncio.Task[None] | None = None
        self._pause_task: asyncio.Task[None] | None = None
        self._attached = False
        self._disposing = False
        #: HOST:PORT of a gdb-remote server, when attached to one
        self._remote: str | None = None
