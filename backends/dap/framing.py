"""DAP base-protocol framing: `Content-Length` headers around JSON bodies.

No I/O here. `Decoder.feed(chunk)` takes whatever bytes arrived and returns the
complete messages they finish; `encode(message)` gives the bytes to write.

A malformed header or a body that is not a JSON object raises `FramingError`.
The bad frame is dropped before raising, so the decoder is never wedged: the
messages decoded before the error in the same call travel on the exception
(`.messages`), and calling `feed(b"")` decodes whatever followed the bad frame.
"""

from __future__ import annotations

import json
from typing import Any

HEADER_END = b"\r\n\r\n"
CONTENT_LENGTH = b"content-length"
#: a header block longer than this without its blank line is garbage, not a header
MAX_HEADER_BYTES = 64 * 1024
#: protects the buffer from a corrupt length that would make us wait forever
MAX_BODY_BYTES = 512 * 1024 * 1024


class FramingError(ValueError):
    """A frame that could not be decoded. `messages` holds the good messages
    decoded before it in the same `feed` call; `raw` a prefix of the bad bytes."""

    def __init__(self, reason: str, raw: bytes = b"", messages: list[dict[str, Any]] | None = None):
        snippet = raw[:200].decode("utf-8", "replace")
        super().__init__(f"{reason} (near {snippet!r})" if raw else reason)
        self.reason = reason
        self.raw = raw
        self.messages: list[dict[str, Any]] = messages or []


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Decoder:
    def __init__(self) -> None:
        self._buffer = bytearray()
        self._body_length: int | None = None  # set once a header block is parsed
        self._skip = 0  # body bytes of a rejected frame still to discard

    @property
    def buffered(self) -> int:
        """Bytes received but not yet part of a complete message."""
        return len(self._buffer)

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        if chunk:
            self._buffer += chunk
        messages: list[dict[str, Any]] = []
        try:
            while True:
                if self._body_length is None and not self._parse_header():
                    break
                assert self._body_length is not None
                if len(self._buffer) < self._body_length:
                    break
                body = bytes(self._buffer[: self._body_length])
                del self._buffer[: self._body_length]
                self._body_length = None
                messages.append(_decode_body(body))
        except FramingError as exc:
            exc.messages = messages
            raise
        return messages

    def _parse_header(self) -> bool:
        """Consume one header block; False when it is not complete yet."""
        if self._skip:
            dropped = min(self._skip, len(self._buffer))
            del self._buffer[:dropped]
            self._skip -= dropped
            if self._skip:
                return False
        end = self._buffer.find(HEADER_END)
        if end < 0:
            if len(self._buffer) > MAX_HEADER_BYTES:
                raw = bytes(self._buffer)
                self._buffer.clear()
                raise FramingError("No header terminator within %d bytes" % MAX_HEADER_BYTES, raw)
            return False
        block = bytes(self._buffer[:end])
        del self._buffer[: end + len(HEADER_END)]

        # Each entry: (line, is_good, content_length or None).
        entries: list[tuple[bytes, bool, int | None]] = []
        glued: int | None = None  # where "...Content-Length:" might start after junk
        offset = 0
        for raw_line in block.split(b"\n"):
            line_start, offset = offset, offset + len(raw_line) + 1
            line = raw_line.removesuffix(b"\r")
            at = line.lower().rfind(CONTENT_LENGTH)
            if 0 <= line.find(b":") < at:
                # Stray output glued to a header line (no newline between): split it off.
                entries.append((line[:at], False, None))
                line = line[at:]
            elif at > 0 and glued is None:
                glued = line_start + at
            name, sep, value = line.partition(b":")
            if not sep:
                entries.append((line, False, None))
            elif name.strip().lower() == CONTENT_LENGTH:
                text = value.strip()
                if text.isdigit() and int(text) <= MAX_BODY_BYTES:
                    entries.append((line, True, int(text)))
                else:
                    entries.append((line, False, None))
            else:
                entries.append((line, True, None))

        bad = [i for i, (_, good, _) in enumerate(entries) if not good]
        lengths = [(i, n) for i, (_, _, n) in enumerate(entries) if n is not None]
        if not bad and lengths:
            self._body_length = lengths[-1][1]
            return True
        if not lengths:
            if glued is not None:
                # "junkContent-Length: N": a name like that is far likelier stray
                # output than a header of its own, since no other length came.
                self._buffer[:0] = block[glued:] + HEADER_END
                raise FramingError("Stray bytes before a header", block[:glued])
            raise FramingError("Header block has no valid Content-Length", block)
        last_bad, (cl_index, length) = bad[-1], lengths[-1]
        if cl_index > last_bad:
            # Stray output in front of a real header (an adapter that printed to
            # stdout): report the garbage and keep the frame for the next call.
            junk = b"\n".join(line for line, _, _ in entries[: last_bad + 1])
            header = b"\r\n".join(line for line, _, _ in entries[last_bad + 1 :])
            self._buffer[:0] = header + HEADER_END
            raise FramingError("Stray bytes before a header", junk)
        # A malformed line after the length: the frame's extent is known, drop it.
        self._skip = length
        raise FramingError("Malformed header line", block)


def _decode_body(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FramingError(f"Body is not valid JSON: {exc}", body) from exc
    if not isinstance(message, dict):
        raise FramingError("Body is not a JSON object", body)
    return message
