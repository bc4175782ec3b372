"""Refilling a DataTable in one go, with column widths computed from the cells.

Auto-width columns can keep a row rendered before the widths grew (the cut
"inven" of "inventory.py:12"); explicit widths, set with the rows, cannot."""

from __future__ import annotations

from rich.cells import cell_len
from textual.widgets import DataTable


def refill(table: DataTable, headers: list[str], rows: list[tuple[str, list[str]]],
           max_width: int = 60) -> None:
    """Replace columns and rows; rows are (key, cells)."""
    widths = [cell_len(h) for h in headers]
    for _, cells in rows:
        for i, cell in enumerate(cells):
            widths[i] = min(max_width, max(widths[i], cell_len(cell)))
    table.clear(columns=True)
    for header, width in zip(headers, widths):
        table.add_column(header, width=width, key=header)
    for key, cells in rows:
        table.add_row(*cells, key=key)
