"""The lines of the Output pane: a Line API widget that keeps a bounded deque of
lines and renders only the rows on screen.

A program can print 100,000 lines a second. Adding a line costs one deque
append; the view (its virtual size, the scroll to the tail, the repaint) is
brought up to date at most once per frame, however many lines came in. A
RichLog renders and measures every line as it is written, which is what made a
flood of output a queue in front of the stop."""

from __future__ import annotations

from collections import deque
from typing import Iterable

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

MAX_LINE_CHARS = 2_000  # a line longer than this is cut rather than measured and laid out whole
FRAME = 1 / 30  # seconds between two updates of the view while lines keep coming
STYLES = {"stderr": Style(color="red"), "console": Style(italic=True, dim=True),
          "input": Style(color="cyan"),
          "important": Style(bold=True)}


class OutputLog(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    OutputLog {
        background: $surface;
        color: $foreground;
        overflow-y: scroll;
        overflow-x: auto;
        &:focus {
            background-tint: $foreground 5%;
        }
    }
    """

    def __init__(self, max_lines: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: deque[tuple[str, str]] = deque(maxlen=max_lines)
        self.highlight = ""  # words to show reversed (the pane's search)
        self._width = 0
        self._pending = False
        #: the last line, without its newline yet (not in `lines`)
        self.open_line: tuple[str, str] | None = None

    # ------------------------------------------------------------------ input

    def write_lines(self, lines: Iterable[tuple[str, str]],
                    open_line: tuple[str, str] | None = None) -> None:
        """Add (category, text) lines; the view catches up at the next frame.
        `open_line` is text whose newline has not come yet (a prompt): shown
        under the lines at once, until the next write replaces it."""
        if open_line is not None and len(open_line[1]) > MAX_LINE_CHARS:
            open_line = (open_line[0], open_line[1][:MAX_LINE_CHARS])
        self.open_line = open_line
        width = max(self._width, len(open_line[1]) if open_line else 0)
        for category, text in lines:
            if len(text) > MAX_LINE_CHARS:
                text = text[:MAX_LINE_CHARS]
            self.lines.append((category, text))
            if len(text) > width:
                width = len(text)
        self._width = width
        if not self._pending:
            self._pending = True
            self.set_timer(FRAME, self._catch_up)

    def clear(self) -> None:
        self.lines.clear()
        self.open_line = None
        self._width = 0
        self.scroll_to(0, 0, animate=False, immediate=True)
        self._catch_up()

    def _catch_up(self) -> None:
        self._pending = False
        following = self.scroll_y >= self.max_scroll_y
        rows = len(self.lines) + (self.open_line is not None)
        size = Size(self._width, rows)
        if size != self.virtual_size:
            self.virtual_size = size
        if following:
            self.scroll_to(y=max(0, rows - self.scrollable_content_region.height),
                           animate=False, immediate=True, force=True)
        self.refresh()

    # ------------------------------------------------------------------ rendering

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        if index < len(self.lines):
            category, line = self.lines[index]
        elif index == len(self.lines) and self.open_line is not None:
            category, line = self.open_line
        else:
            return Strip.blank(width, base)
        style = STYLES.get(category)
        if line.isascii() and line.isprintable() and not self.highlight:
            visible = line[scroll_x:scroll_x + width]
            strip = Strip([Segment(visible, style)], len(visible))
        else:
            text = Text(line, style=style or "", no_wrap=True, end="")
            if self.highlight:
                text.highlight_words([self.highlight], style="reverse", case_sensitive=False)
            strip = Strip(text.render(self.app.console), cell_len(text.plain))
            strip = strip.crop(scroll_x, scroll_x + width)
        return strip.extend_cell_length(width).apply_style(base)
