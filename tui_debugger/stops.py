"""Stop and go on a session: every resume that then waits for the program's
next stop goes through `SessionStops`. Run control (continue, the steps, run
to a line, jump) makes one go and answers with the stop; `trace` and
debug-script hand it to the loop they share with Node's debug-script
(backends/stop_and_go.py)."""

from __future__ import annotations

import contextlib

from typing import Any, Awaitable, Callable

from backends.errors import DebuggerError
from backends.stop_and_go import Seen

from .models import SessionState
from .session import Session


class SessionStops:
    """A session run from stop to stop (backends.stop_and_go.Stops). `is_hit`
    and `read` say what a hit is and what it yields; `before_last_go` runs
    before the program goes on after the last hit wanted; with `gone_ends`, a
    resume the session refuses (the program ended while it was read) ends the
    run instead of failing it."""

    def __init__(self, session: Session, origin: str, *,
                 is_hit: Callable[[], bool] | None = None,
                 read: Callable[[], Awaitable[Any]] | None = None,
                 before_last_go: Callable[[], Awaitable[None]] | None = None,
                 gone_ends: bool = False) -> None:
        self.session = session
        self.origin = origin
        self._is_hit = is_hit
        self._read = read
        self._before_last_go = before_last_go
        self._gone_ends = gone_ends
        #: the run whose stop is waited for: a stop of an earlier one is not it
        self.generation = session.run_generation

    async def go(self, how: str = "continue", thread_id: int | None = None, *,
                 target: tuple[str, int] | None = None,
                 answer_timeout: float | None = None) -> None:
        self.generation = await self.session.resume(how, self.origin, thread_id, target=target,
                                                    answer_timeout=answer_timeout)

    async def next_stop(self, timeout: float) -> Seen:
        # A call that waits not at all (the TUI's steps) is no call waiting for
        # the stop: counted as one for the instant it looks, a stop arriving
        # just then read its locals for nobody.
        waiting = self.session.answering_stop() if timeout > 0 else contextlib.nullcontext()
        with waiting:
            stopped = await self.session.wait_for_stop(max(timeout, 0.0), self.generation)
        if self.session.state == SessionState.terminated:
            return "ended"
        return "stopped" if stopped else "timeout"

    async def is_hit(self) -> bool:
        return self._is_hit() if self._is_hit is not None else True

    async def read(self) -> Any:
        return await self._read() if self._read is not None else None

    async def go_on(self, last: bool) -> bool:
        if last and self._before_last_go is not None:
            await self._before_last_go()
        try:
            await self.go()
        except DebuggerError:
            if not self._gone_ends:
                raise
            return False
        return True
