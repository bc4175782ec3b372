"""The bounded output buffer: program and adapter output, kept by count and by
bytes, read with cursors so nothing is replayed whole and every reader learns
how much it missed."""

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


class OutputTail(BaseModel):
    """The newest whole lines of output (what a reader wants first)."""

    lines: list[OutputLine]  # one per line; seq is the entry the line starts in
    next_cursor: int  # pass as `since` to read only what comes after
    earlier_lines: int  # kept lines before the first one shown
    first_cursor: int  # `since` that reads the oldest kept output
    dropped: int  # entries evicted from the buffer over its whole life


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
        self._newlines = 0  # newlines in the kept entries, to count lines cheaply
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
        self._newlines += text.count("\n")
        while self._entries and (
            len(self._entries) > self.max_entries or self._bytes > self.max_bytes
        ):
            old = self._entries.popleft()
            self._bytes -= len(old.text)
            self._newlines -= old.text.count("\n")
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
            text = entry.text
            if len(text) > max_chars:
                # One entry over the whole answer's cap (a 1 MiB line): cut it too.
                text = (text[:max_chars] + f"… [{len(text) - max_chars:,} more characters of "
                        "this entry not shown]\n")
                truncated = True
            out.append(OutputLine(seq=entry.seq, category=entry.category, text=text))
            chars += len(text)
        next_cursor = out[-1].seq + 1 if out else max(start, self._next_seq)
        return OutputChunk(entries=out, next_cursor=next_cursor, dropped=dropped, truncated=truncated)

    def tail(self, count: int) -> OutputChunk:
        since = max(self.first_seq, self._next_seq - count)
        return self.read(since=since, limit=count, max_chars=10**9)


    def head_lines(self, count: int, since: int = 0, max_chars: int = 4000) -> OutputChunk:
        """The first `count` lines from `since` (0: the oldest kept output), at most
        `max_chars` of text, as entries cut at the last line shown. `next_cursor`
        reads on from there: the entry that was cut is read again whole."""
        since = max(since, 1)
        first = self.first_seq
        start = max(since, first)
        out: list[OutputLine] = []
        lines = chars = 0
        next_cursor = max(start, self._next_seq)
        truncated = False
        for entry in self._entries:
            if entry.seq < start:
                continue
            if lines >= count:
                next_cursor, truncated = entry.seq, True
                break
            text = entry.text
            pieces = text.splitlines(keepends=True)
            ends = sum(1 for p in pieces if p.endswith("\n"))
            cut = lines + ends > count
            if cut:
                text = "".join(pieces[:count - lines])
            # Judged by what would be shown of it: a partial line (a print's text
            # read before its newline) followed by a 64 KiB chunk still gives
            # the lines asked for.
            if out and chars + len(text) > max_chars:
                next_cursor, truncated = entry.seq, True
                break
            if cut or len(text) > max_chars:
                if len(text) > max_chars:
                    text = text[:max_chars] + f"… [{len(text) - max_chars:,} more characters]\n"
                next_cursor, truncated = entry.seq, True
                out.append(OutputLine(seq=entry.seq, category=entry.category, text=text))
                break
            out.append(OutputLine(seq=entry.seq, category=entry.category, text=text))
            lines += ends
            chars += len(text)
            next_cursor = entry.seq + 1
        return OutputChunk(entries=out, next_cursor=next_cursor, dropped=max(0, first - since),
                           truncated=truncated)

    @property
    def line_count(self) -> int:
        """Lines in the kept output (a last line without its newline counts)."""
        if not self._entries:
            return 0
        return self._newlines + (0 if self._entries[-1].text.endswith("\n") else 1)

    def tail_lines(self, count: int | None = None, max_chars: int = 4000) -> OutputTail:
        """The newest whole lines: at most `count` of them (all that fit when
        None) and at most `max_chars` of text. A line longer than `max_chars`
        alone is cut, with a note of its true length."""
        wanted = count if count is not None else 10**9
        picked: list[_Entry] = []
        newlines = 0
        chars = 0
        for entry in reversed(self._entries):
            picked.append(entry)
            newlines += entry.text.count("\n")
            chars += len(entry.text)
            # One line more than wanted, so the first one shown starts whole.
            if newlines > wanted or chars > max_chars + 1:
                break
        picked.reverse()
        complete_from_start = bool(picked) and picked[0] is self._entries[0]
        lines: list[OutputLine] = []
        # A line continues only in its own stream: stdout's "hello" and its "\n"
        # may come as two entries with a stderr line between them.
        pending: dict[str, tuple[int, str]] = {}
        for entry in picked:
            for piece in entry.text.splitlines(keepends=True):
                start_seq, buf = pending.pop(entry.category, (entry.seq, ""))
                buf += piece
                if buf.endswith("\n"):
                    lines.append(OutputLine(seq=start_seq, category=entry.category, text=buf))
                else:
                    pending[entry.category] = (start_seq, buf)
        lines += [OutputLine(seq=seq, category=category, text=buf)
                  for category, (seq, buf) in pending.items()]
        lines.sort(key=lambda line: line.seq)  # stable: a line is placed where it began
        if lines and not complete_from_start and picked and len(lines) > 1:
            # The oldest picked entry may begin mid-line: that line is not whole.
            lines = lines[1:]
        lines = lines[-wanted:] if count is not None else lines
        shown: list[OutputLine] = []
        used = 0
        for line in reversed(lines):
            if shown and used + len(line.text) > max_chars:
                break
            if len(line.text) > max_chars:
                cut = len(line.text) - max_chars
                line = line.model_copy(update={
                    "text": line.text[:max_chars] + f"… ({cut} more chars in this line)\n"})
            shown.append(line)
            used += len(line.text)
        shown.reverse()
        return OutputTail(
            lines=shown, next_cursor=self._next_seq,
            earlier_lines=max(0, self.line_count - len(shown)),
            first_cursor=self.first_seq, dropped=self.total_dropped,
        )
