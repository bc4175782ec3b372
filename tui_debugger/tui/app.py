"""The TUI application. `create_app` is the one factory: the CLI (through
`run_app`) and the tests build the app the same way.

The TUI is always a client. `run` and `attach` start a host process (a
daemon, host.py) for the new session and join it through its socket; `ui`
joins a live one. The sessions it started end when it quits; killed outright,
it leaves them to their hosts, which end them once no client has come back
within their idle time.

The app is the only part that talks to the session (through a RemoteHandle):
panes receive data as attributes and post messages when the person acts. Every
session event is handled here, whoever caused it, so what an agent or the CLI
does shows up exactly as what the person does.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import os
import time
import signal
import sys
from functools import partial
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.actions import SkipAction
from textual.css.query import NoMatches
from textual.widgets import Footer, Input, TabbedContent, TabPane, TextArea

from backends.errors import DebuggerError
from backends.models import Breakpoint

from ..commands import registry
from ..commands.views import VariablesResult
from .. import paths
from ..models import ActivityEntry, ClientInfo, StopInfo
from ..commands.registry import View
from ..router import RemoteHandle, join
from .format import breakpoint_detail, breakpoint_glyph, display_path, own_origin, who_proper
from .keymap import app_bindings, bindable_ids, user_keymap
from .messages import (CompleteName, EditBreakpoint, EditValue, Evaluate, ExpandResult, Inspect, LoadChildren, Ordered,
                       RunCommand, SendInput, ShowMemory, StartSession, SwitchSession, ToggleBreakpoint,
                       WatchesChanged,
                       in_flight, next_order)
from .frames import PacedScreen
from .palette import RegistryCommands
from .widgets.activity_pane import ActivityPane
from .widgets.attach_dialog import AttachDialog
from .widgets.breakpoint_dialog import BreakpointDialog
from .widgets.breakpoints_pane import BreakpointsPane
from .widgets.command_form import CommandForm, needs_form
from .widgets.console_pane import ConsolePane
from .widgets.console_results import ConsoleResults
from .widgets.disassembly_view import DisassemblyView
from .widgets.memory_screen import MemoryScreen
from .widgets.help_screen import HelpScreen, binding_rows
from .widgets.output_pane import OutputPane
from .widgets.exception_dialog import ExceptionDialog
from .widgets.exception_pane import ExceptionPane
from .widgets.value_dialog import ValueDialog
from .widgets.open_file_dialog import OpenFileDialog, program_files, project_files
from .widgets.quit_dialog import QuitDialog
from .widgets.session_picker import SessionPicker
from .widgets.source_prompt import SourcePrompt
from .widgets.source_view import GutterMark, SourceView
from .widgets.stack_pane import StackPane
from .widgets.status_bar import StatusBar
from .widgets.threads_pane import ProcessRow, ThreadsPane
from .widgets.variables_pane import Key, VariablesPane
from .widgets.watches_pane import WatchesPane

MODES = {"launch": "launch", "attach": "attach", "attach_sim": "attach_sim", "join": None}
#: Seconds a program must keep running before its panes are dimmed as stale.
STALE_AFTER = 0.15
#: Seconds a program must keep running after a stop before the status bar says RUNNING.
RUNNING_AFTER = 0.05
#: Seconds the status bar waits for a stop's event before it says STOPPED without it.
STOPPED_STATUS_AFTER = 0.025
#: Seconds after a stop by which the footer's keys are un-greyed, at the latest.
FOOTER_AFTER_STOP = 0.3

#: The TUI learns of the stop from the session's events, so it does not wait for it.
RESUMING = {"continue", "next", "step", "finish", "stepi", "nexti"}
#: How the session names each resume ("how" in continued events), as a sentence.
VERBS = {"next": "stepped over", "step_in": "stepped into", "step_out": "stepped out",
         "continue": "continued", "goto": "jumped"}
PAGE = 100
#: Seconds a command waits for the message of an earlier key that never arrives
#: (its pane went away meanwhile) before it runs anyway.
ORDER_GIVE_UP = 1.0

#: The TUI shows each scope in its own node, values cut at the pane's width,
#: and the whole activity log: sent with its calls (registry.View).
PANES = View(panes=True)


class DebuggerApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "tui-debugger"
    COMMANDS = App.COMMANDS | {RegistryCommands}
    BINDINGS = app_bindings()
    #: Under 100 columns the side panes give the source room (its code keeps ~60 columns).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    NOTIFICATION_TIMEOUT = 4
    #: Tests and screenshots turn blinking off so every capture is the same.
    CURSOR_BLINK = True

    #: A var, not a reactive: a reactive on the App repaints the whole screen when it
    #: changes, which is twice a step; the status bar shows the state.
    state: var[str] = var("connecting")

    def __init__(self, mode: str, args: dict[str, Any] | None = None, session: str | None = None,
                 *, cwd: str | None = None, keymap: dict[str, str] | None = None) -> None:
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.start_args = dict(args or {})
        self.session_arg = session
        self.cwd = cwd or os.getcwd()
        #: How this TUI names itself to the session ("web" in a browser tab).
        self.origin = own_origin()
        self.keymap = user_keymap() if keymap is None else dict(keymap)
        self.link: RemoteHandle | None = None
        #: The sessions this TUI started, and how quitting ends each: a launched
        #: program is terminated, an attached one detached. Their hosts are
        #: daemons; the TUI is only ever their client.
        self.owned: dict[str, str] = {}
        self.stop_info: StopInfo | None = None
        self.selected_frame = 0
        self.breakpoints: list[Breakpoint] = []
        self.watch_expressions: list[str] = []
        self.output_cursor = 0
        self.error_message: str | None = None
        self.program: str | None = None
        self._seen_activity: set[tuple[float, str, str]] = set()
        self._last_resume: tuple[str, str] | None = None  # (origin, how) of the last resume
        self._bindings_state: str | None = None  # the state the footer was last drawn for
        #: The threads are fetched at a stop only while shown, or when they may have
        #: changed: a thread started or ended, or another thread is selected.
        self._threads_stale = True
        self._threads_selected: int | None = None
        #: the processes of the session tree, for the Threads pane (read again
        #: after a switch and when a process starts, stops or ends)
        self._processes: list[ProcessRow] | None = None
        self._processes_stale = True
        self._threads_last: list[Any] | None = None
        #: held while the screen is composed for a session and filled (_switch)
        self._switch_lock = asyncio.Lock()
        self._shutting_down = False
        self._state_events = 0  # state, stop, resume and end events seen (see _sync_all)
        self._state_changes = 0  # changes of `state` (see watch_state)
        self._exception_tab = False  # the Exception tab is shown, or on its way
        self._signals: list[int] = []
        #: The host of the session to start, when run_app started it already.
        self.pending_host: Any = None
        #: The person's commands, run one after the other in the order of the keys
        #: that made them: (order, command id, arguments).
        self._queued: list[tuple[int, str, dict[str, Any]]] = []
        self._queue_changed = asyncio.Event()
        self._resumed = asyncio.Event()  # set when the state becomes running

    # ================================================================== layout

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status", cwd=self.cwd)
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield SourceView(id="source", cwd=self.cwd)
                yield DisassemblyView(id="disassembly")
                yield SourcePrompt(id="source-prompt")
                with TabbedContent(id="io-tabs"):
                    with TabPane("Output", id="tab-output"):
                        yield OutputPane(id="output")
                    with TabPane("Console", id="tab-console"):
                        yield ConsolePane(id="console")
                    with TabPane("Activity", id="tab-activity"):
                        yield ActivityPane(id="activity")
            with Vertical(id="right"):
                with TabbedContent(id="data-tabs"):
                    with TabPane("Variables", id="tab-variables"):
                        yield VariablesPane(id="variables")
                    with TabPane("Watches", id="tab-watches"):
                        yield WatchesPane(id="watches")
                with TabbedContent(id="nav-tabs"):
                    with TabPane("Stack", id="tab-stack"):
                        yield StackPane(id="stack", cwd=self.cwd)
                    with TabPane("Threads", id="tab-threads"):
                        yield ThreadsPane(id="threads")
                    with TabPane("Breakpoints", id="tab-breakpoints"):
                        yield BreakpointsPane(id="breakpoints", cwd=self.cwd)
        yield Footer()

    @property
    def source(self) -> SourceView:
        return self.query_one(SourceView)

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def variables(self) -> VariablesPane:
        return self.query_one(VariablesPane)

    def get_default_screen(self) -> PacedScreen:
        return PacedScreen(id="_default")

    def on_mount(self) -> None:
        from .. import config


        theme = getattr(config.settings(), "theme", None)
        if theme and theme in self.available_themes:
            self.theme = theme
        if self.keymap:
            check = getattr(config, "check_keymap", None)
            if check is not None:
                try:
                    check(self.keymap, bindable_ids())
                except DebuggerError as exc:
                    self.fail(exc.message)
                    return
            self.set_keymap(self.keymap)
        self._after_compose()
        self.source.prepare_for(self.start_args.get("program"))
        self.status.message = "starting…" if self.mode != "join" else "joining…"
        self.run_worker(self._start(), name="start", group="start")
        self.run_worker(self._run_in_order(), name="commands", group="command-order")
        self._handle_end_signals()

    def _handle_end_signals(self) -> None:
        """A closed terminal (SIGHUP) or a `kill` (SIGTERM) quits like q does: the
        sessions this app started end (their hosts exit and remove their socket
        and .json); joined ones are left as they are."""
        loop = asyncio.get_running_loop()

        async def hang_up() -> None:
            # The terminal is gone: nothing can be drawn or restored, so end the
            # sessions and leave without waiting on the screen (and leave anyway
            # if that cannot finish: a thread, since the loop may be what hangs).
            import threading

            backstop = threading.Timer(25, lambda: os._exit(129))
            backstop.daemon = True
            backstop.start()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self.shutdown(), 20)
            os._exit(129)

        handlers = {signal.SIGTERM: lambda: loop.create_task(self.action_quit()),
                    signal.SIGHUP: lambda: loop.create_task(hang_up())}
        for sig, handler in handlers.items():
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, handler)
                self._signals.append(sig)

    def _after_compose(self) -> None:
        if not self.CURSOR_BLINK:
            for box in self.query(Input):
                box.cursor_blink = False
        self.source.focus()

    # ================================================================== connecting

    async def _start(self) -> None:
        try:
            if self.mode == "join":
                if self.session_arg is None and not paths.live_sessions():
                    # Nothing to join: offer to start something rather than fail.
                    self.state = "idle"
                    self.status.message = "no session: attach or launch (Ctrl+A)"
                    self.open_start_dialog("launch", note="No live session to join.")
                    return
                try:
                    link = await join(self.session_arg, self.origin, cwd=self.cwd, view=PANES)
                except DebuggerError as exc:
                    if self.session_arg is not None or not exc.details.get("sessions"):
                        raise
                    # None of this project's, or several: offer them, never pick one.
                    self.state = "idle"
                    self.status.message = "no session of this project: pick one, or Ctrl+A"
                    self.push_screen(SessionPicker(exc.details["sessions"],
                                                   exc.message.splitlines()[0]),
                                     self._session_picked)
                    return
            else:
                link = await self._host(MODES[self.mode], self.start_args)
        except DebuggerError as exc:
            self.fail(exc.message)
            return
        async with self._switch_lock:
            self._show_now(link)
            await self._sync_all(follow_child=True)

    async def _host(self, command_id: str, args: dict[str, Any]) -> RemoteHandle:
        """Start a host process (a daemon) running `command_id` for a new session,
        and join it. The session is this TUI's: quitting ends it. `run_app`
        starts the first host before the TUI is even imported."""
        from ..host import PendingHost, no_first_stop_wait

        if command_id == "attach" and args.get("ray") is not None and self.pending_host is None:
            root = await self._join_ray_root(args)
            if root is not None:
                return root
        pending, self.pending_host = self.pending_host, None
        if pending is None:
            pending = PendingHost(command_id, no_first_stop_wait(command_id, args), cwd=self.cwd,
                                  origin=self.origin, owned=True)
        status = await pending.ready()
        name = status["session"]
        # A first stop can be painted before the start-up status call answers.
        self.status.adapter = status.get("adapter")
        self.owned[name] = "terminate" if command_id == "launch" else "detach"
        return await join(name, self.origin, view=PANES)

    async def _join_ray_root(self, args: dict[str, Any]) -> RemoteHandle | None:
        """The Ray tab while a root `ray` lives: its host attaches the worker
        (one tree per cluster); None when there is no live root."""
        from ..commands.ray import ROOT_NAME

        if not any(s.name == ROOT_NAME for s in paths.live_sessions()):
            return None
        link = await join(ROOT_NAME, self.origin, view=PANES)
        pid = args.get("pid")
        await link.call("ray_attach", {"ray": args.get("ray") or None,
                                       **({"pids": [pid]} if pid else {"every": True})})
        return link

    def _show_now(self, link: RemoteHandle) -> None:
        """Make `link` the session on screen and pump its events (panes already empty)."""
        self.link = link
        self.run_worker(self._pump(link), name="events", group="events", exclusive=True)

    async def _pump(self, link: RemoteHandle) -> None:
        async for event in link.events():
            if self.link is not link:
                break  # switched to another session
            try:
                self.on_session_event(event.kind, event.data, event.origin)
            except Exception as exc:  # a bad event must not stop the pane updates
                self.log.error(f"event {event.kind}: {exc!r}")
        if not self._shutting_down and self.link is link:
            self.state = "terminated"
            self.status.message = "the session's host went away"

    async def _sync_all(self, follow_child: bool = False) -> None:
        """Everything that happened before this client subscribed. `follow_child`:
        on the first session shown, a child process already stopped is shown."""
        link = self.link
        if link is None:
            return
        events_before = self._state_events
        # All four at once: a first stop can arrive on the event stream meanwhile,
        # and its line should have its breakpoint marks a moment later, not four
        # round trips later.
        calls = [asyncio.ensure_future(link.call(command, args)) for command, args in (
            ("breakpoint_list", {}), ("status", {}), ("activity", {}),
            ("output", {"since": 0, "limit": 5000}))]
        try:
            bps, status, activity, out = await asyncio.gather(*calls)
        except BaseException as exc:
            for call in calls:
                call.cancel()
            if not isinstance(exc, DebuggerError):
                raise
            self.notify(exc.message, severity="error")
            return
        for entry in out.entries:
            self._add_output(entry.seq, entry.category, entry.text)
        self.status.adapter = status.adapter
        self.status.python = status.python_short
        self.program = status.program
        self.status.session_name = status.session
        self.status.set_clients(status.clients, self.origin)
        self.status.exit_code = status.exit_code
        self.status.message = status.terminated_reason or ""
        self._show_breakpoints(bps.breakpoints)
        for entry in activity.entries:
            self._add_activity(entry)
        waiting = [e for e in activity.entries if e.origin == "session" and e.command == "waiting"]
        if waiting and status.state in ("starting", "running") and status.stop is None:
            # Said before this TUI joined: a launch still waiting for its first stop.
            self.on_session_event("notice", {"text": waiting[-1].summary}, "session")
        # The events that came while these answers were on their way are newer
        # than the status snapshot: a stop that arrived meanwhile stays.
        if self._state_events == events_before and (
                self.state == "connecting" or status.state != self.state):
            self.state = status.state
        if status.state == "stopped" and status.stop is not None and self.stop_info is None:
            self._on_stopped(status.stop, "session")
        elif status.adapter == "ray":
            self._show_a_worker(status.session)
        elif status.state == "running" and follow_child:
            # A child process that stopped before this client subscribed (its
            # `process` event came and went): follow it as if it had just stopped.
            await self._fetch_processes()
            stopped = next((p for p in self._processes or [] if not p.shown
                            and p.state == "stopped"), None)
            if stopped is not None and self.link is link and self.state == "running":
                self.run_worker(self.switch_session(stopped.session), group="switch")

    def _show_a_worker(self, root: str) -> None:
        """A Ray root has no program of its own: show a paused worker of its tree
        (a stopped one first), and name the others; the tree's later stops are
        followed as a child process's are (_on_process)."""
        workers = [s for s in paths.live_sessions() if s.parent == root]
        if not workers:
            self.notify("No Ray worker is attached yet: tasks that pause are attached as "
                        "they come.", title="Ray")
            return
        workers.sort(key=lambda s: (s.state != "stopped", s.name))
        self.notify(f"{len(workers)} Ray worker{'s' if len(workers) > 1 else ''}: "
                    + ", ".join(f"{s.name} ({s.state})" for s in workers)
                    + ". Ctrl+P \"switch\" to another.", title="Ray")
        self.run_worker(self.switch_session(workers[0].name), group="switch")

    def fail(self, message: str) -> None:
        """Starting failed: leave with the message (run_app prints it)."""
        self.error_message = message
        self.exit(1, return_code=1)

    # ================================================================== more sessions

    def _session_picked(self, name: str | None) -> None:
        if name is None:
            self.open_start_dialog("launch")
        else:
            self.run_worker(self.switch_session(name), group="start-session", exclusive=True)

    def action_attach_dialog(self) -> None:
        self.open_start_dialog()

    def open_start_dialog(self, tab: str = "process", note: str = "") -> None:
        if not isinstance(self.screen, AttachDialog):
            self.push_screen(AttachDialog(tab, note), self._start_dialog_closed)

    def _start_dialog_closed(self, result: bool | None) -> None:
        if result is None:
            # Cancelled, perhaps while attaching (waiting for a simulator app): stop it.
            self.workers.cancel_group(self, "start-session")

    def on_switch_session(self, message: SwitchSession) -> None:
        message.stop()
        self.run_worker(self.switch_session(message.name), group="switch")

    def on_start_session(self, message: StartSession) -> None:
        message.stop()
        self.run_worker(self._start_session(message.command_id, message.args),
                        group="start-session", exclusive=True)

    async def _start_session(self, command_id: str, args: dict[str, Any]) -> None:
        """Start attach / attach_sim / launch in a host of its own, then switch to
        the new session. The one on screen before keeps running (see _leave).
        Cancelled (the dialog closed while it waits for an app), the host that was
        not ready yet is ended."""
        try:
            link = await self._host(command_id, args)
        except DebuggerError as exc:
            if isinstance(self.screen, AttachDialog):
                self.screen.failed(exc.message)
            else:
                self.notify(exc.message, title=command_id, severity="error")
            return
        if isinstance(self.screen, AttachDialog):
            await self.screen.dismiss(True)
        async with self._switch_lock:
            await self._switch(link)

    async def switch_session(self, name: str) -> None:
        """Show another live session (joined through its socket). Switches wait
        for one another, never cancel one another: a switch cut off in the middle
        of composing the screen would leave it empty."""
        async with self._switch_lock:
            if self.link is not None and self.link.name == name:
                return
            try:
                link = await join(name, self.origin, view=PANES)
            except DebuggerError as exc:
                self.notify(exc.message, title="switch session", severity="error")
                return
            await self._switch(link)

    def other_sessions(self) -> list[str]:
        """Names of the live sessions one could switch to."""
        current = self.link.name if self.link is not None else None
        return [s.name for s in paths.live_sessions() if s.name != current]

    async def _switch(self, link: RemoteHandle) -> None:
        """Fresh panes for `link`. The previous session is left as it is: started
        here, it keeps running (joinable by name) and ends with this TUI, or at
        once if its program already ended; joined, this TUI just leaves it."""
        previous = self.link
        self.link = None  # the old pump stops at its next event
        for group in ("events", "refresh", "children", "watches", "threads", "console"):
            self.workers.cancel_group(self, group)
        if previous is not None or self.state != "connecting":
            await self.recompose()
            self._reset_panes_state()
            self._after_compose()
        self._show_now(link)
        await self._sync_all()
        if previous is not None and previous.name != link.name:
            await self._leave(previous)

    def _reset_panes_state(self) -> None:
        self.stop_info = None
        self.selected_frame = 0
        self.breakpoints = []
        self.watch_expressions = []
        self.output_cursor = 0
        self._seen_activity.clear()
        self._last_resume = None
        self._threads_stale = True
        self._threads_last = None
        self._processes_stale = True
        self.state = "connecting"

    async def _leave(self, previous: RemoteHandle) -> None:
        name = previous.name
        if name in self.owned:
            try:
                status = await asyncio.wait_for(previous.call("status"), 5)
            except (DebuggerError, asyncio.TimeoutError):
                status = None
            if status is not None and status.state == "terminated":
                await self._end_owned(name, previous)
            elif status is not None and not _same_tree(name, self.link):
                self.notify(f"{name} keeps running: Ctrl+P \"switch\" comes back to it, "
                            f"`tui-debugger ui --session {name}` joins it. Quitting ends it.",
                            title="Previous session")
        with contextlib.suppress(Exception):
            await asyncio.wait_for(previous.close(), 5)

    async def _end_owned(self, name: str, link: RemoteHandle | None = None) -> None:
        """End a session this TUI started (its host then exits)."""
        how = self.owned.pop(name, "terminate")
        opened = link is None or link.closed
        try:
            if opened:
                link = await RemoteHandle.connect(name, self.origin, register=False)
            assert link is not None
            await asyncio.wait_for(link.call(how), 20)
        except (DebuggerError, asyncio.TimeoutError, OSError):
            pass  # already gone, or its host ends it after its idle time
        finally:
            if opened and link is not None:
                with contextlib.suppress(Exception):
                    await link.close()

    # ================================================================== session events

    def on_session_event(self, kind: str, data: dict[str, Any], origin: str) -> None:
        if kind in ("state", "stopped", "continued", "terminated"):
            self._state_events += 1
        if kind == "state":
            if data.get("state") == "starting" and self.state == "terminated":
                # restarted (by anyone): the last run's end is no longer news
                self.status.exit_code = None
                self.status.message = ""
            self.state = data.get("state", self.state)
        elif kind == "stopped":
            self._on_stopped(StopInfo.model_validate(data), origin)
        elif kind == "continued":
            if self._exception_tab:  # a worker per step costs a millisecond: only when shown
                self._exception_tab = False
                self.run_worker(self._hide_exception(), group="exception", exclusive=True)
            self._last_resume = (origin, data.get("how", "continue"))
            self.stop_info = None  # the status bar says so with RUNNING (watch_state)
        elif kind == "output":
            self._add_output(int(data.get("seq", 0)), data.get("category", "stdout"), data.get("text", ""))
        elif kind == "breakpoints":
            self._show_breakpoints([Breakpoint.model_validate(b) for b in data.get("breakpoints", [])])
        elif kind == "activity":
            self._add_activity(ActivityEntry.model_validate(data))
        elif kind == "selection":
            self._on_selection(data, origin)
        elif kind == "exited":
            self.status.exit_code = data.get("exit_code")
        elif kind == "terminated":
            self.state = "terminated"
            self.status.exit_code = data.get("exit_code", self.status.exit_code)
            self.status.message = data.get("reason") or ""
            self.query_one(OutputPane).flush_partial()
            self._clear_stop()
            code = data.get("exit_code")
            self.notify("The program ended" + (f" with exit code {code}." if code is not None else "."),
                        title="Session over")
        elif kind == "notice":
            self.notify(str(data.get("text") or ""), title="Waiting for the first stop", timeout=15)
        elif kind == "threads":
            self._threads_stale = True
            if self.state == "stopped" and self._threads_shown():
                # Threads stop beside the shown one (held at a breakpoint): keep current.
                self.run_worker(self._refresh_threads(), group="threads", exclusive=True)
        elif kind == "values":
            # Someone changed a value: every pane that shows values reads them again.
            self.run_worker(self._refresh_values(), group="refresh-values", exclusive=True)
        elif kind == "process":
            self._on_process(data)
        elif kind == "clients":
            self.status.set_clients([ClientInfo.model_validate(c) for c in data.get("clients", [])],
                                   self.origin)

    def _clear_stop(self) -> None:
        """The program ended: no current line, no stack, no threads. Variables and
        watches keep their last values (dimmed) to read what the program left."""
        self.stop_info = None
        self.status.stop = None
        self.source.clear_location()
        self.query_one(StackPane).show_frames([], 0)
        self.query_one(ThreadsPane).show_threads([])
        for pane in (self.variables, self.query_one(WatchesPane)):
            pane.add_class("-stale")

    def watch_state(self, previous: str, state: str) -> None:
        if state != previous:
            # The timers below act on the state they were set in, not on a later
            # one: a person holding F10 starts a new run before an old timer fires.
            self._state_changes += 1
        if state == "running":
            self._resumed.set()
        if previous == "stopped" and state == "running":
            # A step that stops again within a frame or two never shows RUNNING:
            # the status bar keeps the last stop until the new one replaces it, so
            # the stop's paint is not held back by a frame spent on the flash.
            self.set_timer(RUNNING_AFTER, partial(self._show_running_status, self._state_changes))
        elif state == "stopped" and previous in ("running", "starting"):
            # The stop's event follows at once: the status bar says STOPPED with
            # its place (_on_stopped), in the same frame, not a frame before it.
            self.set_timer(STOPPED_STATUS_AFTER, self._show_stopped_status)
        else:
            self.status.state = state
        if state in ("running", "starting"):
            # Grey out and dim only if the program is still running a moment later:
            # restyling five panes and rebuilding the footer cost ~50 ms of the loop
            # the debugger's I/O shares, which a quick step should not pay. Keys are
            # checked against the state when pressed, so nothing runs that shouldn't.
            self.set_timer(STALE_AFTER, partial(self._show_running, self._state_changes))
            return
        if state == "stopped" and self._bindings_state != state:
            # Rebuilding the footer's keys costs tens of milliseconds of the loop:
            # after a stop it waits until the stop's panes are shown (end of _refresh),
            # or a moment, whichever comes first.
            self.set_timer(FOOTER_AFTER_STOP, self._show_stopped_bindings)
            return
        self._show_bindings_for(state)

    def _show_stopped_bindings(self) -> None:
        if self.state == "stopped":
            self._show_bindings_for("stopped")

    def _show_bindings_for(self, state: str) -> None:
        if self._bindings_state != state:
            self._bindings_state = state
            self.refresh_bindings()

    def _show_stopped_status(self) -> None:
        if self.state == "stopped" and not self.closing:
            self.status.state = self.state

    def _show_running_status(self, changes: int) -> None:
        if self.state == "running" and changes == self._state_changes:
            self.status.stop = None
            self.status.state = self.state

    def _show_running(self, changes: int) -> None:
        if self.state not in ("running", "starting") or changes != self._state_changes:
            return  # stopped since (and maybe running again: a new timer is on its way)
        self._show_bindings_for(self.state)
        try:
            panes = (self.source, self.variables, self.query_one(StackPane),
                     self.query_one(WatchesPane), self.query_one(ThreadsPane))
        except NoMatches:
            return  # the screen is being composed for another session (a switch)
        for pane in panes:
            pane.add_class("-stale")

    def _on_stopped(self, stop: StopInfo, origin: str) -> None:
        self.stop_info = stop
        if stop.thread_id != self._threads_selected:
            self._threads_stale = True
        self.selected_frame = 0
        # Paint the new place first: it is in the event, no round trip needed. The
        # stack and variables follow in the next frame (_refresh), which the
        # frame pacer lets through at once (tui/frames.py).
        loc = stop.location
        self.source.show_location(loc.path if loc else None, loc.line if loc else 0, top=True,
                                  name=loc.name if loc else None)
        self.source.remove_class("-stale")
        self.status.stop = stop
        self.status.state = "stopped"
        self._show_hits()
        resumed_by, how = self._last_resume or (origin, "")
        if resumed_by not in (self.origin, "session", "user") and resumed_by == origin:
            where = f" → {display_path(loc.path, self.cwd)}:{loc.line}" if loc and loc.path else ""
            self.notify(f"{who_proper(origin, capital=True)} {VERBS.get(how, 'resumed')}{where}",
                        title=f"{who_proper(origin, capital=True)} is driving")
        self._last_resume = None
        if stop.watch_changes:
            self.notify("\n".join(f"{c.expression}: {c.old} → {c.new}" for c in stop.watch_changes),
                        title="Watchpoint")
        if stop.reason == "exception":
            self._exception_tab = True
            self.run_worker(self._show_exception(stop), group="exception", exclusive=True)
        self.run_worker(self._refresh(), group="refresh", exclusive=True)
        if self.disassembly_shown:
            self.run_worker(self._refresh_disassembly(), group="disassembly", exclusive=True)

    @property
    def closing(self) -> bool:
        """The app is closing: its panes are going or gone."""
        return not self.is_running or self._shutting_down

    @property
    def stop_shown(self) -> bool:
        """Stopped, and the stop is on screen (its line and the status bar)."""
        return (self.state == "stopped" and self.stop_info is not None
                and self.status.stop is self.stop_info)

    async def _show_exception(self, stop: StopInfo) -> None:
        """The Exception tab, in front, until the next resume."""
        tabs = self.query_one("#io-tabs", TabbedContent)
        if not self.query(ExceptionPane):
            await tabs.add_pane(TabPane("Exception", ExceptionPane(id="exception", cwd=self.cwd),
                                        id="tab-exception"), before="tab-output")
        pane = self.query_one(ExceptionPane)
        pane.show(stop)
        tabs.active = "tab-exception"
        if self.focused is not None and tabs in self.focused.ancestors:
            pane.focus()  # the tabs follow the focus: it must not stay in a hidden tab

    async def _hide_exception(self) -> None:
        if self.query(ExceptionPane):
            await self.query_one("#io-tabs", TabbedContent).remove_pane("tab-exception")

    def _on_process(self, data: dict[str, Any]) -> None:
        """A child process of this session's tree started, stopped or ended: the
        screen follows a stop into the process that stopped, and goes back to
        the parent when the process shown ends."""
        name, event = str(data.get("session") or ""), data.get("event")
        current = self.link.name if self.link is not None else None
        self._processes_stale = self._threads_stale = True
        if self.state == "stopped" and self._threads_shown():
            self.run_worker(self._refresh_threads(), group="threads", exclusive=True)
        if event == "started":
            self.notify(str(data.get("text") or
                            f"Child process {data.get('pid')} is debugged as session {name}."),
                        title="Processes")
        elif event == "stopped" and name and name != current and self.state != "stopped":
            self.run_worker(self.switch_session(name), group="switch")
        elif event == "ended" and name == current and data.get("parent"):
            self.run_worker(self.switch_session(str(data["parent"])), group="switch")

    def _on_selection(self, data: dict[str, Any], origin: str) -> None:
        if data.get("thread_id") not in (None, self._threads_selected):
            self._threads_stale = True
        self.selected_frame = int(data.get("frame_index") or 0)
        if "location" in data:  # a thread's or a frame's place, even one with no source
            loc = data.get("location") or {}
            self.source.show_location(loc.get("path"), int(loc.get("line") or 0),
                                      top=self.selected_frame == 0 or "frame_index" not in data,
                                      name=loc.get("name") or data.get("function"))
        self.run_worker(self._refresh(), group="refresh", exclusive=True)

    # ================================================================== filling panes

    async def _refresh(self) -> None:
        """After a stop or a frame change: fetch the stack, the variables, the watches
        and (when shown) the threads, then show them all at once, so the screen is
        composed once per stop. Old values stay on screen (dimmed) until then."""
        link = self.link
        if link is None or self.state == "terminated":
            return
        # The stack and the selected frame's first scope in one go (the session
        # answers the stack from the stop's cache while the adapter fetches scopes).
        stack_call = asyncio.ensure_future(link.call("stack", {}))
        variables_call = asyncio.ensure_future(self._fetch_variables(None))
        try:
            stack = await stack_call
        except DebuggerError as exc:
            variables_call.cancel()
            self.query_one(StackPane).border_subtitle = exc.message
            return
        except BaseException:
            variables_call.cancel()
            raise
        selected = next((f.index for f in stack.frames if f.selected), 0)
        self.selected_frame = selected
        variables = await variables_call
        watches = await self._fetch_watches()
        threads = None
        if self._threads_stale or self._threads_shown():
            threads = await self._fetch_threads()
        if self.closing:
            return  # while the answers were on their way
        self.query_one(StackPane).show_frames(stack.frames, selected)
        frame = next((f for f in stack.frames if f.index == selected), None)
        if frame is not None and frame.file and self.source.location_line is None:
            self.source.show_location(frame.file, frame.line or 1, top=selected == 0)
        self._show_variables(variables)
        if watches is not None:
            self.query_one(WatchesPane).show_values(watches)
        self._show_threads(threads)
        self.call_after_refresh(self._show_stopped_bindings)

    def _threads_shown(self) -> bool:
        return self.query_one("#nav-tabs", TabbedContent).active == "tab-threads"

    async def _fetch_threads(self) -> list[Any] | None:
        if self.link is None:
            return None
        with contextlib.suppress(DebuggerError):
            threads = (await self.link.call("threads")).threads
            self._threads_stale = False
            self._threads_selected = next((t.id for t in threads if t.selected), None)
            if self._processes_stale:
                await self._fetch_processes()
            return threads
        return None

    async def _fetch_processes(self) -> None:
        """The processes of the tree of the session on screen, root first."""
        link = self.link
        if link is None:
            return
        with contextlib.suppress(DebuggerError):
            entries = (await link.call("sessions")).sessions
            self._processes_stale = False
            by_name = {e.name: e for e in entries}

            def root_and_depth(name: str) -> tuple[str, int]:
                depth, seen = 0, set()
                while by_name[name].parent in by_name and name not in seen:
                    seen.add(name)
                    name, depth = str(by_name[name].parent), depth + 1
                return name, depth

            if link.name not in by_name:
                self._processes = None
                return
            root = root_and_depth(link.name)[0]
            self._processes = [
                ProcessRow(session=e.name, depth=root_and_depth(e.name)[1],
                           pid=e.program_pid, program=e.program or "", state=e.state or "",
                           shown=e.name == link.name)
                for e in entries if root_and_depth(e.name)[0] == root]

    async def _refresh_threads(self) -> None:
        if self.state == "stopped":
            self._show_threads(await self._fetch_threads())

    def _show_threads(self, threads: list[Any] | None) -> None:
        """The threads, or (None) the last ones fetched with the new stop's reason."""
        threads = self._threads_last = threads if threads is not None else self._threads_last
        if threads is not None:
            stop = self.stop_info
            self.query_one(ThreadsPane).show_threads(
                threads, (stop.thread_id, stop.reason) if stop else None, self._processes)

    async def _refresh_values(self) -> None:
        """A value changed (set_variable, a console assignment): read Locals and watches again."""
        if self.link is not None and self.state == "stopped":
            self._show_variables(await self._fetch_variables(self.selected_frame))
            await self._refresh_watches()

    async def _fetch_variables(self, frame_index: int | None
                               ) -> tuple[list[str], dict[Key, VariablesResult]] | str:
        """The scopes and the pages the tree shows, or the error to show instead.
        Without a frame index: the session's selected frame."""
        link = self.link
        assert link is not None
        args: dict[str, Any] = {"max_items": PAGE}
        if frame_index is not None:
            args["frame_index"] = frame_index
        try:
            first = await link.call("variables", args)
        except DebuggerError as exc:
            return exc.message
        if self.closing:
            return "closing"  # the panes are going: nothing to show it in
        if frame_index is None:
            frame_index = first.frame_index
        pages: dict[Key, VariablesResult] = {(first.scope, None): first}
        keys = self.variables.wanted_keys(first.scopes)
        present = {(first.scope, v.path) for v in first.variables if v.has_children}
        for scope, path in keys:
            if (scope, path) in pages or (path is not None and (scope, path) not in present):
                continue
            args = {"frame_index": frame_index, "scope": scope, "max_items": PAGE}
            if path is not None:
                args["path"] = path
            try:
                page = await link.call("variables", args)
            except DebuggerError:
                continue
            pages[(scope, path)] = page
            present.update((scope, v.path) for v in page.variables if v.has_children)
        return first.scopes, pages

    def _show_variables(self, variables: tuple[list[str], dict[Key, VariablesResult]] | str) -> None:
        if isinstance(variables, str):
            self.variables.placeholder = variables
            self.variables.show([], {})
        else:
            self.variables.show(*variables)

    async def _refresh_watches(self) -> None:
        values = await self._fetch_watches()
        if values is not None:
            self.query_one(WatchesPane).show_values(values)

    async def _fetch_watches(self) -> dict[str, str] | None:
        if not self.watch_expressions or self.link is None or self.state != "stopped":
            return None
        values: dict[str, str] = {}
        for expression in self.watch_expressions:
            try:
                result = await self.link.call("evaluate", {"expression": expression,
                                                           "frame_index": self.selected_frame,
                                                           "context": "watch"})
                values[expression] = result.value
            except DebuggerError as exc:
                values[expression] = f"<{exc.message}>"
        return values

    def _add_output(self, seq: int, category: str, text: str) -> None:
        if seq and seq < self.output_cursor:
            return  # already shown (the initial read and the events overlap)
        self.output_cursor = max(self.output_cursor, seq + 1)
        self.query_one(OutputPane).append(category, text)

    def _add_activity(self, entry: ActivityEntry) -> None:
        key = (entry.at, entry.origin, entry.command)
        if key in self._seen_activity:
            return
        self._seen_activity.add(key)
        self.query_one(ActivityPane).add(entry)
        if entry.origin in ("mcp", "cli"):
            tabs = self.query_one("#io-tabs", TabbedContent)
            if tabs.active != "tab-activity":
                tabs.get_tab("tab-activity").label = "Activity •"

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-activity":
            event.tabbed_content.get_tab("tab-activity").label = "Activity"
        elif event.pane.id == "tab-threads":
            # A stop fetches the threads only while they are shown.
            self.run_worker(self._refresh_threads(), group="threads", exclusive=True)

    def _show_breakpoints(self, breakpoints: list[Breakpoint]) -> None:
        self.breakpoints = breakpoints
        marks: dict[str, dict[int, GutterMark]] = {}
        for bp in breakpoints:
            if not bp.spec.path:
                continue
            line = bp.line or bp.spec.line or 0
            marks.setdefault(bp.spec.path, {})[line] = GutterMark(
                glyph=breakpoint_glyph(bp), origin=bp.set_by, enabled=bp.spec.enabled,
                verified=bp.verified, detail=breakpoint_detail(bp))
        self.source.set_breakpoints(marks)
        self.query_one(BreakpointsPane).show_breakpoints(breakpoints)
        self._show_hits()

    def _show_hits(self) -> None:
        stop = self.stop_info
        ids = set(stop.breakpoint_ids) if stop else set()
        self.status.hits = max((bp.hits for bp in self.breakpoints if bp.id in ids), default=0)

    # ================================================================== person's actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run_command" and parameters:
            if parameters[0] == "continue" and self.state == "terminated" and \
                    self.link is not None:
                return True  # F5 after the end runs the program again
            states = registry.get(str(parameters[0])).applies_in
            if states is not None:
                return True if self.state in states else None
        if action in ("run_to_cursor", "frame_offset", "jump_to_cursor"):
            return True if self.state == "stopped" else None
        return True

    def action_run_command(self, command_id: str) -> None:
        if command_id == "continue" and self.state == "terminated":
            command_id = "restart"
        self.invoke_command(command_id)

    def invoke_command(self, command_id: str, args: dict[str, Any] | None = None,
                       order: int | None = None) -> None:
        """Run a registry command; one that needs arguments asks for them first."""
        command = registry.get(command_id)
        if args is None and command_id == "exception_breakpoints":
            self.action_exception_breakpoints()  # a checklist of the debugger's filters
            return
        if args is None and needs_form(command):
            initial: dict[str, Any] = {}
            fields = command.args.model_fields
            if self.source.file is not None and "file" in fields and "line" in fields:
                initial = {"file": display_path(self.source.file.path, self.cwd),
                           "line": self.source.cursor_line}

            def done(values: dict[str, Any] | None) -> None:
                if values is not None:
                    self._run(command_id, values)

            self.push_screen(CommandForm(command, initial), done)
            return
        self._run(command_id, args or {}, order)

    def _run(self, command_id: str, args: dict[str, Any], order: int | None = None) -> None:
        """Queue a command of the person's; `order` is its message's (see Ordered),
        else it is made now, by the key being handled."""
        if command_id in RESUMING and "wait_ms" not in args:
            args = {**args, "wait_ms": 0}
        elif command_id == "until" and args.get("jump") and "wait_ms" not in args:
            args = {**args, "wait_ms": 0}  # a jump is a step: its stop comes as an event
        elif command_id == "until" and "wait_ms" not in args:
            # The one-shot breakpoint lives until the call returns: wait for the stop.
            args = {**args, "wait_ms": 600_000}
        heapq.heappush(self._queued, (order or next_order(), command_id, args))
        self._queue_changed.set()

    def _arrived(self, message: Ordered) -> None:
        """A command's message reached the app: the commands after it may run."""
        in_flight.pop(message.order, None)
        self._queue_changed.set()

    async def _run_in_order(self) -> None:
        """Run the person's commands one at a time, in the order of their keys.
        Keys typed ahead (F9 then F5 in one read) must act as typed: a breakpoint
        is set before the continue that should reach it. A command waits for the
        answer of the one before; `until` only until the program runs, since it
        answers at the stop (and pause must get through meanwhile)."""
        while True:
            self._queue_changed.clear()
            if not self._queued:
                await self._queue_changed.wait()
                continue
            order = self._queued[0][0]
            now = time.monotonic()
            earlier = [made for o, made in in_flight.items() if o < order]
            if any(now - made < ORDER_GIVE_UP for made in earlier):
                # A message of an earlier key is still bubbling up to the app.
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._queue_changed.wait(), ORDER_GIVE_UP)
                continue
            for stale in [o for o in in_flight if o < order]:
                in_flight.pop(stale, None)
            _, command_id, args = heapq.heappop(self._queued)
            self._resumed.clear()
            call = asyncio.ensure_future(self._call(command_id, args))
            if command_id != "until" or args.get("jump"):
                await call
                continue
            resumed = asyncio.ensure_future(self._resumed.wait())
            try:
                await asyncio.wait({call, resumed}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                resumed.cancel()

    async def _call(self, command_id: str, args: dict[str, Any]) -> Any:
        if self.link is None:
            self.notify("Not connected to a session yet.", severity="warning")
            return None
        try:
            return await self.link.call(command_id, args, cwd=self.cwd)
        except DebuggerError as exc:
            self.notify(exc.message, title=command_id, severity="error")
            return None

    def on_run_command(self, message: RunCommand) -> None:
        message.stop()
        self._arrived(message)
        self.invoke_command(message.command_id, message.args, order=message.order)

    def on_toggle_breakpoint(self, message: ToggleBreakpoint) -> None:
        message.stop()
        self._arrived(message)
        for bp in self.breakpoints:
            if bp.spec.path == message.path and message.line in (bp.line, bp.spec.line):
                self._run("breakpoint_remove", {"breakpoint_id": bp.id}, message.order)
                return
        self._run("breakpoint_add", {"file": message.path, "line": message.line}, message.order)

    def action_toggle_breakpoint(self) -> None:
        self.source.action_toggle_breakpoint()

    def action_run_to_cursor(self) -> None:
        self.source.action_run_to_cursor()

    def action_jump_to_cursor(self) -> None:
        self.source.action_jump_to_cursor()

    def action_frame_offset(self, offset: int) -> None:
        self._run("frame", {"offset": offset})

    def action_edit_breakpoint(self) -> None:
        self.source.action_edit_breakpoint()

    def on_edit_breakpoint(self, message: EditBreakpoint) -> None:
        message.stop()
        if message.breakpoint_id is not None:
            bp = next((b for b in self.breakpoints if b.id == message.breakpoint_id), None)
        else:
            bp = next((b for b in self.breakpoints if b.spec.path == message.path
                       and message.line in (b.line, b.spec.line)), None)
        if bp is None and message.path is None:
            return
        if bp is not None:
            initial = {"enabled": bp.spec.enabled, "condition": bp.spec.condition,
                       "hit_condition": bp.spec.hit_condition, "log_message": bp.spec.log_message}
            where = bp.spec.function or \
                f"{display_path(bp.spec.path, self.cwd)}:{bp.line or bp.spec.line}"
        else:
            initial = {}
            where = f"{display_path(message.path, self.cwd)}:{message.line}"

        def done(values: dict[str, Any] | None) -> None:
            if values is None:
                return
            if bp is None:
                args = {k: v for k, v in values.items() if v != ""}
                self._run("breakpoint_add", {"file": message.path, "line": message.line, **args})
            elif values.get("__remove__"):
                self._run("breakpoint_remove", {"breakpoint_id": bp.id})
            elif values:
                self._run("breakpoint_update", {"breakpoint_id": bp.id, **values})

        self.push_screen(BreakpointDialog(where, initial, existing=bp is not None), done)

    def on_load_children(self, message: LoadChildren) -> None:
        message.stop()
        self.run_worker(self._load_children(message.scope, message.path, message.start),
                        group="children")

    async def _load_children(self, scope: str, path: str | None, start: int) -> None:
        if self.link is None:
            return
        args: dict[str, Any] = {"frame_index": self.selected_frame, "scope": scope,
                                "max_items": PAGE, "start": start}
        if path is not None:
            args["path"] = path
        try:
            page = await self.link.call("variables", args)
        except DebuggerError as exc:
            self.variables.show_error((scope, path), exc.message)
            return
        self.variables.add_page((scope, path), page, start)

    # ================================================================== machine level

    @property
    def disassembly_shown(self) -> bool:
        return self.query_one(DisassemblyView).display

    def action_toggle_disassembly(self) -> None:
        """The source pane shows the machine instructions instead, and back."""
        view = self.query_one(DisassemblyView)
        showing = not view.display
        view.display = showing
        self.source.display = not showing
        (view if showing else self.source).focus()
        if showing:
            self.run_worker(self._refresh_disassembly(), group="disassembly", exclusive=True)

    async def _refresh_disassembly(self) -> None:
        view = self.query_one(DisassemblyView)
        if self.link is None or self.state != "stopped":
            view.show_message("Stop the program to see its instructions.")
            return
        try:
            result = await self.link.call("disassemble", {"count": 64,
                                                          "frame_index": self.selected_frame})
        except DebuggerError as exc:
            view.show_message(exc.message)
            return
        view.show(result)

    def on_show_memory(self, message: ShowMemory) -> None:
        message.stop()
        self.run_worker(self._show_memory({"expression": message.expression,
                                           "frame_index": self.selected_frame}),
                        group="memory")

    def on_memory_screen_page(self, message: MemoryScreen.Page) -> None:
        self.run_worker(self._show_memory({"address": hex(message.address),
                                           "count": message.count}), group="memory")

    async def _show_memory(self, args: dict[str, Any]) -> None:
        result = await self._call("memory_read", {"count": 128, **args})
        if result is None:
            return
        if isinstance(self.screen, MemoryScreen):
            self.screen.show(result)
        else:
            self.push_screen(MemoryScreen(result))

    def on_evaluate(self, message: Evaluate) -> None:
        message.stop()
        self.run_worker(self._evaluate(message.expression), group="console")

    def on_inspect(self, message: Inspect) -> None:
        message.stop()
        if self.state != "stopped":
            self.notify("Stop the program to inspect its values.", severity="warning")
            return
        if self.screen.maximized is not None:
            self.screen.minimize()
        self.query_one("#io-tabs", TabbedContent).active = "tab-console"
        self.query_one(ConsolePane).echo(message.expression)
        self.run_worker(self._evaluate(message.expression), group="console")

    async def _evaluate(self, expression: str) -> None:
        console = self.query_one(ConsolePane)
        if self.link is None:
            return
        try:
            result = await self.link.call("evaluate", {"expression": expression, "children": PAGE,
                                                       "frame_index": self.selected_frame})
        except DebuggerError as exc:
            console.show_result(exc.message, error=True)
            return
        console.show_result(result.value, result.type)
        if result.has_children and result.children:
            console.query_one(ConsoleResults).add_result(expression, result, PAGE)
        # The expression may have assigned (`x = 5`, lldb's `expr x = 5`): show the effect.
        await self._refresh_values()

    def on_expand_result(self, message: ExpandResult) -> None:
        message.stop()
        self.run_worker(self._expand_result(message), group="console")

    async def _expand_result(self, message: ExpandResult) -> None:
        """A page of a console result's children: the expression that reaches the
        value, evaluated in the selected frame, its children listed from `start`."""
        results = self.query_one(ConsoleResults)
        if self.link is None:
            return
        try:
            page = await self.link.call("evaluate", {
                "expression": message.expression, "children": PAGE, "start": message.start,
                "frame_index": self.selected_frame})
        except DebuggerError as exc:
            results.show_error(message.node, exc.message)
            return
        results.add_page(message.node, page, message.start, PAGE)

    def on_send_input(self, message: SendInput) -> None:
        message.stop()
        if message.text:
            self.query_one(OutputPane).echo_input(message.text)
        self._run("send_input", {"text": message.text, "eof": message.eof})

    def on_complete_name(self, message: CompleteName) -> None:
        message.stop()
        self.run_worker(self._complete(message), group="console")

    async def _complete(self, message: CompleteName) -> None:
        """What `complete` proposes (the debugger's completions, or the frame's
        names where it has none), put in at the cursor."""
        if self.link is None or self.state != "stopped":
            return
        try:
            proposed = await self.link.call("complete", {
                "text": message.text, "column": message.column, "frame_index": self.selected_frame})
        except DebuggerError:
            return
        self.query_one(ConsolePane).show_proposals(message.text, message.column, proposed.items)

    def on_edit_value(self, message: EditValue) -> None:
        message.stop()
        if self.state != "stopped":
            return

        def done(value: str | None) -> None:
            if value is not None and value != message.value:
                self._run("set_variable", {"path": message.path, "value": value,
                                           "frame_index": self.selected_frame})

        self.push_screen(ValueDialog(message.path, message.value), done)

    def action_exception_breakpoints(self) -> None:
        self.run_worker(self._choose_exceptions(), group="commands")

    async def _choose_exceptions(self) -> None:
        listed = await self._call("exception_breakpoints", {})
        if listed is None:
            return
        if not listed.filters:
            self.notify(listed.message, title="exception breakpoints")
            return

        def done(filters: list[str] | None) -> None:
            if filters is not None:
                self._run("exception_breakpoints", {"filters": filters})

        self.push_screen(ExceptionDialog(listed.filters), done)

    def on_watches_changed(self, message: WatchesChanged) -> None:
        message.stop()
        self.watch_expressions = message.expressions
        self.run_worker(self._refresh_watches(), group="watches", exclusive=True)

    def action_help(self) -> None:
        from .widgets.breakpoints_pane import BreakpointsPane as BP
        from .widgets.console_pane import ConsoleInput
        from .widgets.output_pane import OutputPane as OP, ProgramInput
        from .widgets.watches_pane import WatchesPane as WP

        sections = [
            ("Everywhere", binding_rows(list(self.BINDINGS), self.keymap)
             + [("Ctrl+P", "command palette: every command")]),
            ("Source pane (pdb/pudb keys)", binding_rows(SourceView.BINDINGS, self.keymap)),
            ("Breakpoints pane", binding_rows(BP.BINDINGS, self.keymap)),
            ("Watches pane", binding_rows(WP.BINDINGS, self.keymap)),
            ("Output pane", binding_rows(OP.BINDINGS, self.keymap)),
            ("Program input (under Output)", [("Enter", "send the line to the program")]
             + binding_rows(ProgramInput.BINDINGS, self.keymap)),
            ("Variables pane", [("Enter", "open a value, or change a plain one")]
             + binding_rows(VariablesPane.BINDINGS, self.keymap)),
            ("Console", binding_rows(ConsoleInput.BINDINGS, self.keymap)
             + [("Enter", "evaluate in the selected frame")]),
            ("Mouse", [("click gutter", "toggle a breakpoint on that line"),
                       ("click row twice", "select a frame / thread, edit a breakpoint"),
                       ("click ▶ in Variables", "expand a value"),
                       ("click footer key", "run that command")]),
        ]
        self.push_screen(HelpScreen(sections))

    #: Each pane: the tabs that hold it (None for the source), its tab, what gets focus.
    PANES = {
        "source": (None, None, "#source"),
        "output": ("#io-tabs", "tab-output", "#output-log"),
        "console": ("#io-tabs", "tab-console", "#console-input"),
        "activity": ("#io-tabs", "tab-activity", "#activity"),
        "variables": ("#data-tabs", "tab-variables", "#variables"),
        "watches": ("#data-tabs", "tab-watches", "#watch-input"),
        "stack": ("#nav-tabs", "tab-stack", "#stack"),
        "threads": ("#nav-tabs", "tab-threads", "#threads"),
        "breakpoints": ("#nav-tabs", "tab-breakpoints", "#breakpoints"),
    }

    def action_focus_pane(self, name: str) -> None:
        if self.screen is not self.screen_stack[0]:
            raise SkipAction()  # a dialog is open: its own fields keep the key
        tabs, pane, target = self.PANES[name]
        if self.screen.maximized is not None:
            self.screen.minimize()  # a maximized pane would hide the one asked for
        if tabs is not None:
            self.query_one(tabs, TabbedContent).active = pane
        self.query_one(target).focus()

    # ------------------------------------------------------------------ find, go to, open

    def action_find(self) -> None:
        self.action_focus_pane("source")
        prompt = self.query_one(SourcePrompt)
        self._find_origin = self.source.cursor_line
        prompt.ask("find", self.source.find_text)
        self.source.typing_into = prompt

    def action_go_to_line(self) -> None:
        if self.source.file is None:
            self.notify("No file is open in the source pane.", severity="warning")
            return
        self.action_focus_pane("source")
        prompt = self.query_one(SourcePrompt)
        prompt.ask("line")
        self.source.typing_into = prompt

    def on_source_prompt_answered(self, message: SourcePrompt.Answered) -> None:
        message.stop()
        source = self.source
        if message.mode == "line":
            if not message.cancelled and message.value.isdigit():
                source.go_to_line(int(message.value))
        elif message.cancelled:
            source.clear_find()
            source.go_to_line(getattr(self, "_find_origin", source.cursor_line))
        elif not message.value:
            source.clear_find()
        else:
            # As you type, search from where the find began, so the match does not run away.
            count = source.find(message.value, getattr(self, "_find_origin", None))
            if message.done and not count:
                self.notify(f"No match for {message.value!r} in this file.", severity="warning")
        if message.done:
            source.typing_into = None
            source.focus()

    def action_open_file(self) -> None:
        seen: set[str] = set()
        candidates: list[tuple[str, str]] = []

        def offer(path: str, note: str = "") -> None:
            if path not in seen and os.path.isfile(path):
                seen.add(path)
                candidates.append((path, display_path(path, self.cwd) + note))

        for frame in self.query_one(StackPane).frames:
            if frame.file:
                offer(frame.file, f"  (frame {frame.index}: {frame.name})")
        root = os.path.dirname(os.path.abspath(self.program)) if self.program and \
            os.path.isfile(self.program) else self.cwd
        for path in project_files(self.cwd) or project_files(root):
            offer(path)
        for path in program_files(root):
            offer(path)

        def chosen(path: str | None) -> None:
            if path:
                if self.source.open_file(path):
                    self.source.go_to_line(1)
                self.source.focus()

        self.push_screen(OpenFileDialog(candidates, self.cwd), chosen)

    def action_toggle_maximize(self) -> None:
        if self.screen.maximized is not None:
            self.screen.minimize()
        elif self.focused is not None:
            self.screen.maximize(self.focused)

    # ================================================================== leaving

    def action_interrupt(self) -> None:
        """Ctrl+C: pause the running program, as gdb, lldb and pdb do."""
        if self.state == "running":
            self.invoke_command("pause")
            return
        if isinstance(self.focused, (Input, TextArea)):
            raise SkipAction()  # the field copies its selection
        if self.screen is self.screen_stack[0]:
            self.notify("Ctrl+C pauses the program while it runs; q or Ctrl+Q quits.",
                        title="Not running")

    def action_ask_quit(self) -> None:
        """`q`: quit after saying what it ends."""
        if self.screen is not self.screen_stack[0]:
            return
        if self.owned:
            consequence = "Quitting " + "; ".join(
                f"{'ends' if how == 'terminate' else 'detaches from'} the program of {name}"
                for name, how in sorted(self.owned.items())) + "."
        else:
            consequence = "The session keeps running: this TUI only leaves it."

        async def done(quit_now: bool | None) -> None:
            if quit_now:
                await self.action_quit()

        self.push_screen(QuitDialog(consequence), done)

    async def action_quit(self) -> None:
        await self.shutdown()
        self.exit(0 if self.error_message is None else 1)

    async def shutdown(self) -> None:
        """End what this app started: the sessions it started (their hosts exit),
        then its connection. A joined session is left running."""
        if self._shutting_down:
            return
        self._shutting_down = True
        loop = asyncio.get_running_loop()
        for sig in self._signals:
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(sig)
        self.workers.cancel_group(self, "start-session")
        link = self.link
        await asyncio.gather(*(self._end_owned(name, link if link and link.name == name else None)
                               for name in list(self.owned)), return_exceptions=True)
        if link is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(link.close(), 5)

    async def on_unmount(self) -> None:
        await self.shutdown()


def create_app(mode: str, args: dict[str, Any] | None = None, session: str | None = None,
               **options: Any) -> DebuggerApp:
    """The app for `tui-debugger run/attach/ui`: mode is launch, attach, attach_sim
    (args are that command's arguments) or join (session is a live session's name,
    or None for the one of this project)."""
    return DebuggerApp(mode, args, session, **options)


def run_app(mode: str, args: dict[str, Any] | None = None, session: str | None = None,
            host: Any = None) -> int:
    """Run the TUI for the CLI; `host` is the PendingHost of the session to
    start, when the CLI started it before importing the TUI."""
    app = create_app(mode, args, session)
    app.pending_host = host
    code = app.run()
    if app.error_message:
        print(f"error: {app.error_message}", file=sys.stderr)
        return 1
    return int(code or 0)


def _same_tree(name: str, link: RemoteHandle | None) -> bool:
    """Whether `link` shows a process of `name`'s session tree (tree.py names a
    child ROOT.PID)."""
    other = link.name if link is not None else ""
    return other.split(".")[0] == name.split(".")[0]
