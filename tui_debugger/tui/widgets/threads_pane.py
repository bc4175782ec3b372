"""The program's threads; choosing one makes the stack and variables follow it."""

from __future__ import annotations

from textual.widgets import DataTable

from ...commands.render import thread_place, thread_state
from ...commands.views import ThreadView
from ..messages import RunCommand
from .tables import refill

HEADERS = ["id", "name", "state", "where"]


class ThreadsPane(DataTable):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row")

    def on_mount(self) -> None:
        refill(self, HEADERS, [])

    def show_threads(self, threads: list[ThreadView],
                     stopped: tuple[int | None, str] | None = None) -> None:
        """`stopped` is (thread id, reason) of the stop: that thread's state says why."""
        rows = []
        selected_row = 0
        for row, thread in enumerate(threads):
            if thread.selected:
                selected_row = row
            if stopped is not None and thread.id == stopped[0]:
                state = f"stopped: {stopped[1]}"
            else:
                state = thread_state(thread)
            rows.append((str(thread.id), [("▶" if thread.selected else " ") + str(thread.id),
                                          thread.name, state, thread_place(thread)]))
        refill(self, HEADERS, rows)
        if threads and self.cursor_row != selected_row:
            self.move_cursor(row=selected_row, animate=False)
        self.remove_class("-stale")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(RunCommand("thread_select", {"thread_id": int(event.row_key.value)}))
