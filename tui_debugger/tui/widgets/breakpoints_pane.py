"""Every breakpoint of the session, whoever set it. Space (or a click on its
glyph) enables or disables, Enter (or a click on the highlighted row) edits the
condition, Delete removes."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.widgets import DataTable

from backends.models import Breakpoint
from ..format import breakpoint_detail, breakpoint_glyph, cut_end, cut_middle, display_path, fit_widths, who
from ..messages import EditBreakpoint, RunCommand
from .tables import refill

HEADERS = [" ", "#", "where", "condition", "hits", "by"]
#: Who gets the width when the pane is narrow: glyph and id, `file:line` (cut
#: in the middle, never its line number) up to 18 characters, hits, who set it,
#: the condition or log message up to 24, then the rest of the path, then the
#: rest of the condition (cut at its end).
WHOLE = 10_000
PRIORITY = [(0, WHOLE), (1, WHOLE), (2, 18), (4, WHOLE), (5, WHOLE), (3, 24), (2, WHOLE), (3, WHOLE)]
MINIMUM = [1, 1, 6, 0, 0, 0]


class BreakpointsPane(DataTable):
    BINDINGS = [
        Binding("space", "toggle_enabled", "enable/disable", id="bp.toggle"),
        Binding("e", "edit", "edit condition", id="bp.edit"),
        Binding("delete,x", "remove", "remove", id="bp.remove"),
    ]

    def __init__(self, *, cwd: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row")
        self.cwd = cwd
        self.breakpoints: list[Breakpoint] = []

    def on_mount(self) -> None:
        # The rows of breakpoints shown before the pane mounted (a first stop
        # that came early), not an empty table over them.
        self._fill()

    def show_breakpoints(self, breakpoints: list[Breakpoint]) -> None:
        row = self.cursor_row
        self.breakpoints = breakpoints
        self._fill()
        if breakpoints:
            self.move_cursor(row=min(row, len(breakpoints) - 1), animate=False)

    def on_resize(self) -> None:
        self._fill()

    def _fill(self) -> None:
        rows = []
        for bp in self.breakpoints:
            if bp.spec.function:
                where = f"{bp.spec.function}()"
            else:
                where = f"{display_path(bp.spec.path, self.cwd)}:{bp.line or bp.spec.line}"
            rows.append((str(bp.id), [breakpoint_glyph(bp), str(bp.id), where,
                                      breakpoint_detail(bp), str(bp.hits), who(bp.set_by)]))
        width = self.scrollable_content_region.width - 1
        natural = [max([len(h)] + [len(cells[i]) for _, cells in rows]) for i, h in enumerate(HEADERS)]
        if width <= 0 or not rows or sum(natural) + 2 * len(HEADERS) <= width:
            refill(self, HEADERS, rows)  # a hidden pane's width is 0: whole
            return
        # Columns that get no room go, and leave their padding to the others.
        columns = list(range(len(HEADERS)))
        while True:
            widths = fit_widths([natural[i] for i in columns], width - 2 * len(columns),
                                [(columns.index(i), cap) for i, cap in PRIORITY if i in columns],
                                [MINIMUM[i] for i in columns])
            kept = [i for i, w in zip(columns, widths) if w > 0]
            if kept == columns:
                break
            columns = kept
        headers = [HEADERS[i] for i in columns]
        refill(self, headers, [(key, [cut_middle(cells[i], w) if i == 2 else cut_end(cells[i], w)
                                      for i, w in zip(columns, widths)]) for key, cells in rows],
               widths=widths)

    def _current(self) -> Breakpoint | None:
        if not self.breakpoints or self.cursor_row >= len(self.breakpoints):
            return None
        return self.breakpoints[self.cursor_row]

    def action_toggle_enabled(self) -> None:
        bp = self._current()
        if bp is not None:
            self.post_message(RunCommand("breakpoint_update",
                                         {"breakpoint_id": bp.id, "enabled": not bp.spec.enabled}))

    def action_edit(self) -> None:
        bp = self._current()
        if bp is not None:
            self.post_message(EditBreakpoint(bp.id))

    def action_remove(self) -> None:
        bp = self._current()
        if bp is not None:
            self.post_message(RunCommand("breakpoint_remove", {"breakpoint_id": bp.id}))

    def on_click(self, event: events.Click) -> None:
        """A click on the glyph (● / ○) enables or disables, as a checkbox; the
        table's own handler (which runs after this one) is then left out."""
        meta = event.style.meta
        row = meta.get("row")
        if meta.get("column") == 0 and row is not None and 0 <= row < len(self.breakpoints):
            event.prevent_default()
            bp = self.breakpoints[row]
            self.post_message(RunCommand("breakpoint_update",
                                         {"breakpoint_id": bp.id, "enabled": not bp.spec.enabled}))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(EditBreakpoint(int(event.row_key.value)))
