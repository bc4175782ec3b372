"""Evaluate expressions in the selected frame. Up and Down walk the history.
A result with children (a dict, a list, an object) also opens like a variable,
in the tree under the transcript. Tab completes as the `complete` command
proposes: the debugger's completions, or else a name of the frame (or a
member, after a dot)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input

import os

from ..messages import CompleteName, Evaluate
from .console_results import ConsoleResults
from .rich_log import RichLog
from .text_input import TextInput


class ConsoleInput(TextInput):
    BINDINGS = [
        Binding("up", "history(-1)", "previous expression", show=False),
        Binding("down", "history(1)", "next expression", show=False),
        Binding("tab", "complete", "complete a name of the frame", show=False, id="console.complete"),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.history: list[str] = []
        self._position = 0

    def remember(self, expression: str) -> None:
        if not self.history or self.history[-1] != expression:
            self.history.append(expression)
        self._position = len(self.history)

    def action_complete(self) -> None:
        self.post_message(CompleteName(self.value, self.cursor_position))

    def complete_from(self, text: str, column: int, items: list) -> list[str]:
        """Put in the longest text the proposals share (each replaces
        `length` characters from `start`); answers the labels of those that fit."""
        if self.value != text or self.cursor_position != column:
            return []  # typed on meanwhile: the proposals are for another text
        before = text[:column]
        fitting: dict[str, str] = {}
        for item in items:
            start = min(item.start, column)
            made = before[:start] + item.text + before[min(column, start + item.length):]
            if made.startswith(before):
                fitting.setdefault(made, item.label)
        if not fitting:
            return []
        common = os.path.commonprefix(list(fitting))
        if len(common) > len(before):
            self.value = common + text[column:]
            self.cursor_position = len(common)
        return sorted(set(fitting.values()))

    def action_history(self, delta: int) -> None:
        if not self.history:
            return
        self._position = min(max(0, self._position + delta), len(self.history))
        self.value = self.history[self._position] if self._position < len(self.history) else ""
        self.cursor_position = len(self.value)


class ConsolePane(Vertical):
    ALLOW_MAXIMIZE = True  # F8 maximizes the tabs that hold it

    def compose(self) -> ComposeResult:
        yield RichLog(id="console-log", wrap=True, max_lines=2_000)
        yield ConsoleResults(id="console-results")
        yield ConsoleInput(placeholder=">>> expression, Enter (↑ history)", id="console-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        expression = event.value.strip()
        if not expression:
            return
        box = self.query_one(ConsoleInput)
        box.remember(expression)
        box.value = ""
        self.query_one(RichLog).write(Text(f">>> {expression}", style="bold"))
        self.post_message(Evaluate(expression))

    def echo(self, expression: str) -> None:
        """An expression evaluated from elsewhere (Inspect in the source)."""
        self.query_one(RichLog).write(Text(f">>> {expression}", style="bold"))

    def show_proposals(self, text: str, column: int, items: list) -> bool:
        """Complete from `complete`'s proposals; False when none fits."""
        box = self.query_one(ConsoleInput)
        labels = box.complete_from(text, column, items)
        if len(labels) > 1:
            self._list(labels)
        return bool(labels)

    def _list(self, matching: list[str]) -> None:
        shown = "  ".join(matching[:40]) + (f"  … {len(matching) - 40} more" if len(matching) > 40 else "")
        self.query_one(RichLog).write(Text(shown, style="dim"))

    def show_result(self, value: str, type_name: str | None = None, error: bool = False) -> None:
        text = Text(value, style="red" if error else "")
        # lldb's results already start with their type: "(double) $0 = 7".
        if type_name and not error and f"({type_name})" not in value:
            text.append(f"  ({type_name})", style="dim")
        self.query_one(RichLog).write(text)
