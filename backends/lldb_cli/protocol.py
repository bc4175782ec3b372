"""Talking to one interactive `lldb` through its stdin and stdout.

The prompt + sentinel protocol: after each batch of commands the backend writes
`script print("__TDBG_DONE_<nonce>_<n>__")`; everything lldb prints up to that line is
the batch's output. Sentinels are numbered so that a batch that timed out and
finishes late cannot be mistaken for the batch after it. lldb echoes every
command after its prompt (stdin is not a terminal); `sanitize` drops those
echoes.

The helper's answers and the log points firing while the program runs are
lines that start with a marker holding a random nonce made per session
(`Markers`), handed to the helper at set-up and never shown: lldb echoes every
command, so a fixed marker in a command (`bt @@TDBG-LOG [1]`, `p "@@TDBG-LOG
{...}"`) was read as a log point; one nobody can guess cannot be forged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import BackendDied, CommandFailed, InvalidInput, Timeout
from ..process import ChildProcess

PROMPT = "(tdbg-lldb)"
SENTINEL_RE = re.compile(r"^__TDBG_DONE_(?:([0-9a-f]+)_)?(\d+)__$")


@dataclass(frozen=True)
class Markers:
    """The line prefixes of the helper's answers and of log points, one nonce per
    lldb process."""

    nonce: str = field(default_factory=lambda: secrets.token_hex(12))

    @property
    def answer(self) -> str:
        return f"@@TDBG-{self.nonce} "

    @property
    def log(self) -> str:
        return f"@@TDBG-LOG-{self.nonce} "


def sentinel_command(number: int, nonce: str = "") -> str:
    return f"script print('__TDBG_DONE_{nonce + '_' if nonce else ''}{number}__')"


def lldb_text(text: str, what: str = "text") -> str:
    """`text` if it can travel inside one lldb command line, else InvalidInput.

    An allowlist: printable characters only. lldb reads its stdin line by line,
    so a newline (or a carriage return, or another line or paragraph separator)
    in an argument would end our command and start the next one with the
    caller's text (`platform shell ...`). Nothing can quote a newline into an
    lldb command, so such text is refused rather than escaped."""
    if not text.isprintable():
        bad = next(c for c in text if not c.isprintable())
        raise InvalidInput(
            f"The {what} holds the character {bad!r}, which lldb cannot take in a command; "
            "give it without control characters or line breaks.",
            field=what,
        )
    return text


def lldb_quote(text: str, what: str = "text") -> str:
    """One lldb command argument, whatever printable characters it holds (the
    others are refused by `lldb_text`)."""
    lldb_text(text, what)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`") + '"'


def sanitize(output: str, prompt: str = PROMPT) -> str:
    """Remove prompt echoes (lldb echoes each command after its prompt), sentinel
    lines and blank lines at either end."""
    kept: list[str] = []
    for line in output.splitlines():
        if prompt in line:
            before = line.split(prompt, 1)[0]
            if before.strip():
                kept.append(before)
            continue
        if line.startswith("(lldb) ") and not kept:
            continue
        if SENTINEL_RE.match(line.strip()):
            continue
        kept.append(line)
    while kept and not kept[0].strip():
        kept.pop(0)
    return "\n".join(kept).rstrip()


def parse_json(output: str, markers: Markers) -> dict[str, Any]:
    """The helper's answer: the last line of a batch's output that starts with
    the answer marker."""
    for line in reversed(output.splitlines()):
        if line.startswith(markers.answer):
            return json.loads(line[len(markers.answer):])
    raise CommandFailed(
        "lldb's Python helper gave no answer. lldb said: " + (sanitize(output)[-800:] or "nothing"),
    )


class LldbChannel:
    """The stdin/stdout pair of one lldb process, with numbered sentinels.

    `lock` serialises batches: hold it from `send` until the batch's future is
    done. A batch that runs the program (continue, step) holds it until the
    program stops, which is how lldb behaves in synchronous mode anyway.
    """

    def __init__(
        self,
        child: ChildProcess,
        on_log: Callable[[dict[str, Any]], None],
        on_exit: Callable[[], None],
        markers: Markers,
    ) -> None:
        self.child = child
        self.markers = markers
        self.lock = asyncio.Lock()
        self._on_log = on_log
        self._on_exit = on_exit
        self._next = 1
        self._lines: list[str] = []
        self._partial = ""
        self._waiters: dict[int, asyncio.Future[str]] = {}
        self._closed = False
        self._reader = asyncio.create_task(self._read(), name="lldb-reader")

    @property
    def alive(self) -> bool:
        return not self._closed and self.child.alive

    def send(self, commands: list[str]) -> asyncio.Future[str]:
        """Write `commands` and a sentinel; the future gets their output (raw)."""
        if not self.alive or self.child.proc.stdin is None:
            raise BackendDied("lldb is no longer running; start the session again.")
        number = self._next
        self._next += 1
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiters[number] = future
        text = ("".join(c.rstrip("\n") + "\n" for c in commands)
                + sentinel_command(number, self.markers.nonce) + "\n")
        try:
            self.child.proc.stdin.write(text.encode("utf-8"))
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
            self._waiters.pop(number, None)
            raise BackendDied("lldb closed its input; start the session again.") from exc
        return future

    async def run(self, commands: list[str], timeout: float) -> str:
        """Send a batch under the lock and wait for its output."""
        try:
            await asyncio.wait_for(self.lock.acquire(), timeout)
        except asyncio.TimeoutError:
            raise Timeout(
                f"lldb stayed busy for {timeout:g}s with an earlier command; "
                "pause the program or wait for it to stop."
            ) from None
        try:
            return await self.wait(self.send(commands), timeout, commands)
        finally:
            self.lock.release()

    async def wait(self, future: asyncio.Future[str], timeout: float, commands: list[str]) -> str:
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except asyncio.TimeoutError:
            raise Timeout(
                f"lldb did not finish {commands[-1]!r} within {timeout:g}s.",
                command=commands[-1],
            ) from None

    async def _read(self) -> None:
        stream = self.child.proc.stdout
        assert stream is not None
        try:
            while True:
                chunk = await stream.read(65536)
                if not chunk:
                    break
                self._feed(chunk.decode("utf-8", errors="replace"))
        except (asyncio.CancelledError, ConnectionError):
            pass
        finally:
            self._closed = True
            for future in self._waiters.values():
                if not future.done():
                    future.set_exception(
                        BackendDied("lldb exited; start the session again.")
                    )
                    future.exception()  # retrieved here so an abandoned wait logs nothing
            self._waiters.clear()
            with contextlib.suppress(Exception):
                self._on_exit()

    def _feed(self, text: str) -> None:
        text = (self._partial + text).replace("\r\n", "\n")
        lines = text.split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._line(line)

    def _line(self, line: str) -> None:
        if line.startswith(self.markers.log):
            try:
                payload = json.loads(line[len(self.markers.log):])
            except ValueError:
                payload = None
            if isinstance(payload, dict):
                # The reader must outlive whatever a callback does with a line.
                with contextlib.suppress(Exception):
                    self._on_log(payload)
                return
        match = SENTINEL_RE.match(line.strip())
        if match and match.group(1) == self.markers.nonce:
            output = "\n".join(self._lines)
            self._lines = []
            future = self._waiters.pop(int(match.group(2)), None)
            if future is not None and not future.done():
                future.set_result(output)
            return
        self._lines.append(line)

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(BaseException):
            await self._reader
