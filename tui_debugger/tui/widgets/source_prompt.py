"""The one-line prompt under the source pane: `/` find (matches are found as you
type) and Ctrl+G go to line. It only says what was typed; the app moves the
source pane."""

from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input
from .text_input import TextInput

PLACEHOLDERS = {
    "find": "find in this file: text, Enter (n / N next / previous match, Esc ends)",
    "line": "go to line: a number, Enter (Esc cancels)",
}


class SourcePrompt(TextInput):
    BINDINGS = [Binding("escape", "cancel", "cancel", show=False)]

    class Answered(Message):
        """The find text changed (live), or the prompt was submitted or cancelled."""

        def __init__(self, mode: str, value: str, done: bool, cancelled: bool = False) -> None:
            super().__init__()
            self.mode = mode
            self.value = value
            self.done = done
            self.cancelled = cancelled

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.mode = "find"

    def ask(self, mode: str, value: str = "") -> None:
        self.mode = mode
        self.placeholder = PLACEHOLDERS[mode]
        self.value = value
        self.cursor_position = len(value)
        # Shown and focused now, not at the next refresh: a key typed right after `/`
        # (a fast typist, a paste) must land here, not run as a command in the source.
        self.display = True
        self.screen.set_focus(self)
        self.call_after_refresh(self.focus)  # once laid out it can take the focus itself

    def _close(self, value: str, cancelled: bool) -> None:
        self.display = False
        self.post_message(self.Answered(self.mode, value, done=True, cancelled=cancelled))

    def action_cancel(self) -> None:
        self._close(self.value, cancelled=True)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.mode == "find" and self.display:
            self.post_message(self.Answered(self.mode, event.value, done=False))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._close(event.value, cancelled=False)
