"""The TUI application. `create_app` is the one factory: the CLI (through
`run_app`) and the tests build the app the same way.

The TUI is always a client. `run` and `attach` start a host process (a
daemon, host/start.py) for the new session and join it through its socket; `ui`
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
import os
import signal
import sys
from functools import partial
from typing import Any, Awaitable, Callable

from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.css.query import NoMatches
from textual.widgets import Input, TabbedContent, TabPane

from backends.errors import DebuggerError
from backends.models import Breakpoint

from .. import events
from ..events import SessionEvent
from ..models import StopInfo
from ..client.router import RemoteHandle
from .format import display_path, own_origin, who_proper
from .keymap import app_bindings, bindable_ids, display_key, user_keymap
from .frames import PacedScreen
from .inspection import Inspection
from .ordered_commands import OrderedCommands
from .palette import RegistryCommands
from .pane_actions import PaneActions
from .pane_data import PaneData
from .session_link import MODES, SessionLink
from .widgets.activity_pane import ActivityPane
from .widgets.breakpoints_pane import BreakpointsPane
from .widgets.console_pane import ConsolePane
from .widgets.disassembly_view import DisassemblyView
from .widgets.output_pane import OutputPane
from .widgets.exception_pane import ExceptionPane
from .widgets.footer import KeyFooter
from .widgets.source_prompt import SourcePrompt
from .widgets.source_view import SourceView
from .widgets.stack_pane import StackPane
from .widgets.status_bar import StatusBar
from .widgets.threads_pane import ProcessRow, ThreadsPane
from .widgets.variables_pane import VariablesPane
from .widgets.watches_pane import WatchesPane

#: Seconds a program must keep running before its panes are dimmed as stale.
STALE_AFTER = 0.15
#: Seconds a program must keep running after a stop before the status bar says RUNNING.
RUNNING_AFTER = 0.05
#: Seconds the status bar waits for a stop's event before it says STOPPED without it.
STOPPED_STATUS_AFTER = 0.025
#: Seconds after a stop by which the footer's keys are un-greyed, at the latest.
FOOTER_AFTER_STOP = 0.3
#: Seconds after the start by which the key bar is made, at the latest: until
#: the new program's first state is shown (its first stop, mostly), it waits.
FOOTER_HELD_AT_MOST = 1.0

#: Seconds a thread that wants the GIL waits for the one holding it (Python's
#: default is 0.005): see run_app.
SWITCH_INTERVAL = 0.0005
#: A `run`'s screen waits this long at most for the program's first stop
#: before it is first laid out and painted (PacedScreen.hold_first_layout).
FIRST_STOP_HELD_AT_MOST = 0.25
#: seconds after the mount that the parsed CSS of the first screen is written
#: for the next start (css_cache.py), its stop on screen by then
CSS_KEPT_AFTER = 2.0

#: How the session names each resume ("how" in continued events), as a sentence.
VERBS = {"next": "stepped over", "step_in": "stepped into", "step_out": "stepped out",
         "continue": "continued", "goto": "jumped"}


# Each job is a mixin of its own module; the app holds the state they share,
# the layout, and the session events (which touch every pane).
class DebuggerApp(SessionLink, PaneData, Inspection, OrderedCommands, PaneActions, App[int]):
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
        from .css_cache import kept_for

        #: Textual's parsed CSS from the last start (css_cache.py)
        self._css_kept = kept_for(self.stylesheet)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        #: the key bar waits for the first state of a new program (KeyFooter.held)
        self._footer_held = mode == "launch"
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
        #: the other processes of the tree stopped now, and where (a stop's
        #: `process` event, until the process goes on or ends), first stopped first
        self._stopped_elsewhere: dict[str, str] = {}
        self._processes_stale = True
        self._threads_last: list[Any] | None = None
        #: held while the screen is composed for a session and filled (_switch)
        self._switch_lock = asyncio.Lock()
        #: the connection a switch is leaving, until it is closed (_switch)
        self._leaving: list[RemoteHandle] = []
        self._shutting_down = False
        self._state_events = 0  # state, stop, resume and end events seen (see _sync_all)
        self._state_changes = 0  # changes of `state` (see watch_state)
        self._exception_tab = False  # the Exception tab is shown, or on its way
        self._signals: list[int] = []
        #: The host of the session to start, when run_app started it already.
        self.pending_host: Any = None
        #: hosts started for a session not yet this app's (not in `owned`):
        #: a quit or a failure meanwhile ends them (shutdown)
        self._starting: list[Any] = []
        #: SIGTERM/SIGHUP that came before on_mount handles them (run_app)
        self.early_signals: list[int] = []
        #: The person's commands, run one after the other in the order of the keys
        #: that made them: (order, command id, arguments).
        self._queued: list[tuple[int, str, dict[str, Any]]] = []
        self._queue_changed = asyncio.Event()
        self._resumed = asyncio.Event()  # set when the state becomes running
        #: a stop was shown: paint it as soon as the events that came with it are handled
        self._paint_soon = False
        #: stops shown so far, and the stack and locals asked for while a step
        #: ran: (stops shown when asked, link, stack call, variables call)
        self._stops_seen = 0
        self._stop_view: tuple[int, Any, Any, Any] | None = None
        #: the screen's first layout waits for the first stop (run_app)
        self.first_layout_held = False

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
        yield KeyFooter(held=self._footer_held)

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
        screen = PacedScreen(id="_default")
        # Its width class (HORIZONTAL_BREAKPOINTS) from the start, so it is
        # styled once with it: added at the first resize, it restyled the whole
        # screen (~60 ms of the start-up, the first stop waiting to be shown).
        screen.add_class(*screen._get_breakpoint_classes(self.size.width,
                                                         self.HORIZONTAL_BREAKPOINTS),
                         update=False)
        return screen

    def on_load(self) -> None:
        self._join_early()

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
        if self.first_layout_held and isinstance(self.screen, PacedScreen):
            self.screen.hold_first_layout(FIRST_STOP_HELD_AT_MOST)
        self.set_timer(FOOTER_HELD_AT_MOST, self._start_over)
        if self._css_kept is not None:
            # The first screen's CSS is parsed by now; written once its stop is shown.
            self.set_timer(CSS_KEPT_AFTER, self._css_kept.save)
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
        on_loop = dict(handlers)
        tab_gone = getattr(self._driver, "tab_gone", None)
        if tab_gone is not None:  # a browser tab's driver handles SIGTERM itself (web_tab)
            handlers[signal.SIGTERM] = lambda: tab_gone(143)
            del on_loop[signal.SIGTERM]
        for sig, handler in on_loop.items():
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, handler)
                self._signals.append(sig)
        for sig in self.early_signals[:1]:  # one that came while the app started
            handlers[sig]()
        self._watch_terminal(hang_up)

    def _watch_terminal(self, hang_up: Callable[[], Awaitable[None]]) -> None:
        """A terminal can go without a SIGHUP: a pseudo-terminal whose other end
        closed, for a process that does not have it as its controlling
        terminal (started by a harness, an editor, `setsid`). Textual's input
        thread then reads end-of-file at once, again and again: the app spun
        at a whole core and its session never ended. Once a second the
        terminal is asked for its attributes, which a closed one refuses
        (EIO); that is a hang-up."""
        fileno = getattr(self._driver, "fileno", None)
        if not isinstance(fileno, int) or not os.isatty(fileno):
            return  # headless, a browser tab, a pipe: no terminal of its own
        import termios

        def check() -> None:
            try:
                termios.tcgetattr(fileno)
            except (termios.error, OSError):
                watch.stop()
                asyncio.get_running_loop().create_task(hang_up())

        watch = self.set_interval(1.0, check, name="terminal watch")

    def _after_compose(self) -> None:
        if not self.CURSOR_BLINK:
            for box in self.query(Input):
                box.cursor_blink = False
        self.source.focus()

    # ================================================================== session events

    def on_session_event(self, event: SessionEvent) -> None:
        if isinstance(event, (events.State, events.Stopped, events.Continued, events.Terminated)):
            self._state_events += 1
        handler = self._SESSION_EVENT_HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    def _on_state(self, event: events.State) -> None:
        if event.state == "starting" and self.state == "terminated":
            # restarted (by anyone): the last run's end is no longer news
            self.status.exit_code = None
            self.status.message = ""
        self.state = event.state.value

    def _on_continued(self, event: events.Continued) -> None:
        if self._exception_tab:  # a worker per step costs a millisecond: only when shown
            self._exception_tab = False
            self.run_worker(self._hide_exception, group="exception", exclusive=True)
        self._last_resume = (event.origin, event.how)
        self.stop_info = None  # the status bar says so with RUNNING (watch_state)
        current = self.link.name if self.link is not None else None
        waiting = [n for n in self._stopped_elsewhere if n != current]
        if event.how == "continue" and waiting:
            # Focus follows the stop: this process goes on, another is stopped.
            self.notify(f"Showing process {waiting[0]}, stopped at "
                        f"{self._stopped_elsewhere[waiting[0]]}.", title="Processes")
            self.run_worker(self.switch_session(waiting[0]), group="switch")

    def _on_exited(self, event: events.Exited) -> None:
        self.status.exit_code = event.exit_code

    def _on_terminated(self, event: events.Terminated) -> None:
        self._discard_stop_view()
        self.state = "terminated"
        self.status.exit_code = event.exit_code
        self.status.message = event.reason or ""
        self.query_one(OutputPane).flush_partial()
        self._clear_stop()
        code = event.exit_code
        self.notify("The program ended" + (f" with exit code {code}." if code is not None else "."),
                    title="Session over")

    def _on_threads(self, event: events.Threads) -> None:
        self._threads_stale = True
        if self.state == "stopped" and self._threads_shown():
            # Threads stop beside the shown one (held at a breakpoint): keep current.
            self.run_worker(self._refresh_threads, group="threads", exclusive=True)

    def _on_values(self, event: events.Values) -> None:
        # Someone changed a value: every pane that shows values reads them again.
        self.run_worker(self._refresh_values, group="refresh-values", exclusive=True)

    #: what each session event does to the screen (on_session_event)
    _SESSION_EVENT_HANDLERS: dict[type, Any] = {
        events.State: _on_state,
        events.Stopped: lambda app, event: app._on_stopped(event.stop, event.origin),
        events.Continued: _on_continued,
        events.Output: lambda app, event: app._add_output(event.line.seq, event.line.category,
                                                          event.line.text),
        events.Breakpoints: lambda app, event: app._show_breakpoints(event.breakpoints),
        events.Activity: lambda app, event: app._add_activity(event.entry),
        events.Selection: lambda app, event: app._on_selection(event),
        events.Exited: _on_exited,
        events.Terminated: _on_terminated,
        events.Notice: lambda app, event: app.notify(
            event.text, title=event.title or "Waiting for the first stop", timeout=15),
        events.Threads: _on_threads,
        events.Values: _on_values,
        events.Process: lambda app, event: app._on_process(event),
        events.Clients: lambda app, event: app.status.set_clients(event.clients, app.origin),
    }

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
        elif state == "terminated" and isinstance(self.screen, PacedScreen):
            self.screen.release()  # no stop to wait for
        if self.closing:
            # A switch between sessions (a child's end, back to its parent) can
            # still be under way while the app leaves: its screens are gone.
            return
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

    def _start_over(self) -> None:
        """The start is over: the new program's first state is on screen, or
        FOOTER_HELD_AT_MOST has passed. The key bar is made, and the garbage
        collector runs again (gcpause.py)."""
        from .. import warm_screen
        from ..gcpause import resume

        resume()
        warm_screen.start_one()  # once: remember_starter's record is taken
        if self._footer_held:
            self._footer_held = False
            for footer in self.query(KeyFooter):
                footer.release()

    def _show_stopped_bindings(self) -> None:
        if self.state == "stopped":
            self._show_bindings_for("stopped")

    def _show_bindings_for(self, state: str) -> None:
        if not self.screen_stack:
            # Closing: its timer (FOOTER_AFTER_STOP) came after the last screen
            # went; Textual's refresh_bindings would raise ScreenStackError.
            return
        if state not in ("connecting", "starting"):
            self._start_over()
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
        if self.closing:
            return  # its timer came after the screens went (a program that ended at once)
        self._show_bindings_for(self.state)
        try:
            panes = (self.source, self.variables, self.query_one(StackPane),
                     self.query_one(WatchesPane), self.query_one(ThreadsPane))
        except NoMatches:
            return  # the screen is being composed for another session (a switch)
        for pane in panes:
            pane.add_class("-stale")

    def _on_stopped(self, stop: StopInfo, origin: str) -> None:
        self._stops_seen += 1
        if self._stopped_elsewhere:
            self._tell_stopped_elsewhere()  # the process on screen is not "elsewhere"
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
            self.notify("\n".join(f"{c.expression}: {c.old} → {c.new}"
                                  + (f" at {c.at}" if c.at else "") for c in stop.watch_changes),
                        title="Watchpoint")
        if stop.reason == "exception":
            self._exception_tab = True
            self.run_worker(partial(self._show_exception, stop), group="exception", exclusive=True)
        self.run_worker(partial(self._refresh, stop=True), group="refresh", exclusive=True)
        if self.disassembly_shown:
            self.run_worker(self._refresh_disassembly, group="disassembly", exclusive=True)
        self._paint_soon = True  # once the events that came with it are handled (_pump)

    def _paint_now(self) -> None:
        """The stop on screen in this turn of the loop (PacedScreen.paint_now);
        the first stop of a `run`, with the screen's first layout."""
        screen = self.screen
        if isinstance(screen, PacedScreen):
            if screen.held:
                screen.release()
            else:
                screen.paint_now()

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

    def _on_process(self, event: events.Process) -> None:
        """A child process of this session's tree started, stopped or ended: the
        screen follows a stop into the process that stopped, and goes back to
        the parent when the process shown ends."""
        name = event.session
        current = self.link.name if self.link is not None else None
        self._processes_stale = self._threads_stale = True
        if self.state == "stopped" and self._threads_shown():
            self.run_worker(self._refresh_threads, group="threads", exclusive=True)
        if event.event == "stopped" and name and name != current:
            loc = event.location
            self._stopped_elsewhere[name] = (f"{os.path.basename(loc.path or '')}:{loc.line}"
                                             if loc is not None and loc.path else "?")
        elif event.event in ("running", "ended"):
            self._stopped_elsewhere.pop(name, None)
        if event.event == "started":
            self.notify(event.text or f"Child process {event.pid} is debugged as session {name}.",
                        title="Processes")
        elif event.event == "stopped" and name and name != current and self.state != "stopped":
            self.run_worker(self.switch_session(name), group="switch")
        elif event.event == "stopped" and name and name != current:
            key = display_key(self.keymap.get("next_stopped_process", "alt+n").split(",")[0])
            self.notify(f"Process {name} stopped at {self._stopped_elsewhere[name]}. "
                        f"{key}: show it.", title="Processes")
        elif event.event == "ended" and name == current and event.parent:
            self.run_worker(self.switch_session(event.parent), group="switch")
        self._tell_stopped_elsewhere()

    def _tell_stopped_elsewhere(self) -> None:
        """The status bar counts the other stopped processes, with the key."""
        current = self.link.name if self.link is not None else None
        count = sum(1 for n in self._stopped_elsewhere if n != current)
        key = display_key(self.keymap.get("next_stopped_process", "alt+n").split(",")[0])
        self.status.elsewhere = (count, key) if count else (0, "")

    def action_next_stopped_process(self) -> None:
        """Show the next process of the tree that is stopped (the one shown, if
        stopped, comes round again after the others)."""
        current = self.link.name if self.link is not None else None
        waiting = [n for n in self._stopped_elsewhere if n != current]
        if not waiting:
            self.notify("No other process of the program is stopped.", title="Processes")
            return
        if current is not None and self.state == "stopped" and self.stop_info is not None:
            loc = self.stop_info.location
            self._stopped_elsewhere[current] = (
                f"{os.path.basename(loc.path or '')}:{loc.line}" if loc and loc.path else "?")
        self._stopped_elsewhere.pop(waiting[0])
        self.run_worker(self.switch_session(waiting[0]), group="switch")
        self._tell_stopped_elsewhere()

    def _on_selection(self, event: events.Selection) -> None:
        if event.thread_id not in (None, self._threads_selected):
            self._threads_stale = True
        self.selected_frame = event.frame_index
        if event.placed:  # a thread's or a frame's place, even one with no source
            loc = event.location
            self.source.show_location(loc.path if loc else None, loc.line if loc else 0,
                                      top=self.selected_frame == 0,
                                      name=(loc.name if loc else None) or event.function)
        self.run_worker(self._refresh, group="refresh", exclusive=True)


def create_app(mode: str, args: dict[str, Any] | None = None, session: str | None = None,
               **options: Any) -> DebuggerApp:
    """The app for `tui-debugger run/attach/ui`: mode is launch, attach, attach_sim
    (args are that command's arguments) or join (session is a live session's name,
    or None for the one of this project)."""
    return DebuggerApp(mode, args, session, **options)


def run_app(mode: str, args: dict[str, Any] | None = None, session: str | None = None,
            host: Any = None, early_signals: list[int] | None = None) -> int:
    """Run the TUI for the CLI; `host` is the PendingHost of the session to
    start, when the CLI started it before importing the TUI; `early_signals`:
    SIGTERM/SIGHUP received before the app handles them (at mount), filled by
    the CLI's own handler until then."""
    # Textual writes to the terminal from a thread of its own, which waits for
    # the GIL while this (main) thread goes on with the stop's next events: up to
    # the 5 ms switch interval, so a painted stop reached the screen 2-6 ms late.
    # At 0.5 ms the writer gets its turn at once; the loop hardly notices.
    sys.setswitchinterval(SWITCH_INTERVAL)
    app = create_app(mode, args, session)
    app.pending_host = host
    # A launch that stops at once (its entry, a breakpoint): the screen is
    # first painted with that stop in it (PacedScreen.hold_first_layout).
    app.first_layout_held = mode == "launch" and host is not None
    app.early_signals = early_signals if early_signals is not None else []
    code = app.run()
    if app.error_message:
        print(f"error: {app.error_message}", file=sys.stderr)
        return 1
    return int(code or 0)
