"""Frame pacing for the main screen: a screen update at most once a frame, and
never later than one frame after the last.

Textual paints a screen from a repeating timer on a fixed grid (60 Hz), paused
while nothing is dirty. After an idle spell its first tick comes at once, but the
timer then skips to the grid point after the next one, so the second update of a
burst (a stop's stack and variables, a few milliseconds after its source line)
waits 17–33 ms. A debugger's screen is idle between steps and every step is such a
burst: that wait was most of the time from the key to the settled screen.

`FramePacer` keeps the promise the grid was for (at most `MAX_FPS` updates a
second) without the grid: an update runs at once when the last one was a frame or
more ago, otherwise when the frame since the last one ends. It stands in for the
screen's update timer, of which Textual uses `pause` and `resume` only.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from textual import constants
from textual.screen import Screen


class FramePacer:
    """A one-shot "update soon" with a minimum gap between updates."""

    def __init__(self, callback: Callable[[], None], on_error: Callable[[BaseException], None],
                 period: float = 1 / constants.MAX_FPS):
        self._callback = callback
        self._on_error = on_error
        self._period = period
        self._last = float("-inf")
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None

    def resume(self) -> None:
        """An update is wanted: schedule one unless one is already on its way."""
        if self._handle is not None:
            return
        loop = asyncio.get_running_loop()
        due = self._last + self._period
        if due <= loop.time():
            self._handle = loop.call_soon(self._fire)
        else:
            self._handle = loop.call_at(due, self._fire)

    def pause(self) -> None:
        """Nothing to update after all (the screen was laid out another way)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None
        self._last = asyncio.get_running_loop().time()
        try:
            self._callback()
        except Exception as error:  # as Textual's timer does: the app shows it and exits
            self._on_error(error)


class PacedScreen(Screen):
    """The main screen, updated by a `FramePacer` instead of Textual's grid timer."""

    _pacer: FramePacer | None = None

    @property
    def _update_timer(self) -> FramePacer:  # type: ignore[override]
        if self._pacer is None:
            self._pacer = FramePacer(self._on_timer_update, self.app._handle_exception)
        return self._pacer

    def _on_unmount(self) -> None:
        if self._pacer is not None:
            self._pacer.pause()
        super()._on_unmount()
