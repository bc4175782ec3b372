"""A small form for a command's arguments, built from its argument model. The
palette opens it for commands that need arguments; the breakpoints pane opens it
to edit a condition."""

from __future__ import annotations

import json
import shlex
import typing
from typing import Any

from pydantic import ValidationError
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static

from ...commands.registry import Command


def field_kind(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return field_kind(inner[0]) if inner else "str"
    if annotation is bool:
        return "bool"
    if annotation is int:
        return "int"
    if origin is list or annotation is list:
        return "list"
    if origin is dict or annotation is dict:
        return "dict"
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return "model"
    return "str"


def needs_form(command: Command) -> bool:
    """A command whose arguments cannot all be left out asks for them first."""
    try:
        command.args.model_validate({})
    except ValidationError:
        return True
    return False


class CommandForm(ModalScreen[dict[str, Any] | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel", show=False)]

    def __init__(self, command: Command, initial: dict[str, Any] | None = None,
                 title: str | None = None, extra_buttons: list[tuple[str, str]] = ()) -> None:
        super().__init__()
        self.command = command
        self.initial = initial or {}
        self.title_text = title or f"{command.id}: {command.help}"
        self.extra_buttons = list(extra_buttons)
        self.fields = {name: f for name, f in command.args.model_fields.items()
                       if field_kind(f.annotation) != "model"}

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="form-body"):
            yield Static(self.title_text, id="form-title")
            for name, info in self.fields.items():
                kind = field_kind(info.annotation)
                label = name.replace("_", " ") + ("" if not info.is_required() else " *")
                value = self.initial.get(name, None if info.is_required() else info.get_default())
                if kind == "bool":
                    yield Checkbox(label, value=bool(value), id=f"field-{name}")
                    continue
                yield Label(Text.assemble((label, "bold"), "  ", (info.description or "", "dim")),
                            classes="form-label")
                text = "" if value is None else (
                    shlex.join(value) if kind == "list" else
                    json.dumps(value) if kind == "dict" and value else
                    "" if kind == "dict" else str(value))
                yield Input(text, id=f"field-{name}",
                            type="integer" if kind == "int" else "text")
            yield Static("", id="form-error")
            with Horizontal(id="form-buttons"):
                yield Button("OK", variant="primary", id="form-ok")
                for button_id, label in self.extra_buttons:
                    yield Button(label, variant="error", id=f"form-{button_id}")
                yield Button("Cancel", id="form-cancel")

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, info in self.fields.items():
            kind = field_kind(info.annotation)
            widget = self.query_one(f"#field-{name}")
            if kind == "bool":
                if widget.value != bool(info.get_default()) or name in self.initial:
                    out[name] = widget.value
                continue
            raw = widget.value.strip()
            if not raw:
                if name in self.initial and self.initial[name] not in (None, ""):
                    out[name] = ""  # emptied on purpose: clears it
                continue
            if kind == "int":
                out[name] = int(raw)
            elif kind == "list":
                out[name] = shlex.split(raw)
            elif kind == "dict":
                out[name] = json.loads(raw)
            else:
                out[name] = raw
        return out

    def _submit(self) -> None:
        error = self.query_one("#form-error", Static)
        try:
            values = self.values()
            self.command.args.model_validate(values)
        except ValidationError as exc:
            error.update("; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}"
                                   for e in exc.errors()))
            return
        except ValueError as exc:
            error.update(str(exc))
            return
        self.dismiss(values)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "form-ok":
            self._submit()
        elif event.button.id == "form-cancel":
            self.dismiss(None)
        elif event.button.id and event.button.id.startswith("form-"):
            self.dismiss({"__button__": event.button.id.removeprefix("form-")})

    def action_cancel(self) -> None:
        self.dismiss(None)
