"""The session: one backend, its state machine, the breakpoint registry, the
output buffer, and the fan-out of events to every subscriber (the TUI, remote
clients of the daemon socket, the MCP server).

State machine: idle -> starting -> running <-> stopped -> terminated.

The session fetches only what a stop needs to say where it is (the top frames
of the stopped thread); scopes and variables are fetched when someone asks,
and cached until the program resumes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
import time
from collections import deque
from typing import Any, AsyncIterator

from backends.adapters import create_backend
from backends.base import Backend
from backends.errors import DebuggerError, InternalError, InvalidInput, NotSupported, ResourceBusy
from backends.models import (
    Completion,
    AttachRequest,
    BackendEvent,
    Breakpoint,
    BreakpointChangedEvent,
    BreakpointSpec,
    ChildProcessEvent,
    ContinuedEvent,
    DataBreakpointSpec,
    EvalResult,
    ExceptionFilter,
    ExitedEvent,
    Frame,
    Instruction,
    LaunchRequest,
    OutputEvent,
    Scope,
    StoppedEvent,
    TerminatedEvent,
    Thread,
    ThreadEvent,
    Variable,
)

from .models import (
    ActivityEntry,
    ClientInfo,
    Origin,
    SessionEvent,
    SessionState,
    StopInfo,
    Watch,
    WatchChange,
)
from .output import OutputBuffer


class Subscription:
    """An async iterator of SessionEvents with a bounded queue; a subscriber that
    falls far behind loses the oldest events rather than stalling the session."""

    def __init__(self, session: "Session", maxsize: int = 10_000):
        self._session = session
        self._queue: asyncio.Queue[SessionEvent | None] = asyncio.Queue(maxsize)
        self.lost = 0

    def push(self, event: SessionEvent | None) -> None:
        while True:
            try:
                self._queue.put_nowait(event)
                return
            except asyncio.QueueFull:
                with contextlib.suppress(asyncio.QueueEmpty):
                    self._queue.get_nowait()
                    self.lost += 1

    def close(self) -> None:
        self._session._subscribers.discard(self)
        self.push(None)

    def __aiter__(self) -> AsyncIterator[SessionEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[SessionEvent]:
        while True:
            event = await self._queue.get()
            if event is None:
                return
            yield event


RESTARTING = ("the session is restarting; wait for the new program (`await`, debug_wait), "
              "then try again.")
#: Resumes after which a function's return value is this stop's news.
STEPS = frozenset({"next", "step_in", "step_out", "stepi", "nexti"})
#: How debugpy names a returned value among the locals: "(return) Item.value".
RETURN_VALUE_PREFIX = "(return) "


class Session:
    def __init__(
        self,
        name: str,
        *,
        output_max_entries: int = 10_000,
        output_max_bytes: int = 4 * 1024 * 1024,
        stack_levels: int = 20,
    ):
        self.name = name
        self.adapter: str | None = None
        self.backend: Backend | None = None
        self.state = SessionState.idle
        self.created_at = time.time()
        self.program: str | None = None
        self.program_args: list[str] = []
        self.cwd: str = os.getcwd()
        self.launch_request: LaunchRequest | None = None
        self.attach_request: AttachRequest | None = None
        self.output = OutputBuffer(output_max_entries, output_max_bytes)
        self.breakpoints: dict[int, Breakpoint] = {}
        self._next_bp_id = 1
        self.stop: StopInfo | None = None
        self.last_stop: StopInfo | None = None
        self.last_stop_generation = 0  # the run generation that last_stop ended
        self.exit_code: int | None = None
        self.terminated_reason: str | None = None
        #: why the debugger (not the program) died, when it did
        self.adapter_died: str | None = None
        self.selected_thread_id: int | None = None
        self._all_threads_stopped = True
        self.selected_frame_index = 0
        self.activity: deque[ActivityEntry] = deque(maxlen=500)
        self._activity_seq = 0
        self._seen_by: dict[str, int] = {}  # client -> the last activity seq it was told
        #: client -> (frame key, {name: value}) of the locals its last stop answer showed
        self.seen_locals: dict[str, tuple[Any, dict[str, str]]] = {}
        #: the one-shot breakpoints of runs to a line (`until`)
        self.run_to_ids: set[int] = set()
        self.clients: dict[str, ClientInfo] = {}
        self.exception_filters: list[str] | None = None  # None: the backend's defaults
        self.stack_levels = stack_levels
        self.metadata: dict[str, Any] = {}
        #: session breakpoint id -> the backend's id for it (for hit counts and events)
        self._backend_ids: dict[int, int | str] = {}
        self._subscribers: set[Subscription] = set()
        self._listeners: list[Any] = []  # called in publish(); see add_listener
        self._event_seq = 0
        self._state_changed = asyncio.Condition()
        self._run_generation = 0  # bumped at every resume
        self._last_how: str | None = None  # how the program was last resumed
        self._resumed_by: Origin | None = None
        self._frames: dict[int, tuple[list[Frame], int | None]] = {}
        # Reads of the current stop, shared while on their way: the prefetch of a
        # stop's locals and a front end's request for them are one adapter request.
        self._scopes: dict[int, asyncio.Future[list[Scope]]] = {}
        self._variables: dict[int, asyncio.Future[list[Variable]]] = {}
        self._stop_task: asyncio.Task[None] | None = None
        self._stop_task_thread: int | None = None  # the thread whose stop is being read
        # Threads that stopped at a breakpoint while another thread's stop was shown
        # (or being read): each is shown by a later continue, as gdb's all-stop
        # mode reports pending hits, instead of being let go past its hit.
        self._held: deque[StoppedEvent] = deque()
        #: thread id -> why it stopped, for threads stopped beside the shown stop
        self._thread_stops: dict[int, str] = {}
        #: threads the adapter said started and not yet exited (None: it tells none)
        self._live_threads: set[int] | None = None
        #: threads that reached a breakpoint while a continue was on its way and
        #: were let go with it; the next stop lists them
        self._passed_hits: list[int] = []
        # A stop being read when the adapter said the program went on (see
        # _on_backend_event): not shown; told as a hit that went on
        self._stop_overtaken: asyncio.Task[None] | None = None
        #: a continue or step the adapter has not answered yet (see resume)
        self.resume_unanswered: str | None = None
        #: said when a launch waited long for its first stop
        self.first_stop_notice: str | None = None
        self._bp_lock = asyncio.Lock()
        self._last_activity = time.monotonic()
        # Events from a backend this session has let go of (restart) are ignored.
        self._backend_gen = 0
        #: a restart is replacing the backend: calls meanwhile get a typed answer
        self._restarting = False
        self.end_requested = False
        #: the session's own one-shot breakpoint standing for "stop on entry" (native)
        self.entry_breakpoint_id: int | None = None
        #: a stop is on its way (stop on entry, a step, a pause): calls that need
        #: the program stopped wait for it instead of failing (see settle)
        self._stop_expected = False
        self._pause_requested = False  # a pause was sent and its stop has not come
        self._stepping_out_of: str | None = None  # the function a step out leaves
        #: watchpoints (data breakpoints), by the session's id
        self.watches: dict[int, Watch] = {}
        self._next_watch_id = 1
        # Values seen at this stop and at the previous one, by path (note_value).
        self._values_generation: int | None = None
        self._values_now: dict[str, str] = {}
        self._values_before: dict[str, str] = {}
        #: the session of the process that started this one's, when it is a child
        self.parent: str | None = None
        #: called with each ChildProcessEvent (the hub makes the child's session)
        self.on_child = None
        self._children_watch: asyncio.Task[None] | None = None
        #: only attached to, and left running when the session ends (a Ray worker)
        self.leave_running = False
        #: called with each command's id before it runs here; raises to refuse it
        #: (a Ray root, which has no program, names its workers instead)
        self.command_guard = None

    # ================================================================= value history

    def note_value(self, path: str, value: str, frame: str | None = None) -> bool:
        """Records a value shown at this stop; True when an earlier stop showed it
        with another value in the same frame (the 'changed' highlight). `frame`
        names the function: after a step out, the caller's `len` is compared with
        the caller's last `len`, not with the callee's."""
        if self._values_generation != self._run_generation:
            if self._values_generation is not None:
                self._values_before.update(self._values_now)
                if len(self._values_before) > 20_000:  # a long session's history
                    self._values_before = dict(self._values_now)
            self._values_now = {}
            self._values_generation = self._run_generation
        key = f"{frame}\0{path}" if frame else path
        self._values_now[key] = value
        return key in self._values_before and self._values_before[key] != value

    # ================================================================= events

    def subscribe(self) -> Subscription:
        sub = Subscription(self)
        self._subscribers.add(sub)
        return sub

    def publish(self, kind: str, data: dict[str, Any] | None = None, origin: Origin = "session") -> None:
        self._event_seq += 1
        event = SessionEvent(seq=self._event_seq, kind=kind, origin=origin, data=data or {})  # type: ignore[arg-type]
        for sub in list(self._subscribers):
            sub.push(event)
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):  # a listener's failure is its own
                listener(event)

    def add_listener(self, callback) -> None:
        """Call `callback(event)` synchronously for every event, e.g. to save the
        breakpoints as they change (persist.py). It must be quick and not block."""
        self._listeners.append(callback)

    def record_activity(self, origin: Origin, command: str, summary: str = "", ok: bool = True,
                        client: str | None = None) -> None:
        self._last_activity = time.monotonic()
        self._activity_seq += 1
        entry = ActivityEntry(origin=origin, command=command, summary=summary, ok=ok,
                              client=client, seq=self._activity_seq)
        self.activity.append(entry)
        self.publish("activity", entry.model_dump(), origin=origin)

    def others_since_last_call(self, client: str, limit: int = 5) -> list[ActivityEntry]:
        """What other clients did since `client`'s previous call (at most the
        last `limit`), and mark it seen: each move is told once."""
        seen = self._seen_by.get(client, self._seen_at_join(client))
        self._seen_by[client] = self._activity_seq
        picked = [e for e in self.activity if e.seq > seen and e.client != client
                  and e.origin != "session"]
        return picked[-limit:]

    def _seen_at_join(self, client: str) -> int:
        # A client's first call tells it only what happened since it connected.
        info = self.clients.get(client)
        if info is None:
            return self._activity_seq
        return max((e.seq for e in self.activity if e.at < info.connected_at), default=0)

    @property
    def idle_seconds(self) -> float:
        return time.monotonic() - self._last_activity

    def add_client(self, client: ClientInfo) -> None:
        self.clients[client.id] = client
        self.publish("clients", {"clients": [c.model_dump() for c in self.clients.values()]})

    def remove_client(self, client_id: str) -> None:
        if self.clients.pop(client_id, None) is not None:
            self.publish("clients", {"clients": [c.model_dump() for c in self.clients.values()]})

    async def _set_state(self, state: SessionState, origin: Origin = "session") -> None:
        async with self._state_changed:
            self.state = state
            self._state_changed.notify_all()
        self.publish("state", {"state": state.value}, origin=origin)

    def _set_state_nowait(self, state: SessionState, origin: Origin = "session") -> None:
        self.state = state
        asyncio.get_running_loop().create_task(self._notify())
        self.publish("state", {"state": state.value}, origin=origin)

    async def _notify(self) -> None:
        async with self._state_changed:
            self._state_changed.notify_all()

    # ================================================================= start

    async def launch(self, request: LaunchRequest, adapter: str, origin: Origin = "user") -> None:
        self._require_state({SessionState.idle}, "launch")
        self.adapter = adapter
        self.launch_request = request
        self.program = request.program
        self.program_args = list(request.args)
        self.cwd = request.cwd or os.getcwd()
        self._stop_expected = (request.stop_on_entry or self.entry_breakpoint_id is not None
                               or bool(request.core_file))  # a core opens stopped where it died
        if self.breakpoints or self._stop_expected:
            asyncio.get_running_loop().create_task(self._notice_slow_first_stop())
        await self._start(lambda b: b.launch(request, self._configure), adapter, origin)

    async def _notice_slow_first_stop(self) -> None:
        """Say so when a launch waits long for its first stop, rather than
        leave the person or agent looking at silence."""
        await asyncio.sleep(SLOW_FIRST_STOP_S)
        if self.last_stop is not None or self.state not in (SessionState.starting,
                                                            SessionState.running):
            return
        text = f"No stop yet after {SLOW_FIRST_STOP_S:.0f} s; the program runs."
        if self.adapter == "debugpy":
            found = re.match(r"Python (\d+)\.(\d+)", str(self.metadata.get("python") or ""))
            version = (int(found.group(1)), int(found.group(2))) if found else sys.version_info[:2]
            named = f"Python {version[0]}.{version[1]}"
            traced = ("the code holding a breakpoint" if version >= (3, 12) else "all code")
            text += (f" Still starting: on {named} debugpy traces every line of {traced}, so a "
                     "breakpoint late in a long module takes long to reach (100,000 lines: "
                     "22 s on 3.11).")
            if version != tuple(sys.version_info[:2]):
                text += (f" debugpy was installed for Python {sys.version_info[0]}."
                         f"{sys.version_info[1]}: on {named} its tracer runs without its compiled "
                         "speed-ups, and each line event of a big module costs in proportion to "
                         "its size (the same module: about 4 minutes on 3.12); a breakpoint "
                         "inside a function is reached sooner.")
        self.first_stop_notice = text
        # In the activity log too: a TUI that joins after the notice finds it there.
        self.record_activity("session", "waiting", text)
        self.publish("notice", {"text": text})

    async def attach(self, request: AttachRequest, adapter: str, origin: Origin = "user",
                     backend: Backend | None = None) -> None:
        """Attach through `adapter`, or through a prepared `backend` (the simctl
        flow resolves the simulator and the app before the session attaches)."""
        self._require_state({SessionState.idle}, "attach")
        self.adapter = adapter
        self.attach_request = request
        self.program = request.program or (f"pid {request.pid}" if request.pid else
                                           f"{request.host}:{request.port}")
        # A gdb-remote server's program stays stopped where the server holds it.
        self._stop_expected = request.pid is None and request.port is not None and \
            adapter in ("lldb-dap", "lldb-cli", "dlv")
        await self._start(lambda b: b.attach(request, self._configure), adapter, origin,
                          backend=backend)

    async def _start(self, start, adapter: str, origin: Origin, backend: Backend | None = None) -> None:
        await self._set_state(SessionState.starting, origin)
        try:
            if backend is not None:
                backend._emit = self._sink()  # noqa: SLF001 - adopt its events
                self.backend = backend
            else:
                self.backend = create_backend(adapter, self._sink())
            await start(self.backend)
        except BaseException as exc:
            backend, self.backend = self.backend, None
            if backend is not None:
                with contextlib.suppress(Exception):
                    await backend.dispose()
            # Some exceptions carry no text (a bare TimeoutError): name the kind.
            reason = str(exc) or f"{type(exc).__name__} (no message)"
            self.terminated_reason = reason
            await self._set_state(SessionState.terminated, origin)
            self.publish("terminated", {"reason": reason})
            if isinstance(exc, DebuggerError):
                raise
            if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt)):
                raise
            raise InternalError(f"Starting the {adapter} backend failed: {reason}.") from exc
        follows = adapter in FOLLOWS_CHILDREN or getattr(self.backend, "follows_children", False)
        if not follows and not (self.backend and self.backend.post_mortem):
            self._children_watch = asyncio.get_running_loop().create_task(
                self._say_children_are_not_followed(self._backend_gen))
        stop_on_its_way = self._stop_task is not None and not self._stop_task.done()
        if self.state == SessionState.starting and not stop_on_its_way:
            # No stop arrived during start-up: the program runs.
            await self._set_state(SessionState.running, origin)

    async def _say_children_are_not_followed(self, generation: int) -> None:
        """Say once, when the program starts a child process, that this debugger
        does not follow it (lldb, delve, a Node attached to): its breakpoints never stop there.
        Direct children of the program, read from /proc twice a second."""
        while generation == self._backend_gen and self.state != SessionState.terminated:
            await asyncio.sleep(0.5)
            pid = self.backend.debuggee_pid if self.backend is not None else None
            if pid is None and self.backend is not None and self.backend.child_pids:
                # No pid from the adapter (delve sends no `process` event): the
                # program is the adapter's one child.
                below = _children_of(self.backend.child_pids[0])
                pid = below[0] if len(below) == 1 else None
            children = _children_of(pid) if pid else []
            if children:
                text = (f"The program started child process {children[0]}; the {self.adapter} "
                        "backend does not follow child processes, so breakpoints in them do "
                        f"not stop. Attach to one with `tui-debugger attach {children[0]}`.\n")
                seq = self.output.append("important", text)
                self.publish("output", {"seq": seq, "category": "important", "text": text})
                return

    def _sink(self):
        self._backend_gen += 1
        gen = self._backend_gen

        def emit(event: BackendEvent) -> None:
            if gen == self._backend_gen:
                self._on_backend_event(event)

        return emit

    async def _configure(self) -> None:
        """Called by the backend when breakpoints may be set (DAP: after
        `initialized`, before `configurationDone`)."""
        self._backend_now()
        paths = sorted({bp.spec.path for bp in self.breakpoints.values() if bp.spec.path})
        for path in paths:
            await self._apply_file(path)
        if any(bp.spec.function for bp in self.breakpoints.values()):
            await self._apply_functions()
        filters = self.exception_filters
        if filters is None:
            filters = [f.id for f in self.backend.capabilities.exception_filters if f.default]
        if self.backend.capabilities.exception_filters or filters:
            try:
                await self.backend.set_exception_filters(filters)
            except NotSupported:
                pass
            except DebuggerError as exc:
                # Filters saved for this program that this adapter does not offer: run
                # with its defaults rather than not at all, and say so.
                text = f"Exception breakpoints not set ({exc.message}); using the defaults.\n"
                seq = self.output.append("console", text)
                self.publish("output", {"seq": seq, "category": "console", "text": text})
                self.exception_filters = None
                defaults = [f.id for f in self.backend.capabilities.exception_filters if f.default]
                with contextlib.suppress(DebuggerError):
                    await self.backend.set_exception_filters(defaults)

    # ================================================================= backend events

    def _on_backend_event(self, event: BackendEvent) -> None:
        self._last_activity = time.monotonic()
        if isinstance(event, OutputEvent):
            seq = self.output.append(event.category, event.text)
            self.publish("output", {"seq": seq, "category": event.category, "text": event.text})
        elif isinstance(event, StoppedEvent):
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
        elif isinstance(event, ContinuedEvent):
            # A core dump never runs, whatever the adapter says while it loads one.
            post_mortem = self.backend is not None and self.backend.post_mortem
            if post_mortem:
                return
            if self.state == SessionState.stopped:
                self._invalidate_caches()
                self.stop = None
                self._set_state_nowait(SessionState.running)
                self.publish("continued", {"thread_id": event.thread_id})
            elif self._stop_task is not None and not self._stop_task.done():
                # The stop being read is over already (debugpy tells a thread's
                # `continued` when it wakes, which under load can come after its
                # stop): shown, it would be a stop the adapter refuses to continue.
                self._stop_overtaken = self._stop_task
        elif isinstance(event, ExitedEvent):
            self.exit_code = event.exit_code
            self.publish("exited", {"exit_code": event.exit_code})
        elif isinstance(event, TerminatedEvent):
            if self.state != SessionState.terminated:
                # When someone asked for the end, say who; the backend only saw it end.
                if not self.end_requested:
                    self.terminated_reason = event.reason
                    if event.adapter_died:
                        self.adapter_died = event.reason or "it exited"
                self.stop = None  # last_stop keeps it for whoever asks what happened
                self._stop_expected = False
                self._invalidate_caches()
                self._set_state_nowait(SessionState.terminated)
                self.publish("terminated", {"reason": event.reason, "exit_code": self.exit_code})
        elif isinstance(event, BreakpointChangedEvent):
            self._apply_breakpoint_change(event)
        elif isinstance(event, ThreadEvent):
            if self._live_threads is None:
                self._live_threads = set()
            if event.reason == "started":
                self._live_threads.add(event.thread_id)
            else:
                self._live_threads.discard(event.thread_id)
            if event.reason == "exited":
                self._thread_stops.pop(event.thread_id, None)
                self._held = deque(e for e in self._held if e.thread_id != event.thread_id)
            self.publish("threads", {"thread_id": event.thread_id, "reason": event.reason})
        elif isinstance(event, ChildProcessEvent):
            if self.on_child is not None:
                self.on_child(self, event)

    def _report_let_go(self, event: StoppedEvent) -> None:
        """A thread reached a breakpoint while a continue was on its way, and the
        continue let it go on (debugpy resumes every stopped thread): counted as
        a hit and listed with the next stop, never silently lost."""
        bp_ids = self._session_ids_for(event.hit_breakpoint_ids)
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
        self.publish("threads", {"thread_id": event.thread_id, "reason": "held"})
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
        if thread_id is not None and self.backend is not None:
            try:
                frames, _ = await self._frames_for(thread_id)
                top = _first_with_source(frames)
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
            info.watch_changes = await self._watch_changes(frame_id)
            if info.reason in ("data breakpoint", "breakpoint") and info.watch_changes and \
                    not session_bp_ids:
                info.reason = "data breakpoint"
                first = info.watch_changes[0]
                info.description = (f"watchpoint {first.watch_id}: {first.expression} "
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
        await self._set_state(SessionState.stopped)
        if self._wants_stop_view():
            # Scheduled before the stop's events are sent: the adapter works on the
            # locals while the stop travels to the TUI and is painted.
            asyncio.get_running_loop().create_task(self._prefetch_stop_view(self._run_generation))
        self.publish("stopped", info.model_dump(mode="json"), origin=self._resumed_by or "session")
        if session_bp_ids:
            self._publish_breakpoints()

    async def _drop_breakpoint(self, bp_id: int) -> None:
        with contextlib.suppress(DebuggerError):
            if bp_id in self.breakpoints:
                await self.remove_breakpoints([bp_id], "session")

    def _invalidate_caches(self) -> None:
        self._frames.clear()
        self._scopes.clear()
        self._variables.clear()

    # ================================================================= state helpers

    def _require_state(self, allowed: set[SessionState], what: str) -> None:
        if self.state in allowed:
            return
        if self.state == SessionState.terminated:
            if self.adapter_died:
                raise InvalidInput(
                    f"Cannot {what}: the debugger ({self.adapter}) died "
                    f"({self.adapter_died.strip()[:200]}) and the program was ended with it. "
                    "Start a new session with `tui-debugger start PROGRAM` (MCP: debug_launch).")
            raise InvalidInput(
                f"Cannot {what}: the session has ended"
                + (f" (exit code {self.exit_code})" if self.exit_code is not None else "")
                + ". Start a new one with `tui-debugger start PROGRAM` (MCP: debug_launch)."
            )
        if self.state == SessionState.running and SessionState.stopped in allowed:
            raise InvalidInput(
                f"Cannot {what} while the program is running. Pause it (`pause`, "
                "debug_pause) or wait for a stop (`await`, debug_wait)."
            )
        if self.state in (SessionState.idle, SessionState.starting):
            raise InvalidInput(f"Cannot {what}: the program has not started yet. Wait a moment and retry.")
        if self.state == SessionState.stopped:
            raise InvalidInput(f"Cannot {what}: the program is already stopped.")
        raise InvalidInput(f"Cannot {what} in state {self.state.value}.")

    def _live_backend(self, what: str) -> Backend:
        if self.backend is None and self._restarting:
            raise ResourceBusy(f"Cannot {what}: {RESTARTING}")
        if self.backend is None or self.state in (SessionState.terminated, SessionState.idle):
            self._require_state({SessionState.running, SessionState.stopped}, what)
        return self._backend_now()

    def _backend_now(self) -> Backend:
        """The backend, or a typed error while a restart replaces it (a call that
        began before the restart may still be on its way)."""
        if self.backend is None:
            if self._restarting:
                raise ResourceBusy(RESTARTING[0].upper() + RESTARTING[1:])
            raise InvalidInput("No program is being debugged; launch or attach first.")
        return self.backend

    async def wait_for_state(
        self, predicate, timeout: float | None
    ) -> bool:
        async def _wait() -> None:
            async with self._state_changed:
                await self._state_changed.wait_for(predicate)

        try:
            await asyncio.wait_for(_wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    @property
    def stop_pending(self) -> bool:
        """A stop is on its way: the program is starting, or it runs after a
        stop on entry, a step or a pause was asked for, or a stop event arrived
        and is being read."""
        if self.state == SessionState.starting:
            return True
        if self.state != SessionState.running:
            return False
        return self._stop_expected or bool(self._stop_task and not self._stop_task.done())

    async def settle(self, timeout: float | None = None) -> None:
        """Wait (bounded) for a pending stop, so a call that arrives just before
        the stop it depends on does not race it (a step right after a launch
        with stopOnEntry). Returns at once when no stop is pending."""
        if not self.stop_pending:
            return
        if timeout is None:
            from .config import settings

            timeout = max(settings().step_wait_ms, 1000) / 1000
        await self.wait_for_state(lambda: not self.stop_pending, timeout)

    @property
    def resumed_by(self) -> Origin | None:
        """Who resumed the program last (tui, cli, mcp)."""
        return self._resumed_by

    async def wait_for_stop(self, timeout: float | None, since_generation: int | None = None) -> bool:
        """Wait until the program is stopped (after resume `since_generation`) or ended."""
        gen = self._run_generation if since_generation is None else since_generation

        def done() -> bool:
            if self.state == SessionState.terminated:
                return True
            return self.state == SessionState.stopped and self._run_generation >= gen and self.stop is not None

        return await self.wait_for_state(done, timeout)

    # ================================================================= run control

    async def resume(self, how: str, origin: Origin, thread_id: int | None = None,
                     target: tuple[str, int] | None = None,
                     answer_timeout: float | None = None) -> int:
        """Resume with continue / next / step_in / step_out, or goto `target`
        (path, line: the next statement moved there). Returns the run generation
        to pass to wait_for_stop.

        `answer_timeout` bounds the wait for the adapter's answer: past it the
        program is taken as running (`resume_unanswered` says which request is
        unanswered) and the answer, or its failure, is handled when it comes."""
        await self.settle()
        backend = self._live_backend(how)
        self._refuse_post_mortem(how)
        self._require_state({SessionState.stopped}, how if how != "continue" else "continue")
        tid = thread_id or self.selected_thread_id
        if how != "continue" and tid is None:
            raise InvalidInput("No thread is selected; pass a thread id (see `threads`).")
        if how == "continue" and self._held and thread_id is None:
            return self._show_next_held(origin)
        self._run_generation += 1
        generation = self._run_generation
        self._resumed_by = origin
        self._invalidate_caches()
        previous_stop = self.stop
        # A step out answers what the function it leaves returned (_handle_stop).
        self._stepping_out_of = (previous_stop.function or "?") if (
            how == "step_out" and previous_stop is not None) else None
        self.stop = None
        self.state = SessionState.running
        self._stop_expected = how != "continue"
        self._last_how = how
        if how == "continue" or not backend.steps_keep_others_held:
            # Everything runs: what was held goes on past its hit (it was listed).
            self._held.clear()
            self._thread_stops.clear()
        elif tid is not None:
            self._thread_stops.pop(tid, None)
        self.publish("continued", {"thread_id": tid, "how": how}, origin=origin)
        self.publish("state", {"state": "running"}, origin=origin)
        request = asyncio.get_running_loop().create_task(
            self._send_resume(backend, how, tid, previous_stop, origin, target))
        request.add_done_callback(lambda task: task.cancelled() or task.exception())
        self.resume_unanswered = how
        done, _ = await asyncio.wait({request}, timeout=answer_timeout)
        if request in done:
            request.result()  # a refusal raises here, with the stop put back
        return generation

    async def _send_resume(self, backend: Backend, how: str, tid: int | None,
                           previous_stop: StopInfo | None, origin: Origin,
                           target: tuple[str, int] | None = None) -> None:
        try:
            if how == "continue":
                await backend.continue_(tid)
            elif how == "next":
                await backend.step_over(tid)  # type: ignore[arg-type]
            elif how == "step_in":
                await backend.step_in(tid)  # type: ignore[arg-type]
            elif how == "step_out":
                await backend.step_out(tid)  # type: ignore[arg-type]
            elif how in ("stepi", "nexti"):
                # (a backend without instruction steps refuses by name; the stop is put back)
                await backend.step_instruction(tid, over=how == "nexti")  # type: ignore[arg-type]
            elif how == "goto" and target is not None:
                await backend.goto(tid, *target)  # type: ignore[arg-type]
            else:
                raise InvalidInput(f"Unknown run command {how!r}.")
        except DebuggerError:
            self._stop_expected = False
            if how == "continue" and backend.running():
                # The shown stop was over already: the adapter's `continued` for
                # it is on its way to us (debugpy wakes a thread up to 0.2 s after
                # a continue let it go). The program runs, as asked.
                self.record_activity("session", "continue", "the program was already running")
                return
            # The request failed: the program did not move; keep the stop readable.
            if self.state == SessionState.running and self.backend is not None:
                self.stop = previous_stop
                self.state = SessionState.stopped
                self.publish("state", {"state": "stopped"}, origin=origin)
            raise
        finally:
            self.resume_unanswered = None

    def _show_next_held(self, origin: Origin) -> int:
        """Continue while other threads are held at a breakpoint: nothing runs;
        the next held thread's hit becomes the stop (gdb's all-stop way)."""
        event = self._held.popleft()
        self._run_generation += 1
        self._resumed_by = origin
        self.stop = None
        self.state = SessionState.running
        self._stop_expected = True
        self.publish("continued", {"thread_id": event.thread_id, "how": "continue"}, origin=origin)
        self.publish("state", {"state": "running"}, origin=origin)
        self._stop_task_thread = event.thread_id
        self._stop_task = asyncio.get_running_loop().create_task(self._handle_stop(event))
        return self._run_generation

    def _refuse_post_mortem(self, what: str) -> None:
        if self.backend is not None and self.backend.post_mortem:
            raise InvalidInput(
                f"Cannot {what.replace('_', ' ')}: this session is a core dump, a program that "
                "has already died. Read its stack, threads, locals, memory and disassembly; "
                "to run it, start the program itself (`tui-debugger start PROGRAM`)."
            )

    async def pause(self, origin: Origin, thread_id: int | None = None,
                    answer_timeout: float | None = None) -> None:
        # A stop already on its way (the entry stop) is the pause asked for.
        await self.settle()
        backend = self._live_backend("pause")
        self._refuse_post_mortem("pause")
        if self.state == SessionState.stopped:
            return
        self._require_state({SessionState.running}, "pause")
        self._resumed_by = origin
        self._stop_expected = True
        self._pause_requested = True
        request = asyncio.get_running_loop().create_task(backend.pause(thread_id))
        request.add_done_callback(lambda task: task.cancelled() or task.exception())
        # Bounded like a continue: an adapter stuck on an earlier request answers late.
        done, _ = await asyncio.wait({request}, timeout=answer_timeout)
        if request not in done:
            return
        try:
            request.result()
        except BaseException:
            self._stop_expected = self._pause_requested = False
            raise

    @property
    def run_generation(self) -> int:
        return self._run_generation

    # ================================================================= inspection

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
                top = _first_with_source(frames) or (frames[0] if frames else None)
                if top is not None:
                    thread.function, thread.location = top.name, top.location
        return threads

    async def _frames_for(self, thread_id: int) -> tuple[list[Frame], int | None]:
        cached = self._frames.get(thread_id)
        if cached is not None:
            return cached
        self._backend_now()
        frames, total = await self.backend.stack_trace(thread_id, 0, self.stack_levels)
        self._frames[thread_id] = (frames, total)
        return frames, total

    async def stack(self, thread_id: int | None = None, max_frames: int = 20) -> tuple[list[Frame], int | None]:
        await self.settle()
        backend = self._live_backend("read the stack")
        self._require_state({SessionState.stopped}, "read the stack")
        tid = thread_id or self.selected_thread_id
        if tid is None:
            raise InvalidInput("No thread is selected; pass a thread id (see `threads`).")
        if max_frames <= self.stack_levels:
            frames, total = await self._frames_for(tid)
            return frames[:max_frames], total
        return await backend.stack_trace(tid, 0, max_frames)

    async def frame(self, index: int | None = None, thread_id: int | None = None) -> Frame:
        frames, total = await self.stack(thread_id, max(self.stack_levels, (index or 0) + 1))
        idx = self.selected_frame_index if index is None else index
        if idx < 0 or idx >= len(frames):
            raise InvalidInput(
                f"No frame {idx}: the stack has {len(frames)} frame(s) (0 is the innermost). "
                "See `backtrace`."
            )
        return frames[idx]

    async def select_frame(self, index: int, origin: Origin, thread_id: int | None = None) -> Frame:
        if thread_id is not None:
            self.selected_thread_id = thread_id
        frame = await self.frame(index)
        self.selected_frame_index = index
        self.publish("selection", {"thread_id": self.selected_thread_id, "frame_index": index,
                                   "location": frame.location.model_dump() if frame.location else None,
                                   "function": frame.name}, origin=origin)
        return frame

    async def select_thread(self, thread_id: int, origin: Origin) -> None:
        await self.settle()
        self._require_state({SessionState.stopped}, "select a thread")
        threads = await self.threads()
        if not any(t.id == thread_id for t in threads):
            ids = ", ".join(str(t.id) for t in threads)
            raise InvalidInput(f"No thread {thread_id}. Threads: {ids}.")
        self.selected_thread_id = thread_id
        self.selected_frame_index = 0
        # The thread's top frame goes with the event, so every front end's source pane
        # moves to where that thread is, not only its stack and variables.
        data: dict[str, Any] = {"thread_id": thread_id, "frame_index": 0}
        try:
            frames, _ = await self._frames_for(thread_id)
        except DebuggerError:
            frames = []
        if frames:
            top = _first_with_source(frames) or frames[0]
            self.selected_frame_index = data["frame_index"] = top.index
            data["location"] = top.location.model_dump() if top.location else None
            data["function"] = top.name
        self.publish("selection", data, origin=origin)

    async def scopes(self, frame_index: int | None = None) -> list[Scope]:
        frame = await self.frame(frame_index)
        return await _shared(self._scopes, frame.id, lambda: self._read_scopes(frame.id))

    async def _read_scopes(self, frame_id: int) -> list[Scope]:
        self._backend_now()
        scopes = await self.backend.scopes(frame_id)
        refs = {s.ref for s in scopes}
        mine = self._scopes.get(frame_id)
        others = [f.result() for key, f in self._scopes.items()
                  if key != frame_id and f.done() and not f.cancelled() and f.exception() is None]
        if any(s.ref in refs for other in others for s in other):
            # The adapter hands out the same references for every frame's scopes
            # (lldb-dap): what was read through them for another frame is gone.
            self._scopes.clear()
            self._variables.clear()
            if mine is not None:
                self._scopes[frame_id] = mine
        return scopes

    async def variables(self, ref: int, start: int = 0, count: int = 0) -> list[Variable]:
        await self.settle()
        backend = self._live_backend("read variables")
        self._require_state({SessionState.stopped}, "read variables")
        if start == 0 and count == 0:
            found = await _shared(self._variables, ref, lambda: backend.variables(ref))
        else:
            found = await backend.variables(ref, start, count)
        if self._last_how not in STEPS:
            # debugpy keeps a step's "(return) f = v" among the locals until the next
            # step: after a continue it is an old call's value, not this stop's.
            found = [v for v in found if not v.name.startswith(RETURN_VALUE_PREFIX)]
        return found

    def _wants_stop_view(self) -> bool:
        """A TUI shows every stop's locals: read them while the stop is on its way."""
        return any(c.origin in ("tui", "web") for c in self.clients.values())

    async def _prefetch_stop_view(self, generation: int) -> None:
        """The selected frame's scopes and its first scope's variables, into the
        stop's cache, so the TUI's request for them (a round trip later) finds
        them read or on their way."""
        with contextlib.suppress(DebuggerError):
            if self._run_generation != generation or self.state != SessionState.stopped:
                return
            scopes = await self.scopes()
            if not scopes or self._run_generation != generation:
                return
            scope = next((s for s in scopes if s.kind.value == "locals"), scopes[0])
            await self.variables(scope.ref)

    async def evaluate(self, expression: str, frame_index: int | None = None, context: str = "repl") -> EvalResult:
        await self.settle()
        backend = self._live_backend("evaluate")
        frame_id = None
        if self.state == SessionState.stopped:
            frame_id = (await self.frame(frame_index)).id
        else:
            # While it runs, an answer would come from whatever thread the
            # adapter picks (pydevd's own), racing the program: say it runs.
            self._require_state({SessionState.stopped}, "evaluate")
        result = await backend.evaluate(expression, frame_id, context)
        # Evaluation can change program state; children fetched before are stale.
        self._variables.clear()
        return result

    async def completions(self, text: str, column: int,
                          frame_index: int | None = None) -> tuple[bool, list[Completion]]:
        """What the debugger proposes to complete `text` at `column` in a frame, and
        whether it proposes at all (False: complete from the frame's names)."""
        await self.settle()
        backend = self._live_backend("complete")
        self._require_state({SessionState.stopped}, "complete")
        if not backend.capabilities.completions:
            return False, []
        frame_id = (await self.frame(frame_index)).id
        return True, await backend.completions(text, column, frame_id)

    async def set_variable(self, container_ref: int, name: str, value: str,
                           origin: Origin) -> Variable:
        """Change a value in the stopped program; every front end re-reads its variables."""
        backend = self._live_backend("change a variable")
        self._require_state({SessionState.stopped}, "change a variable")
        variable = await backend.set_variable(container_ref, name, value)
        self._variables.clear()
        # Scopes go too: delve answers a scope's variables as read when the scope
        # was listed, so the changed value shows only through new scopes.
        self._scopes.clear()
        self.publish("values", {"name": name, "value": variable.value}, origin=origin)
        return variable

    async def send_input(self, text: str, eof: bool, origin: Origin) -> None:
        """Give the program (launched with stdin 'pipe') a line of input."""
        backend = self._live_backend("give the program input")
        self._require_state({SessionState.running, SessionState.stopped}, "give the program input")
        await backend.send_input(text, eof)

    def available_exception_filters(self) -> list[ExceptionFilter]:
        return list(self.backend.capabilities.exception_filters) if self.backend else []

    def enabled_exception_filters(self) -> list[str]:
        if self.exception_filters is not None:
            return list(self.exception_filters)
        return [f.id for f in self.available_exception_filters() if f.default]

    async def set_exception_filters(self, filter_ids: list[str], origin: Origin) -> None:
        """Which exceptions stop the program, from now on (and in the next launch of
        this program: they are saved with its breakpoints)."""
        if self.state == SessionState.terminated:
            raise InvalidInput("The program has ended; exception breakpoints apply to a "
                               "running one (they are remembered for the next launch).")
        filters = list(dict.fromkeys(filter_ids))
        if self.backend is not None and self.state != SessionState.starting:
            await self.backend.set_exception_filters(filters)
        self.exception_filters = filters
        self.publish("exception_filters", {"filters": filters}, origin=origin)

    async def raw_command(self, command: str, timeout: float) -> str:
        backend = self._live_backend("run a debugger command")
        return await backend.raw_command(command, timeout)

    # ================================================================= machine level

    async def resolve_address(self, expression: str, frame_index: int | None = None) -> str:
        """A function's start, a pointer's value, or an array's or object's own address."""
        await self.settle()
        backend = self._live_backend("read an address")
        self._require_state({SessionState.stopped}, "read an address")
        frame_id = (await self.frame(frame_index)).id
        try:
            return await backend.resolve_address(expression, frame_id)
        except NotSupported:
            raise
        except DebuggerError as first:
            # An array or a struct has no value that is an address; its own place is.
            try:
                return await backend.resolve_address(f"&({expression})", frame_id)
            except DebuggerError:
                raise first from None

    async def disassemble(self, target: str | None, count: int, frame_index: int | None = None
                          ) -> tuple[list[Instruction], str | None]:
        """Instructions of `target` (a function or an address), or around the
        frame's pc; and that pc, when the listing is around it."""
        await self.settle()
        backend = self._live_backend("disassemble")
        if not backend.capabilities.disassemble:
            await backend.disassemble("0x0", count)  # the backend's own refusal, by name
        self._require_state({SessionState.stopped}, "disassemble")
        if target:
            address = await self.resolve_address(target, frame_index)
            return await backend.disassemble(address, count, 0), None
        frame = await self.frame(frame_index)
        if not frame.instruction_pointer:
            raise InvalidInput(f"Frame {frame.index} ({frame.name}) has no instruction address; "
                               "pick another frame, or give a function or an address.")
        before = min(count // 3, 16)
        return (await backend.disassemble(frame.instruction_pointer, count, -before),
                frame.instruction_pointer)

    async def read_memory(self, target: str, count: int, frame_index: int | None = None
                          ) -> tuple[str, bytes]:
        backend = self._live_backend("read memory")
        if not backend.capabilities.read_memory:
            await backend.read_memory("0x0", count)  # the backend's own refusal, by name
        self._require_state({SessionState.stopped}, "read memory")
        address = await self.resolve_address(target, frame_index)
        return address, await backend.read_memory(address, count)

    # ================================================================= watchpoints

    async def add_watch(self, expression: str, access: str, origin: Origin,
                        frame_index: int | None = None) -> Watch:
        await self.settle()
        backend = self._live_backend("set a watchpoint")
        self._refuse_post_mortem("set a watchpoint")
        if not backend.capabilities.data_breakpoints:
            await backend.set_data_breakpoints([DataBreakpointSpec(expression=expression)])
        self._require_state({SessionState.stopped}, "set a watchpoint")
        if not expression.strip():
            raise InvalidInput("Give the expression to watch, e.g. `watch counter`.")
        frame = await self.frame(frame_index)
        watch = Watch(id=self._next_watch_id, expression=expression.strip(),
                      access=access, set_by=origin)  # type: ignore[arg-type]
        states = await backend.set_data_breakpoints(
            self._watch_specs() + [DataBreakpointSpec(expression=watch.expression,
                                                      access=watch.access, frame_id=frame.id)])
        new = states[-1]
        if not new.verified:
            # Nothing changes: the adapter keeps the watchpoints it had.
            with contextlib.suppress(DebuggerError):
                await backend.set_data_breakpoints(self._watch_specs())
            raise InvalidInput(
                f"Cannot watch {watch.expression}: {new.message or 'the debugger refused it'}. "
                "Watch a variable, a field or *pointer that lives in memory."
            )
        self._next_watch_id += 1
        watch.verified, watch.address, watch.size = True, new.address, new.size
        watch.type = new.type
        watch.value = await self._watch_value(watch, frame.id, watch.expression)
        self.watches[watch.id] = watch
        self._publish_watches(origin)
        return watch

    async def remove_watches(self, ids: list[int] | None, origin: Origin) -> list[Watch]:
        self._refuse_running_watch_change()
        if ids is None:
            removed = list(self.watches.values())
        else:
            unknown = [i for i in ids if i not in self.watches]
            if unknown:
                have = ", ".join(str(i) for i in self.watches) or "none"
                raise InvalidInput(f"No watchpoint {unknown[0]}. Watchpoints: {have}.")
            removed = [self.watches[i] for i in ids]
        for watch in removed:
            self.watches.pop(watch.id, None)
        if self.backend is not None and self.state == SessionState.stopped:
            await self.backend.set_data_breakpoints(self._watch_specs())
        self._publish_watches(origin)
        return removed

    def _refuse_running_watch_change(self) -> None:
        if self.state == SessionState.running:
            raise InvalidInput("Watchpoints change only while the program is stopped; pause it "
                               "first (`pause`, debug_pause).")

    def _watch_specs(self) -> list[DataBreakpointSpec]:
        return [DataBreakpointSpec(expression=w.expression, access=w.access, address=w.address,
                                   size=w.size) for w in self.watches.values()]

    def _publish_watches(self, origin: Origin = "session") -> None:
        self.publish("watches", {"watches": [w.model_dump(mode="json")
                                             for w in self.watches.values()]}, origin=origin)

    async def _watch_value(self, watch: Watch, frame_id: int | None,
                           expression: str | None = None) -> str | None:
        """The watched value now: by its expression where it was set, else read back
        through its address and type, else its bytes."""
        self._backend_now()
        attempts = []
        if expression:
            attempts.append(expression)
        if watch.address and watch.type:
            attempts.append(f"*({watch.type} *){watch.address}")
        for text in attempts:
            with contextlib.suppress(DebuggerError):
                return (await self.backend.evaluate(text, frame_id, "watch")).value
        if watch.address and watch.size:
            with contextlib.suppress(DebuggerError):
                data = await self.backend.read_memory(watch.address, watch.size)
                return "bytes " + data.hex(" ")
        return None

    async def _watch_changes(self, frame_id: int | None) -> list[WatchChange]:
        changes = []
        for watch in self.watches.values():
            new = await self._watch_value(watch, frame_id)
            if new != watch.value:
                changes.append(WatchChange(watch_id=watch.id, expression=watch.expression,
                                           old=watch.value, new=new))
                watch.value = new
                watch.hits += 1
        return changes

    # ================================================================= breakpoints

    def _publish_breakpoints(self, origin: Origin = "session") -> None:
        self.publish(
            "breakpoints",
            {"breakpoints": [bp.model_dump(mode="json") for bp in self.breakpoints.values()]},
            origin=origin,
        )

    def _session_ids_for(self, backend_ids: list[int | str]) -> list[int]:
        if not backend_ids:
            return []
        wanted = {str(b) for b in backend_ids}
        return [bp_id for bp_id, bid in self._backend_ids.items() if str(bid) in wanted]

    def _apply_breakpoint_change(self, event: BreakpointChangedEvent) -> None:
        for bp_id, bid in list(self._backend_ids.items()):
            if str(bid) == str(event.backend_id) and bp_id in self.breakpoints:
                bp = self.breakpoints[bp_id]
                if event.reason == "removed":
                    continue
                bp.verified = event.state.verified
                if event.state.line:
                    bp.line = event.state.line
                bp.message = event.state.message
                self._publish_breakpoints()

    def normalize_path(self, path: str, base: str | None = None) -> str:
        path = os.path.expanduser(path)
        if not os.path.isabs(path):
            path = os.path.join(base or self.cwd, path)
        return os.path.normpath(path)

    async def add_breakpoint(self, spec: BreakpointSpec, origin: Origin) -> Breakpoint:
        if self.state == SessionState.terminated:
            self._require_state({SessionState.stopped, SessionState.running}, "add a breakpoint")
        if spec.function:
            if spec.path or spec.line:
                raise InvalidInput("Give either FILE:LINE or --function NAME, not both.")
        else:
            if not spec.path or not spec.line:
                raise InvalidInput("A breakpoint needs FILE:LINE (e.g. app.py:12) or --function NAME.")
            if spec.line < 1:
                raise InvalidInput(f"Line numbers start at 1; got {spec.line}.")
            spec = spec.model_copy(update={"path": self.normalize_path(spec.path)})
            if not os.path.exists(spec.path) and not (self.attach_request and self.attach_request.host):
                raise InvalidInput(
                    f"No such file: {spec.path}. Check the path; relative paths are resolved "
                    f"against {self.cwd}."
                )
            if os.path.exists(spec.path):
                from .paths import source_problem

                problem = source_problem(spec.path)
                if problem and "bytes" not in problem:  # a large source is still a source
                    raise InvalidInput(
                        f"No breakpoint in {spec.path}: {problem}. Give FILE:LINE of a source "
                        "file.")
        async with self._bp_lock:
            bp = Breakpoint(id=self._next_bp_id, spec=spec, set_by=origin)
            self._next_bp_id += 1
            self.breakpoints[bp.id] = bp
            try:
                await self._apply_for(bp)
            except BaseException:
                self.breakpoints.pop(bp.id, None)
                self._backend_ids.pop(bp.id, None)
                with contextlib.suppress(Exception):
                    await self._apply_for(bp)
                raise
        self._publish_breakpoints(origin)
        return bp

    async def update_breakpoint(self, bp_id: int, origin: Origin, **changes: Any) -> Breakpoint:
        bp = self.get_breakpoint(bp_id)
        old_spec = bp.spec
        bp.spec = bp.spec.model_copy(update={k: v for k, v in changes.items()})
        async with self._bp_lock:
            try:
                await self._apply_for(bp)
            except BaseException:
                bp.spec = old_spec
                with contextlib.suppress(Exception):
                    await self._apply_for(bp)
                raise
        self._publish_breakpoints(origin)
        return bp

    def get_breakpoint(self, bp_id: int) -> Breakpoint:
        bp = self.breakpoints.get(bp_id)
        if bp is None:
            ids = ", ".join(str(i) for i in self.breakpoints) or "none"
            raise InvalidInput(f"No breakpoint {bp_id}. Breakpoints: {ids}. See `break list`.")
        return bp

    async def remove_breakpoints(self, ids: list[int] | None, origin: Origin) -> list[Breakpoint]:
        targets = list(self.breakpoints.values()) if ids is None else [self.get_breakpoint(i) for i in ids]
        async with self._bp_lock:
            for bp in targets:
                self.breakpoints.pop(bp.id, None)
                self._backend_ids.pop(bp.id, None)
            paths = {bp.spec.path for bp in targets if bp.spec.path}
            functions = any(bp.spec.function for bp in targets)
            if self._backend_ready():
                for path in sorted(paths):
                    await self._apply_file(path)
                if functions:
                    await self._apply_functions()
        self._publish_breakpoints(origin)
        return targets

    def _backend_ready(self) -> bool:
        return self.backend is not None and self.state in (
            SessionState.running, SessionState.stopped, SessionState.starting
        )

    async def _apply_for(self, bp: Breakpoint) -> None:
        if not self._backend_ready():
            return  # applied in configure when the program starts
        if bp.spec.function:
            await self._apply_functions()
        else:
            await self._apply_file(bp.spec.path)  # type: ignore[arg-type]

    async def _apply_file(self, path: str) -> None:
        self._backend_now()
        bps = [bp for bp in self.breakpoints.values() if bp.spec.path == path]
        states = await self.backend.set_source_breakpoints(path, [bp.spec for bp in bps])
        for bp, state in zip(bps, states):
            self._update_from_state(bp, state)

    async def _apply_functions(self) -> None:
        self._backend_now()
        bps = [bp for bp in self.breakpoints.values() if bp.spec.function]
        states = await self.backend.set_function_breakpoints([bp.spec for bp in bps])
        for bp, state in zip(bps, states):
            self._update_from_state(bp, state)

    def _update_from_state(self, bp: Breakpoint, state) -> None:
        bp.verified = state.verified
        bp.line = state.line if state.line else (bp.spec.line if bp.spec.path else None)
        bp.message = state.message
        if state.backend_id is not None:
            self._backend_ids[bp.id] = state.backend_id
        else:
            self._backend_ids.pop(bp.id, None)

    async def restart(self, origin: Origin) -> None:
        """Relaunch the same program in this session, keeping breakpoints and output."""
        if self.launch_request is None or self.adapter is None:
            raise InvalidInput("Only a launched program can be restarted; attach again instead.")
        if self._restarting:
            raise ResourceBusy("A restart is already under way; wait for it (`await`, debug_wait).")
        self._restarting = True
        try:
            await self._restart(origin)
        finally:
            self._restarting = False

    async def _restart(self, origin: Origin) -> None:
        assert self.launch_request is not None and self.adapter is not None
        backend, self.backend = self.backend, None
        self._backend_gen += 1
        if backend is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(backend.disconnect(True), 5)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(backend.dispose(), 10)
        self._invalidate_caches()
        self.stop = None
        self.last_stop = None
        # Ids of the killed process mean nothing in the new one.
        self.selected_thread_id = None
        self.selected_frame_index = 0
        self.exit_code = None
        self.terminated_reason = None
        self.adapter_died = None
        self._backend_ids.clear()
        text = f"--- restarted by {origin} ---\n"
        seq = self.output.append("console", text)
        self.publish("output", {"seq": seq, "category": "console", "text": text}, origin=origin)
        # A restart after `stop` brings the session back: its host stays for it.
        self.end_requested = False
        self.state = SessionState.idle
        await self.launch(self.launch_request, self.adapter, origin)

    # ================================================================= end

    async def terminate(self, origin: Origin) -> None:
        await self._end(terminate=True, origin=origin)

    async def detach(self, origin: Origin) -> None:
        await self._end(terminate=False, origin=origin)

    async def _end(self, terminate: bool, origin: Origin) -> None:
        # A headless host exits once someone asked for the end, even of an ended program.
        self.end_requested = True
        if self.state != SessionState.terminated:
            self.terminated_reason = f"{'stopped' if terminate else 'detached'} by {origin}"
        backend = self.backend
        if backend is not None and self.state != SessionState.terminated:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(backend.disconnect(terminate), 5)
        if backend is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(backend.dispose(), 10)
        if self._stop_task and not self._stop_task.done():
            self._stop_task.cancel()
        self.stop = None
        if self.state != SessionState.terminated:
            await self._set_state(SessionState.terminated, origin)
            self.publish("terminated", {"reason": self.terminated_reason, "exit_code": self.exit_code},
                         origin=origin)

    async def close(self) -> None:
        """End everything: used when the hosting process exits."""
        # A child process is ours to end, though its session attached to it.
        await self._end(terminate=(self.attach_request is None or self.parent is not None)
                        and not self.leave_running, origin="session")
        for sub in list(self._subscribers):
            sub.close()


#: backends whose child processes become sessions of the tree (tui_debugger/tree.py)
FOLLOWS_CHILDREN = {"debugpy"}


def _children_of(pid: int) -> list[int]:
    """The program's direct child processes (Linux; none elsewhere)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                found.extend(int(p) for p in handle.read().split())
        except (OSError, ValueError):
            continue
    return found


#: how long a launch waits for its first stop before it says so
SLOW_FIRST_STOP_S = 5.0

#: threads whose top frame `threads` reads (one request each)
MAX_THREAD_FRAMES = 256


async def _shared(cache: dict[int, "asyncio.Future[Any]"], key: int, read) -> Any:
    """One read per key while it lasts: later callers wait for the same one. A
    read that fails is forgotten (the next caller tries again); a caller that
    gives up does not cancel it for the others."""
    future = cache.get(key)
    if future is None:
        future = cache[key] = asyncio.ensure_future(read())

        def forget_failure(done: "asyncio.Future[Any]") -> None:
            if done.cancelled() or done.exception() is not None:
                if cache.get(key) is done:
                    del cache[key]

        future.add_done_callback(forget_failure)
    return await asyncio.shield(future)


def _first_with_source(frames: list[Frame]) -> Frame | None:
    for frame in frames:
        if frame.location and frame.location.path and frame.location.line:
            return frame
    return None
