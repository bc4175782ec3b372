"""The call stack of the selected thread. Choosing a frame (Enter, or a click on
the highlighted row) asks the app to select it; the source and variables follow.

A Line API widget, not a DataTable: a step changes a line number in this pane at
nearly every stop, and a DataTable re-rendered all its rows for that (4-8 ms of
the loop per step). This renders only the visible rows, from cells kept as text,
and a stop that changes nothing leaves it alone. It looks and behaves like the
row-cursor table it replaces: a header row, a cursor row, the same keys."""

from __future__ import annotations

import os
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...commands.views import FrameView
from ..format import cut_end, cut_middle, fit_widths
from ..messages import RunCommand
from .kept_styles import KeptStyles

HEADERS = ("#", "function", "where")
MAX_WIDTH = 60  # a column's widest, as the tables elsewhere


class StackPane(KeptStyles, ScrollView, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Select", show=False),
        Binding("up", "cursor_up", "Cursor up", show=False),
        Binding("down", "cursor_down", "Cursor down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home,ctrl+home", "first", "First frame", show=False),
        Binding("end,ctrl+end", "last", "Last frame", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {"stack-pane--header", "stack-pane--cursor"}

    def __init__(self, *, cwd: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cwd = cwd
        self.frames: list[FrameView] = []
        self.cursor_row = 0
        self._rows: list[tuple[str, str, str]] = []
        self._widths = [cell_len(h) for h in HEADERS]
        self._styles: tuple[Style, Style, Style] | None = None
        self._fitted: list[int] | None = None  # the widths of this paint

    @property
    def row_count(self) -> int:
        return len(self._rows)

    def show_frames(self, frames: list[FrameView], selected: int) -> None:
        self.frames = frames
        rows = []
        for frame in frames:
            # The file's name is enough here: the source pane's title has its path.
            where = f"{os.path.basename(frame.file)}:{frame.line}" if frame.file else "(no source)"
            marker = "▶" if frame.index == selected else " "
            rows.append((f"{marker}{frame.index}", frame.name, where))
        row = next((i for i, f in enumerate(frames) if f.index == selected), 0)
        self.remove_class("-stale")
        if rows == self._rows and row == self.cursor_row:
            return  # the same stack: nothing to paint
        widths = [cell_len(h) for h in HEADERS]
        for cells in rows:
            for i, cell in enumerate(cells):
                widths[i] = min(MAX_WIDTH, max(widths[i], cell_len(cell)))
        if self._rows and rows:
            # Columns keep their width when cells get shorter, so a step does not reflow.
            widths = [max(new, old) for new, old in zip(widths, self._widths)]
        # A step changes a line number or two: repaint those rows, not the pane.
        changed = ([i for i, (new, old) in enumerate(zip(rows, self._rows)) if new != old]
                   if widths == self._widths and len(rows) == len(self._rows)
                   and row == self.cursor_row else None)
        self._rows = rows
        self._widths = widths
        self.cursor_row = row if rows else 0
        self.virtual_size = Size(sum(w + 2 for w in widths), len(rows) + 1)
        self._scroll_cursor_visible()
        if changed is None:
            self.refresh()
            return
        top = int(self.scroll_y)
        for index in changed:
            if 0 <= index - top < self.size.height - 1:
                self.refresh(Region(0, index - top + 1, self.size.width, 1))

    # ---------------------------------------------------------------- rendering

    def render_lines(self, crop: Region) -> list[Strip]:
        # The styles walk every ancestor: work them out once per paint, not per row.
        self._styles = self._pane_styles()
        self._fitted = self._fit_widths()
        try:
            return super().render_lines(crop)
        finally:
            self._styles = None
            self._fitted = None

    def _fit_widths(self) -> list[int]:
        """The columns' widths in this pane's width: the frame number whole, then
        `file:line` (cut in the middle, never its line number), then the function."""
        available = self.scrollable_content_region.width - 2 * len(HEADERS)
        if available <= 0 or sum(self._widths) <= available:
            return self._widths
        return fit_widths(self._widths, available, [0, 2, 1], [self._widths[0], 4, 8])

    def _pane_styles(self) -> tuple[Style, Style, Style]:
        """The pane's, the header's and the cursor row's styles."""
        return (self.rich_style, self.get_component_rich_style("stack-pane--header"),
                self.get_component_rich_style("stack-pane--cursor"))

    def _cells(self, cells: tuple[str, ...]) -> list[str]:
        """Each cell padded to its column (one segment each, as a table's cells)."""
        out = []
        for column, (cell, width) in enumerate(zip(cells, self._fitted or self._fit_widths())):
            if cell_len(cell) > width:
                cell = cut_middle(cell, width) if column == 2 else cut_end(cell, width)
            out.append(" " + cell + " " * (width - cell_len(cell)) + " ")
        return out

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        scroll_x, scroll_y = self.scroll_offset
        base, header, cursor = self._styles or self._pane_styles()
        if y == 0:
            cells, style = self._cells(HEADERS), header
        else:
            index = scroll_y + y - 1
            if index >= len(self._rows):
                return Strip.blank(width, base)
            cells = self._cells(self._rows[index])
            style = cursor if index == self.cursor_row else Style()
            style = style + Style(meta={"row": index})
        style = base + style
        # A segment per cell (the column in its meta), as a table has: an SVG
        # screenshot places each at its column even where a glyph draws wider.
        segments = [Segment(cell, style + Style(meta={"column": i})) for i, cell in enumerate(cells)]
        strip = Strip(segments, sum(cell_len(c) for c in cells))
        return strip.crop_extend(scroll_x, scroll_x + width, style)

    def _scroll_cursor_visible(self) -> None:
        rows_shown = max(1, self.scrollable_content_region.height - 1)
        top = int(self.scroll_y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + rows_shown:
            self.scroll_to(y=self.cursor_row - rows_shown + 1, animate=False)

    # ---------------------------------------------------------------- cursor

    def move_cursor(self, *, row: int, animate: bool = False) -> None:
        if not self._rows:
            return
        row = max(0, min(row, len(self._rows) - 1))
        if row != self.cursor_row:
            self.cursor_row = row
            self.refresh()
        self._scroll_cursor_visible()

    def action_cursor_up(self) -> None:
        self.move_cursor(row=self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(row=self.cursor_row + 1)

    def action_page_up(self) -> None:
        self.move_cursor(row=self.cursor_row - max(1, self.scrollable_content_region.height - 1))

    def action_page_down(self) -> None:
        self.move_cursor(row=self.cursor_row + max(1, self.scrollable_content_region.height - 1))

    def action_first(self) -> None:
        self.move_cursor(row=0)

    def action_last(self) -> None:
        self.move_cursor(row=len(self._rows) - 1)

    def action_select_cursor(self) -> None:
        if 0 <= self.cursor_row < len(self.frames):
            self.post_message(RunCommand("frame", {"index": self.frames[self.cursor_row].index}))

    def on_click(self, event: events.Click) -> None:
        """A click highlights a row; a click on the highlighted row chooses it."""
        row = event.style.meta.get("row")
        if row is None:
            return
        event.stop()
        if row == self.cursor_row:
            self.action_select_cursor()
        else:
            self.move_cursor(row=row)
