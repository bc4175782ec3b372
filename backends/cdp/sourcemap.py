"""Source maps (revision 3): the base64 VLQ decoder and the two look-ups a
debugger needs, generated -> original for stack frames and original ->
generated for breakpoints.

Pure: no file or network access. Lines and columns are 0-based throughout, as
in the source map format and the Chrome DevTools Protocol; callers convert to
the 1-based lines people read.
"""

from __future__ import annotations

import base64
import bisect
import json
import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_BASE64_VALUE = {ch: i for i, ch in enumerate(_BASE64)}
_VLQ_CONTINUATION = 0x20
_VLQ_MASK = 0x1F


class SourceMapError(ValueError):
    """The map is not a revision-3 source map this module can read."""


def decode_vlq(segment: str) -> list[int]:
    """The signed integers of one base64 VLQ segment ("AAgBC" -> [0, 0, 16, 1])."""
    values: list[int] = []
    shift = 0
    accumulated = 0
    for ch in segment:
        try:
            digit = _BASE64_VALUE[ch]
        except KeyError:
            raise SourceMapError(f"invalid base64 VLQ character {ch!r}") from None
        accumulated += (digit & _VLQ_MASK) << shift
        if digit & _VLQ_CONTINUATION:
            shift += 5
            continue
        negative = accumulated & 1
        value = accumulated >> 1
        values.append(-value if negative else value)
        accumulated = 0
        shift = 0
    if shift:
        raise SourceMapError(f"truncated base64 VLQ segment {segment!r}")
    return values


def encode_vlq(values: list[int]) -> str:
    """The inverse of decode_vlq; used by tests and to build small maps."""
    out = []
    for value in values:
        vlq = (-value << 1) | 1 if value < 0 else value << 1
        while True:
            digit = vlq & _VLQ_MASK
            vlq >>= 5
            if vlq:
                digit |= _VLQ_CONTINUATION
            out.append(_BASE64[digit])
            if not vlq:
                break
    return "".join(out)


@dataclass(frozen=True)
class Mapping:
    generated_line: int
    generated_column: int
    source: int | None = None  # index into SourceMap.sources
    original_line: int | None = None
    original_column: int | None = None
    name: int | None = None


@dataclass(frozen=True)
class OriginalPosition:
    source: str
    line: int
    column: int
    name: str | None = None


def decode_mappings(mappings: str) -> list[list[Mapping]]:
    """One list of mappings per generated line, each sorted by column. Every
    field but the generated column is relative to the previous segment's, and
    the generated column resets at each line."""
    lines: list[list[Mapping]] = []
    source = original_line = original_column = name = 0
    for line_number, line in enumerate(mappings.split(";")):
        generated_column = 0
        segments: list[Mapping] = []
        for text in line.split(","):
            if not text:
                continue
            fields = decode_vlq(text)
            if len(fields) not in (1, 4, 5):
                raise SourceMapError(f"a mapping segment has {len(fields)} fields")
            generated_column += fields[0]
            if len(fields) == 1:
                segments.append(Mapping(line_number, generated_column))
                continue
            source += fields[1]
            original_line += fields[2]
            original_column += fields[3]
            if len(fields) == 5:
                name += fields[4]
                segments.append(
                    Mapping(line_number, generated_column, source, original_line,
                            original_column, name)
                )
            else:
                segments.append(
                    Mapping(line_number, generated_column, source, original_line,
                            original_column)
                )
        segments.sort(key=lambda m: m.generated_column)
        lines.append(segments)
    return lines


class SourceMap:
    """A parsed map. `sources` are resolved against the map's own URL (or the
    script's, for an inline map) and, when they are file URLs or paths, made
    absolute file paths so they compare equal to the paths users type."""

    def __init__(self, data: dict[str, Any], base_url: str | None = None):
        if not isinstance(data, dict):
            raise SourceMapError("a source map is a JSON object")
        if "sections" in data:
            raise SourceMapError("indexed source maps (sections) are not supported")
        if data.get("version") not in (3, "3"):
            raise SourceMapError(f"unsupported source map version {data.get('version')!r}")
        self.base_url = base_url
        self.file: str | None = data.get("file")
        root = data.get("sourceRoot") or ""
        self.raw_sources: list[str] = [s or "" for s in data.get("sources") or []]
        self.sources: list[str] = [resolve_source(base_url, root, s) for s in self.raw_sources]
        self.names: list[str] = list(data.get("names") or [])
        self.sources_content: list[str | None] = list(data.get("sourcesContent") or [])
        self._mappings_text: str = data.get("mappings") or ""
        self._lines: list[list[Mapping]] | None = None
        self._by_original: dict[tuple[int, int], list[Mapping]] | None = None
        self._source_index = {path: i for i, path in enumerate(self.sources)}

    @classmethod
    def from_json(cls, text: str | bytes, base_url: str | None = None) -> "SourceMap":
        if isinstance(text, bytes):
            text = text.decode("utf-8-sig")
        # A map may start with the XSSI guard )]}' on its own line.
        if text.startswith(")]}"):
            text = text.split("\n", 1)[1] if "\n" in text else ""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SourceMapError(f"not JSON: {exc}") from exc
        return cls(data, base_url)

    # Decoding is deferred: a map is often loaded only to read its sources.
    @property
    def lines(self) -> list[list[Mapping]]:
        if self._lines is None:
            self._lines = decode_mappings(self._mappings_text)
        return self._lines

    def has_source(self, path: str) -> bool:
        return path in self._source_index

    def source_index(self, path: str) -> int | None:
        return self._source_index.get(path)

    def original_position(self, line: int, column: int) -> OriginalPosition | None:
        """The original position of generated (line, column): the mapping at or
        before the column on that line, else the line's first mapping."""
        if line < 0 or line >= len(self.lines):
            return None
        segments = [m for m in self.lines[line] if m.source is not None]
        if not segments:
            return None
        columns = [m.generated_column for m in segments]
        index = bisect.bisect_right(columns, column) - 1
        mapping = segments[max(index, 0)]
        assert mapping.source is not None and mapping.original_line is not None
        if mapping.source >= len(self.sources):
            return None
        name = (
            self.names[mapping.name]
            if mapping.name is not None and 0 <= mapping.name < len(self.names)
            else None
        )
        return OriginalPosition(
            self.sources[mapping.source], mapping.original_line,
            mapping.original_column or 0, name,
        )

    def generated_positions(self, source: str, line: int) -> list[tuple[int, int]]:
        """Generated (line, column) pairs that map to original `line` of
        `source`, earliest first; empty when that line produced no code."""
        index = self._source_index.get(source)
        if index is None:
            return []
        if self._by_original is None:
            by_original: dict[tuple[int, int], list[Mapping]] = {}
            for segments in self.lines:
                for m in segments:
                    if m.source is not None and m.original_line is not None:
                        by_original.setdefault((m.source, m.original_line), []).append(m)
            self._by_original = by_original
        found = self._by_original.get((index, line), [])
        return sorted({(m.generated_line, m.generated_column) for m in found})

    def first_generated_position(
        self, source: str, line: int, search_lines: int = 20
    ) -> tuple[int, tuple[int, int]] | None:
        """The first original line at or below `line` (within `search_lines`)
        that produced code, and its earliest generated position. Breakpoints on
        blank lines, comments and type-only lines move down, as they do in
        plain JavaScript."""
        for candidate in range(line, line + search_lines + 1):
            positions = self.generated_positions(source, candidate)
            if positions:
                return candidate, positions[0]
        return None


# --------------------------------------------------------------------------- URLs


def file_url_to_path(url: str) -> str | None:
    """/abs/path for a file:// URL (or an absolute path given as is); None for
    anything else (node:internal, data:, http:)."""
    if url.startswith("file://"):
        parts = urlsplit(url)
        path = unquote(parts.path)
        if re.match(r"^/[A-Za-z]:/", path):  # file:///C:/x on Windows
            path = path[1:]
        return os.path.normpath(path)
    if os.path.isabs(url):
        return os.path.normpath(url)
    return None


def path_to_file_url(path: str) -> str:
    """The file:// URL Node gives a module at `path` (percent-encoded, as
    url.pathToFileURL does). V8 binds breakpoints by URL only to this form."""
    from pathlib import Path

    return Path(os.path.abspath(path)).as_uri()


def resolve_source(base_url: str | None, source_root: str, source: str) -> str:
    """An absolute path for a source entry when it names a file, else the
    resolved URL (webpack:// and the like stay URLs)."""
    joined = source
    if source_root and not re.match(r"^[a-zA-Z][\w+.-]*:", source) and not source.startswith("/"):
        joined = source_root.rstrip("/") + "/" + source
    if re.match(r"^[a-zA-Z][\w+.-]*:", joined) and not joined.startswith("file:"):
        return joined  # webpack://, http:// ...
    if base_url and not os.path.isabs(joined) and not joined.startswith("file:"):
        if base_url.startswith(("file:", "http:", "https:")):
            joined = urljoin(base_url, joined)
        elif os.path.isabs(base_url):
            joined = os.path.join(os.path.dirname(base_url), joined)
    path = file_url_to_path(joined)
    return path if path is not None else joined


def is_data_url(url: str) -> bool:
    return url.startswith("data:")


def decode_data_url(url: str) -> str:
    """The text of a data: URL (base64 or percent-encoded)."""
    header, sep, payload = url.partition(",")
    if not sep:
        raise SourceMapError("a data: URL without a comma")
    if header.endswith(";base64"):
        try:
            raw = base64.b64decode(payload + "=" * (-len(payload) % 4))
        except ValueError as exc:
            raise SourceMapError(f"bad base64 in data: URL: {exc}") from exc
        return raw.decode("utf-8-sig")
    return unquote(payload)


_SOURCE_MAPPING_URL = re.compile(r"^[ \t]*//[#@][ \t]*sourceMappingURL[ \t]*=[ \t]*(\S+)[ \t]*$", re.M)


def find_source_mapping_url(script_text: str) -> str | None:
    """The last sourceMappingURL magic comment of a script, as V8 reads it."""
    found = None
    for match in _SOURCE_MAPPING_URL.finditer(script_text):
        found = match.group(1)
    return found


def resolve_map_url(source_map_url: str, script_url: str) -> str:
    """The absolute URL of a map named relatively in a script."""
    if is_data_url(source_map_url) or re.match(r"^[a-zA-Z][\w+.-]*:", source_map_url):
        return source_map_url
    if script_url.startswith(("file:", "http:", "https:")):
        return urljoin(script_url, source_map_url)
    if os.path.isabs(script_url):
        return path_to_file_url(os.path.join(os.path.dirname(script_url), source_map_url))
    return source_map_url
