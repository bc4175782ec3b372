"""What the backend tells the session, dispatched by the event's type
(_BACKEND_EVENT_HANDLERS), and the stops that follow: reading a stop
(_handle_stop), threads that stop beside the shown one (held for the next
continue, gdb's all-stop way), hits a continue let go, and `threads`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from typing import TYPE_CHECKING, Callable

from backends.errors import DebuggerError
from backends.models import (
    BackendEvent,
    BreakpointChangedEvent,
    ChildProcessEvent,
    ContinuedEvent,
    ExitedEvent,
    OutputEvent,
    Scope,
    StoppedEvent,
    TerminatedEvent,
    Thread,
    ThreadEvent,
    WatchChangeEvent,
    WatchesCopiedEvent,
)

from .. import events
from ..models import SessionState, StopInfo
from .inspection import AskedAhead, first_with_source, locals_scope, start_shared


if TYPE_CHECKING:  # what Stops uses of Session (needs.py)
    from .needs import StopsNeeds as _Needs
else:
    _Needs = object


class Stops(_Needs):
    """Part of Session (see session/__init__.py): backend events, stops, threads."""

    def _sink(self):
        self._backend_gen += 1
        gen = self._backend_gen

        def emit(event: BackendEvent) -> None:
            if gen == self._backend_gen:
                self._on_backend_event(event)

        return emit

    def _on_backend_event(self, event: BackendEvent) -> None:
        self._last_activity = time.monotonic()
        handler = self._BACKEND_EVENT_HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    def _on_output(self, event: OutputEvent) -> None:
        self.add_output(event.category, event.text)

    def _on_stopped(self, event: StoppedEvent) -> None:
        if event.let_go:
            self._report_let_go(event)
            return
        if self._beside_current_stop(event):
            return
        self._invalidate_caches()
        if self._stop_task and not self._stop_task.done():
            self._stop_task.cancel()
        self._stop_task_thread = event.thread_id
        self._stop_task = asyncio.get_running_loop().create_task(self._handle_stop(event))

    def _on_continued(self, event: ContinuedEvent) -> None:
        # A core dump never runs, whatever the adapter says while it loads one.
        post_mortem = self.backend is not None and self.backend.post_mortem
        if post_mortem:
            return
        if self.state == SessionState.stopped:
            self._invalidate_caches()
            self.stop = None
            self.set_state(SessionState.running)
            self.publish(events.Continued(thread_id=event.thread_id))
        elif self._stop_task is not None and not self._stop_task.done():
            # The stop being read is over already (debugpy tells a thread's
            # `continued` when it wakes, which under load can come after its
            # stop): shown, it would be a stop the adapter refuses to continue.
            self._stop_overtaken = self._stop_task

    def _on_exited(self, event: ExitedEvent) -> None:
        self.exit_code = event.exit_code
        self.publish(events.Exited(exit_code=event.exit_code))

    def _on_terminated(self, event: TerminatedEvent) -> None:
        if self.state == SessionState.terminated:
            return
        # When someone asked for the end, say who; the backend only saw it end.
        if not self.end_requested:
            self.terminated_reason = event.reason
            if event.adapter_died:
                self.adapter_died = event.reason or "it exited"
        self.stop = None  # last_stop keeps it for whoever asks what happened
        self._stop_expected = False
        self._invalidate_caches()
        self._end_of_run(event.reason)

    def _on_thread(self, event: ThreadEvent) -> None:
        if self._live_threads is None:
            self._live_threads = set()
        if event.reason == "started":
            self._live_threads.add(event.thread_id)
        else:
            self._live_threads.discard(event.thread_id)
        if event.reason == "exited":
            self._thread_stops.pop(event.thread_id, None)
            self._held = deque(e for e in self._held if e.thread_id != event.thread_id)
        self.publish(events.Threads(thread_id=event.thread_id, reason=event.reason))

    def _on_child_process(self, event: ChildProcessEvent) -> None:
        if self.on_child is not None:
            self.on_child(self, event)

    #: what each kind of backend event does to the session (_on_backend_event)
    _BACKEND_EVENT_HANDLERS: dict[type, Callable[..., None]] = {
        OutputEvent: _on_output,
        StoppedEvent: _on_stopped,
        ContinuedEvent: _on_continued,
        ExitedEvent: _on_exited,
        TerminatedEvent: _on_terminated,
        BreakpointChangedEvent: lambda self, event: self._apply_breakpoint_change(event),
        ThreadEvent: _on_thread,
        ChildProcessEvent: _on_child_process,
        WatchChangeEvent: lambda self, event: self._on_watch_change(event),
        WatchesCopiedEvent: lambda self, event: self._on_watches_copied(event),
    }

    def _report_let_go(self, event: StoppedEvent) -> None:
        """A thread reached a breakpoint while a continue was on its way, and the
        continue let it go on (debugpy resumes every stopped thread): counted as
        a hit and listed with the next stop, never silently lost."""
        bp_ids = self._session_ids_for(event.hit_breakpoint_ids)
        if event.place_unread:
            self.record_activity("session", "hit unseen?",
                                 f"thread {event.thread_id} was paused just as the program was "
                                 "being continued and went on before its place could be read: "
                                 "if it was on a breakpoint's line, that hit was not shown")
            return
        if not bp_ids and event.reason == "pause":
            return  # paused with the others and let go: no hit of its own
        for bp_id in bp_ids:
            self.breakpoints[bp_id].hits += 1
        if event.thread_id is not None:
            self._passed_hits.append(event.thread_id)
        where = ", ".join(f"#{i}" for i in bp_ids) or event.reason
        self.record_activity("session", "hit passed",
                             f"thread {event.thread_id} reached breakpoint {where} while the "
                             "program was being continued, and went on")
        if bp_ids:
            self._publish_breakpoints()

    def take_passed_hits(self) -> list[int]:
        """The threads let go past a breakpoint since the last stop (once)."""
        passed, self._passed_hits = self._passed_hits, []
        return passed

    def _beside_current_stop(self, event: StoppedEvent) -> bool:
        """A stop of another thread while one is shown (or being read): kept
        beside it rather than replacing it. A breakpoint (or exception) hit is held
        for the next continue; a thread that stopped because the program was
        paused is only noted as stopped."""
        if event.thread_id is None:
            return False
        if self.state == SessionState.stopped and self.stop is not None:
            current = self.stop.thread_id
        elif self._stop_task is not None and not self._stop_task.done():
            current = self._stop_task_thread
        else:
            return False
        if current is None or event.thread_id == current:
            return False
        # Paused with the rest of the program: stopped, with no reason of its own.
        self._thread_stops[event.thread_id] = "" if event.reason == "pause" else event.reason
        if event.reason not in ("pause", "entry", "step", "goto"):
            self._held.append(event)
        self.publish(events.Threads(thread_id=event.thread_id, reason="held"))
        return True

    async def _handle_stop(self, event: StoppedEvent) -> None:
        thread_id = event.thread_id
        if thread_id is None:
            with contextlib.suppress(DebuggerError):
                threads = await self.backend.threads() if self.backend else []
                thread_id = threads[0].id if threads else None
        session_bp_ids = self._session_ids_for(event.hit_breakpoint_ids)
        self._all_threads_stopped = event.all_threads_stopped
        reason = event.reason
        entry = self.entry_breakpoint_id
        if entry is not None and (entry in session_bp_ids or (
                not session_bp_ids and event.reason in ("breakpoint", "function breakpoint"))):
            # The one-shot "stop at main" of a native launch: an entry stop, then gone.
            reason = "entry"
            session_bp_ids = [i for i in session_bp_ids if i != entry]
            self.entry_breakpoint_id = None
            asyncio.get_running_loop().create_task(self._drop_breakpoint(entry))
        if self._pause_requested and not session_bp_ids and reason in (
                "breakpoint", "function breakpoint"):
            # Paused at none of ours (lldb's own shared-library breakpoint, hit
            # by a pause sent while the program loads): the pause asked for.
            reason = "pause"
        self._pause_requested = False
        description = event.description
        if session_bp_ids and all(i in self.run_to_ids for i in session_bp_ids):
            # A run to a line stopped there: not a breakpoint anyone set.
            target = self.breakpoints[session_bp_ids[0]].spec
            reason, session_bp_ids = "run_to", []
            description = f"{os.path.basename(target.path or '')}:{target.line}"
        for bp_id in session_bp_ids:
            self.breakpoints[bp_id].hits += 1
        info = StopInfo(
            reason=reason,
            thread_id=thread_id,
            description=description,
            text=event.text,
            traceback=event.traceback,
            breakpoint_ids=session_bp_ids,
            caused_by=self._resumed_by,
            held_threads=[e.thread_id for e in self._held if e.thread_id is not None],
        )
        if thread_id is not None:
            self._thread_stops[thread_id] = reason
        self.selected_thread_id = thread_id
        self.selected_frame_index = 0
        wants_view = self._wants_stop_view()
        # Made before the stack is asked for, so their requests follow it at once.
        ahead = self._ask_ahead(thread_id) if wants_view else None
        if thread_id is not None and self.backend is not None:
            try:
                frames, _ = await self._frames_for(thread_id)
                top = first_with_source(frames)
                if frames:
                    self.selected_frame_index = top.index if top else 0
                    chosen = top or frames[0]
                    # A frame without a source line (libc, the interpreter's own
                    # code) is named, never placed "at line 0".
                    info.location = chosen.location if top else None
                    info.function = chosen.name
            except DebuggerError:
                pass
        stepped_out_of, self._stepping_out_of = self._stepping_out_of, None
        if stepped_out_of and reason == "step" and thread_id is not None and self.backend:
            # Whatever goes wrong reading it, the stop itself is reported.
            with contextlib.suppress(Exception):
                returned = await self.backend.return_value(thread_id)
                if returned is not None:
                    info.return_value, info.return_type = returned.value, returned.type
                    info.returned_from = stepped_out_of
        if self.watches and self.backend is not None:
            frame_id = None
            with contextlib.suppress(DebuggerError):
                frames, _ = await self._frames_for(thread_id) if thread_id is not None else ([], 0)
                frame_id = frames[0].id if frames else None
            info.watch_changes = await self._watch_changes(frame_id, thread_id)
            # A backend that tells each change says which stopped the program;
            # else a breakpoint-like stop with a changed value is the watch's.
            watch_stop = any(change.stopped and change.thread_id in (None, thread_id)
                             for change in info.watch_changes) \
                if self.backend.capabilities.data_breakpoint_events \
                else info.reason in ("data breakpoint", "breakpoint")
            if watch_stop and info.watch_changes and not session_bp_ids:
                info.reason = "data breakpoint"
                first = info.watch_changes[0]
                info.description = (
                    f"{first.expression}: {first.old} → {first.new} at {first.at}" if first.at
                    else f"watchpoint {first.watch_id}: {first.expression} "
                    f"changed from {first.old} to {first.new}")
            if info.watch_changes:
                self._publish_watches()
        if self._stop_overtaken is asyncio.current_task():
            self._stop_overtaken = None
            self._stop_expected = False
            if thread_id is not None and session_bp_ids:
                self._passed_hits.append(thread_id)  # its hit is counted above
                self.record_activity("session", "hit passed",
                                     f"thread {thread_id} stopped at breakpoint #{session_bp_ids[0]}"
                                     " and the adapter let it go on before it was shown")
            if session_bp_ids:
                self._publish_breakpoints()
            return
        info.held_threads = [e.thread_id for e in self._held if e.thread_id is not None]
        info.passed_threads, self._passed_hits = self._passed_hits, []
        info.only_thread = (thread_id is not None and self._live_threads is not None
                            and self._live_threads == {thread_id} and not info.held_threads
                            and not info.passed_threads)
        self.stop = info
        self.last_stop = info
        self.last_stop_generation = self._run_generation
        self._stop_expected = False
        wants_view = wants_view or self._wants_stop_view()
        if wants_view:
            # The selected frame's scopes are asked for before the stop's events
            # are told: their request's task runs before the tasks that send the
            # events (traced: 1-1.5 ms sooner), and the adapter works on the
            # locals while the stop travels to the TUI and is painted.
            self._start_scopes_read(thread_id, ahead)
        self.set_state(SessionState.stopped)
        if wants_view:
            asyncio.get_running_loop().create_task(self._prefetch_stop_view(self._run_generation))
        self.publish(events.Stopped(stop=info.model_copy(), origin=self._resumed_by or "session"))
        if session_bp_ids:
            self._publish_breakpoints()

    def _start_scopes_read(self, thread_id: int | None, ahead: AskedAhead | None = None) -> None:
        cached = self._frames.get(thread_id) if thread_id is not None else None
        frame = next((f for f in cached[0] if f.index == self.selected_frame_index), None) \
            if cached else None
        if frame is None or self.backend is None or thread_id is None:
            return
        if ahead is not None and ahead.frame_id == frame.id:
            ahead.adopt(self._scopes, self._variables)
        read = start_shared(self._scopes, frame.id, lambda: self._read_scopes(frame.id))

        def remember(done: "asyncio.Future[list[Scope]]") -> None:
            # The ids this stop's locals were read by, asked for ahead at the next.
            if not done.cancelled() and done.exception() is None:
                scope = locals_scope(done.result())
                if scope is not None and scope.ref > 0:
                    if len(self._view_ids) >= MAX_VIEW_IDS and thread_id not in self._view_ids:
                        self._view_ids.clear()  # threads come and go: only a guess is lost
                    self._view_ids[thread_id] = (frame.id, scope.ref)

        read.add_done_callback(remember)

    def _ask_ahead(self, thread_id: int | None) -> AskedAhead | None:
        """The last stop's locals of this thread, asked for by that stop's ids,
        where the backend keeps them (Backend.stop_ids_carry_over): in a loop
        stepped through, the scopes and the locals are on their way with the
        stack, two round trips sooner. Used only if the stack and the scopes
        show them this stop's (AskedAhead.adopt)."""
        backend = self.backend
        last = self._view_ids.get(thread_id) if thread_id is not None else None
        if last is None or backend is None or not backend.stop_ids_carry_over:
            return None
        return AskedAhead(backend, *last)

    def _invalidate_caches(self) -> None:
        self._frames.clear()
        self._scopes.clear()
        self._variables.clear()

    async def threads(self, with_frames: bool = False) -> list[Thread]:
        """The program's threads, each with its state: running, or stopped and
        why (the shown stop, a hit held for the next continue, or stopped with
        the rest of the program); with `with_frames`, each stopped thread's
        innermost frame with a source line (one stackTrace each, cached until
        the next resume)."""
        await self.settle()
        backend = self._live_backend("list threads")
        threads = await backend.threads()
        stopped = self.state == SessionState.stopped and self.stop is not None
        held = {e.thread_id for e in self._held}
        for thread in threads:
            if not stopped:
                thread.stopped = False if self.state == SessionState.running else thread.stopped
                continue
            why = self._thread_stops.get(thread.id)
            if thread.id == self.stop.thread_id:
                why = self.stop.reason
            if why is not None:
                thread.stopped, thread.reason = True, why or None
            elif thread.stopped is None and self._all_threads_stopped:
                thread.stopped = True
            thread.held = thread.id in held
        if with_frames and stopped:
            for thread in threads[:MAX_THREAD_FRAMES]:
                if not thread.stopped:
                    continue  # a running thread has no frame to read
                try:
                    frames, _ = await self._frames_for(thread.id)
                except DebuggerError:
                    continue
                top = first_with_source(frames) or (frames[0] if frames else None)
                if top is not None:
                    thread.function, thread.location = top.name, top.location
        return threads


#: threads whose last stop's ids are kept for asking ahead (_ask_ahead)
MAX_VIEW_IDS = 1024

#: threads whose top frame `threads` reads (one request each)
MAX_THREAD_FRAMES = 256
