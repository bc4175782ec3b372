"""The installed executable in a real terminal (tmux): run, F9, F5, F10, read the
screen, quit, and check that nothing it started is still running."""

from __future__ import annotations

import os

import pytest

from tests.support import require_executable
from tests.support.tmux import finish, row_of, start
from tests.support.tui import ROOT, example_line

CALL_RESTOCK = example_line("added = restock(item")
IF_ADDED = example_line("if added:")


@pytest.mark.slow
def test_installed_executable_in_tmux(tmp_path):
    exe = require_executable("tui-debugger")
    tmux, marker = start(tmp_path, [exe, "run", "--stop-on-entry", "examples/inventory.py"], ROOT)
    try:
        tmux.wait_for(lambda s: "STOPPED" in s and "entry" in s, "the entry stop")
        # Walk the cursor to the call of restock() and set a breakpoint there.
        tmux.run("send-keys", "-t", "tui", "-N", str(CALL_RESTOCK - 1), "Down")
        tmux.run("send-keys", "-t", "tui", "F9")
        tmux.wait_for(lambda s: "●" in row_of(s, CALL_RESTOCK), "the breakpoint in the gutter")
        tmux.run("send-keys", "-t", "tui", "F5")
        screen = tmux.wait_for(lambda s: f"inventory.py:{CALL_RESTOCK}" in s and "breakpoint" in s,
                               "the breakpoint stop")
        assert "▶" in row_of(screen, CALL_RESTOCK)
        tmux.run("send-keys", "-t", "tui", "F10")
        screen = tmux.wait_for(lambda s: "▶" in row_of(s, IF_ADDED), "the step to the next line")
        assert "▶" not in row_of(screen, CALL_RESTOCK)
        assert f"step at examples/inventory.py:{IF_ADDED}" in screen
    finally:
        # The TUI, the adapter and the program all carried the marker; none may be left.
        finish(tmux, marker)
    assert os.environ.get("TUI_TMUX_TEST") is None


@pytest.mark.slow
def test_core_dump_and_disassembly_in_tmux(tmp_path):
    """`run --core` on the real executable: where the program died, then the
    source pane turned to its instructions with the faulting one marked."""
    from tests.support.native_build import c_program, crash_core

    exe = require_executable("tui-debugger")
    require_executable("lldb-dap-19", "lldb-dap")
    program = c_program("native_segfault")
    core = crash_core(program, tmp_path / "crash")
    tmux, marker = start(tmp_path, [exe, "run", "--core", str(core), str(program)], ROOT)
    try:
        tmux.wait_for(lambda s: "STOPPED" in s and "exception at" in s and "read_next_value" in s
                      and "▶" in row_of(s, 10), "the crash's stop")
        tmux.run("send-keys", "-t", "tui", "C-d")
        screen = tmux.wait_for(lambda s: "Disassembly" in s and "=> 0x" in s, "the disassembly")
        assert "native_segfault.c:10" in screen
    finally:
        finish(tmux, marker)


@pytest.mark.slow
def test_a_node_child_process_in_tmux(tmp_path):
    """`run` of a Node program that forks: the TUI follows the stop into the child,
    the Threads pane shows both processes, and quitting leaves nothing running."""
    import shutil

    from tests.support import marker_line, require

    exe = require_executable("tui-debugger")
    require(shutil.which("node") is not None, "node")
    for name in ("fork.js", "worker.js"):
        shutil.copy(ROOT / "tests" / "programs" / "children" / name, tmp_path / name)
    line = marker_line(tmp_path / "worker.js", "@worker")
    tmux, marker = start(tmp_path, [exe, "run", "--break", f"worker.js:{line}", "fork.js"],
                         tmp_path)
    try:
        tmux.wait_for(lambda s: "STOPPED" in s and f"worker.js:{line}" in s, "the child's stop")
        tmux.run("send-keys", "-t", "tui", "M-h")
        tmux.wait_for(lambda s: "◆ └ pid" in s and "▶1" in s, "the processes in the Threads pane")
    finally:
        finish(tmux, marker)
