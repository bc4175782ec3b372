"""`q`: quit, after saying what quitting does to the session (as pudb's `q`
asks). Enter, `q` or `y` quits; Escape or `n` stays. Ctrl+Q quits at once."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class QuitDialog(ModalScreen[bool]):
    BINDINGS = [Binding("escape,n", "stay", "stay", show=False),
                Binding("q,y", "quit", "quit", show=False)]

    def __init__(self, consequence: str) -> None:
        super().__init__()
        self.consequence = consequence

    def compose(self) -> ComposeResult:
        with Vertical(id="quit-body"):
            yield Static(Text("Quit tui-debugger?", style="bold"), id="form-title")
            yield Static(self.consequence, id="quit-consequence")
            with Horizontal(id="quit-buttons"):
                yield Button("Quit (q)", id="quit-yes", variant="error")
                yield Button("Stay (Esc)", id="quit-no")

    def on_mount(self) -> None:
        self.query_one("#quit-yes", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "quit-yes")

    def action_stay(self) -> None:
        self.dismiss(False)

    def action_quit(self) -> None:
        self.dismiss(True)
