"""The app's sessions: joining the first one, starting and switching to others,
reading what happened before this client subscribed, and leaving (quitting
ends the sessions this TUI started, leaves the ones it joined).

A mixin of `DebuggerApp` (tui/app.py), which owns the attributes it uses
(`link`, `owned`, `state`, the panes); apart only to keep each module to one job.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from textual import work
from textual.css.query import NoMatches

from backends.errors import DebuggerError

from .. import events, paths
from ..commands.registry import View
from ..client.router import RemoteHandle, join
from .frames import PacedScreen
from .messages import StartSession, SwitchSession

#: The TUI shows each scope in its own node, values cut at the pane's width,
#: and the whole activity log: sent with its calls (registry.View).
TUI_VIEW = View(panes=True)

#: The app's modes: the registry command that starts its session (None: join one).
MODES = {"launch": "launch", "attach": "attach", "attach_sim": "attach_sim", "join": None}


class SessionLink:
    """Which session the app shows, and the way in and out of it."""

    #: the app's own session being started and joined since the app loaded (_join_early)
    _early_link: asyncio.Future[RemoteHandle] | None = None

    def _join_early(self) -> None:
        """At load, before the screen is composed: the app's own session (its
        host started by run_app, or one started now) is waited for and joined
        beside Textual's own start-up, which takes the loop in turns, rather
        than after the screen has mounted and laid itself out (130-250 ms
        later, traced, the first stop already there). _start takes the link,
        or the error."""
        if self.mode == "join" or self._early_link is not None:
            return
        self._early_link = asyncio.ensure_future(
            self._host(MODES[self.mode], self.start_args, early=True))
        # Read here too, so an app that quits before _start does is not told
        # its exception was never retrieved; _start reports it.
        self._early_link.add_done_callback(lambda f: f.cancelled() or f.exception())

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
                    link = await join(self.session_arg, self.origin, cwd=self.cwd, view=TUI_VIEW)
                except DebuggerError as exc:
                    if self.session_arg is not None or not exc.details.get("sessions"):
                        raise
                    # None of this project's, or several: offer them, never pick one.
                    self.state = "idle"
                    self.status.message = "no session of this project: pick one, or Ctrl+A"
                    from .widgets.session_picker import SessionPicker

                    self.push_screen(SessionPicker(exc.details["sessions"],
                                                   exc.message.splitlines()[0]),
                                     self._session_picked)
                    return
            else:
                self._join_early()
                assert self._early_link is not None
                link = await self._early_link
        except DebuggerError as exc:
            self.fail(exc.message)
            return
        async with self._switch_lock, self._unless_closing():
            self._show_now(link)
            screen = self.screen
            if isinstance(screen, PacedScreen) and screen.held:
                if link.state_at_join in ("starting", "running"):
                    # While the screen waits for the first stop to lay itself
                    # out, the catch-up reads wait too: their first calls build
                    # their models (~30 ms of pydantic's schemas), which came
                    # between the stop's arrival and its paint. What they bring
                    # (the breakpoints' marks, the adapter's name) follows a
                    # frame later.
                    await screen.released()
                else:
                    # Joined once it had stopped or ended (or an older host that
                    # does not say): a stop came before it subscribed, and the
                    # catch-up reads bring it.
                    screen.release()
            await self._sync_all(follow_child=True)

    async def _host(self, command_id: str, args: dict[str, Any],
                    early: bool = False) -> RemoteHandle:
        """Start a host process (a daemon) running `command_id` for a new session,
        and join it. The session is this TUI's: quitting ends it. `run_app`
        starts the first host before the TUI is even imported. `early` (the
        app's own session): joined as soon as it is served, its start's failure
        ending the app; else (the attach dialog) once started, a failure said
        where it was asked for."""
        from ..host.start import PendingHost, no_first_stop_wait

        if command_id == "attach" and args.get("ray") is not None and self.pending_host is None:
            root = await self._join_ray_root(args)
            if root is not None:
                return root
        pending, self.pending_host = self.pending_host, None
        if pending is None:
            pending = PendingHost(command_id, no_first_stop_wait(command_id, args), cwd=self.cwd,
                                  origin=self.origin, owned=True, announce=early)
        # Until its session is in `owned`, nothing else would end this host: an
        # app that fails (a bad keymap) or quits meanwhile left it running.
        self._starting.append(pending)
        try:
            return await self._host_joined(pending, command_id, early)
        finally:
            if pending in self._starting:
                self._starting.remove(pending)

    async def _host_joined(self, pending: Any, command_id: str, early: bool) -> RemoteHandle:
        name = await pending.serving() if early else None
        if name is not None:
            # Joined while the launch goes on: the panes fill in, and its first
            # stop is painted from its event, as soon as it comes, instead of
            # after the launch's answer, the join and the first reads, one after
            # another (docs/performance.md). Its answer, or why it failed, comes later.
            self._own(name, command_id, pending)
            try:
                link = await join(name, self.origin, view=TUI_VIEW)
            except DebuggerError:
                # Gone already: the start failed meanwhile, and its answer says why.
                await pending.ready()
                raise
            self.run_worker(self._started(pending, link), name="started", group="start")
            return link
        status = await pending.ready()
        name = status["session"]
        # A first stop can be painted before the start-up status call answers.
        self.status.adapter = status.get("adapter")
        self._own(name, command_id, pending)
        return await join(name, self.origin, view=TUI_VIEW)

    def _own(self, name: str, command_id: str, pending: Any) -> None:
        """The session is this app's from now on: quitting ends it (_end_owned)."""
        self.owned[name] = "terminate" if command_id == "launch" else "detach"
        if pending in self._starting:
            self._starting.remove(pending)

    async def _started(self, pending: Any, link: RemoteHandle) -> None:
        """The answer of a launch or attach whose session this app joined as
        soon as it was served: its failure ends the app with its message, as
        before; its success names the adapter, if no status said it yet."""
        try:
            status = await pending.ready()
        except DebuggerError as exc:
            self.fail(exc.message)
            return
        if self.link is link and not self.closing and not self.status.adapter:
            self.status.adapter = status.get("adapter")

    async def _join_ray_root(self, args: dict[str, Any]) -> RemoteHandle | None:
        """The Ray tab while a root `ray` lives: its host attaches the worker
        (one tree per cluster); None when there is no live root."""
        from ..commands.ray import ROOT_NAME

        if not any(s.name == ROOT_NAME for s in paths.live_sessions()):
            return None
        link = await join(ROOT_NAME, self.origin, view=TUI_VIEW)
        pid = args.get("pid")
        await link.call("ray_attach", {"ray": args.get("ray") or None,
                                       **({"pids": [pid]} if pid else {"every": True})})
        return link

    def _show_now(self, link: RemoteHandle) -> None:
        """Make `link` the session on screen and pump its events (panes already empty)."""
        self.link = link
        self._pump(link)

    @work(name="events", group="events", exclusive=True)
    async def _pump(self, link: RemoteHandle) -> None:
        async for event in link.events():
            if self.link is not link:
                break  # switched to another session
            try:
                self.on_session_event(event)
            except Exception as exc:  # a bad event must not stop the pane updates
                self.log.error(f"event {event.kind}: {exc!r}")
            if self._paint_soon and not link.events_waiting:
                # The stop's events come together (its state, the stop, the hit
                # counts): one frame once they are all handled, not one each.
                self._paint_soon = False
                self._paint_now()
        # The stream also ends as the app closes (Textual takes the panes away
        # first): not a host gone away, and no status bar to say it in.
        if not self.closing and self.link is link:
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
            self.on_session_event(events.Notice(text=waiting[-1].summary))
        # The events that came while these answers were on their way are newer
        # than the status snapshot: a stop that arrived meanwhile stays.
        if self._state_events == events_before and (
                self.state == "connecting" or status.state != self.state):
            self.state = status.state
        if status.state == "stopped" and status.stop is not None and self.stop_info is None:
            self._on_stopped(status.stop, "session")
        elif status.root_without_program:
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
        """Starting failed: leave with the message (run_app prints it). Not
        while quitting: ending the session this app was still starting (a
        SIGTERM while it mounts) fails that start, and that is no news."""
        if self._shutting_down:
            return
        self.error_message = message
        self.exit(1, return_code=1)

    def _session_picked(self, name: str | None) -> None:
        if name is None:
            self.open_start_dialog("launch")
        else:
            self.run_worker(self.switch_session(name), group="start-session", exclusive=True)

    def action_attach_dialog(self) -> None:
        self.open_start_dialog()

    def open_start_dialog(self, tab: str = "process", note: str = "") -> None:
        from .widgets.attach_dialog import AttachDialog  # on demand, after the first paint

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
        self._start_session(message.command_id, message.args)

    @work(group="start-session", exclusive=True)
    async def _start_session(self, command_id: str, args: dict[str, Any]) -> None:
        """Start attach / attach_sim / launch in a host of its own, then switch to
        the new session. The one on screen before keeps running (see _leave).
        Cancelled (the dialog closed while it waits for an app), the host that was
        not ready yet is ended."""
        from .widgets.attach_dialog import AttachDialog

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
        async with self._switch_lock, self._unless_closing():
            await self._switch(link)

    async def switch_session(self, name: str) -> None:
        """Show another live session (joined through its socket). Switches wait
        for one another, never cancel one another: a switch cut off in the middle
        of composing the screen would leave it empty."""
        async with self._switch_lock:
            if self.link is not None and self.link.name == name:
                return
            try:
                link = await join(name, self.origin, view=TUI_VIEW)
            except DebuggerError as exc:
                self.notify(exc.message, title="switch session", severity="error")
                return
            if self.closing:
                # Quitting meanwhile (a child's end seen while the app closes):
                # its panes are going, nothing to show the session in.
                await _close_quietly(link)
                return
            async with self._unless_closing():
                await self._switch(link)

    @contextlib.asynccontextmanager
    async def _unless_closing(self):
        """A switch the app's shutdown overtook: each of its awaits (composing,
        the sync, leaving the previous session) can be the one during which
        Textual takes the panes away, and a pane asked for then is missing.
        That is the quit's doing, not a fault; while the app runs it still is."""
        try:
            yield
        except NoMatches:
            if not self.closing:
                raise

    def other_sessions(self) -> list[str]:
        """Names of the live sessions one could switch to."""
        current = self.link.name if self.link is not None else None
        return [s.name for s in paths.live_sessions() if s.name != current]

    async def _switch(self, link: RemoteHandle) -> None:
        """Fresh panes for `link`. The previous session is left as it is: started
        here, it keeps running (joinable by name) and ends with this TUI, or at
        once if its program already ended; joined, this TUI just leaves it."""
        previous = self.link
        if previous is not None and previous is not link:
            # Closed by _leave at the end, or by shutdown() if the app quits
            # first. A quit that cancelled the switch midway left it open until
            # the collector freed it: the host of an ended session it had
            # joined waited on it as on a client meanwhile.
            self._leaving.append(previous)
        self.link = None  # the old pump stops at its next event
        for group in ("events", "refresh", "children", "watches", "threads", "console"):
            self.workers.cancel_group(self, group)
        if previous is not None or self.state != "connecting":
            await self.recompose()
            if self.closing:
                # The app began closing while its panes were made anew: Textual
                # has taken them away, and skipped the recompose. Its shutdown
                # ends the sessions it owns; these connections just close.
                await _close_quietly(link, previous)
                self._left(previous)
                return
            self._reset_panes_state()
            self._after_compose()
        self._show_now(link)
        await self._sync_all()
        await self._stops_elsewhere_now()
        if previous is not None and previous.name != link.name:
            await self._leave(previous)
        self._left(previous)

    def _left(self, previous: RemoteHandle | None) -> None:
        if previous in self._leaving:
            self._leaving.remove(previous)

    async def _stops_elsewhere_now(self) -> None:
        """The tree's processes stopped now: a stop told while no pump read the
        events (during the switch) is not lost; one that went on is dropped."""
        await self._fetch_processes()
        rows = getattr(self, "_processes", None)
        if self.link is None or not rows:
            return
        stopped = {row.session for row in rows if row.state == "stopped" and not row.shown}
        for name in stopped - set(self._stopped_elsewhere):
            self._stopped_elsewhere[name] = "?"
        for name in set(self._stopped_elsewhere) - stopped - {self.link.name}:
            self._stopped_elsewhere.pop(name, None)
        self._tell_stopped_elsewhere()

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
        await _close_quietly(previous)

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

        from .widgets.quit_dialog import QuitDialog

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
        if self._css_kept is not None:
            self._css_kept.save(background=False)  # a TUI quit before its timer (css_cache.py)
        loop = asyncio.get_running_loop()
        for sig in self._signals:
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(sig)
        self.workers.cancel_group(self, "start-session")
        starting, self._starting = list(self._starting), []
        if self._early_link is not None and not self._early_link.done():
            self._early_link.cancel()
        await asyncio.gather(*(pending.abandon() for pending in starting),
                             return_exceptions=True)
        link = self.link
        await asyncio.gather(*(self._end_owned(name, link if link and link.name == name else None)
                               for name in list(self.owned)), return_exceptions=True)
        await _close_quietly(link, *self._leaving)
        self._leaving.clear()

    async def on_unmount(self) -> None:
        await self.shutdown()


def _same_tree(name: str, link: RemoteHandle | None) -> bool:
    """Whether `link` shows a process of `name`'s session tree (tree.py names a
    child ROOT.PID)."""
    other = link.name if link is not None else ""
    return other.split(".")[0] == name.split(".")[0]


async def _close_quietly(*links: RemoteHandle | None) -> None:
    """Close these connections (None: nothing); one already gone, or slow to
    close (5 s), is no news."""
    for link in links:
        if link is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(link.close(), 5)
