"""The installed executable in tmux, for what only a real terminal shows: find,
go to line and the pane keys (Alt+letter arrives as ESC letter), and the
program's input: typed under Output, or redirected into `tui-debugger run`
while the keys still come from the terminal."""

from __future__ import annotations

import pytest

from tests.support import require_executable
from tests.support.tmux import finish, row_of, start
from tests.support.tui import ROOT

ECHO = """\
import sys

print("ready")
for line in sys.stdin:
    print("got", line.strip())
print("eof")
"""


@pytest.mark.slow
def test_find_go_to_line_and_pane_keys_in_tmux(tmp_path):
    exe = require_executable("tui-debugger")
    tmux, marker = start(tmp_path, f"{exe} run examples/inventory.py", ROOT)
    try:
        tmux.wait_for(lambda s: "STOPPED" in s and "entry" in s, "the entry stop")
        tmux.run("send-keys", "-t", "tui", "/")
        tmux.wait_for(lambda s: "find in this file" in s, "the find prompt")
        tmux.run("send-keys", "-t", "tui", "-l", "restock")
        tmux.wait_for(lambda s: "/restock: 1 of" in s, "the first match counted")
        tmux.run("send-keys", "-t", "tui", "Enter")
        tmux.wait_for(lambda s: "find in this file" not in s and " restock " not in s,
                      "the prompt closed")
        tmux.run("send-keys", "-t", "tui", "n")
        tmux.wait_for(lambda s: "/restock: 2 of" in s, "n to the next match")
        tmux.run("send-keys", "-t", "tui", "N")
        tmux.wait_for(lambda s: "/restock: 1 of" in s, "N back")
        tmux.run("send-keys", "-t", "tui", "Escape")
        tmux.wait_for(lambda s: "/restock" not in s, "Escape ends the find")
        assert "entry" in tmux.screen()  # n while finding did not step

        last = len((ROOT / "examples" / "inventory.py").read_text().splitlines())
        assert not row_of(tmux.screen(), last)
        tmux.run("send-keys", "-t", "tui", "C-g")
        tmux.wait_for(lambda s: "go to line" in s, "the go-to-line prompt")
        tmux.run("send-keys", "-t", "tui", "-l", str(last))
        tmux.run("send-keys", "-t", "tui", "Enter")
        tmux.wait_for(lambda s: row_of(s, last), f"line {last} on screen")

        # Pane keys: Alt+P brings Breakpoints to the front, Alt+H Threads, Alt+U Stack.
        tmux.run("send-keys", "-t", "tui", "M-p")
        # (The side panes are narrow: look for what fits in them.)
        # (Below the status bar, which names the function: `in <module>`.)
        def panes(s: str) -> str:
            return "\n".join(s.splitlines()[1:])

        tmux.wait_for(lambda s: "function" not in s and "<module>" not in panes(s),
                      "the Breakpoints pane")
        tmux.run("send-keys", "-t", "tui", "M-h")
        tmux.wait_for(lambda s: "MainThread" in s, "the Threads pane")
        tmux.run("send-keys", "-t", "tui", "M-u")
        tmux.wait_for(lambda s: "▶0 " in panes(s) and "MainThread" not in s,
                      "the Stack pane (its frame 0)")

        # The console: Tab completes as debugpy proposes; a dict result opens as a tree.
        tmux.run("send-keys", "-t", "tui", "M-c")
        tmux.wait_for(lambda s: ">>> expression" in s, "the console")
        tmux.run("send-keys", "-t", "tui", "-l", "isinst")
        tmux.run("send-keys", "-t", "tui", "Tab")
        tmux.wait_for(lambda s: "isinstance" in s, "a builtin completed")
        tmux.run("send-keys", "-t", "tui", "C-u")
        tmux.run("send-keys", "-t", "tui", "-l", "{'k': [1, 2]}")
        tmux.wait_for(lambda s: ">>> expression" not in s and "{'k': [1, 2]}" in s,
                      "the expression typed")
        tmux.run("send-keys", "-t", "tui", "Enter")
        tmux.wait_for(lambda s: "▶ >>> {'k': [1, 2]} = {'k': [1, 2]}" in s, "the result's node")
        tmux.run("send-keys", "-t", "tui", "BTab")
        tmux.run("send-keys", "-t", "tui", "Enter")
        tmux.wait_for(lambda s: "'k' = [1, 2]" in s, "the result opened")
    finally:
        finish(tmux, marker)


@pytest.mark.slow
def test_program_input_typed_and_redirected_in_tmux(tmp_path):
    exe = require_executable("tui-debugger")
    (tmp_path / "echo.py").write_text(ECHO)
    (tmp_path / "lines.txt").write_text("one\ntwo\n")

    # Redirected: the program reads the file, the TUI still reads its keys (F5).
    tmux, marker = start(tmp_path, f"{exe} run echo.py < lines.txt", tmp_path)
    try:
        tmux.wait_for(lambda s: "STOPPED" in s and "entry" in s, "the entry stop")
        tmux.run("send-keys", "-t", "tui", "F5")
        screen = tmux.wait_for(lambda s: "TERMINATED" in s, "the end")
        assert "got one" in screen and "got two" in screen and "eof" in screen
        assert "~" not in screen.splitlines()[0]  # no escape sequence over the status line
    finally:
        finish(tmux, marker)

    # Typed: a line under Output reaches the program; Ctrl+D ends its input.
    tmux, marker = start(tmp_path, f"{exe} run echo.py", tmp_path)
    try:
        tmux.wait_for(lambda s: "STOPPED" in s and "entry" in s, "the entry stop")
        tmux.run("send-keys", "-t", "tui", "F5")
        tmux.wait_for(lambda s: "ready" in s and "RUNNING" in s, "the program waiting for input")
        tmux.run("send-keys", "-t", "tui", "M-o")
        tmux.wait_for(lambda s: "type into the program" in s, "the Output pane's keys")
        tmux.run("send-keys", "-t", "tui", "i")
        tmux.wait_for(lambda s: "^d end of input" in s, "the input line focused")
        tmux.run("send-keys", "-t", "tui", "-l", "hello there")
        tmux.wait_for(lambda s: "\n hello there" in s, "the typed line")
        tmux.run("send-keys", "-t", "tui", "Enter")
        tmux.wait_for(lambda s: "got hello there" in s, "the program's answer")
        tmux.run("send-keys", "-t", "tui", "C-d")
        screen = tmux.wait_for(lambda s: "TERMINATED" in s, "the end after Ctrl+D")
        assert "eof" in screen
    finally:
        finish(tmux, marker)
