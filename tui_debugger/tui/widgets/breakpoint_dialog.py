"""Shift+F9 on a source line, or `e` in the Breakpoints pane: the condition, hit
count and log message of one breakpoint (a new one if the line has none). The
condition has the focus, so typing goes where a person expects; "enabled" comes
last, where a stray Tab cannot toggle it. The dialog answers the values; the app
runs breakpoint_add or breakpoint_update."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static
from .text_input import TextInput

FIELDS = [
    ("condition", "Condition", "stop only when this is true, e.g.  item.quantity < 3"),
    ("hit_condition", "Hit count", "stop from the Nth time it is reached, e.g.  5"),
    ("log_message", "Log message", "print this instead of stopping; {expression} shows a value"),
]


class BreakpointDialog(ModalScreen[dict | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel", show=False)]

    def __init__(self, where: str, values: dict | None = None, existing: bool = True) -> None:
        super().__init__()
        self.where = where
        self.initial = dict(values or {})
        self.existing = existing

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="form-body"):
            title = "Breakpoint" if self.existing else "New breakpoint"
            yield Static(f"{title} at {self.where}", id="form-title")
            for name, label, hint in FIELDS:
                yield Label(Text.assemble((label, "bold"), "  ", (hint, "dim")), classes="form-label")
                yield TextInput(str(self.initial.get(name) or ""), id=f"bp-{name}")
            yield Checkbox("enabled", value=bool(self.initial.get("enabled", True)), id="bp-enabled")
            with Horizontal(id="form-buttons"):
                yield Button("Save", variant="primary", id="bp-save")
                if self.existing:
                    yield Button("Remove", variant="error", id="bp-remove")
                yield Button("Cancel", id="bp-cancel")

    def on_mount(self) -> None:
        self.query_one("#bp-condition", Input).focus()

    def values(self) -> dict:
        """What changed: a field emptied on purpose is '' (clears it)."""
        out: dict = {}
        for name, _label, _hint in FIELDS:
            value = self.query_one(f"#bp-{name}", Input).value.strip()
            if value or self.initial.get(name):
                out[name] = value
        enabled = self.query_one("#bp-enabled", Checkbox).value
        if enabled != bool(self.initial.get("enabled", True)):
            out["enabled"] = enabled
        return out

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(self.values())

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "bp-save":
            self.dismiss(self.values())
        elif event.button.id == "bp-remove":
            self.dismiss({"__remove__": True})
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
