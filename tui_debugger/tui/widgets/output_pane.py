"""The program's stdout and stderr and the debugger's own messages, following the
tail. `/` opens a search box that narrows the pane to matching lines; Escape
closes it."""

from __future__ import annotations

from collections import deque

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, RichLog

MAX_LINES = 5_000
STYLES = {"stderr": "red", "console": "italic dim", "important": "bold"}


class OutputPane(Vertical):
    ALLOW_MAXIMIZE = True  # F8 maximizes the tabs that hold it

    BINDINGS = [
        Binding("slash,ctrl+f", "search", "search output", id="output.search"),
        Binding("escape", "close_search", "close search", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: deque[tuple[str, str]] = deque(maxlen=MAX_LINES)
        self.query_text = ""
        self._partial: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield RichLog(id="output-log", max_lines=MAX_LINES, wrap=True, auto_scroll=True)
        yield Input(placeholder="search output (Escape closes)", id="output-search")

    def on_mount(self) -> None:
        self.query_one("#output-search", Input).display = False

    def append(self, category: str, text: str) -> None:
        """Add program output; a chunk without a newline waits for the rest of its line."""
        if category == "telemetry":
            return
        text = self._partial.pop(category, "") + text
        parts = text.split("\n")
        if parts[-1]:
            self._partial[category] = parts[-1]
        log = self.query_one(RichLog)
        for line in parts[:-1]:
            self.lines.append((category, line))
            if self._matches(line):
                log.write(self._styled(category, line))

    def flush_partial(self) -> None:
        for category, line in list(self._partial.items()):
            self.append(category, "\n")

    def _styled(self, category: str, line: str) -> Text:
        text = Text(line, style=STYLES.get(category, ""))
        if self.query_text:
            text.highlight_words([self.query_text], style="reverse", case_sensitive=False)
        return text

    def _matches(self, line: str) -> bool:
        return not self.query_text or self.query_text.lower() in line.lower()

    def action_search(self) -> None:
        box = self.query_one("#output-search", Input)
        box.display = True
        box.focus()

    def action_close_search(self) -> None:
        box = self.query_one("#output-search", Input)
        box.value = ""
        box.display = False
        self._apply_search("")
        self.query_one(RichLog).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._apply_search(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one(RichLog).focus()

    def _apply_search(self, query: str) -> None:
        self.query_text = query
        log = self.query_one(RichLog)
        log.clear()
        shown = 0
        for category, line in self.lines:
            if self._matches(line):
                log.write(self._styled(category, line))
                shown += 1
        self.border_subtitle = f"{shown} matching" if query else ""
