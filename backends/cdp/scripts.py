"""What the backend knows about scripts: the scriptId -> URL map fed by
Debugger.scriptParsed (call frames may carry an empty url), each script's
source map, and an index of compiled files on disk whose maps name an
original source, so a breakpoint in src/app.ts binds to dist/app.js before
Node loads it.

Node compiles CommonJS modules as functions, which V8's "before script with
source map" instrumentation pause never sees; looking the generated file up on
disk first (as VS Code's js-debug does with outFiles) is what makes
breakpoints in top-level TypeScript code hit.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from .sourcemap import (
    SourceMap,
    SourceMapError,
    decode_data_url,
    file_url_to_path,
    find_source_mapping_url,
    is_data_url,
    path_to_file_url,
    resolve_map_url,
)

JS_SUFFIXES = (".js", ".mjs", ".cjs")
MAX_SCRIPT_BYTES = 20 * 1024 * 1024
SKIP_DIRS = {"node_modules", ".git", ".hg", ".svn", "__pycache__", ".venv", "venv"}


@dataclass
class ScriptInfo:
    script_id: str
    url: str
    path: str | None  # the file behind a file:// URL
    source_map_url: str | None = None
    source_map: SourceMap | None = None
    source_map_error: str | None = None

    @property
    def is_internal(self) -> bool:
        return self.url.startswith("node:") or not self.url


def load_source_map(source_map_url: str, script_url: str) -> SourceMap:
    """Read a script's map from a data: URL or a file next to it."""
    if is_data_url(source_map_url):
        return SourceMap.from_json(decode_data_url(source_map_url), script_url)
    absolute = resolve_map_url(source_map_url, script_url)
    path = file_url_to_path(absolute)
    if path is None:
        raise SourceMapError(f"cannot read a source map from {absolute}")
    try:
        if not os.path.isfile(path):  # /dev/zero reports size 0 and never ends
            raise SourceMapError(f"{path} is not a regular file")
        size = os.path.getsize(path)
        if size > MAX_SCRIPT_BYTES:
            raise SourceMapError(f"{path} is larger than {MAX_SCRIPT_BYTES} bytes")
        with open(path, "rb") as f:
            text = f.read()
    except OSError as exc:
        raise SourceMapError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return SourceMap.from_json(text, path_to_file_url(path))


def source_map_of_file(path: str) -> SourceMap | None:
    """The map a compiled file on disk points to, or None."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_SCRIPT_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    url = find_source_mapping_url(text)
    if not url:
        return None
    try:
        return load_source_map(url, path_to_file_url(path))
    except (SourceMapError, ValueError):
        return None


@dataclass
class GeneratedFile:
    path: str
    source_map: SourceMap

    @property
    def url(self) -> str:
        return path_to_file_url(self.path)


@dataclass
class GeneratedFileIndex:
    """Compiled files under a few roots, by the original sources their maps
    name. Roots are scanned lazily, once each, within a file and time budget."""

    max_files: int = 5000
    max_seconds: float = 2.0
    roots: list[str] = field(default_factory=list)
    _scanned: set[str] = field(default_factory=set)
    _by_source: dict[str, list[GeneratedFile]] = field(default_factory=dict)
    _seen_files: set[str] = field(default_factory=set)

    def add_root(self, root: str | None) -> None:
        if not root:
            return
        root = os.path.abspath(root)
        if os.path.isdir(root) and root not in self.roots and root != os.path.sep:
            self.roots.append(root)

    def lookup(self, source_path: str) -> list[GeneratedFile]:
        self._scan_pending()
        return list(self._by_source.get(source_path, []))

    def _scan_pending(self) -> None:
        for root in list(self.roots):
            if root not in self._scanned:
                self._scanned.add(root)
                self._scan(root)

    def _scan(self, root: str) -> None:
        deadline = time.monotonic() + self.max_seconds
        files = 0
        for directory, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
            for name in names:
                if not name.endswith(JS_SUFFIXES):
                    continue
                path = os.path.join(directory, name)
                if path in self._seen_files:
                    continue
                self._seen_files.add(path)
                files += 1
                if files > self.max_files or time.monotonic() > deadline:
                    return
                source_map = source_map_of_file(path)
                if source_map is None:
                    continue
                generated = GeneratedFile(path, source_map)
                for source in source_map.sources:
                    self._by_source.setdefault(source, []).append(generated)


class ScriptRegistry:
    """Scripts the inspector reported, by id and by file."""

    def __init__(self) -> None:
        self.by_id: dict[str, ScriptInfo] = {}
        self.by_path: dict[str, list[str]] = {}
        self.by_source: dict[str, list[str]] = {}  # original source -> script ids
        self.map_errors: list[str] = []

    def add(self, script_id: str, url: str, source_map_url: str | None) -> ScriptInfo:
        info = ScriptInfo(script_id, url, file_url_to_path(url) if url else None,
                          source_map_url or None)
        self.by_id[script_id] = info
        if info.path:
            self.by_path.setdefault(info.path, []).append(script_id)
        if info.source_map_url and not info.is_internal:
            try:
                info.source_map = load_source_map(info.source_map_url, url)
            except (SourceMapError, ValueError) as exc:
                info.source_map_error = str(exc)
                self.map_errors.append(f"{url}: {exc}")
            else:
                for source in info.source_map.sources:
                    self.by_source.setdefault(source, []).append(script_id)
        return info

    def get(self, script_id: str) -> ScriptInfo | None:
        return self.by_id.get(script_id)

    def loaded_path(self, path: str) -> bool:
        return bool(self.by_path.get(path))

    def scripts_for_source(self, source: str) -> list[ScriptInfo]:
        return [self.by_id[s] for s in self.by_source.get(source, []) if s in self.by_id]
