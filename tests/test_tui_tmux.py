"""The installed executable in a real terminal (tmux): run, F9, F5, F10, read the
screen, quit, and check that nothing it started is still running."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.support import require_executable, runtime_env
from tests.support.tui import ROOT, example_line

CALL_RESTOCK = example_line("added = restock(item")
IF_ADDED = example_line("if added:")


class Tmux:
    def __init__(self, tmux: str, socket: Path):
        self.argv = [tmux, "-S", str(socket)]

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([*self.argv, *args], capture_output=True, text=True, timeout=20,
                              check=check)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "tui").stdout

    def wait_for(self, predicate, what: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.screen()
            if predicate(text):
                return text
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; the screen was:\n{text}")


def row_of(screen: str, line: int) -> str:
    """The source pane's row for a file line: the gutter number is followed by a space."""
    for row in screen.splitlines():
        parts = row.split("│")
        cells = parts[1] if len(parts) > 2 else row
        if f" {line} " in cells[:12]:
            return cells
    return ""


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.slow
def test_installed_executable_in_tmux(tmp_path):
    exe = require_executable("tui-debugger")
    tmux = Tmux(require_executable("tmux"), tmp_path / "tmux.sock")
    marker = f"TUI_TMUX_TEST={uuid.uuid4().hex}"
    env_args = [arg for key, value in runtime_env().items() for arg in ("-e", f"{key}={value}")]
    tmux.run("new-session", "-d", "-s", "tui", "-x", "110", "-y", "32", "-c", str(ROOT),
             "-e", marker, "-e", "TERM=xterm-256color", *env_args,
             exe, "run", "--stop-on-entry", "examples/inventory.py")
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
        tmux.run("send-keys", "-t", "tui", "C-q")
        deadline = time.monotonic() + 20
        while tmux.run("has-session", "-t", "tui", check=False).returncode == 0:
            assert time.monotonic() < deadline, "the TUI did not exit:\n" + tmux.screen()
            time.sleep(0.1)
    finally:
        tmux.run("kill-server", check=False)
    # The TUI, the adapter and the program all carried the marker; none may be left.
    deadline = time.monotonic() + 5
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = processes_with(marker)
    assert not left, f"processes left running: {left}"
    assert os.environ.get("TUI_TMUX_TEST") is None


@pytest.mark.slow
def test_core_dump_and_disassembly_in_tmux(tmp_path):
    """`run --core` on the real executable: where the program died, then the
    source pane turned to its instructions with the faulting one marked."""
    from tests.support.native_build import c_program, crash_core

    exe = require_executable("tui-debugger")
    require_executable("lldb-dap-19", "lldb-dap")
    tmux = Tmux(require_executable("tmux"), tmp_path / "tmux.sock")
    program = c_program("native_segfault")
    core = crash_core(program, tmp_path / "crash")
    marker = f"TUI_TMUX_TEST={uuid.uuid4().hex}"
    env_args = [arg for key, value in runtime_env().items() for arg in ("-e", f"{key}={value}")]
    tmux.run("new-session", "-d", "-s", "tui", "-x", "110", "-y", "32", "-c", str(ROOT),
             "-e", marker, "-e", "TERM=xterm-256color", *env_args,
             exe, "run", "--core", str(core), str(program))
    try:
        tmux.wait_for(lambda s: "STOPPED" in s and "exception at" in s and "read_next_value" in s
                      and "▶" in row_of(s, 10), "the crash's stop")
        tmux.run("send-keys", "-t", "tui", "C-d")
        screen = tmux.wait_for(lambda s: "Disassembly" in s and "=> 0x" in s, "the disassembly")
        assert "native_segfault.c:10" in screen
        tmux.run("send-keys", "-t", "tui", "C-q")
        deadline = time.monotonic() + 20
        while tmux.run("has-session", "-t", "tui", check=False).returncode == 0:
            assert time.monotonic() < deadline, "the TUI did not exit:\n" + tmux.screen()
            time.sleep(0.1)
    finally:
        tmux.run("kill-server", check=False)
    deadline = time.monotonic() + 5
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not processes_with(marker)
