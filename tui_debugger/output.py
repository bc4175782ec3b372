"""The bounded output buffer: program and adapter output, kept by count and by
bytes, read with cursors so nothing is replayed whole and every reader learns
how much it missed."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from pydantic import BaseModel


class OutputLine(BaseModel):
    seq: int
    category: str
    text: str


class OutputChunk(BaseModel):
    entries: list[OutputLine]
    next_cursor: int  # pass as `since` next time
    dropped: int  # entries between `since` and the oldest kept one that were evicted
    truncated: bool  # more entries are available after next_cursor (limit reached)


@dataclass
class _Entry:
    seq: int
    category: str
    text: str


class OutputBuffer:
    """Entries get increasing sequence numbers from 1. A cursor is the seq of the
    next entry a reader wants; `read(since=0)` reads from the very start and
    reports as dropped whatever was evicted before the oldest kept entry."""

    def __init__(self, max_entries: int = 10_000, max_bytes: int = 4 * 1024 * 1024):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: deque[_Entry] = deque()
        self._bytes = 0
        self._next_seq = 1
        self.total_dropped = 0

    @property
    def next_seq(self) -> int:
        return self._next_seq

    @property
    def first_seq(self) -> int:
        return self._entries[0].seq if self._entries else self._next_seq

    def append(self, category: str, text: str) -> int:
        seq = self._next_seq
        self._next_seq += 1
        entry = _Entry(seq, category, text)
        self._entries.append(entry)
        self._bytes += len(text)
        while self._entries and (
            len(self._entries) > self.max_entries or self._bytes > self.max_bytes
        ):
            old = self._entries.popleft()
            self._bytes -= len(old.text)
            self.total_dropped += 1
        return seq

    def read(self, since: int = 0, limit: int = 200, max_chars: int = 20_000) -> OutputChunk:
        since = max(since, 1)
        first = self.first_seq
        start = max(since, first)
        dropped = max(0, first - since)
        out: list[OutputLine] = []
        chars = 0
        truncated = False
        for entry in self._entries:
            if entry.seq < start:
                continue
            if len(out) >= limit or (out and chars + len(entry.text) > max_chars):
                truncated = True
                break
            out.append(OutputLine(seq=entry.seq, category=entry.category, text=entry.text))
            chars += len(entry.text)
        next_cursor = out[-1].seq + 1 if out else max(start, self._next_seq)
        return OutputChunk(entries=out, next_cursor=next_cursor, dropped=dropped, truncated=truncated)

    def tail(self, count: int) -> OutputChunk:
        since = max(self.first_seq, self._next_seq - count)
        return self.read(since=since, limit=count, max_chars=10**9)

