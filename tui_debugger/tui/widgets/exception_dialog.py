"""Which exceptions stop the program: one box per filter the debugger offers
(Python raised / uncaught / user-uncaught, C++ throw / catch, JavaScript all /
uncaught). The app runs exception_breakpoints with the ticked ids."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Static

from ...commands.views import ExceptionFilterView


class ExceptionDialog(ModalScreen[list[str] | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel", show=False)]

    def __init__(self, filters: list[ExceptionFilterView]) -> None:
        super().__init__()
        self.filters = filters

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="form-body"):
            yield Static("Stop the program on these exceptions  (Space ticks, Enter on Save)",
                         id="form-title")
            for index, item in enumerate(self.filters):
                yield Checkbox(f"{item.label}  ({item.id})", value=item.enabled, id=f"exc-{index}")
            with Horizontal(id="form-buttons"):
                yield Button("Save", variant="primary", id="exc-save")
                yield Button("Cancel", id="exc-cancel")

    def on_mount(self) -> None:
        if self.filters:
            self.query_one("#exc-0", Checkbox).focus()

    def chosen(self) -> list[str]:
        return [item.id for index, item in enumerate(self.filters)
                if self.query_one(f"#exc-{index}", Checkbox).value]

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(self.chosen() if event.button.id == "exc-save" else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
