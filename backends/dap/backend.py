"""The generic DAP backend: one Backend over any debug adapter.

What differs between adapters (how to start one, how to word launch and attach
arguments, quirks) lives in an `AdapterProfile` (profile.py); everything else
is DapBackend's, one module per job, which it combines:

    launching.py    launch and attach, the adapter process, the end
    breakpoints.py  source, function and data breakpoints, exception filters
    stops.py        the run state, stopped events, threads, run control
    values.py       stack, scopes, variables, evaluate, memory, disassembly

Here: the state they share (typed for them by DapHost, host.py), the event
queue, and the helpers every job uses. Events are translated on one consumer
task, in the order the adapter sent them, so a stop whose exception text needs
an extra request cannot overtake the output or continue that came before or
after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from ..base import Backend, EventSink
from ..errors import CommandFailed, InvalidInput
from ..models import (
    BackendEvent,
    ContinuedEvent,
    ExitedEvent,
    OutputEvent,
    StoppedEvent,
    TerminatedEvent,
)
from ..procinfo import death_by
from .breakpoints import BreakpointsMixin
from .client import DapClient, Message
from .launching import LaunchingMixin
from .profile import AdapterProfile
from .stops import DOUBT_S, PLACE_UNREAD, PLACE_WAIT_S, TRACEBACK_LINES, StopsMixin
from .values import ValuesMixin, user_error

__all__ = ["AdapterProfile", "DapBackend", "RUNNING_MESSAGE", "DOUBT_S", "PLACE_WAIT_S",
           "PLACE_UNREAD", "TRACEBACK_LINES", "user_error"]

log = logging.getLogger("backends.dap")

RUNNING_MESSAGE = "The program is running; pause it or wait for it to stop."


class DapBackend(LaunchingMixin, BreakpointsMixin, StopsMixin, ValuesMixin, Backend):
    """A Backend over a DAP adapter. Subclasses name their profile."""

    name = "dap"
    profile_class: type[AdapterProfile] = AdapterProfile

    def __init__(self, emit: EventSink, *, profile: AdapterProfile | None = None) -> None:
        super().__init__(emit)
        self.profile = profile or self.profile_class(self)
        self.follows_children = self.profile.follows_children
        self.remote_attach_stops = self.profile.remote_attach_stops
        self.client: DapClient | None = None
        self._inspection_lock = asyncio.Lock()
        #: the initialize response, as the adapter sent it
        self.adapter_capabilities: dict[str, Any] = {}
        self._state = "idle"  # idle, starting, configuring, running, stopped, ended
        self._launched = False
        self._adapter_children: list[tuple[int, int]] = []
        self._orphan_killer: asyncio.Task[None] | None = None
        self._stop_generation = 0
        self._last_stopped_thread: int | None = None
        # Which threads are stopped, for adapters that stop threads one at a time
        # (debugpy without stopAllThreadsOnSuspend): a late `continued` of one
        # thread must not make the program look running while another is stopped.
        self._stopped_threads: set[int] = set()
        self._all_threads_stopped = False
        #: a continue or step has been sent and not answered (see disconnect)
        self._resume_unanswered = 0
        self._continue_unanswered = 0
        self._stopped_when_continued: set[int] = set()
        self._continue_answered_at = 0.0
        #: threads a continue or step let go that have not yet said they run
        #: (per-thread stops: each says `continued` once it wakes)
        self._unwoken: set[int] = set()
        # Stops read while a continue was on its way (see _doubtful_stop)
        self._doubtful: dict[int, Message] = {}
        #: path -> {line: backend id} of breakpoints without condition or log message
        self._plain_breakpoints: dict[str, dict[int, int | str]] = {}
        # All-stop over per-thread stops: the others are paused once per stop
        self._others_paused = False
        self._pause_asked = False  # someone asked for a pause (not our all-stop)
        self._exception_filters_sent = False
        self._disposed = False
        self._terminated_emitted = False
        self._running_reported = False
        self._frame_ips: dict[int, str] = {}
        #: a step was asked for and has not stopped yet / stopped for another reason
        self._stepping = False
        self._step_interrupted = False
        self._adapter_terminated = asyncio.Event()
        #: HOST:PORT of a remote server this backend attached to
        self._remote_target: str | None = None
        self._events: asyncio.Queue[Message | BackendEvent | None] = asyncio.Queue()
        self._consumer: asyncio.Task[None] | None = None

    # ================================================================ events

    async def _consume_events(self) -> None:
        while True:
            item = await self._events.get()
            try:
                if item is None:
                    return
                event = item if not isinstance(item, dict) else await self._translate(item)
                if event is not None:
                    self._publish(event)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("%s backend: translating an event failed", self.profile.name)
            finally:
                self._events.task_done()

    def _publish(self, event: BackendEvent) -> None:
        if isinstance(event, TerminatedEvent):
            if self._terminated_emitted:
                return
            self._terminated_emitted = True
        elif isinstance(event, ContinuedEvent):
            if self._running_reported:
                return  # our own continue and the adapter's say the same thing
            self._running_reported = True
        elif isinstance(event, StoppedEvent):
            self._running_reported = False
        try:
            self.emit(event)
        except Exception:
            log.exception("%s backend: event sink failed", self.profile.name)

    async def _drain_events(self, timeout: float) -> None:
        if self._consumer is None or self._consumer.done():
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._events.join(), timeout)

    async def _translate(self, message: Message) -> BackendEvent | None:
        """The session's event for a DAP event, by the event's name (nvim-dap's
        `event_<name>`); None: nothing the session needs to hear."""
        handler = getattr(self, f"event_{message.get('event')}", None)
        if handler is None:
            return None
        return await handler(message.get("body") or {})

    async def event_output(self, body: Message) -> BackendEvent | None:
        category = str(body.get("category") or "console")
        output = body.get("output")
        if category == "telemetry" or not output:
            return None
        return OutputEvent(category=category, text=str(output))

    async def event_exited(self, body: Message) -> BackendEvent | None:
        code = body.get("exitCode")
        if not isinstance(code, int):
            return ExitedEvent(exit_code=None)
        if self.client is not None:
            # a signal, said as the native backends say it (-15: "killed by SIGTERM")
            code = self.client.signal_behind(code) or code
        # lldb-dap says "exit code 15" for a death by the SIGTERM it stopped at
        return ExitedEvent(exit_code=death_by(code, self.last_stop_signal))

    async def event_terminated(self, body: Message) -> BackendEvent | None:
        return TerminatedEvent(reason="the program ended")

    @property
    def stop_ids_carry_over(self) -> bool:  # type: ignore[override]
        """Backend.stop_ids_carry_over: the adapter's, where a stop's reads may go
        out together (not one at a time: the launch may lift that, debugpy)."""
        return self.profile.stop_ids_carry_over and not self.profile.inspect_one_at_a_time

    # ================================================================ helpers

    def _client(self) -> DapClient:
        if self.client is None:
            raise InvalidInput("No program is being debugged; launch or attach first.")
        return self.client

    async def _request(
        self, command: str, arguments: dict[str, Any] | None = None, timeout: float | None = None
    ) -> Message:
        client = self._client()
        try:
            if self.profile.inspect_one_at_a_time and command in _INSPECTION:
                async with self._inspection_lock:
                    return await client.request(command, arguments, timeout=timeout)
            return await client.request(command, arguments, timeout=timeout)
        except CommandFailed as exc:
            if self._state == "running" and command in _NEEDS_STOP:
                raise InvalidInput(RUNNING_MESSAGE) from exc
            raise

    def _require_idle(self) -> None:
        if self._state != "idle" or self._disposed:
            raise InvalidInput(
                f"This {self.profile.name} backend already ran a session; create a new one."
            )

    def _require_session(self) -> None:
        if self._state in ("idle", "starting") and self.client is None:
            raise InvalidInput("No program is being debugged; launch or attach first.")
        if self._state == "ended" or self._disposed:
            raise InvalidInput("The program has ended; start it again to debug it.")

    def _require_stopped(self, action: str | None = None) -> None:
        self._require_session()
        if self._state == "stopped":
            return
        if action is not None and self._state == "running":
            raise InvalidInput(
                f"The program is already running; pause it before you {action}."
            )
        if self._state == "running":
            raise InvalidInput(RUNNING_MESSAGE)
        raise InvalidInput("The program has not started yet; wait for it to stop.")


#: requests the adapter answers from the stopped thread (see inspect_one_at_a_time)
_INSPECTION = {"stackTrace", "scopes", "variables", "evaluate", "setVariable", "setExpression",
               "completions", "exceptionInfo"}
_NEEDS_STOP = {"stackTrace", "scopes", "variables", "evaluate", "next", "stepIn", "stepOut",
               "continue", "disassemble", "readMemory", "dataBreakpointInfo"}
