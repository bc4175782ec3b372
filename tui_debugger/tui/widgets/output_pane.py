"""The program's stdout and stderr and the debugger's own messages, following the
tail. `/` opens a search box that narrows the pane to matching lines; Escape
closes it. The lines are kept and drawn by OutputLog, which takes a flood of
output at the cost of a deque append per line."""

from __future__ import annotations

from collections import deque

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input

from ..messages import SendInput
from .output_log import OutputLog
from .text_input import TextInput


class ProgramInput(TextInput):
    """The program's input: Enter sends the line, Ctrl+D ends the input."""

    BINDINGS = [Binding("ctrl+d", "end_input", "end of input (Ctrl+D)", id="input.eof")]

    def action_end_input(self) -> None:
        self.post_message(SendInput(self.value, eof=True))
        self.value = ""

MAX_LINES = 10_000


class OutputPane(Vertical):
    ALLOW_MAXIMIZE = True  # F8 maximizes the tabs that hold it

    BINDINGS = [
        Binding("slash,ctrl+f", "search", "search output", id="output.search"),
        Binding("escape", "close_search", "close search", show=False),
        Binding("i", "type_input", "type into the program's input", id="output.input"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: deque[tuple[str, str]] = deque(maxlen=MAX_LINES)
        self.query_text = ""
        self._partial: dict[str, str] = {}
        self._log_view: OutputLog | None = None

    def compose(self) -> ComposeResult:
        yield OutputLog(MAX_LINES, id="output-log")
        yield TextInput(placeholder="search output (Escape closes)", id="output-search")
        yield ProgramInput(placeholder="program input: a line, Enter sends it (Ctrl+D: end of input)",
                           id="program-input")

    @property
    def log_view(self) -> OutputLog:
        if self._log_view is None:
            self._log_view = self.query_one(OutputLog)
        return self._log_view

    def on_mount(self) -> None:
        self.query_one("#output-search", Input).display = False

    def append(self, category: str, text: str) -> None:
        """Add program output; a chunk without a newline waits for the rest of its line."""
        if category == "telemetry":
            return
        text = self._partial.pop(category, "") + text
        if "\t" in text:
            text = text.expandtabs(8)
        parts = text.split("\n")
        if parts[-1]:
            self._partial[category] = parts[-1]
        del parts[-1]
        lines = [(category, line) for line in parts]
        self.lines.extend(lines)
        if self.query_text:
            lines = [entry for entry in lines if self._matches(entry[1])]
        # A prompt ("name? ") is shown as soon as it is written, not once its line ends.
        tail = next(reversed(self._partial.items()), None)
        self.log_view.write_lines(lines, open_line=tail)

    def flush_partial(self) -> None:
        for category, line in list(self._partial.items()):
            self.append(category, "\n")

    def _matches(self, line: str) -> bool:
        return not self.query_text or self.query_text.lower() in line.lower()

    def action_search(self) -> None:
        box = self.query_one("#output-search", Input)
        box.display = True
        box.focus()

    def action_type_input(self) -> None:
        self.query_one(ProgramInput).focus()

    def action_close_search(self) -> None:
        box = self.query_one("#output-search", Input)
        box.value = ""
        box.display = False
        self._apply_search("")
        self.query_one(OutputLog).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if event.input.id == "output-search":
            self._apply_search(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "program-input":
            self.post_message(SendInput(event.value))
            event.input.value = ""
            return
        self.query_one(OutputLog).focus()

    def echo_input(self, text: str) -> None:
        """What the person typed, in the output where a terminal would have echoed it."""
        self.flush_partial()  # the prompt keeps its own line
        self.append("input", text + "\n")

    def _apply_search(self, query: str) -> None:
        self.query_text = query
        log = self.query_one(OutputLog)
        log.clear()
        log.highlight = query
        matching = [entry for entry in self.lines if self._matches(entry[1])]
        log.write_lines(matching, open_line=next(reversed(self._partial.items()), None))
        self.border_subtitle = f"{len(matching)} matching" if query else ""
