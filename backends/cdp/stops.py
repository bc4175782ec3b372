"""Stops and run control: what each pause the inspector reports is shown as
(or the backend's own pauses, resumed unseen), continue, the steps, pause.
A Node program is one thread to the user."""

from __future__ import annotations

from typing import Any, Protocol

from ..models import BackendEvent, ContinuedEvent, StoppedEvent, Thread
from .breakpoints import _Breakpoint
from .connection import CdpConnection

THREAD_ID = 1


class StopsHost(Protocol):
    """What StopsMixin needs of the backend it is mixed into."""

    _paused: dict[str, Any] | None
    #: the pause was shown to the user (not one of the backend's own)
    _visible_stop: bool
    _last_action: str | None
    _stop_on_entry: bool
    _bp_by_cdp_id: dict[str, _Breakpoint]

    def emit(self, event: BackendEvent) -> None: ...
    def _require_conn(self) -> CdpConnection: ...
    def _require_paused(self) -> dict[str, Any]: ...
    def _set_pause(self, params: dict[str, Any]) -> None: ...
    def _clear_pause(self) -> None: ...

    # its own, called from one another
    def _show_stop(self, event: StoppedEvent) -> None: ...
    def _show_asked_pause(self) -> None: ...
    async def _resume_quietly(self) -> None: ...
    async def _resume(self, method: str, action: str | None) -> None: ...


class StopsMixin:
    """Stops, run control and threads of CdpBackend (backend.py)."""

    async def _on_paused(self: StopsHost, params: dict[str, Any]) -> None:
        reason = params.get("reason", "other")
        data = params.get("data") or {}
        reasons = {reason}
        if reason == "ambiguous":
            reasons = {r.get("reason", "") for r in data.get("reasons") or []}
        hit_ids = []
        for cdp_id in params.get("hitBreakpoints") or []:
            bp = self._bp_by_cdp_id.get(cdp_id)
            if bp is not None and bp.id not in hit_ids:
                hit_ids.append(bp.id)
        self._set_pause(params)
        if "Break on start" in reasons and not hit_ids:
            if self._stop_on_entry:
                self._stop_on_entry = False
                self._show_stop(StoppedEvent(
                    reason="entry", thread_id=THREAD_ID, description="Paused on entry",
                ))
            elif self._last_action == "pause":
                self._show_asked_pause()
            else:
                await self._resume_quietly()
            return
        if "instrumentation" in reasons and not hit_ids:
            if self._last_action == "pause":
                self._show_asked_pause()
            else:
                await self._resume_quietly()
            return
        action, self._last_action = self._last_action, None
        if reasons & {"exception", "promiseRejection"}:
            text = _exception_text(data)
            uncaught = data.get("uncaught")
            description = (
                "Paused on uncaught exception" if uncaught
                else "Paused on exception" if uncaught is None
                else "Paused on caught exception"
            )
            event = StoppedEvent(
                reason="exception", thread_id=THREAD_ID, description=description, text=text,
            )
        elif hit_ids:
            event = StoppedEvent(
                reason="breakpoint", thread_id=THREAD_ID, hit_breakpoint_ids=list(hit_ids),
                description="Paused on breakpoint",
            )
        elif action == "step":
            event = StoppedEvent(reason="step", thread_id=THREAD_ID)
        elif action == "pause":
            event = StoppedEvent(reason="pause", thread_id=THREAD_ID, description="Paused")
        elif reasons & {"other", "debugCommand"}:
            event = StoppedEvent(
                reason="breakpoint", thread_id=THREAD_ID,
                description="Paused on a debugger statement",
            )
        else:
            event = StoppedEvent(
                reason="pause", thread_id=THREAD_ID, description=f"Paused ({reason})",
            )
        self._show_stop(event)

    def _show_asked_pause(self: StopsHost) -> None:
        # A pause asked for just after the start lands on a pause of our own
        # (break on start, a script's instrumentation): that pause is the one
        # asked for, not one to resume from.
        self._last_action = None
        self._show_stop(StoppedEvent(reason="pause", thread_id=THREAD_ID, description="Paused"))

    def _show_stop(self: StopsHost, event: StoppedEvent) -> None:
        self._visible_stop = True
        self.emit(event)

    async def _resume_quietly(self: StopsHost) -> None:
        self._clear_pause()
        await self._require_conn().request("Debugger.resume")

    def _on_resumed(self: StopsHost, params: dict[str, Any]) -> None:
        if self._paused is not None:
            was_visible = self._visible_stop
            self._clear_pause()
            if was_visible:
                self.emit(ContinuedEvent(thread_id=THREAD_ID))

    async def continue_(self: StopsHost, thread_id: int | None) -> None:
        if self._paused is None:
            return
        await self._resume("Debugger.resume", None)

    async def step_over(self: StopsHost, thread_id: int) -> None:
        await self._resume("Debugger.stepOver", "step")

    async def step_in(self: StopsHost, thread_id: int) -> None:
        await self._resume("Debugger.stepInto", "step")

    async def step_out(self: StopsHost, thread_id: int) -> None:
        await self._resume("Debugger.stepOut", "step")

    async def _resume(self: StopsHost, method: str, action: str | None) -> None:
        conn = self._require_conn()
        self._require_paused()
        # Marked running before the request: the next stop may arrive right
        # behind the reply and must not be cleared by it.
        self._last_action = action
        self._clear_pause()
        self.emit(ContinuedEvent(thread_id=THREAD_ID))
        await conn.request(method)

    async def pause(self: StopsHost, thread_id: int | None) -> None:
        conn = self._require_conn()
        if self._paused is not None:
            if not self._visible_stop:
                self._show_asked_pause()  # paused quietly (start-up): say so
            return
        self._last_action = "pause"
        await conn.request("Debugger.pause")

    async def threads(self: StopsHost) -> list[Thread]:
        return [Thread(id=THREAD_ID, name="main", stopped=self._paused is not None)]


def _exception_text(data: dict[str, Any]) -> str | None:
    description = data.get("description")
    if description:
        return str(description).split("\n", 1)[0]
    if "value" in data:
        return str(data["value"])
    return data.get("className")
