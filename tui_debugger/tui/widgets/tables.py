"""Refilling a DataTable in one go, with column widths computed from the cells.

Auto-width columns can keep a row rendered before the widths grew (the cut
"inven" of "inventory.py:12"); explicit widths, set with the rows, cannot.

A stop refills the stack, threads and breakpoints tables. Most stops change a
cell or two (a line number) or nothing at all, and clearing a table costs a
layout of the whole screen, so the same rows leave the table alone and the same
shape (keys and widths) only updates the cells that differ."""

from __future__ import annotations

from rich.cells import cell_len
from textual.widgets import DataTable

Rows = list[tuple[str, list[str]]]


def refill(table: DataTable, headers: list[str], rows: Rows, max_width: int = 60,
           widths: list[int] | None = None) -> bool:
    """Replace columns and rows; rows are (key, cells). False when nothing changed.
    `widths`: the columns' widths, worked out by the caller to fit its width."""
    fitted = widths is not None
    if widths is None:
        widths = [cell_len(h) for h in headers]
        for _, cells in rows:
            for i, cell in enumerate(cells):
                widths[i] = min(max_width, max(widths[i], cell_len(cell)))
    shown: tuple[list[str], list[int], Rows] | None = getattr(table, "_refilled", None)
    if not fitted and shown is not None and shown[0] == headers and table.row_count:
        # Columns keep their width when cells get shorter ("stopped: step" after
        # "stopped: breakpoint"), so a step does not reflow the table.
        widths = [max(new, old) for new, old in zip(widths, shown[1])]
    table._refilled = (list(headers), widths, [(key, list(cells)) for key, cells in rows])  # type: ignore[attr-defined]
    if shown is not None and shown[0] == headers and shown[1] == widths and table.row_count == len(rows):
        old_rows = shown[2]
        if old_rows == rows:
            return False
        if [key for key, _ in old_rows] == [key for key, _ in rows]:
            for (key, cells), (_, old) in zip(rows, old_rows):
                for header, cell, before in zip(headers, cells, old):
                    if cell != before:
                        table.update_cell(key, header, cell)
            return True
    table.clear(columns=True)
    for header, width in zip(headers, widths):
        table.add_column(header, width=width, key=header)
    for key, cells in rows:
        table.add_row(*cells, key=key)
    return True
