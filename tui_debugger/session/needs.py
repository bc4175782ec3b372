"""What each part of Session needs from the class it is mixed into, as Protocols.

`Session` (session/__init__.py) is its constructor's state and one mixin per
job (fanout.py, guards.py, stops.py, ...). A mixin uses state the constructor
sets and methods other mixins define; rather than name Session (the package
imports the mixins, so that is a loop), each says what it uses here:

  XOffers   the methods of part X that other parts call
  XNeeds    what part X uses and does not define: the state it reads or sets
            (declared by Session.__init__), and the offers of the parts it
            calls, each taken whole (they say which parts X leans on)

Each mixin subclasses its XNeeds for type checkers only, and `object` when it
runs (`if TYPE_CHECKING:` in its module), so nothing here runs: Session,
which has every part, is what fulfils them all. This module imports no part.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, Callable, Protocol

from backends.base import Backend
from backends.models import (
    AttachRequest,
    Breakpoint,
    BreakpointChangedEvent,
    ChildProcessEvent,
    Frame,
    LaunchRequest,
    Scope,
    StoppedEvent,
    Thread,
    Variable,
    WatchChangeEvent,
)

from .. import events
from ..models import ActivityEntry, ClientInfo, Origin, SessionState, StopInfo, Watch, WatchChange
from ..output import OutputBuffer
from .subscription import Subscription

# --- What each part offers the others (the bases below follow Session's order) ---


class FanOutOffers(Protocol):
    """fanout.py: telling, and the changes that are always told."""

    def publish(self, event: events.Event) -> None: ...
    def add_output(self, category: str, text: str, origin: Origin = "session") -> int: ...
    def record_activity(self, origin: Origin, command: str, summary: str = "", ok: bool = True,
                        client: str | None = None) -> None: ...
    def set_state(self, state: SessionState, origin: Origin = "session") -> None: ...
    def _end_of_run(self, reason: str | None, origin: Origin = "session") -> None: ...
    async def wait_for_state(self, predicate: Callable[[], bool], timeout: float | None) -> bool: ...


class GuardsOffers(Protocol):
    """guards.py: the checks before a call, and the backend they let one use."""

    def _require_state(self, allowed: set[SessionState], what: str) -> None: ...
    def _live_backend(self, what: str) -> Backend: ...
    def _backend_now(self) -> Backend: ...
    def _refuse_post_mortem(self, what: str) -> None: ...


class StopsOffers(Protocol):
    """stops.py: reading a stop, forgetting the last one's reads, the threads."""

    async def _handle_stop(self, event: StoppedEvent) -> None: ...
    def _invalidate_caches(self) -> None: ...
    async def threads(self, with_frames: bool = False) -> list[Thread]: ...


class RunControlOffers(Protocol):
    """control.py: waiting for a stop on its way."""

    async def settle(self, timeout: float | None = None) -> None: ...


class InspectionOffers(Protocol):
    """inspection.py: the frames and the scopes of a stop, and its view."""

    async def frame(self, index: int | None = None, thread_id: int | None = None) -> Frame: ...
    async def _frames_for(self, thread_id: int) -> tuple[list[Frame], int | None]: ...
    async def _read_scopes(self, frame_id: int) -> list[Scope]: ...
    def _wants_stop_view(self) -> bool: ...
    async def _prefetch_stop_view(self, generation: int) -> None: ...


class BreakpointsOffers(Protocol):
    """breakpoints.py: the session's ids of the backend's, and telling changes."""

    def _apply_breakpoint_change(self, event: BreakpointChangedEvent) -> None: ...
    async def _drop_breakpoint(self, bp_id: int) -> None: ...
    def _publish_breakpoints(self, origin: Origin = "session") -> None: ...
    def _session_ids_for(self, backend_ids: list[int | str]) -> list[int]: ...


class WatchpointsOffers(Protocol):
    """watches.py: what the watched values did, and telling it."""

    def _publish_watches(self, origin: Origin = "session") -> None: ...
    async def _watch_changes(self, frame_id: int | None,
                             thread_id: int | None = None) -> list[WatchChange]: ...
    def _on_watch_change(self, event: WatchChangeEvent) -> None: ...
    def _end_program_watches(self) -> None: ...


# --- What each part needs ------------------------------------------------------


class FanOutNeeds(Protocol):
    """fanout.FanOut: the state it tells and keeps its listeners in."""

    state: SessionState
    exit_code: int | None
    output: OutputBuffer
    activity: deque[ActivityEntry]
    clients: dict[str, ClientInfo]
    _subscribers: set[Subscription]
    _listeners: list[Any]
    _event_seq: int
    _activity_seq: int
    _seen_by: dict[str, int]
    _last_activity: float
    _state_changed: asyncio.Event


class GuardsNeeds(Protocol):
    """guards.Guards: the state its refusals read."""

    state: SessionState
    adapter: str | None
    adapter_died: str | None
    exit_code: int | None
    backend: Backend | None
    _restarting: bool


class Guarded(GuardsOffers, RunControlOffers, Protocol):
    """What a method under guards.guarded is called on: the checks, and settle."""


class StopsNeeds(FanOutOffers, GuardsOffers, RunControlOffers, InspectionOffers,
                 BreakpointsOffers, WatchpointsOffers, Protocol):
    """stops.Stops: a stop is read with every other part's help."""

    state: SessionState
    backend: Backend | None
    stop: StopInfo | None
    last_stop: StopInfo | None
    last_stop_generation: int
    exit_code: int | None
    terminated_reason: str | None
    adapter_died: str | None
    end_requested: bool
    breakpoints: dict[int, Breakpoint]
    watches: dict[int, Watch]
    run_to_ids: set[int]
    entry_breakpoint_id: int | None
    selected_thread_id: int | None
    selected_frame_index: int
    on_child: Callable[[Any, ChildProcessEvent], None] | None
    _all_threads_stopped: bool
    _backend_gen: int
    _frames: dict[int, tuple[list[Frame], int | None]]
    _scopes: dict[int, asyncio.Future[list[Scope]]]
    _variables: dict[int, asyncio.Future[list[Variable]]]
    _view_ids: dict[int, tuple[int, int]]
    _held: deque[StoppedEvent]
    _thread_stops: dict[int, str]
    _live_threads: set[int] | None
    _passed_hits: list[int]
    _last_activity: float
    _pause_requested: bool
    _resumed_by: Origin | None
    _run_generation: int
    _stepping_out_of: str | None
    _stop_expected: bool
    _stop_overtaken: asyncio.Task[None] | None
    _stop_task: asyncio.Task[None] | None
    _stop_task_thread: int | None


class RunControlNeeds(FanOutOffers, GuardsOffers, StopsOffers, Protocol):
    """control.RunControl: the run's state, and the stop it starts reading."""

    state: SessionState
    adapter: str | None
    backend: Backend | None
    stop: StopInfo | None
    selected_thread_id: int | None
    resume_unanswered: str | None
    _held: deque[StoppedEvent]
    _last_how: str | None
    _pause_requested: bool
    _resumed_by: Origin | None
    _run_generation: int
    _stepping_out_of: str | None
    _stop_expected: bool
    _stop_task: asyncio.Task[None] | None
    _stop_task_thread: int | None
    _stop_waiters: int
    _thread_stops: dict[int, str]


class InspectionNeeds(FanOutOffers, GuardsOffers, StopsOffers, RunControlOffers, Protocol):
    """inspection.Inspection: the stop's caches and what is selected in it."""

    state: SessionState
    backend: Backend | None
    clients: dict[str, ClientInfo]
    stack_levels: int
    selected_thread_id: int | None
    selected_frame_index: int
    _frames: dict[int, tuple[list[Frame], int | None]]
    _scopes: dict[int, asyncio.Future[list[Scope]]]
    _variables: dict[int, asyncio.Future[list[Variable]]]
    _last_how: str | None
    _run_generation: int
    _stop_waiters: int
    _values_before: dict[str, str]
    _values_generation: int | None
    _values_now: dict[str, str]


class BreakpointRegistryNeeds(FanOutOffers, GuardsOffers, Protocol):
    """breakpoints.BreakpointRegistry: the registry's state and where files are."""

    state: SessionState
    backend: Backend | None
    breakpoints: dict[int, Breakpoint]
    attach_request: AttachRequest | None
    launch_request: LaunchRequest | None
    adapter: str | None
    cwd: str
    exception_filters: list[str] | None
    _backend_ids: dict[int, int | str]
    _bp_lock: asyncio.Lock
    _next_bp_id: int
    _held: deque[StoppedEvent]


class WatchpointsNeeds(FanOutOffers, GuardsOffers, RunControlOffers, InspectionOffers, Protocol):
    """watches.Watchpoints: the watches, and the frame they are set in."""

    state: SessionState
    backend: Backend | None
    watches: dict[int, Watch]
    _next_watch_id: int
    _told_watch_changes: list[WatchChange]
    watch_relay: Callable[[Watch, WatchChange], None] | None
