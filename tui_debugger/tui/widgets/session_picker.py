"""The live sessions to pick from, when `tui-debugger ui` finds none of its
own project's (or several): it never opens another project's session by
itself, but offers them. Dismissed with the chosen name, or None."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


class SessionPicker(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel", show=False)]

    def __init__(self, sessions: list[dict[str, Any]], note: str) -> None:
        super().__init__()
        self.sessions = sessions
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-body"):
            yield Static("Open a live session", id="picker-title")
            yield Static(self.note, id="picker-note")
            yield OptionList(*(
                Option(f"{s['name']}  {s['state']}  {s.get('program') or '-'}\n"
                       f"  project {s.get('project') or '?'}, started by "
                       f"{s.get('startedBy') or '?'}", id=s["name"])
                for s in self.sessions), id="picker-list")
            yield Static("Enter: open it    Escape: attach or launch instead",
                         id="picker-keys")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
