"""What the parts of LldbCliBackend ask of one another.

The backend is one class made of mixins, one per job (backend.py lists them);
each types its `self` as `LldbHost`: the state that backend.py's `__init__`
sets, what every Backend has, and the methods the mixins call across. Declared
here, below them all, so that no mixin imports the class it is mixed into.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Protocol, TypeVar

from ..base import Configure
from ..models import BackendEvent, BreakpointSpec, BreakpointState, Thread
from ..process import ChildProcess
from ..program_pipes import ProgramPipes
from .protocol import LldbChannel, Markers

T = TypeVar("T")


class LldbHost(Protocol):
    # ---------------------------------------------------------- from Backend
    child_pids: list[int]
    debuggee_pid: int | None
    post_mortem: bool

    def emit(self, event: BackendEvent) -> None: ...

    # ---------------------------------------------------------- the lldb process
    _lldb_argv: list[str] | None
    startup_timeout: float
    command_timeout: float
    _child: ChildProcess | None
    _channel: LldbChannel | None
    _markers: Markers
    _workdir: str | None
    _interrupt_fd: int | None
    _pipes: ProgramPipes | None

    async def _start(self, cwd: str) -> None: ...
    async def _open_interrupt(self, fifo: str) -> int | None: ...
    def _send_interrupt(self) -> None: ...
    def _require_channel(self) -> LldbChannel: ...
    def _require_stopped(self) -> None: ...
    async def _run(self, command: str, timeout: float) -> str: ...
    async def _helper(self, function: str, *args: Any) -> dict[str, Any]: ...
    async def _helper_locked(self, function: str, *args: Any) -> dict[str, Any]: ...
    def _flush_output(self) -> None: ...
    def _on_log(self, payload: dict[str, Any]) -> None: ...

    # ---------------------------------------------------------- the session's start and end
    _attached: bool
    _disposing: bool
    #: HOST:PORT of a gdb-remote server, when attached to one
    _remote: str | None
    _tail_task: asyncio.Task[None] | None
    _pid_task: asyncio.Task[None] | None

    async def dispose(self) -> None: ...
    async def _open_core(self, program: str, core: str, cwd: str,
                         configure: Configure) -> None: ...
    async def _create_target(self, program: str, core: str | None = None,
                             path_map: dict[str, str] | None = None) -> None: ...
    def _note_pid(self, pid: int) -> None: ...
    async def _find_launched_pid(self, program: str) -> None: ...

    # ---------------------------------------------------------- breakpoints
    _source_breakpoints: dict[str, list[int]]
    _function_breakpoints: list[int]
    _breakpoint_seen: dict[int, tuple[bool, int | None]]

    async def _create_breakpoints(
        self, places: list[dict[str, Any]], specs: list[BreakpointSpec]
    ) -> tuple[list[BreakpointState], list[int]]: ...
    def _note_breakpoints(self, info: dict[str, Any]) -> None: ...

    # ---------------------------------------------------------- runs and stops
    #: idle -> stopped <-> running -> exited/detached; "dead" when lldb went away
    _state: str
    _run_task: asyncio.Task[None] | None
    _run_done: asyncio.Event
    _pause_requested: bool
    _pause_task: asyncio.Task[None] | None
    _quiet_interrupt: bool
    _quiet_stopped: bool
    _stop_on_entry: bool
    _first_stop: bool
    _last_stop_signal: int | None
    _stop_id: int | None
    _threads_seen: list[Thread]
    _terminated: bool
    _orphan_killer: asyncio.Task[None]

    async def _step(self, command: str, thread_id: int) -> None: ...
    async def _keep_interrupting(self) -> None: ...
    async def _begin_run(
        self, command: str, thread_id: int | None = None, announce: bool = True
    ) -> None: ...
    async def _follow_run(self, future: asyncio.Future[str], command: str | None) -> None: ...
    def _report(self, info: dict[str, Any], output: str) -> None: ...
    def _real_stop(self, info: dict[str, Any]) -> bool: ...
    def _report_stopped(
        self, info: dict[str, Any], reason_override: str | None = None
    ) -> None: ...
    def _after_raw(self, info: dict[str, Any]) -> None: ...
    async def _interrupt_quietly(self, timeout: float = 10.0) -> None: ...
    async def _await_stop(self, timeout: float) -> None: ...
    async def _while_stopped(self, work: Callable[[], Awaitable[T]]) -> T: ...
    def _remember_threads(self, info: dict[str, Any]) -> None: ...
    def _emit_terminated(self, reason: str) -> None: ...
    def _on_lldb_exit(self) -> None: ...
