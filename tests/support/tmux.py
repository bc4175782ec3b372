"""The installed executable in a real terminal: a tmux server of the test's own,
the screen read as text, and the start and the end of a TUI in it (quit with
Ctrl+Q, then nothing it started may still run)."""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path

from tests.support import require_executable, runtime_env


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


def start(tmp_path: Path, command: str | list[str], cwd,
          size: tuple[int, int] = (110, 32)) -> tuple[Tmux, str]:
    """A 110x32 window (or `size`) running `command` (a shell line, or an argv)
    with a marker in its environment, which every process it starts inherits."""
    tmux = Tmux(require_executable("tmux"), tmp_path / "tmux.sock")
    marker = f"TUI_TMUX_TEST={uuid.uuid4().hex}"
    env_args = [arg for key, value in runtime_env().items() for arg in ("-e", f"{key}={value}")]
    argv = [command] if isinstance(command, str) else command
    tmux.run("new-session", "-d", "-s", "tui", "-x", str(size[0]), "-y", str(size[1]), "-c", str(cwd),
             "-e", marker, "-e", "TERM=xterm-256color", *env_args, *argv)
    return tmux, marker


def finish(tmux: Tmux, marker: str) -> None:
    """Ctrl+Q, the TUI gone, the tmux server gone, and no process with the marker."""
    try:
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
    left = processes_with(marker)
    assert not left, f"processes left running: {left}"
