"""Values asked for on demand: a page of a variable's children, the console
(evaluate, inspect from the source, a result's children, completion), memory,
and the watches when their list changes.

A mixin of `DebuggerApp` (tui/app.py), which owns the attributes it uses.
"""

from __future__ import annotations

import ast
import contextlib
from typing import TYPE_CHECKING, Any

from textual import work
from textual.widgets import TabbedContent

from backends.errors import DebuggerError

from . import repl
from .messages import (CompleteName, Evaluate, ExpandResult, Inspect, LoadChildren, ShowMemory,
                       ShowStr, WatchesChanged)
from .pane_data import PAGE
from .widgets.console_pane import ConsolePane
from .widgets.console_results import ConsoleResults

if TYPE_CHECKING:
    from .widgets.memory_screen import MemoryScreen


class Inspection:
    """The panes' requests for values, each answered in a worker (`@work`): a
    worker's group is what a switch of session cancels (SessionLink._switch)."""

    def on_load_children(self, message: LoadChildren) -> None:
        message.stop()
        self._load_children(message.scope, message.path, message.start)

    @work(group="children")
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

    def on_show_memory(self, message: ShowMemory) -> None:
        message.stop()
        self._show_memory({"expression": message.expression, "frame_index": self.selected_frame})

    def on_memory_screen_page(self, message: MemoryScreen.Page) -> None:
        self._show_memory({"address": hex(message.address), "count": message.count})

    @work(group="memory")
    async def _show_memory(self, args: dict[str, Any]) -> None:
        result = await self._call("memory_read", {"count": 128, **args})
        if result is None:
            return
        from .widgets.memory_screen import MemoryScreen  # after the first paint: on demand

        if isinstance(self.screen, MemoryScreen):
            self.screen.show(result)
        else:
            self.push_screen(MemoryScreen(result))

    def on_show_str(self, message: ShowStr) -> None:
        message.stop()
        self._show_str(message.scope, message.path)

    @work(group="show-str")
    async def _show_str(self, scope: str, path: str) -> None:
        value = await self._str_of(path, self.selected_frame)
        self.variables.set_str((scope, path), value)

    def on_evaluate(self, message: Evaluate) -> None:
        message.stop()
        self._evaluate(message.expression)

    def on_inspect(self, message: Inspect) -> None:
        message.stop()
        if self.state != "stopped":
            self.notify("Stop the program to inspect its values.", severity="warning")
            return
        if self.screen.maximized is not None:
            self.screen.minimize()
        self.query_one("#io-tabs", TabbedContent).active = "tab-console"
        self.query_one(ConsolePane).echo(message.expression)
        self._evaluate(message.expression)

    @work(group="console")
    async def _evaluate(self, expression: str) -> None:
        console = self.query_one(ConsolePane)
        if self.link is None:
            return
        line = repl.split(expression) if self._python_session() else repl.Line(None, expression)
        try:
            if line.statements is not None:
                await self._run_statements(line)
            if line.expression is None:
                await self._refresh_values()
                return
            expression = line.expression
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

    def _python_session(self) -> bool:
        return self.status.adapter == "debugpy" or bool(self.status.python)

    async def _run_statements(self, line: "repl.Line") -> None:
        """The statements of a console line, in the selected frame; the names its
        imports bind that the frame did not have are the console's (hidden in
        Variables)."""
        assert self.link is not None
        new = set(line.imported)
        if new:
            with contextlib.suppress(DebuggerError, ValueError, SyntaxError):
                had = await self.link.call("evaluate", {
                    "expression": repl.already_bound(new), "frame_index": self.selected_frame})
                new -= set(ast.literal_eval(had.value))
        result = await self.link.call("evaluate", {"expression": line.statements,
                                                   "frame_index": self.selected_frame})
        self.variables.console_names |= new
        if result.value:  # what the statements printed, or an answer of the adapter's own
            self.query_one(ConsolePane).show_result(result.value)

    def on_expand_result(self, message: ExpandResult) -> None:
        message.stop()
        self._expand_result(message)

    @work(group="console")
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

    def on_complete_name(self, message: CompleteName) -> None:
        message.stop()
        self._complete(message)

    @work(group="console")
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

    def on_watches_changed(self, message: WatchesChanged) -> None:
        message.stop()
        self.watch_expressions = message.expressions
        self.run_worker(self._refresh_watches, group="watches", exclusive=True)
