"""The program's child Node processes, announced: follow_children.js (loaded
into each of them through NODE_OPTIONS) writes where a child's inspector
waits, and the backend attaches a session of its own to each."""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any, Callable


class _ChildAnnouncements:
    """Where the program's child Node processes say they wait for a debugger
    (follow_children.js): a FIFO in a fresh directory only this user can enter.
    Each announcement is one line of JSON (pid, ppid, inspector URL, argv), one
    write below PIPE_BUF, so children writing at once never interleave."""

    SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "follow_children.js")

    def __init__(self, on_child: Callable[[dict[str, Any]], None]) -> None:
        import tempfile

        self._on_child = on_child
        self._dir = tempfile.mkdtemp(prefix="tui-debugger-node-")  # 0700
        self.path = os.path.join(self._dir, "children")
        os.mkfifo(self.path, 0o600)
        self._read_fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        # Held open so that the reader never sees end of file between writers.
        self._hold_fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
        self._buffer = b""
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._read_fd, self._readable)
        self._closed = False

    def environment(self, node_options: str | None) -> dict[str, str]:
        script = self.SCRIPT.replace("\\", "\\\\").replace('"', '\\"')
        ours = f'--require "{script}" --inspect-publish-uid=stderr'
        return {
            "NODE_OPTIONS": f"{node_options} {ours}" if node_options else ours,
            "TUI_DEBUGGER_NODE_CHILDREN": self.path,
            "TUI_DEBUGGER_NODE_ROOT": "1",
        }

    def _readable(self) -> None:
        import json

        try:
            data = os.read(self._read_fd, 65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.close()
            return
        self._buffer += data
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            try:
                info = json.loads(line)
            except ValueError:
                continue
            if isinstance(info, dict):
                self._on_child(info)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        import shutil

        with contextlib.suppress(Exception):
            self._loop.remove_reader(self._read_fd)
        for fd in (self._read_fd, self._hold_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._dir, ignore_errors=True)
