"""The DAP backend's stops: the run state kept exact as the adapter's events
are read (which threads are stopped, a stop told while a continue was on its
way), stopped and continued events as the session hears them, the threads, and
run control (continue, steps, pause, goto).

A mixin of DapBackend (backend.py), typed through DapHost (host.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from typing import TYPE_CHECKING, Any, Callable

from ..errors import CommandFailed, DebuggerError, InvalidInput, NotSupported
from ..procinfo import signal_number
from ..models import BackendEvent, ContinuedEvent, StoppedEvent, Thread, ThreadEvent
from .client import Message
from .values import _location

if TYPE_CHECKING:
    from .host import DapHost as _Host
else:
    _Host = object  # the protocol types the mixin for a checker only

log = logging.getLogger("backends.dap")

#: how long after a continue's answer a thread it let go may still say it stopped
#: (pydevd's stopped threads poll for the go-ahead every 0.2 s)
DOUBT_S = 0.35
#: how long the place of a thread told stopped is waited for (_plain_breakpoint_at):
#: a stopped thread's stack comes in milliseconds; one let go, never
PLACE_WAIT_S = 1.0
#: _plain_breakpoint_at's answer when the thread's place could not be read
PLACE_UNREAD = "place unread"

#: An exception's traceback is kept to its innermost lines (a stop's answer stays short).
TRACEBACK_LINES = 40


class StopsMixin(_Host):
    """What runs and what is stopped, as the adapter tells it and as we ask."""

    # ------------------------------------------------ the run state, as events are read

    def _on_event(self, message: Message, released: bool = False) -> None:
        """Runs on the reader, in stream order: keep the run state exact here,
        translate later on the consumer."""
        event = message.get("event")
        body = message.get("body") or {}
        if event == "stopped" and self._doubtful_stop(message, release=released):
            return
        if (event == "continued" and body.get("threadId") in self._doubtful
                and not body.get("allThreadsContinued", True)):
            # The continue let it go: not a stop to show, but a hit to tell of.
            stopped = self._doubtful.pop(body["threadId"])
            stopped = {**stopped, "body": {**(stopped.get("body") or {}), "letGo": True}}
            self._events.put_nowait(stopped)
            return
        note = self._NOTES.get(str(event))
        if note is not None and note(self, body) is False:
            return  # noted only: not an event for the session
        self._events.put_nowait(message)

    # What each DAP event changes in the run state, as it is read (_on_event).
    # A note that answers False keeps the event from the session.

    def _note_stopped(self, body: Message) -> None:
        self._stop_generation += 1
        self._unwoken.discard(body.get("threadId"))  # it woke, and stopped again
        self._state = "stopped"
        self._pause_asked = False
        if self.profile.per_thread_stops and not self._others_paused:
            # All-stop, as a person expects: the other threads are paused
            # (their own `pause` stops follow and are shown beside this one).
            self._others_paused = True
            asyncio.get_running_loop().create_task(self._pause_others())
        if body.get("threadId") is not None:
            self._last_stopped_thread = body["threadId"]
            self._stopped_threads.add(body["threadId"])
        if body.get("allThreadsStopped", True):
            self._all_threads_stopped = True
        self._frame_ips.clear()
        if self._stepping and body.get("reason") not in ("step", "goto"):
            self._step_interrupted = True  # a breakpoint (say) came first
        self._stepping = False

    def _note_continued(self, body: Message) -> bool | None:
        if body.get("allThreadsContinued", True) or body.get("threadId") is None:
            self._unwoken.clear()
            self._stopped_threads.clear()
            self._all_threads_stopped = False
        else:
            self._stopped_threads.discard(body["threadId"])
            self._unwoken.discard(body["threadId"])
            if self._all_threads_stopped or self._stopped_threads:
                return False  # one thread went on; the program is still stopped
        if self._state == "stopped":
            self._state = "running"
        return None

    def _note_exited(self, body: Message) -> None:
        self._state = "ended"
        self._unwoken.clear()

    def _note_terminated(self, body: Message) -> None:
        self._state = "ended"
        self._adapter_terminated.set()

    def _note_process(self, body: Message) -> None:
        pid = body.get("systemProcessId")
        if isinstance(pid, int):
            self.debuggee_pid = pid
            if self._launched and pid not in self.child_pids:
                self.child_pids.append(pid)
            self._note_adapter_children()

    _NOTES: dict[str, Callable[["StopsMixin", Message], bool | None]] = {
        "stopped": _note_stopped, "continued": _note_continued, "exited": _note_exited,
        "terminated": _note_terminated, "process": _note_process,
    }

    def _doubtful_stop(self, message: Message, *, release: bool = False) -> bool:
        """A thread's stop read while a continue is on its way, or just after its
        answer, may name a thread the continue then let go: with per-thread stops
        the adapter resumes every stopped thread, and tells each one's `continued`
        only once that thread wakes (pydevd polls every 0.2 s). Such a stop waits
        until that `continued` drops it or DOUBT_S passes."""
        thread = (message.get("body") or {}).get("threadId")
        if release or not self.profile.per_thread_stops or not isinstance(thread, int):
            return False
        in_window = self._continue_unanswered or (
            time.monotonic() < self._continue_answered_at + DOUBT_S)
        # A thread whose stop we had before the continue went out can only be
        # stopping again: that stop is new (a loop's breakpoint, every round).
        if not in_window or thread in self._stopped_when_continued:
            return False
        body = message.get("body") or {}
        if body.get("reason") == "pause" and self._plain_breakpoints:
            # Where it paused, read while it may still be stopped: paused on a
            # breakpoint's line it is a hit, even if the continue then lets it go.
            message = {**message, "body": {**body, "heldAt": asyncio.get_running_loop().create_task(
                self._plain_breakpoint_at(thread))}}
        self._doubtful[thread] = message
        asyncio.get_running_loop().create_task(self._settle_doubt(thread, message))
        return True

    async def _pause_others(self) -> None:
        with contextlib.suppress(DebuggerError):
            # debugpy's adapter pauses every thread whatever the id; a thread
            # already stopped stays as it is.
            await self._request("pause", {"threadId": self._last_stopped_thread or 0})

    async def _settle_doubt(self, thread: int, message: Message) -> None:
        arrived = time.monotonic()
        while self._doubtful.get(thread) is message:
            settled = not self._continue_unanswered and (
                time.monotonic() >= self._continue_answered_at + DOUBT_S)
            if settled or time.monotonic() > arrived + 2 * DOUBT_S + 0.5:
                del self._doubtful[thread]
                body = message.get("body") or {}
                if body.get("reason") == "pause" and not self._pause_asked:
                    held_at = await self._held_at(body)
                    if held_at is None:
                        return  # our all-stop's pause, overtaken by the continue
                    if held_at == PLACE_UNREAD:
                        self._events.put_nowait(self._unread_pause(thread))
                        return
                self._on_event(message, released=True)
                return
            await asyncio.sleep(0.05)

    #: the signal the last stop was at (SIGTERM: 15), None for any other stop
    last_stop_signal: int | None = None

    # ------------------------------------------------ stops, as the session hears them

    async def event_stopped(self, body: Message) -> BackendEvent | None:
        reason = str(body.get("reason") or "unknown")
        text = body.get("text")
        traceback = None
        if reason == "exception":
            found, traceback = await self._exception_info(body)
            text = found or text
        # lldb-dap stops at a signal first, and reports the death by it that
        # may follow as an exit status of the signal's number (event_exited).
        said = f"{text or ''} {body.get('description') or ''}"
        self.last_stop_signal = signal_number(said) if "signal SIG" in said else None
        hit_ids = list(body.get("hitBreakpointIds") or [])
        if reason == "pause" and self._plain_breakpoints and body.get("threadId") is not None:
            held_at = await self._held_at(body)
            if held_at is None and not body.get("letGo"):
                held_at = await self._plain_breakpoint_at(body["threadId"])
            if held_at == PLACE_UNREAD:
                if body.get("letGo"):
                    return self._unread_pause(body["threadId"])
                held_at = None  # shown stopped: its place is read with its stop
            if held_at is not None:
                # Paused on a breakpoint's line before it ran it: pydevd skips
                # the breakpoints of a thread marked suspended, so this is a
                # hit it would have had, and is reported as one.
                reason, hit_ids = "breakpoint", [held_at]
        return StoppedEvent(
            reason=reason,
            thread_id=body.get("threadId"),
            description=body.get("description"),
            text=text,
            traceback=traceback,
            all_threads_stopped=bool(body.get("allThreadsStopped", True)),
            hit_breakpoint_ids=hit_ids,
            let_go=bool(body.get("letGo")),
        )

    @staticmethod
    def _unread_pause(thread_id: int) -> StoppedEvent:
        """A thread paused by the all-stop as a continue went out, and let go
        before its place was read (pydevd drops a suspended thread's frames once
        it sees the go-ahead): its hit, if it was on a breakpoint's line, went on."""
        return StoppedEvent(reason="pause", thread_id=thread_id, let_go=True, place_unread=True)

    async def event_continued(self, body: Message) -> BackendEvent | None:
        return ContinuedEvent(
            thread_id=body.get("threadId"),
            all_threads_continued=bool(body.get("allThreadsContinued", True)),
        )

    async def event_thread(self, body: Message) -> BackendEvent | None:
        reason = body.get("reason")
        if reason in ("started", "exited") and isinstance(body.get("threadId"), int):
            return ThreadEvent(thread_id=body["threadId"], reason=reason)
        return None

    @staticmethod
    async def _held_at(body: Message) -> int | str | None:
        """The breakpoint on whose line a doubtful pause stop was read, if any."""
        task = body.get("heldAt")
        if not isinstance(task, asyncio.Task):
            return None
        with contextlib.suppress(Exception):
            return await asyncio.wait_for(asyncio.shield(task), 10.0)
        return None

    async def _plain_breakpoint_at(self, thread_id: int) -> int | str | None:
        """The plain breakpoint on whose line a thread just told stopped sits.
        Asked whatever the program's state: a pause stop read as a continue went
        out names a thread that may already be let go (its hit lost unless its
        place is read now; pydevd answers from a suspended thread's frames until
        it sees the go-ahead, which it polls for every 0.2 s). One let go before
        the question is never answered: bounded (PLACE_WAIT_S)."""
        try:
            body = await self._request("stackTrace", {
                "threadId": thread_id, "startFrame": 0, "levels": 1}, timeout=PLACE_WAIT_S)
        except DebuggerError:
            return PLACE_UNREAD
        frames = body.get("stackFrames") or []
        place = _location(frames[0]) if frames else None
        if place is None or not place.path:
            return None
        lines = self._plain_breakpoints.get(os.path.abspath(place.path)) or {}
        return lines.get(place.line)

    async def _exception_info(self, stopped: Message) -> tuple[str | None, str | None]:
        """What was thrown (one line) and its traceback, when the adapter says."""
        thread_id = stopped.get("threadId")
        if not self.adapter_capabilities.get("supportsExceptionInfoRequest") or thread_id is None:
            return None, None
        try:
            info = await self._client().request(
                "exceptionInfo", {"threadId": thread_id}, timeout=5.0
            )
        except DebuggerError as exc:
            log.info("exceptionInfo failed: %s", exc)
            return None, None
        details = info.get("details") or {}
        trace = str(details.get("stackTrace") or "").rstrip() if isinstance(details, dict) else ""
        lines = trace.splitlines()
        if len(lines) > TRACEBACK_LINES:
            # A RecursionError's is thousands of lines; the innermost ones say where.
            trace = "\n".join([f"… {len(lines) - TRACEBACK_LINES} lines before", *lines[-TRACEBACK_LINES:]])
        return self.profile.exception_text(info, stopped), trace or None

    # ------------------------------------------------ run control

    def running(self) -> bool:
        return self._state == "running"

    async def continue_(self, thread_id: int | None) -> None:
        self._require_stopped(action="continue")
        thread = thread_id if thread_id is not None else await self._default_thread()
        await self._resume("continue", {"threadId": thread}, thread)

    async def step_over(self, thread_id: int) -> None:
        self._require_stopped(action="step")
        await self._resume("next", {"threadId": thread_id}, thread_id)

    async def step_in(self, thread_id: int) -> None:
        self._require_stopped(action="step")
        await self._resume("stepIn", {"threadId": thread_id}, thread_id)

    async def step_out(self, thread_id: int) -> None:
        self._require_stopped(action="step")
        await self._resume("stepOut", {"threadId": thread_id}, thread_id)

    async def pause(self, thread_id: int | None) -> None:
        self._require_session()
        if self._state == "stopped":
            return
        thread = thread_id if thread_id is not None else await self._default_thread()
        self._pause_asked = True
        await self._request("pause", {"threadId": thread})

    async def _resume(self, command: str, arguments: dict[str, Any], thread_id: int) -> None:
        if self._step_interrupted:
            self._step_interrupted = False
            if self.profile.repl_is_command_language:
                # LLDB keeps a step that a breakpoint interrupted and finishes it at a
                # later continue: F5 after a breakpoint hit during a step-out stopped
                # with "step" where the function returned. Drop it, as gdb does.
                with contextlib.suppress(DebuggerError):
                    await self._evaluate("`thread plan discard 1", None, "repl",
                                         self.profile.request_timeout)
        self._stepping = command in ("next", "stepIn", "stepOut")
        generation = self._stop_generation
        continuing = command == "continue"
        if continuing:
            self._stopped_when_continued = set(self._stopped_threads)
        if self.profile.per_thread_stops:
            # a continue lets every stopped thread go; a step, its own
            self._unwoken = (set(self._stopped_threads) | {thread_id}) if continuing else {thread_id}
        self._resume_unanswered += 1
        self._continue_unanswered += continuing
        try:
            body = await self._request(command, arguments)
        except CommandFailed:
            if await self._ended_instead():
                return  # the program died on its way (a step over os._exit): its end is told
            raise
        finally:
            self._resume_unanswered -= 1
            if continuing:
                self._continue_unanswered -= 1
                self._continue_answered_at = time.monotonic()
        if self._stop_generation != generation or self._state == "ended":
            return  # it already stopped again, or ended; that was reported
        self._stopped_threads.clear()
        self._all_threads_stopped = False
        if continuing:
            self._others_paused = False
        if self._state == "stopped":
            self._state = "running"
        self._events.put_nowait(
            ContinuedEvent(
                thread_id=thread_id,
                all_threads_continued=bool(body.get("allThreadsContinued", True)),
            )
        )

    async def _ended_instead(self, within: float = 2.0) -> bool:
        """Whether a resume that failed did so because the program ended under
        it: debugpy answers a step whose line kills the program with
        "Server[1] disconnected unexpectedly" (its pydevd went away before the
        answer), where a continue, answered first, sees the end as an end."""
        from ..procinfo import pid_alive

        deadline = time.monotonic() + within
        while True:
            if self._state == "ended":
                return True
            pid = self.debuggee_pid
            if pid is not None and not pid_alive(pid):
                return True
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.02)

    async def _default_thread(self) -> int:
        if self._last_stopped_thread is not None:
            return self._last_stopped_thread
        threads = await self.threads()
        if not threads:
            raise InvalidInput("The program has no threads yet; wait for it to start.")
        return threads[0].id

    async def threads(self) -> list[Thread]:
        self._require_session()
        body = await self._request("threads")
        threads = [
            Thread(id=t["id"], name=str(t.get("name") or ""))
            for t in body.get("threads") or []
            if isinstance(t.get("id"), int)
        ]
        for thread in threads:
            if self._state == "running":
                thread.stopped = False
            elif self._state == "stopped":
                thread.stopped = self._all_threads_stopped or thread.id in self._stopped_threads
        return threads

    async def goto(self, thread_id: int, path: str, line: int) -> None:
        if not self.capabilities.goto:
            raise NotSupported(
                f"This {self.profile.name} cannot jump to a line: it offers no gotoTargets "
                "(debugpy and lldb-dap 21 or newer do). Run to the line instead (until)."
            )
        self._require_stopped(action="jump")
        body = await self._request("gotoTargets", {"source": {"path": path}, "line": line})
        targets = [t for t in body.get("targets") or [] if isinstance(t, dict) and "id" in t]
        if not targets:
            raise InvalidInput(
                f"{self.profile.name} cannot jump to {os.path.basename(path)}:{line}: no statement "
                "there it can move to (a blank line, a comment, or another function's code?)."
            )
        try:
            await self._resume("goto", {"threadId": thread_id, "targetId": targets[0]["id"]}, thread_id)
        except CommandFailed as exc:
            raise CommandFailed(f"Could not jump to {os.path.basename(path)}:{line}: "
                                f"{exc.message.strip()}", **exc.details) from exc

    async def step_instruction(self, thread_id: int, over: bool) -> None:
        if not self.capabilities.instruction_step:
            return await super().step_instruction(thread_id, over)
        self._require_stopped(action="step")
        await self._resume("next" if over else "stepIn",
                           {"threadId": thread_id, "granularity": "instruction"}, thread_id)
