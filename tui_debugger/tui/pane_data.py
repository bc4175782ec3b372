"""The panes' data after a stop, a frame change or an event: fetched from the
session, then shown (the stack, the variables tree, the watches, the threads
and the session tree's processes, the disassembly), and what the event stream
brings (output, activity, breakpoints).

A mixin of `DebuggerApp` (tui/app.py), which owns the attributes it uses.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from textual.widgets import TabbedContent

from backends.errors import DebuggerError
from backends.models import Breakpoint

from ..commands.views import VariablesResult
from ..models import ActivityEntry
from .format import breakpoint_detail, breakpoint_glyph
from .widgets.activity_pane import ActivityPane
from .widgets.breakpoints_pane import BreakpointsPane
from .widgets.disassembly_view import DisassemblyView
from .widgets.output_pane import OutputPane
from .widgets.source_view import GutterMark
from .widgets.stack_pane import StackPane
from .widgets.threads_pane import ProcessRow, ThreadsPane
from .widgets.variables_pane import Key
from .widgets.watches_pane import WatchesPane

#: Children fetched per request: a page of the variables tree or of a console result.
PAGE = 100


class PaneData:
    """Fetch what the panes show, and show it, one frame per stop."""

    def _ask_for_stop_view(self) -> None:
        """A step is under way: ask for its stop's stack and locals now. The host
        answers them once the stop is read (a call that needs a stop waits for
        the one on its way), so they arrive right behind the stop's event
        instead of a round trip after it, and this side's share of the asking is
        done while the program steps."""
        link = self.link
        if link is None:
            return
        self._discard_stop_view()
        self._stop_view = (self._stops_seen, link,
                           asyncio.ensure_future(link.call("stack", {})),
                           asyncio.ensure_future(self._fetch_variables(None)))

    def _take_stop_view(self) -> tuple[asyncio.Future[Any], asyncio.Future[Any]] | None:
        """What was asked for the stop just shown, if it was asked while the
        program ran toward it (see _ask_for_stop_view)."""
        view, self._stop_view = self._stop_view, None
        if view is None:
            return None
        stops, link, stack_call, variables_call = view
        if stops != self._stops_seen - 1 or link is not self.link:
            stack_call.cancel()
            variables_call.cancel()
            return None
        return stack_call, variables_call

    def _discard_stop_view(self) -> None:
        view, self._stop_view = self._stop_view, None
        if view is not None:
            view[2].cancel()
            view[3].cancel()

    async def _refresh(self, stop: bool = False) -> None:
        """After a stop or a frame change: fetch the stack, the variables, the watches
        and (when shown) the threads, then show them all at once, so the screen is
        composed once per stop. Old values stay on screen (dimmed) until then.
        `stop`: after a stop, whose stack and locals may be on their way already."""
        link = self.link
        if link is None or self.state == "terminated":
            return
        asked = self._take_stop_view() if stop else None
        if asked is not None:
            try:
                stack = await asked[0]
                variables = await asked[1]
            except DebuggerError:
                asked[1].cancel()
                asked = None  # the step did not stop in time: asked again below
            else:
                if isinstance(variables, str):
                    asked = None
        if asked is None:
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
            variables = await variables_call
        selected = next((f.index for f in stack.frames if f.selected), 0)
        self.selected_frame = selected
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
        self._paint_now()

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
                               ) -> tuple[list[str], dict[Key, VariablesResult],
                                          dict[Key, str]] | str:
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
        return first.scopes, pages, await self._str_values(frame_index)

    async def _str_values(self, frame_index: int | None) -> dict[Key, str]:
        """str() of the values the person shows as str (`s` in Variables)."""
        values = {}
        for scope, path in self.variables.str_keys():
            values[(scope, path)] = await self._str_of(path, frame_index)
        return values

    async def _str_of(self, path: str, frame_index: int | None) -> str:
        if self.link is None:
            return "…"
        args: dict[str, Any] = {"expression": f"str({path})"}
        if frame_index is not None:
            args["frame_index"] = frame_index
        try:
            result = await self.link.call("evaluate", args)
        except DebuggerError as exc:
            return f"<{exc.message}>"
        value = result.value
        # debugpy answers str's repr ('text'): the text itself, as print would show it
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            with contextlib.suppress(SyntaxError, ValueError):
                import ast

                value = str(ast.literal_eval(value))
        return value

    def _show_variables(self, variables: tuple[list[str], dict[Key, VariablesResult],
                                               dict[Key, str]] | str) -> None:
        if isinstance(variables, str):
            self.variables.placeholder = variables
            self.variables.show([], {})
            self._show_inline_values({})
        else:
            self.variables.show(*variables)
            scopes, pages = variables[0], variables[1]
            first = pages.get((scopes[0], None)) if scopes else None
            self._show_inline_values({v.name: v.value for v in first.variables} if first else {})

    def _show_inline_values(self, values: dict[str, str]) -> None:
        """The selected frame's first scope (its locals) inline in the source."""
        where = self.source.location
        if where is None:
            self.source.show_inline_values(None, 0, {})
        else:
            self.source.show_inline_values(where[0], where[1], values)

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
            self.run_worker(self._refresh_threads, group="threads", exclusive=True)

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

    @property
    def disassembly_shown(self) -> bool:
        return self.query_one(DisassemblyView).display

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
