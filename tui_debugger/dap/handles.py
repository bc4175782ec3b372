"""DAP's integer ids for what the session names otherwise: a frame is a
thread and an index, a variables reference a frame's scope and a path in it
(or an expression). DAP wants them valid while the program stays stopped and
free to change at the next stop, so they are handed out per stop and all
dropped when it runs again (`reset`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FrameRef:
    thread_id: int
    index: int


@dataclass(frozen=True)
class ValuesRef:
    """What a variables reference stands for: a scope of a frame, a path in
    it, or (`expression`) the children of an evaluated expression."""

    frame: FrameRef
    scope: str | None = None
    path: str | None = None
    expression: str | None = None


class Handles:
    def __init__(self) -> None:
        self._frames: dict[int, FrameRef] = {}
        self._frame_ids: dict[FrameRef, int] = {}
        self._values: dict[int, ValuesRef] = {}
        self._value_ids: dict[ValuesRef, int] = {}
        self._next = 1

    def reset(self) -> None:
        """The program runs again: every id handed out is void. Numbers are not
        reused, so a late request with an old one is refused, not misread."""
        self._frames.clear()
        self._frame_ids.clear()
        self._values.clear()
        self._value_ids.clear()

    def _take(self) -> int:
        n, self._next = self._next, self._next + 1
        return n

    def frame_id(self, thread_id: int, index: int) -> int:
        ref = FrameRef(thread_id, index)
        if ref not in self._frame_ids:
            n = self._take()
            self._frame_ids[ref], self._frames[n] = n, ref
        return self._frame_ids[ref]

    def frame(self, frame_id: int) -> FrameRef | None:
        return self._frames.get(frame_id)

    def values_id(self, ref: ValuesRef) -> int:
        if ref not in self._value_ids:
            n = self._take()
            self._value_ids[ref], self._values[n] = n, ref
        return self._value_ids[ref]

    def values(self, reference: int) -> ValuesRef | None:
        return self._values.get(reference)
