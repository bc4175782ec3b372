"""The call stack of the selected thread. Choosing a frame (Enter, or a click on
the highlighted row) asks the app to select it; the source and variables follow."""

from __future__ import annotations

import os

from textual.widgets import DataTable

from ...commands.views import FrameView
from ..messages import RunCommand
from .tables import refill

HEADERS = ["#", "function", "where"]


class StackPane(DataTable):
    def __init__(self, *, cwd: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.cwd = cwd
        self.frames: list[FrameView] = []

    def on_mount(self) -> None:
        refill(self, HEADERS, [])

    def show_frames(self, frames: list[FrameView], selected: int) -> None:
        self.frames = frames
        rows = []
        for frame in frames:
            # The file's name is enough here: the source pane's title has its path.
            where = f"{os.path.basename(frame.file)}:{frame.line}" if frame.file else "(no source)"
            marker = "▶" if frame.index == selected else " "
            rows.append((str(frame.index), [f"{marker}{frame.index}", frame.name, where]))
        refill(self, HEADERS, rows)
        if frames:
            row = next((i for i, f in enumerate(frames) if f.index == selected), 0)
            if self.cursor_row != row:
                self.move_cursor(row=row, animate=False)
        self.remove_class("-stale")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(RunCommand("frame", {"index": int(event.row_key.value)}))
