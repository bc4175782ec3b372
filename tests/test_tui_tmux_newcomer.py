"""The installed executable in tmux, as a newcomer starts it: the mouse (SGR
mouse events, as a terminal sends them), Ctrl+C pausing the program, and a C
source given to `run` built with debug information and debugged."""

from __future__ import annotations

import pytest

from tests.support import require_executable
from tests.support.tmux import finish, start
from tests.support.tui import ROOT, example_line

CALL_RESTOCK = example_line("added = restock(item")

SPIN = """\
import time

n = 0
while True:
    n += 1
    time.sleep(0.01)
"""


def click(tmux, x: int, y: int) -> None:
    """A left click at column x, row y (0-based), as an SGR mouse report."""
    tmux.run("send-keys", "-t", "tui", "-l", f"\x1b[<0;{x + 1};{y + 1}M\x1b[<0;{x + 1};{y + 1}m")


def cell_of(screen: str, text: str, after: int = 0) -> tuple[int, int]:
    """(x, y) of the first `text` on the screen at or right of column `after`."""
    for y, row in enumerate(screen.splitlines()):
        x = row.find(text, after)
        if x >= 0:
            return x, y
    raise AssertionError(f"{text!r} not on the screen:\n{screen}")


@pytest.mark.slow
def test_mouse_in_variables_and_breakpoints_in_tmux(tmp_path):
    exe = require_executable("tui-debugger")
    tmux, marker = start(tmp_path, [exe, "run", "--break", f"examples/inventory.py:{CALL_RESTOCK}",
                                    "examples/inventory.py"], ROOT)
    try:
        screen = tmux.wait_for(lambda s: "STOPPED" in s and "item = Item(" in s, "the first stop")
        # ▶ of `item` in Variables (the right half of the screen) opens it; again closes it.
        name_x, y = cell_of(screen, "item = Item(", 40)
        x = screen.splitlines()[y].rindex("▶", 0, name_x)
        click(tmux, x, y)
        tmux.wait_for(lambda s: "quantity = 12" in s, "item opened by a click")
        click(tmux, x, y)
        tmux.wait_for(lambda s: "quantity = 12" not in s, "item closed by a click")
        # The Breakpoints tab by a click, then its glyph: disabled, a hollow ○.
        click(tmux, *cell_of(tmux.screen(), "Breakpoin", 40))

        def listed(s: str) -> bool:
            return any("●" in row[40:] and f"py:{CALL_RESTOCK}" in row[40:] for row in s.splitlines())

        screen = tmux.wait_for(listed, "the Breakpoints pane")
        click(tmux, *cell_of(screen, "●", 40))
        tmux.wait_for(lambda s: any("○" in row[40:] for row in s.splitlines()),
                      "the breakpoint disabled by a click")
    finally:
        finish(tmux, marker)


@pytest.mark.slow
def test_ctrl_c_pauses_in_tmux(tmp_path):
    exe = require_executable("tui-debugger")
    program = tmp_path / "spin.py"
    program.write_text(SPIN)
    tmux, marker = start(tmp_path, [exe, "run", str(program)], tmp_path)
    try:
        tmux.wait_for(lambda s: "STOPPED" in s and "entry" in s, "the entry stop")
        tmux.run("send-keys", "-t", "tui", "F5")
        tmux.wait_for(lambda s: "RUNNING" in s, "the program running")
        tmux.run("send-keys", "-t", "tui", "C-c")
        screen = tmux.wait_for(lambda s: "STOPPED" in s and "pause" in s, "Ctrl+C pausing")
        assert "ctrl+q to quit" not in screen.lower()
    finally:
        finish(tmux, marker)


@pytest.mark.slow
def test_a_c_source_is_built_and_debugged_in_tmux(tmp_path):
    exe = require_executable("tui-debugger")
    require_executable("cc")
    require_executable("lldb-dap", "lldb-dap-19", "lldb-dap-18")
    line = next(n for n, text in enumerate((ROOT / "examples" / "inventory.c").read_text()
                                           .splitlines(), 1) if "int added = restock(" in text)
    tmux, marker = start(tmp_path, [exe, "run", "--break", f"examples/inventory.c:{line}",
                                    "examples/inventory.c"], ROOT)
    try:
        screen = tmux.wait_for(lambda s: "STOPPED" in s and f"inventory.c:{line}" in s,
                               "the stop in the built program", timeout=60)
        assert "built: cc -g -O0 -o" in screen and "inventory.c" in screen
        assert "lldb-dap" in screen
    finally:
        finish(tmux, marker)
