"""What the DAP backend's jobs need of the backend they make up: `DapHost`.

DapBackend (backend.py) is put together from one mixin per job (launching.py,
breakpoints.py, stops.py, values.py). For a type checker each mixin derives
from DapHost, the state and the methods of other modules it uses, so a mixin
never imports the class it is mixed into; at run time a mixin derives from
object. DapBackend's `__init__` sets the state and says what each field means.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from ..models import BackendEvent, Capabilities, EvalResult
from .client import DapClient, Message
from .profile import AdapterProfile


class DapHost(Protocol):
    """A DapBackend, as its mixins see it."""

    # ------------------------------------------------ Backend's (backends/base.py)
    capabilities: Capabilities
    child_pids: list[int]
    debuggee_pid: int | None

    # ------------------------------------------------ the adapter and its session
    profile: AdapterProfile
    client: DapClient | None
    adapter_capabilities: dict[str, Any]
    _state: str  # idle, starting, configuring, running, stopped, ended
    _launched: bool
    _disposed: bool
    _adapter_children: list[tuple[int, int]]
    _orphan_killer: asyncio.Task[None] | None
    _adapter_terminated: asyncio.Event
    _remote_target: str | None
    _events: asyncio.Queue[Message | BackendEvent | None]
    _consumer: asyncio.Task[None] | None
    _exception_filters_sent: bool
    _plain_breakpoints: dict[str, dict[int, int | str]]

    # ------------------------------------------------ stops and run control
    _stop_generation: int
    _last_stopped_thread: int | None
    _stopped_threads: set[int]
    _all_threads_stopped: bool
    _resume_unanswered: int
    _continue_unanswered: int
    _stopped_when_continued: set[int]
    _continue_answered_at: float
    _unwoken: set[int]
    _doubtful: dict[int, Message]
    _others_paused: bool
    _pause_asked: bool
    _frame_ips: dict[int, str]
    _stepping: bool
    _step_interrupted: bool

    # ------------------------------------------------ backend.py: requests, events
    def _client(self) -> DapClient: ...

    async def _request(self, command: str, arguments: dict[str, Any] | None = None,
                       timeout: float | None = None) -> Message: ...

    def _require_idle(self) -> None: ...

    def _require_session(self) -> None: ...

    def _require_stopped(self, action: str | None = None) -> None: ...

    async def _consume_events(self) -> None: ...

    async def _drain_events(self, timeout: float) -> None: ...

    # ------------------------------------------------ one job's, used by another
    def _note_adapter_children(self) -> None: ...  # launching.py

    async def set_exception_filters(self, filter_ids: list[str]) -> None: ...  # breakpoints.py

    def _on_event(self, message: Message, released: bool = False) -> None: ...  # stops.py

    async def _evaluate(self, expression: str, frame_id: int | None, context: str,
                        timeout: float) -> EvalResult: ...  # values.py
