"""Breakpoints in the user's files, as V8 breakpoints set by URL: in the
file itself, or through a source map in each script compiled from it (loaded,
or found on disk before it loads), bound again as scripts arrive; and the
exception filters."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import CommandFailed, DebuggerError, InvalidInput
from ..models import (
    BackendEvent,
    BreakpointChangedEvent,
    BreakpointSpec,
    BreakpointState,
    ExceptionFilter,
    OutputEvent,
)
from .conditions import build_condition
from .connection import CdpConnection
from .scripts import JS_SUFFIXES, GeneratedFileIndex, ScriptRegistry
from .sourcemap import SourceMap, path_to_file_url

EXCEPTION_FILTERS = [
    ExceptionFilter(id="uncaught", label="Uncaught exceptions", default=True),
    ExceptionFilter(id="all", label="All exceptions (caught too)", default=False),
]


@dataclass
class _Target:
    """One V8 breakpoint standing for (part of) a user's breakpoint."""

    cdp_id: str
    url: str
    source_map: SourceMap | None  # set in generated code through this map


@dataclass
class _Breakpoint:
    id: int
    path: str
    spec: BreakpointSpec
    condition: str | None
    targets: list[_Target] = field(default_factory=list)
    verified: bool = False
    line: int | None = None
    message: str | None = None

    def state(self) -> BreakpointState:
        return BreakpointState(
            verified=self.verified, line=self.line, backend_id=self.id,
            message=None if self.verified else self.message,
        )


class BreakpointHost(Protocol):
    """What BreakpointsMixin needs of the backend it is mixed into."""

    # the breakpoints set, by file and by V8's id of each part
    _bp_lock: asyncio.Lock
    _bp_ids: itertools.count[int]
    _bps_by_path: dict[str, list[_Breakpoint]]
    _bp_by_cdp_id: dict[str, _Breakpoint]
    _pause_on_exceptions: str
    # the scripts loaded, and the compiled files on disk
    _scripts: ScriptRegistry
    _generated: GeneratedFileIndex
    _conn: CdpConnection | None

    def emit(self, event: BackendEvent) -> None: ...
    def _require_conn(self) -> CdpConnection: ...
    def _to_remote(self, path: str) -> str | None: ...

    # its own, called from one another
    async def _bind(self, bp: _Breakpoint) -> None: ...
    async def _bind_direct(self, bp: _Breakpoint) -> None: ...
    async def _bind_mapped(self, bp: _Breakpoint, url: str, source_map: SourceMap) -> None: ...
    async def _set_by_url(self, bp: _Breakpoint, url: str, line: int, column: int | None,
                          source_map: SourceMap | None) -> None: ...
    @staticmethod
    def _user_line(bp: _Breakpoint, target: _Target, location: dict[str, Any]) -> int | None: ...
    def _emit_breakpoint(self, bp: _Breakpoint) -> None: ...


class BreakpointsMixin:
    """Source breakpoints and exception filters of CdpBackend (backend.py)."""

    async def _on_script_parsed(self: BreakpointHost, params: dict[str, Any]) -> None:
        info = self._scripts.add(
            params["scriptId"], params.get("url", ""), params.get("sourceMapURL")
        )
        if info.source_map_error:
            self.emit(OutputEvent(
                category="console",
                text=f"Source map of {info.url} not loaded: {info.source_map_error}\n",
            ))
        if info.source_map is None:
            return
        async with self._bp_lock:
            for source in info.source_map.sources:
                for bp in self._bps_by_path.get(source, []):
                    if not any(t.url == info.url for t in bp.targets):
                        await self._bind_mapped(bp, info.url, info.source_map)
                        if bp.verified:
                            self._emit_breakpoint(bp)

    async def _on_breakpoint_resolved(self: BreakpointHost, params: dict[str, Any]) -> None:
        async with self._bp_lock:
            cdp_id = params.get("breakpointId", "")
            bp = self._bp_by_cdp_id.get(cdp_id)
            if bp is None or bp.verified:
                return
            target = next((t for t in bp.targets if t.cdp_id == cdp_id), None)
            if target is None:
                return
            line = self._user_line(bp, target, params.get("location") or {})
            if line is None:
                return
            bp.verified, bp.line, bp.message = True, line, None
            self._emit_breakpoint(bp)

    def _emit_breakpoint(self: BreakpointHost, bp: _Breakpoint) -> None:
        self.emit(BreakpointChangedEvent(backend_id=bp.id, state=bp.state(), reason="changed"))

    async def set_source_breakpoints(
        self: BreakpointHost, path: str, specs: list[BreakpointSpec]
    ) -> list[BreakpointState]:
        path = os.path.abspath(path)
        conn = self._require_conn()
        async with self._bp_lock:
            for old in self._bps_by_path.pop(path, []):
                for target in old.targets:
                    self._bp_by_cdp_id.pop(target.cdp_id, None)
                    with contextlib.suppress(DebuggerError):
                        await conn.request("Debugger.removeBreakpoint",
                                           {"breakpointId": target.cdp_id})
            states: list[BreakpointState] = []
            current: list[_Breakpoint] = []
            for spec in specs:
                if not spec.enabled:
                    states.append(BreakpointState(verified=False, message="disabled"))
                    continue
                if spec.line is None or spec.line < 1:
                    states.append(BreakpointState(
                        verified=False, message="A source breakpoint needs a line number (1 or more).",
                    ))
                    continue
                bp_id = next(self._bp_ids)
                try:
                    condition = build_condition(spec, f"{path}:{spec.line}")
                except InvalidInput as exc:
                    states.append(BreakpointState(verified=False, message=exc.message,
                                                  backend_id=bp_id))
                    continue
                bp = _Breakpoint(bp_id, path, spec, condition)
                await self._bind(bp)
                current.append(bp)
                states.append(bp.state())
            if current:
                self._bps_by_path[path] = current
        return states

    async def _bind(self: BreakpointHost, bp: _Breakpoint) -> None:
        """Set V8 breakpoints for one user breakpoint: in every loaded or
        compiled-on-disk script whose source map names the file, else by the
        file's own URL (bound by V8 when, or if, it loads)."""
        mapped: dict[str, SourceMap] = {}
        for info in self._scripts.scripts_for_source(bp.path):
            assert info.source_map is not None
            mapped.setdefault(info.url, info.source_map)
        if not mapped and not bp.path.endswith(JS_SUFFIXES):
            for generated in await asyncio.to_thread(self._generated.lookup, bp.path):
                if generated.source_map.has_source(bp.path):
                    mapped.setdefault(generated.url, generated.source_map)
        for url, source_map in mapped.items():
            await self._bind_mapped(bp, url, source_map)
        if not bp.targets or not mapped:
            await self._bind_direct(bp)
        if not bp.verified and bp.message is None:
            bp.message = (
                "Pending: binds when the script loads."
                if mapped or bp.path.endswith(JS_SUFFIXES)
                else "Pending: no loaded script or source map covers this file yet; "
                "it binds when one loads."
            )

    async def _bind_direct(self: BreakpointHost, bp: _Breakpoint) -> None:
        # Node names a module by its real path (symlinks resolved) unless it
        # runs with --preserve-symlinks; a loaded script's own URL wins.
        remote = self._to_remote(bp.path)
        url = path_to_file_url(remote if remote else os.path.realpath(bp.path))
        for info in (self._scripts.get(s) for s in self._scripts.by_path.get(bp.path, [])):
            if info is not None:
                url = info.url  # the exact spelling Node gave this module
                break
        await self._set_by_url(bp, url, bp.spec.line - 1 if bp.spec.line else 0, None, None)

    async def _bind_mapped(self: BreakpointHost, bp: _Breakpoint, url: str,
                           source_map: SourceMap) -> None:
        assert bp.spec.line is not None
        found = source_map.first_generated_position(bp.path, bp.spec.line - 1)
        if found is None:
            bp.message = bp.message or (
                f"Line {bp.spec.line} produced no code in {os.path.basename(url)}."
            )
            return
        _, (line, column) = found
        await self._set_by_url(bp, url, line, column, source_map)

    async def _set_by_url(
        self: BreakpointHost, bp: _Breakpoint, url: str, line: int, column: int | None,
        source_map: SourceMap | None,
    ) -> None:
        params: dict[str, Any] = {"url": url, "lineNumber": line}
        if column is not None:
            params["columnNumber"] = column
        if bp.condition:
            params["condition"] = bp.condition
        try:
            result = await self._require_conn().request("Debugger.setBreakpointByUrl", params)
        except CommandFailed as exc:
            bp.message = f"The inspector refused this breakpoint: {exc.message}"
            return
        target = _Target(result["breakpointId"], url, source_map)
        bp.targets.append(target)
        self._bp_by_cdp_id[target.cdp_id] = bp
        for location in result.get("locations") or []:
            user_line = self._user_line(bp, target, location)
            if user_line is not None and not bp.verified:
                bp.verified, bp.line, bp.message = True, user_line, None

    @staticmethod
    def _user_line(bp: _Breakpoint, target: _Target, location: dict[str, Any]) -> int | None:
        """The line, in the file the user named, where V8 placed a breakpoint."""
        line0 = int(location.get("lineNumber", 0))
        column0 = int(location.get("columnNumber", 0))
        if target.source_map is not None:
            original = target.source_map.original_position(line0, column0)
            if original is None or original.source != bp.path:
                return bp.spec.line
            return original.line + 1
        return line0 + 1

    async def set_exception_filters(self: BreakpointHost, filter_ids: list[str]) -> None:
        known = {f.id for f in EXCEPTION_FILTERS}
        unknown = [f for f in filter_ids if f not in known]
        if unknown:
            raise InvalidInput(
                f"Unknown exception filter {', '.join(unknown)}. Valid: {', '.join(sorted(known))}.",
                valid=sorted(known),
            )
        state = "all" if "all" in filter_ids else "uncaught" if "uncaught" in filter_ids else "none"
        self._pause_on_exceptions = state
        if self._conn is not None and not self._conn.is_closed:
            await self._conn.request("Debugger.setPauseOnExceptions", {"state": state})
