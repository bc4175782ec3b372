"""A launched native program's stdout and stderr as two pipes we read.

lldb-dap runs its program on a pseudo-terminal and forwards what it reads as
`stdout` output events: every "\\n" arrives as "\\r\\n", stderr is merged into
the same stream (a stderr line lands inside a stdout line), and the program
line-buffers as at a terminal. Pointing lldb's `target.output-path` and
`target.error-path` at two FIFOs gives the program two pipes, as when it runs
with its output redirected: bytes as written, each stream apart, and the order
in which they reach us (a stderr line before the stdout a program still holds
in its buffer, as in a shell's `2>&1 | cat`).

We hold a write end of each FIFO ourselves: lldb's open of the path for the
program then never blocks, and a reader never sees end-of-file between two
writers (a program and its child). FIFOs, not files: a flood waits in a 64 KiB
pipe instead of growing a file in $TMPDIR (2.8 GB in 9 s, measured on lldb-cli).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shutil
import tempfile
from typing import Callable

#: one read per wake-up; a pipe holds 64 KiB
READ_SIZE = 1 << 16
#: a flood is read at most this fast per stream (1 MiB each 50 ms, as lldb-cli's
#: poll of its FIFOs did); past it the stream waits in its pipe, and the program
#: with it, as at a slow terminal
FLOOD_BYTES, FLOOD_WINDOW = 1 << 20, 0.05


class ProgramPipes:
    """Two FIFOs, `stdout` and `stderr`, in a private directory; `sink(category,
    text)` gets what the program writes, decoded as UTF-8 (bad bytes replaced)."""

    def __init__(self, sink: Callable[[str, str], None]) -> None:
        self._sink = sink
        self.directory = tempfile.mkdtemp(prefix="tdbg-io-")  # 0700
        self.paths = {name: os.path.join(self.directory, name) for name in ("stdout", "stderr")}
        self._fds: dict[str, tuple[int, int]] = {}
        self._decoders = {name: codecs.getincrementaldecoder("utf-8")("replace")
                          for name in self.paths}
        self._loop: asyncio.AbstractEventLoop | None = None
        #: per stream: (start of the current window, bytes read in it)
        self._window: dict[str, tuple[float, int]] = {}

    def open(self) -> None:
        """Make the FIFOs and start reading them (in the running loop)."""
        self._loop = asyncio.get_running_loop()
        for name, path in self.paths.items():
            os.mkfifo(path, 0o600)
            read_fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            write_fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            self._fds[name] = (read_fd, write_fd)
            self._loop.add_reader(read_fd, self._read, name)

    def _read(self, name: str) -> None:
        fds = self._fds.get(name)
        if fds is None:
            return
        try:
            data = os.read(fds[0], READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if data:
            text = self._decoders[name].decode(data)
            if text:
                self._sink(name, text)
            self._throttle(name, fds[0], len(data))

    def _throttle(self, name: str, fd: int, size: int) -> None:
        assert self._loop is not None
        now = self._loop.time()
        start, used = self._window.get(name, (now, 0))
        if now - start >= FLOOD_WINDOW:
            start, used = now, 0
        used += size
        self._window[name] = (start, used)
        if used >= FLOOD_BYTES:
            self._loop.remove_reader(fd)
            self._loop.call_later(start + FLOOD_WINDOW - now, self._resume, name)

    def _resume(self, name: str) -> None:
        fds = self._fds.get(name)
        if fds is not None and self._loop is not None and not self._loop.is_closed():
            self._window.pop(name, None)
            self._loop.add_reader(fds[0], self._read, name)

    def drain(self) -> None:
        """Read what is already in the pipes (before a stop or the end is told)."""
        for name, (read_fd, _) in list(self._fds.items()):
            size = 0
            while size < FLOOD_BYTES:  # a program still flooding is not waited out
                try:
                    data = os.read(read_fd, READ_SIZE)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:
                    break
                if not data:
                    break
                size += len(data)
                text = self._decoders[name].decode(data)
                if text:
                    self._sink(name, text)

    def close(self) -> None:
        """Never raises."""
        with contextlib.suppress(Exception):
            self.drain()
        for read_fd, write_fd in self._fds.values():
            if self._loop is not None and not self._loop.is_closed():
                with contextlib.suppress(Exception):
                    self._loop.remove_reader(read_fd)
            for fd in (read_fd, write_fd):
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._fds.clear()
        shutil.rmtree(self.directory, ignore_errors=True)
