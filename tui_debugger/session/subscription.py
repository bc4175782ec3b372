"""A subscriber's queue of the session's events (fanout.py tells them)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator

from ..events import SessionEvent


class Subscription:
    """An async iterator of SessionEvents with a bounded queue; a subscriber that
    falls far behind loses the oldest events rather than stalling the session.
    It holds the session's set of subscribers, to leave it when closed."""

    def __init__(self, subscribers: set[Subscription], maxsize: int = 10_000):
        self._subscribers = subscribers
        self._queue: asyncio.Queue[SessionEvent | None] = asyncio.Queue(maxsize)
        self.lost = 0

    def push(self, event: SessionEvent | None) -> None:
        while True:
            try:
                self._queue.put_nowait(event)
                return
            except asyncio.QueueFull:
                with contextlib.suppress(asyncio.QueueEmpty):
                    self._queue.get_nowait()
                    self.lost += 1

    def close(self) -> None:
        self._subscribers.discard(self)
        self.push(None)

    def __aiter__(self) -> AsyncIterator[SessionEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[SessionEvent]:
        while True:
            event = await self._queue.get()
            if event is None:
                return
            yield event
