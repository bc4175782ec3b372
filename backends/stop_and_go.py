"""Stop and go: a program run from stop to stop, a value read at each hit of
one place and the program let go on at once, until a number of hits, a
deadline, its end, or (if asked) a stop somewhere else.

One loop for every caller: `trace` and debug-script on a session
(tui_debugger/stops.py), and debug-script on Node (backends/cdp/script.py),
which runs a bare backend because it must keep seeds/002's own contract; it
lives here, below both, since backends/ imports nothing of tui_debugger.
What differs between them (how a stop is waited for, what a hit is, what is
read, how the program goes on) is the `Stops` they hand it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from .errors import EndedBeforeHit, NoHitInTime

#: what waiting for the next stop came to
Seen = Literal["stopped", "ended", "timeout"]

#: seeds/002's two outcomes when nothing was collected, word for word
TIMEOUT_MESSAGE = "Timeout waiting for breakpoint after {timeout}ms"
EXITED_MESSAGE = "Process exited before breakpoint was hit"


class Stops(Protocol):
    async def next_stop(self, timeout: float) -> Seen:
        """Wait up to `timeout` seconds (0: do not wait) for the program's next
        stop, or its end."""

    async def is_hit(self) -> bool:
        """The stop is a hit of the place being watched."""

    async def read(self) -> Any:
        """What a hit yields (the expression's typed value)."""

    async def go_on(self, last: bool) -> bool:
        """Let the program run on; `last`: after the last hit wanted. False:
        it is gone (ended while it was read)."""


@dataclass
class Collected:
    values: list[Any] = field(default_factory=list)
    ended: bool = False
    timed_out: bool = False
    #: it stopped somewhere else and was left there (leave_elsewhere)
    elsewhere: bool = False


async def stop_and_go(stops: Stops, deadline: float, *, max_hits: int | None = None,
                      leave_elsewhere: bool = False) -> Collected:
    """Run `stops` until `max_hits` values, the loop time `deadline`, the
    program's end, or, with `leave_elsewhere`, a stop that is no hit (someone's
    breakpoint, an exception: theirs to see); other stops are gone past."""
    loop = asyncio.get_running_loop()
    got = Collected()
    while max_hits is None or len(got.values) < max_hits:
        seen = await stops.next_stop(max(deadline - loop.time(), 0.0))
        if seen != "stopped":
            got.ended, got.timed_out = seen == "ended", seen == "timeout"
            break
        if await stops.is_hit():
            got.values.append(await stops.read())
        elif leave_elsewhere:
            got.elsewhere = True
            break
        if not await stops.go_on(last=max_hits is not None and len(got.values) >= max_hits):
            got.ended = True
            break
    return got


def hits_or_outcome(values: list[Any], timed_out: bool, timeout_ms: float,
                    exit_detail: dict[str, Any]) -> list[Any]:
    """debug-script's answer: the values, or, when there are none, which of
    seeds/002's two outcomes it was."""
    if values:
        return values
    if timed_out:
        raise NoHitInTime(TIMEOUT_MESSAGE.format(timeout=timeout_ms), timeout_ms=timeout_ms)
    raise EndedBeforeHit(EXITED_MESSAGE, **exit_detail)
