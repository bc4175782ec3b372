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
    """One numbering for frames and variables references alike (DAP keeps
    them apart, so they may share it)."""

    def __init__(self) -> None:
        self._refs: dict[int, FrameRef | ValuesRef] = {}
        self._ids: dict[FrameRef | ValuesRef, int] = {}
        self._next = 1

    def reset(self) -> None:
        """The program runs again: every id handed out is void. Numbers are not
        reused, so a late request with an old one is refused, not misread."""
        self._refs.clear()
        self._ids.clear()

    def _id(self, ref: FrameRef | ValuesRef) -> int:
        if ref not in self._ids:
            self._ids[ref], self._refs[self._next] = self._next, ref
            self._next += 1
        return self._ids[ref]

    def frame_id(self, thread_id: int, index: int) -> int:
        return self._id(FrameRef(thread_id, index))

    def frame(self, frame_id: int) -> FrameRef | None:
        ref = self._refs.get(frame_id)
        return ref if isinstance(ref, FrameRef) else None

    def values_id(self, ref: ValuesRef) -> int:
        return self._id(ref)

    def values(self, reference: int) -> ValuesRef | None:
        ref = self._refs.get(reference)
        return ref if isinstance(ref, ValuesRef) else None
