"""Watch expressions, evaluated in the selected frame at every stop. Type an
expression and press Enter to add it; Delete removes the highlighted one."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Input

from ..format import one_line
from ..messages import WatchesChanged
from .tables import refill
from .text_input import TextInput

HEADERS = ["expression", "value"]


class WatchesPane(Vertical):
    ALLOW_MAXIMIZE = True  # F8 maximizes the tabs that hold it

    BINDINGS = [Binding("delete,x", "remove", "remove watch", id="watch.remove")]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.expressions: list[str] = []
        self.values: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield TextInput(placeholder="add a watch: expression, Enter", id="watch-input")
        yield DataTable(id="watch-table", cursor_type="row")

    def on_mount(self) -> None:
        refill(self.query_one(DataTable), HEADERS, [])

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        expression = event.value.strip()
        event.input.value = ""
        if expression and expression not in self.expressions:
            self.expressions.append(expression)
            self._redraw()
            self.post_message(WatchesChanged(list(self.expressions)))

    def action_remove(self) -> None:
        table = self.query_one(DataTable)
        if not self.expressions or self.focused_on_input():
            return
        row = min(table.cursor_row, len(self.expressions) - 1)
        self.expressions.pop(row)
        self._redraw()
        self.post_message(WatchesChanged(list(self.expressions)))

    def focused_on_input(self) -> bool:
        return self.screen.focused is self.query_one(Input)

    def show_values(self, values: dict[str, str]) -> None:
        self.values = values
        self._redraw()
        self.remove_class("-stale")

    def _redraw(self) -> None:
        table = self.query_one(DataTable)
        row = table.cursor_row
        refill(table, HEADERS, [(expression, [expression, one_line(self.values.get(expression, "…"), 200)])
                                for expression in self.expressions], max_width=200)
        if self.expressions:
            table.move_cursor(row=min(row, len(self.expressions) - 1), animate=False)
