"""Node.js (and TypeScript through source maps) over the Chrome DevTools
Protocol: `node --inspect-brk`, the Runtime and Debugger domains, no adapter.

CdpBackend is made of one mixin a job, each typing its `self` as a protocol of
what it uses of the backend: launching.py (launch, attach, the program's
output, the end; the start-up order is written there), breakpoints.py,
stops.py (stops and run control), inspection.py (stack, scopes, variables,
evaluate). Here: the state they share, set in `__init__`, and the inspector's
events, each handled in turn by the mixin whose job it is.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
from typing import Any, Callable

from ..base import Backend, EventSink
from ..errors import CommandFailed, DebuggerError
from ..models import Capabilities, OutputEvent
from ..process import ChildProcess
from .breakpoints import EXCEPTION_FILTERS, BreakpointsMixin, _Breakpoint
from .children import _ChildAnnouncements
from .connection import CdpConnection
from .inspection import HUGE_ARRAY, InspectionMixin, _Handle, exception_message
from .launching import (
    EXIT_WAIT,
    INSPECTOR_START_TIMEOUT,
    NODE_INSTALL_HINT,
    PUBLISH_UID,
    LaunchingMixin,
)
from .stops import THREAD_ID, StopsMixin
from .scripts import GeneratedFileIndex, ScriptRegistry

# Callers import these from here; some now live in the module of their job.
__all__ = [
    "EXCEPTION_FILTERS", "EXIT_WAIT", "HUGE_ARRAY", "INSPECTOR_START_TIMEOUT",
    "NODE_INSTALL_HINT", "PUBLISH_UID", "THREAD_ID", "CdpBackend", "exception_message",
]


class CdpBackend(LaunchingMixin, BreakpointsMixin, StopsMixin, InspectionMixin, Backend):
    name = "node"

    def __init__(self, emit: EventSink) -> None:
        super().__init__(emit)
        self.capabilities = Capabilities(
            program_input=True,
            conditional_breakpoints=True,
            hit_conditional_breakpoints=True,
            log_points=True,
            function_breakpoints=False,
            pause=True,
            terminate=True,
            attach_pid=True,
            set_variable=True,
            exception_filters=list(EXCEPTION_FILTERS),
        )
        self._conn: CdpConnection | None = None
        self._child: ChildProcess | None = None
        self._attached = False
        self._events: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._pumps: list[asyncio.Task[None]] = []
        self._scripts = ScriptRegistry()
        self._generated = GeneratedFileIndex()
        #: (remote prefix, local prefix): a program whose files are elsewhere there
        self._path_map: list[tuple[str, str]] = []
        self._bp_lock = asyncio.Lock()
        self._bp_ids = itertools.count(1)
        self._bps_by_path: dict[str, list[_Breakpoint]] = {}
        self._bp_by_cdp_id: dict[str, _Breakpoint] = {}
        self._pause_on_exceptions = "uncaught"
        self._stop_on_entry = False
        self._hold_if_unarmed = False
        #: HOST:PORT of the inspector attached to, for the message when it goes away
        self._inspector_at: str | None = None
        self._paused: dict[str, Any] | None = None
        self._visible_stop = False
        self._last_action: str | None = None  # "step" or "pause" until the next stop
        self._handles: dict[int, _Handle] = {}
        #: values set in a scope at this pause, by (frame, scope number, name): V8's
        #: scope objects answer the values of the moment it paused
        self._scope_sets: dict[tuple[int, int, str], dict[str, Any]] = {}
        self._frame_ids: list[int] = []
        self._frames_by_id: dict[int, dict[str, Any]] = {}
        self._next_handle = itertools.count(1)
        self._finish_task: asyncio.Task[None] | None = None
        self._finished = False
        self._end_reason: str | None = None
        self._disposed = False
        #: the program's last stderr lines, for errors that need to say why it ended
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        #: the program's child Node processes announce themselves here
        self._children: _ChildAnnouncements | None = None
        #: a child process followed from its parent's session (its console reaches
        #: the program's own output already)
        self._followed = False
        #: its child processes are debugged too (each a session of its own)
        self.follows_children = False

    # ================================================================= events

    def _on_event(self, method: str, params: dict[str, Any]) -> None:
        self._events.put_nowait((method, params))

    async def _event_loop(self) -> None:
        """Events are handled one at a time, in order; handlers may await the
        inspector because replies are read by the connection's own task."""
        handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
            "Debugger.scriptParsed": self._on_script_parsed,
            "Debugger.breakpointResolved": self._on_breakpoint_resolved,
            "Debugger.paused": self._on_paused,
            "Debugger.resumed": self._on_resumed,
            "Runtime.consoleAPICalled": self._on_console,
            "Runtime.exceptionThrown": self._on_exception_thrown,
            "NodeRuntime.waitingForDisconnect": self._on_waiting_for_disconnect,
            "__closed__": self._on_closed,
        }
        while True:
            method, params = await self._events.get()
            handler = handlers.get(method)
            if handler is None:
                continue
            try:
                result = handler(params)
                if asyncio.iscoroutine(result):
                    await result
            except asyncio.CancelledError:
                raise
            except DebuggerError:
                # The connection died mid-handler; __closed__ follows and ends the session.
                pass
            except Exception as exc:  # noqa: BLE001 - one bad event must not stop the rest
                self.emit(OutputEvent(category="console", text=f"[node backend] {method}: {exc}\n"))

    # ================================================================= connection

    def _require_conn(self) -> CdpConnection:
        if self._conn is None or self._conn.is_closed:
            raise CommandFailed("No live Node session; launch or attach first.")
        return self._conn
