"""Enter or `e` on a value in the Variables pane: type its new value (an
expression in the program's language). The app runs set_variable; a debugger
that cannot change values says so in the notification."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static
from .text_input import TextInput


class ValueDialog(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel", show=False)]

    def __init__(self, path: str, value: str) -> None:
        super().__init__()
        self.path = path
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(id="form-body"):
            yield Static(Text.assemble(("Set ", "bold"), (self.path, "bold"),
                                       ("  (Enter sets, Esc cancels)", "dim")), id="form-title")
            yield TextInput(self.value, id="value-input",
                        placeholder="new value: an expression in the program's language")

    def on_mount(self) -> None:
        box = self.query_one(Input)
        box.focus()
        box.select_all()  # typing replaces the old value; arrows keep it to edit

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
