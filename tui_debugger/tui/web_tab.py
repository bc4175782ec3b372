"""The TUI's driver in a browser tab (`tui-debugger serve`): textual's
WebDriver, plus the rule that the tab's end is this process's end.

textual's own driver goes on when its output side is gone: at the end of its
input (serve closed the pipe) its input thread just returns, and a write to a
pipe nobody reads blocks the loop, where its SIGTERM handler waits in vain. So
here the end of input, a failed write and SIGTERM each end the app, and a
thread makes sure of it (the loop may be the part that hangs)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from typing import Any

from textual.drivers.web_driver import WebDriver

#: How long the app has to leave on its own before the process just exits.
LEAVE_WITHIN = 5.0


class TabDriver(WebDriver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._leaving = threading.Event()
        raw_write = self._write

        def write(data: bytes) -> None:
            if self._leaving.is_set():
                return  # nobody is left to read it
            try:
                raw_write(data)
            except OSError:
                self.tab_gone(0)

        self._write = write

    def start_application_mode(self) -> None:
        self._loop = asyncio.get_running_loop()
        super().start_application_mode()
        # A plain handler, not the loop's: it runs even while the main thread is
        # blocked in a write (the interrupted write calls it before retrying).
        with contextlib.suppress(ValueError):
            signal.signal(signal.SIGTERM, lambda *_: self.tab_gone(143))

    def run_input_thread(self) -> None:
        super().run_input_thread()
        if not self.exit_event.is_set():  # the input ended, not the app
            self.tab_gone(0)

    def tab_gone(self, code: int) -> None:
        """The tab (or serve) is gone: leave, at once if the app cannot."""
        if self._leaving.is_set():
            return
        self._leaving.set()
        backstop = threading.Timer(LEAVE_WITHIN, lambda: os._exit(code))
        backstop.daemon = True
        backstop.start()
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._app.exit, code)
