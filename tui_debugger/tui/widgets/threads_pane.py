"""The program's threads; choosing one makes the stack and variables follow it.

When the program has child processes (a session tree, tree.py), the pane shows
the processes as a tree, each with its state, and the threads of the one on
screen under it; choosing a process shows its session."""

from __future__ import annotations

from dataclasses import dataclass

from textual.widgets import DataTable

from ...commands.render import thread_place, thread_state
from ...commands.views import ThreadView
from ..messages import RunCommand, SwitchSession
from .tables import refill

HEADERS = ["id", "name", "state", "where"]
_SESSION_KEY = "session:"
_SPACE = "\u00a0"  # a cell's leading spaces are trimmed; these indent the tree


@dataclass(frozen=True)
class ProcessRow:
    """One process of the tree, as the Threads pane shows it."""

    session: str
    depth: int
    pid: int | None
    program: str
    state: str
    shown: bool  # the session on screen


class ThreadsPane(DataTable):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row")

    def on_mount(self) -> None:
        refill(self, HEADERS, [])

    def show_threads(self, threads: list[ThreadView],
                     stopped: tuple[int | None, str] | None = None,
                     processes: list[ProcessRow] | None = None) -> None:
        """`stopped` is (thread id, reason) of the stop: that thread's state says why.
        `processes`: the session tree, when it has more than the program itself."""
        rows = []
        selected_row = 0
        tree = processes if processes and len(processes) > 1 else []
        indent = ""

        def add_threads() -> None:
            nonlocal selected_row
            for thread in threads:
                if thread.selected:
                    selected_row = len(rows)
                if stopped is not None and thread.id == stopped[0]:
                    state = f"stopped: {stopped[1]}"
                else:
                    state = thread_state(thread)
                rows.append((str(thread.id), [indent + ("▶" if thread.selected else " ")
                                              + str(thread.id), thread.name, state,
                                              thread_place(thread)]))

        for process in tree:
            branch = _SPACE * 2 * (process.depth - 1) + "└ " if process.depth else ""
            pid = f"pid {process.pid}" if process.pid else "process"
            rows.append((_SESSION_KEY + process.session,
                         [("◆ " if process.shown else _SPACE * 2) + branch + pid, process.program,
                          process.state, process.session]))
            if process.shown:
                indent = _SPACE * 2 * (process.depth + 1)
                add_threads()
        if not tree:
            add_threads()
        refill(self, HEADERS, rows)
        if threads and self.cursor_row != selected_row:
            self.move_cursor(row=selected_row, animate=False)
        self.remove_class("-stale")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        key = event.row_key.value
        if key is None:
            return
        if key.startswith(_SESSION_KEY):
            self.post_message(SwitchSession(key[len(_SESSION_KEY):]))
        else:
            self.post_message(RunCommand("thread_select", {"thread_id": int(key)}))
