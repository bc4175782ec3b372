"""`?`: every key binding, generated from the bindings themselves (so a changed
keymap shows here), plus what the mouse does."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from ..keymap import display_key


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss_help", "close", show=False)]

    def __init__(self, sections: list[tuple[str, list[tuple[str, str]]]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static("Keys  (Escape closes; Ctrl+P lists every command)", id="help-title")
            for title, rows in self.sections:
                yield Static(title, classes="help-section")
                table = DataTable(show_cursor=False, classes="help-table")
                table.add_columns("key", "does")
                for key, description in rows:
                    table.add_row(key, description)
                yield table

    def action_dismiss_help(self) -> None:
        self.dismiss(None)


def binding_rows(bindings: list[Binding], keymap: dict[str, str]) -> list[tuple[str, str]]:
    rows = []
    for binding in bindings:
        keys = keymap.get(binding.id, binding.key) if binding.id else binding.key
        rows.append((", ".join(display_key(k) for k in keys.split(",")), binding.description))
    return rows
