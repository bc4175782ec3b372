"""The session: one backend, its state machine, the breakpoint registry, the
output buffer, and the fan-out of events to every subscriber (the TUI, remote
clients of the daemon socket, the MCP server).

State machine: idle -> starting -> running <-> stopped -> terminated.

The session fetches only what a stop needs to say where it is (the top frames
of the stopped thread); scopes and variables are fetched when someone asks,
and cached until the program resumes.

`Session` is one object whose methods live by job in this package's modules,
as mixins over the state its constructor declares here:

  fanout.py       subscribers, listeners, activity, clients; set_state,
                  add_output and a run's end, the changes that are always told
  subscription.py a subscriber's bounded queue of events
  guards.py       the state guard decorator and the refusals
  stops.py        backend events by type, reading a stop, held hits, threads
  control.py      continue, steps, pause; waiting for a stop
  inspection.py   frames, scopes, variables, evaluate, the machine level
  breakpoints.py  the breakpoint registry and exception filters
  watches.py      watchpoints
  __init__.py     construction, launch / attach / restart, the end
  needs.py        what each mixin uses of the others, as Protocols (typing only)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from typing import Any, Callable

from backends.adapters import create_backend
from backends.base import Backend
from backends.errors import DebuggerError, InternalError, InvalidInput, ResourceBusy
from backends.models import (
    AttachRequest,
    Breakpoint,
    ChildProcessEvent,
    Frame,
    LaunchRequest,
    Scope,
    StoppedEvent,
    Variable,
)

from .. import events
from ..models import (ActivityEntry, ClientInfo, Origin, SessionState, StopInfo, Watch,
                      WatchChange)
from ..output import OutputBuffer
from .breakpoints import BreakpointRegistry
from .control import RunControl
from .fanout import FanOut
from .guards import Guards, guarded
from .inspection import Inspection
from .stops import Stops
from .subscription import Subscription
from .watches import Watchpoints

__all__ = ["Session", "SessionState", "Subscription"]


class Session(FanOut, Guards, Stops, RunControl, Inspection, BreakpointRegistry, Watchpoints):
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
        # Set (and replaced) at every state change: wait_for_state's waiters re-check.
        self._state_changed = asyncio.Event()
        self._run_generation = 0  # bumped at every resume
        self._last_how: str | None = None  # how the program was last resumed
        self._resumed_by: Origin | None = None
        self._frames: dict[int, tuple[list[Frame], int | None]] = {}
        # Reads of the current stop, shared while on their way: the prefetch of a
        # stop's locals and a front end's request for them are one adapter request.
        self._scopes: dict[int, asyncio.Future[list[Scope]]] = {}
        self._variables: dict[int, asyncio.Future[list[Variable]]] = {}
        #: per thread, the ids its last shown stop's locals were read by (the
        #: frame's id, its locals' reference): asked for again at its next stop
        #: before the stack answers, where the backend keeps ids (inspection.py)
        self._view_ids: dict[int, tuple[int, int]] = {}
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
        #: a process of its tree (a child's session) has stopped (tree.py): the
        #: program is not slow to stop, its stop is elsewhere
        self.child_stopped = False
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
        #: calls waiting for the next stop (answering_stop: a run command, `await`): each answers with
        #: the stop's locals, so a stop read while one waits reads them at once
        self._stop_waiters = 0
        self._stepping_out_of: str | None = None  # the function a step out leaves
        #: watchpoints (data breakpoints), by the session's id
        self.watches: dict[int, Watch] = {}
        self._next_watch_id = 1
        #: changes the backend told (debugpy) since the last stop read them
        self._told_watch_changes: list[WatchChange] = []
        #: called with each change of a watch copied from another process (a
        #: forked child's): the tree adds it to the history of the one it was set in
        self.watch_relay: Callable[[Watch, WatchChange], None] | None = None
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

    @guarded(SessionState.idle, doing="launch", settle=False, live=False)
    async def launch(self, request: LaunchRequest, adapter: str, origin: Origin = "user") -> None:
        await self._launch(request, adapter, origin)

    async def _launch(self, request: LaunchRequest, adapter: str, origin: Origin) -> None:
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
        if self.last_stop is not None or self.child_stopped or self.state not in (
                SessionState.starting, SessionState.running):
            return
        image = self.undebugged_exec()
        text = f"No stop yet after {SLOW_FIRST_STOP_S:.0f} s" + (
            f": {image}" if image else "; the program runs.")
        hint = self.backend.slow_first_stop_hint(
            str(self.metadata.get("python") or "") or None) if self.backend and not image \
            else None
        if hint:
            text += " " + hint
        self.first_stop_notice = text
        # In the activity log too: a TUI that joins after the notice finds it there.
        self.record_activity("session", "waiting", text)
        self.publish(events.Notice(text=text))

    @guarded(SessionState.idle, doing="attach", settle=False, live=False)
    async def attach(self, request: AttachRequest, adapter: str, origin: Origin = "user",
                     backend: Backend | None = None) -> None:
        """Attach through `adapter`, or through a prepared `backend` (the simctl
        flow resolves the simulator and the app before the session attaches)."""
        self.adapter = adapter
        self.attach_request = request
        self.program = request.program or (f"pid {request.pid}" if request.pid else
                                           f"{request.host}:{request.port}")
        remote = request.pid is None and request.port is not None

        def start(started: Backend):
            # A gdb-remote server's program stays stopped where the server holds it.
            self._stop_expected = remote and started.remote_attach_stops
            return started.attach(request, self._configure)

        await self._start(start, adapter, origin, backend=backend)

    async def _start(self, start, adapter: str, origin: Origin, backend: Backend | None = None) -> None:
        self.set_state(SessionState.starting, origin)
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
            self._end_of_run(reason, origin)
            if isinstance(exc, DebuggerError):
                raise
            if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt)):
                raise
            raise InternalError(f"Starting the {adapter} backend failed: {reason}.") from exc
        if not (self.backend and self.backend.follows_children) and not (self.backend and self.backend.post_mortem):
            self._children_watch = asyncio.get_running_loop().create_task(
                self._say_children_are_not_followed(self._backend_gen))
        stop_on_its_way = self._stop_task is not None and not self._stop_task.done()
        if self.state == SessionState.starting and not stop_on_its_way:
            # No stop arrived during start-up: the program runs.
            self.set_state(SessionState.running, origin)

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
                self.add_output("important", text)
                return

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
        self.child_stopped = False
        self.first_stop_notice = None
        # Ids of the killed process mean nothing in the new one.
        self.selected_thread_id = None
        self.selected_frame_index = 0
        self.exit_code = None
        self.terminated_reason = None
        self.adapter_died = None
        self._backend_ids.clear()
        # A new run counts its own hits, as the adapter's hit conditions do.
        for counted in (*self.breakpoints.values(), *self.watches.values()):
            counted.hits = 0
        self._end_program_watches()
        self.add_output("console", f"--- restarted by {origin} ---\n", origin)
        # A restart after `stop` brings the session back: its host stays for it.
        self.end_requested = False
        await self._launch(self.launch_request, self.adapter, origin)

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
            self._end_of_run(self.terminated_reason, origin)

    async def close(self) -> None:
        """End everything: used when the hosting process exits."""
        # A child process is ours to end, though its session attached to it.
        await self._end(terminate=(self.attach_request is None or self.parent is not None)
                        and not self.leave_running, origin="session")
        for sub in list(self._subscribers):
            sub.close()


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
