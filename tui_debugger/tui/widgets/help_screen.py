"""`?`: every key binding, generated from the bindings themselves (so a changed
keymap shows here), plus what the mouse does, pudb's keys beside ours, and how
to debug a pytest test. Each section is a table whose descriptions wrap, so no
line is cut at 80 columns."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keymap import display_key

#: pudb's keys (its own `?` list) and what does the same here, by default keys.
PUDB_KEYS: list[tuple[str, str, str]] = [
    ("n", "step over", "n in Source, F10"),
    ("s", "step into", "s in Source, F11"),
    ("c", "continue", "c in Source, F5"),
    ("r / f", "finish the function", "r, f in Source, Shift+F11"),
    ("t", "run to the cursor line", "t in Source, Ctrl+F10"),
    ("b", "set / clear a breakpoint", "b in Source, F9"),
    ("e", "show the traceback", "the Exception tab (at an exception)"),
    ("u / d", "frame up / down", "u, d in Source, Ctrl+↑ / Ctrl+↓"),
    ("H", "back to the current line", ". in Source"),
    ("o", "the program's output", "F4, Alt+O (Output tab)"),
    ("m", "open a module", "Ctrl+O"),
    ("j / k", "down / up", "j, k, ↓, ↑"),
    ("h / l", "scroll left / right", "h, l, ←, →"),
    ("g / G", "first / last line", "Home / End"),
    ("L", "go to a line", "Ctrl+G"),
    ("/", "search", "/ in Source"),
    (", / .", "next / previous match", "n / N while finding"),
    ("V S B C", "Variables, Stack, Breakpoints, code", "F3, Alt+U, Alt+P, F2 (Alt+ a letter)"),
    ("!", "a full Python shell in the frame", "! (Ctrl+D returns)"),
    ("Ctrl+X", "the internal shell", "F7, Alt+C (Console tab)"),
    ("Ctrl+N / Ctrl+P", "shell history", "↑ / ↓ in the Console"),
    ("Tab", "completion in the shell", "Tab in the Console"),
    ("_ / =", "minimize / maximize a pane", "F8"),
    ("Ctrl+C", "break into the running program", "Ctrl+C, F6"),
    ("Ctrl+P", "preferences", "Ctrl+P (palette), config file (docs/configuration.md)"),
    ("? / F1", "help", "?"),
    ("q", "quit", "q (asks), Ctrl+Q"),
    ("Enter / Space", "Variables: expand / collapse", "Enter, Space"),
    ("t / r / s", "Variables: show type / repr / str", "t / r / s in Variables"),
    ("*", "Variables: cycle public / _private", "* in Variables"),
    ("n", "Variables: a new watch expression", "w on a value; Alt+W (Watches tab)"),
    ("e", "Variables: edit", "e in Variables"),
    ("Enter", "Stack: go to the frame", "Enter in Stack"),
    ("b / d / e", "Breakpoints: toggle / delete / edit", "Space / Del, x / e in Breakpoints"),
]

#: How to debug a pytest test (docs/projects.md has the whole of it).
PYTEST_HOWTO: list[tuple[str, str]] = [
    ("run -m pytest -x tests/test_calc.py::test_add",
     "stops at the failing assertion, with its text (as pytest --pdb); F5 to the next failure"),
    ("run --break tests/test_calc.py:12 -m pytest tests/", "stops at your breakpoint in a test"),
    ("-n 0", "with pytest-xdist: the tests in one process (workers are followed too)"),
    ("* in Variables", "pytest's @py_… assertion temporaries are hidden; * shows every name"),
]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss_help", "close", show=False)]

    def __init__(self, sections: list[tuple[str, list[tuple[str, ...]]]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static("Keys  (Escape closes; Ctrl+P lists every command; F8 maximizes the "
                         "pane with the focus)", id="help-title")
            for title, rows in self.sections:
                yield Static(title, classes="help-section")
                yield Static(help_table(rows), classes="help-table")

    def action_dismiss_help(self) -> None:
        self.dismiss(None)


def help_table(rows: list[tuple[str, ...]]) -> Table:
    """Rows of (key, what it does) or (pudb's key, what, ours): the last column wraps."""
    columns = max((len(row) for row in rows), default=2)
    table = Table(box=None, show_header=columns == 3, expand=True, padding=(0, 1),
                  header_style="bold")
    if columns == 3:
        table.add_column("pudb", style="bold", no_wrap=True)
        table.add_column("does", ratio=1)
        table.add_column("here", style="bold", ratio=1)
    else:
        table.add_column("key", style="bold", no_wrap=True, max_width=28)
        table.add_column("does", ratio=1)
    for row in rows:
        table.add_row(*row)
    return table


def binding_rows(bindings: list[Binding], keymap: dict[str, str]) -> list[tuple[str, str]]:
    rows = []
    for binding in bindings:
        keys = keymap.get(binding.id, binding.key) if binding.id else binding.key
        rows.append((", ".join(display_key(k) for k in keys.split(",")),
                     binding.tooltip or binding.description))
    return rows
