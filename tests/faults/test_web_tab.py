"""A browser tab of `tui-debugger serve` that goes away takes its TUI with it:
a tab that opens and closes at once (chromium's --screenshot), a serve that is
killed outright, a tab's process sent SIGTERM. Nothing runs on without a page."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.test_web import Served, chromium, start_session, stop_session


def tab_processes(parent: int) -> list[int]:
    """The `tui_debugger ui` processes whose parent is `parent` (or, once it is
    gone, anyone: an orphan is adopted), of this serve's session."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if b"tui_debugger" in argv and b"ui" in argv and (ppid == parent or parent == 0):
            found.append(int(entry.name))
    return found


def wait_for(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout} s waiting for {what}", pytrace=False)


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return True
    return state == "Z"


class OpenTab:
    """A tab held open: a websocket to serve that reads what the page would."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.received = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self.thread.start()

    async def _run(self) -> None:
        import aiohttp

        async with aiohttp.ClientSession() as client:
            async with client.ws_connect(
                    f"ws://127.0.0.1:{self.served.port}/ws?width=100&height=30",
                    headers={"Authorization": f"Bearer {self.served.token}"}) as socket:
                while not self.stop.is_set():
                    try:
                        message = await socket.receive(timeout=0.2)
                    except asyncio.TimeoutError:
                        continue
                    if message.type == aiohttp.WSMsgType.BINARY:
                        self.received += len(message.data)
                    elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED,
                                          aiohttp.WSMsgType.ERROR):
                        return

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


@pytest.mark.slow
def test_a_tab_that_opens_and_closes_leaves_no_tui(isolated_runtime, no_leftover_daemons,
                                                   tmp_path):
    executable = chromium()
    start_session("webtab")
    served = Served("webtab")
    try:
        for _ in range(3):
            done = subprocess.run([executable, "--headless", "--no-sandbox", "--disable-gpu",
                                   f"--screenshot={tmp_path / 'tab.png'}", served.url],
                                  capture_output=True, timeout=90)
            assert done.returncode == 0, done.stderr[-2000:]
        wait_for(lambda: not tab_processes(served.proc.pid), 30,
                 "the closed tabs' TUIs to exit")
        assert served.proc.poll() is None  # serve itself goes on
    finally:
        served.close()
        stop_session("webtab")


@pytest.mark.slow
def test_a_killed_serve_takes_its_tabs_with_it(isolated_runtime, no_leftover_daemons):
    start_session("webkill")
    served = Served("webkill")
    tab = None
    try:
        tab = OpenTab(served)
        wait_for(lambda: tab.received > 2000, 60, "the tab to show the TUI")
        (child,) = tab_processes(served.proc.pid)
        served.proc.kill()  # SIGKILL: serve ends nothing itself
        served.proc.wait(timeout=10)
        wait_for(lambda: gone(child), 15, f"the tab's TUI (pid {child}) to end with serve")
    finally:
        if tab is not None:
            tab.close()
        if served.proc.poll() is None:
            served.close()
        stop_session("webkill")


@pytest.mark.slow
def test_a_tabs_tui_ends_on_sigterm_and_serve_ends_its_tabs(isolated_runtime,
                                                             no_leftover_daemons):
    start_session("webterm")
    served = Served("webterm")
    tabs = []
    try:
        tabs = [OpenTab(served), OpenTab(served)]
        wait_for(lambda: all(t.received > 2000 for t in tabs), 60, "the tabs to show the TUI")
        first, second = wait_for(lambda: sorted(tab_processes(served.proc.pid))
                                 if len(tab_processes(served.proc.pid)) == 2 else None,
                                 30, "two tab processes")
        os.kill(first, signal.SIGTERM)
        wait_for(lambda: gone(first), 15, "the TUI sent SIGTERM to exit")
        served.proc.send_signal(signal.SIGTERM)  # serve ends: so do its tabs
        assert served.proc.wait(timeout=30) == 0
        wait_for(lambda: gone(second), 15, "serve's other tab to end with it")
    finally:
        for tab in tabs:
            tab.close()
        if served.proc.poll() is None:
            served.close()
        stop_session("webterm")
