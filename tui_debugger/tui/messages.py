"""Messages panes post up to the app. A pane never calls the session: it says what
the person asked for, and the app runs the command."""

from __future__ import annotations

import itertools
import time
from typing import Any

from textual.message import Message

_orders = itertools.count(1)
#: Commands' messages on their way to the app: order -> when it was made.
in_flight: dict[int, float] = {}


def next_order() -> int:
    return next(_orders)


class Ordered(Message):
    """A message that runs a command. Commands run in the order their messages
    were made, which is the order of the keys that made them, not the order they
    reach the app: a message bubbles from its pane through one queue per
    container, so one made by F9 in the source arrives after F5's continue,
    which the app runs itself (see DebuggerApp._run_in_order)."""

    def __init__(self) -> None:
        super().__init__()
        self.order = next_order()
        in_flight[self.order] = time.monotonic()


class RunCommand(Ordered):
    """Run a registry command with these arguments, on behalf of the person."""

    def __init__(self, command_id: str, args: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.command_id = command_id
        self.args = args or {}


class ToggleBreakpoint(Ordered):
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


class Inspect(Message):
    """Show the value of an expression of the source (the name under the cursor):
    in the Console, its children opening like Variables, the focus left where it is."""

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


class SwitchSession(Message):
    """Show another session: a process of this session's tree, chosen in the
    Threads pane."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


class ShowStr(Message):
    """A variable is to be shown as its str(): evaluate it in the selected frame."""

    def __init__(self, scope: str, path: str) -> None:
        super().__init__()
        self.scope = scope
        self.path = path
