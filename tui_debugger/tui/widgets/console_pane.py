"""Evaluate expressions in the selected frame. Up and Down walk the history."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, RichLog

from ..messages import Evaluate


class ConsoleInput(Input):
    BINDINGS = [
        Binding("up", "history(-1)", "previous expression", show=False),
        Binding("down", "history(1)", "next expression", show=False),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.history: list[str] = []
        self._position = 0

    def remember(self, expression: str) -> None:
        if not self.history or self.history[-1] != expression:
            self.history.append(expression)
        self._position = len(self.history)

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

    def show_result(self, value: str, type_name: str | None = None, error: bool = False) -> None:
        text = Text(value, style="red" if error else "")
        # lldb's results already start with their type: "(double) $0 = 7".
        if type_name and not error and f"({type_name})" not in value:
            text.append(f"  ({type_name})", style="dim")
        self.query_one(RichLog).write(text)
