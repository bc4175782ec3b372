"""Messages panes post up to the app. A pane never calls the session: it says what
the person asked for, and the app runs the command."""

from __future__ import annotations

from typing import Any

from textual.message import Message


class RunCommand(Message):
    """Run a registry command with these arguments, on behalf of the person."""

    def __init__(self, command_id: str, args: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.command_id = command_id
        self.args = args or {}


class ToggleBreakpoint(Message):
    def __init__(self, path: str, line: int) -> None:
        super().__init__()
        self.path = path
        self.line = line


class EditBreakpoint(Message):
    """Edit a breakpoint's condition, hit count and log message: by id, or the one on
    a source line (a new one when the line has none)."""

    def __init__(self, breakpoint_id: int | None = None, path: str | None = None,
                 line: int | None = None) -> None:
        super().__init__()
        self.breakpoint_id = breakpoint_id
        self.path = path
        self.line = line


class LoadChildren(Message):
    """Fetch children of a variable (or a whole scope when path is None), a page at a time."""

    def __init__(self, scope: str, path: str | None, start: int = 0) -> None:
        super().__init__()
        self.scope = scope
        self.path = path
        self.start = start


class Evaluate(Message):
    def __init__(self, expression: str) -> None:
        super().__init__()
        self.expression = expression


class WatchesChanged(Message):
    def __init__(self, expressions: list[str]) -> None:
        super().__init__()
        self.expressions = expressions


class StartSession(Message):
    """Start a new session with a registry command (attach, attach_sim, launch):
    the attach dialog asks, the app runs it and reports back to the dialog."""

    def __init__(self, command_id: str, args: dict[str, Any]) -> None:
        super().__init__()
        self.command_id = command_id
        self.args = args


class EditValue(Message):
    """Give a variable a new value (the app asks for it, then runs set_variable)."""

    def __init__(self, scope: str, path: str, value: str) -> None:
        super().__init__()
        self.scope = scope
        self.path = path
        self.value = value


class ShowMemory(Message):
    """Show the memory a value is at or points to (a pointer, an array), as hex."""

    def __init__(self, expression: str) -> None:
        super().__init__()
        self.expression = expression


class SendInput(Message):
    """Send a line to the program's input (and end it, with eof)."""

    def __init__(self, text: str, eof: bool = False) -> None:
        super().__init__()
        self.text = text
        self.eof = eof


class CompleteName(Message):
    """Complete `text` at `column` (the cursor), as the `complete` command proposes."""

    def __init__(self, text: str, column: int) -> None:
        super().__init__()
        self.text = text
        self.column = column


class ExpandResult(Message):
    """The children of a console result (or of one of its children), by the
    expression that reaches it, a page from `start`; `node` is where they go."""

    def __init__(self, node: object, expression: str, start: int) -> None:
        super().__init__()
        self.node = node
        self.expression = expression
        self.start = start
