"""The breakpoint registry: the session's ids mapped to the backend's, each
file's list re-sent whole as DAP requires, applied at configure time with the
exception filters; a change the adapter refuses leaves the registry as it was."""

from __future__ import annotations

import contextlib
import os
from collections import deque
from typing import TYPE_CHECKING, Any

from backends.errors import DebuggerError, InvalidInput, NotSupported
from backends.models import (Breakpoint, BreakpointChangedEvent, BreakpointSpec, ExceptionFilter,
                             StoppedEvent)

from .. import events
from ..models import Origin, SessionState


if TYPE_CHECKING:  # what BreakpointRegistry uses of Session (needs.py)
    from .needs import BreakpointRegistryNeeds as _Needs
else:
    _Needs = object


class BreakpointRegistry(_Needs):
    """Part of Session (see session/__init__.py): breakpoints and exception filters."""

    async def _configure(self) -> None:
        """Called by the backend when breakpoints may be set (DAP: after
        `initialized`, before `configurationDone`)."""
        self._backend_now()
        paths = sorted({bp.spec.path for bp in self.breakpoints.values() if bp.spec.path})
        for path in paths:
            await self._apply_file(path)
        if any(bp.spec.function for bp in self.breakpoints.values()):
            await self._apply_functions()
        filters = self.exception_filters
        if filters is None:
            filters = [f.id for f in self.backend.capabilities.exception_filters if f.default]
        if self.backend.capabilities.exception_filters or filters:
            try:
                await self.backend.set_exception_filters(filters)
            except NotSupported:
                pass
            except DebuggerError as exc:
                # Filters saved for this program that this adapter does not offer: run
                # with its defaults rather than not at all, and say so.
                text = f"Exception breakpoints not set ({exc.message}); using the defaults.\n"
                self.add_output("console", text)
                self.exception_filters = None
                defaults = [f.id for f in self.backend.capabilities.exception_filters if f.default]
                with contextlib.suppress(DebuggerError):
                    await self.backend.set_exception_filters(defaults)

    async def _drop_breakpoint(self, bp_id: int) -> None:
        with contextlib.suppress(DebuggerError):
            if bp_id in self.breakpoints:
                await self.remove_breakpoints([bp_id], "session")

    def _publish_breakpoints(self, origin: Origin = "session") -> None:
        # Copies: the event is sent after this returns, and hit counts change meanwhile.
        self.publish(events.Breakpoints(
            breakpoints=[bp.model_copy() for bp in self.breakpoints.values()], origin=origin))

    def _session_ids_for(self, backend_ids: list[int | str]) -> list[int]:
        if not backend_ids:
            return []
        wanted = {str(b) for b in backend_ids}
        return [bp_id for bp_id, bid in self._backend_ids.items() if str(bid) in wanted]

    def _apply_breakpoint_change(self, event: BreakpointChangedEvent) -> None:
        for bp_id, bid in list(self._backend_ids.items()):
            if str(bid) == str(event.backend_id) and bp_id in self.breakpoints:
                bp = self.breakpoints[bp_id]
                if event.reason == "removed":
                    continue
                bp.verified = event.state.verified
                if event.state.line:
                    bp.line = event.state.line
                bp.message = event.state.message
                self._publish_breakpoints()

    async def add_breakpoint(self, spec: BreakpointSpec, origin: Origin) -> Breakpoint:
        if self.state == SessionState.terminated and self.launch_request is None:
            # A launched program's breakpoints outlive its run, for `restart`
            # (as pudb's and VS Code's do); an attached one's end with it.
            self._require_state({SessionState.stopped, SessionState.running}, "add a breakpoint")
        if spec.function:
            if spec.path or spec.line:
                raise InvalidInput("Give either FILE:LINE or --function NAME, not both.")
        else:
            if not spec.path or not spec.line:
                raise InvalidInput("A breakpoint needs FILE:LINE (e.g. app.py:12) or --function NAME.")
            if spec.line < 1:
                raise InvalidInput(f"Line numbers start at 1; got {spec.line}.")
            if not os.path.exists(spec.path) and not (self.attach_request and self.attach_request.host):
                raise InvalidInput(
                    f"No such file: {spec.path}. Check the path; relative paths are resolved "
                    f"against {self.cwd}."
                )
            if os.path.exists(spec.path):
                from ..paths import is_binary, source_problem

                problem = source_problem(spec.path)
                if problem and "bytes" in problem and not self._reads_its_sources():
                    problem = None  # a native debugger reads its debug information, not the file
                if problem is None and is_binary(spec.path):
                    problem = "it is a binary file (a NUL byte in its first 8 KB), not a text source"
                if problem:
                    raise InvalidInput(
                        f"No breakpoint in {spec.path}: {problem}. Give FILE:LINE of a source "
                        "file.")
        async with self._bp_lock:
            bp = Breakpoint(id=self._next_bp_id, spec=spec, set_by=origin)
            self._next_bp_id += 1
            self.breakpoints[bp.id] = bp
            try:
                await self._apply_for(bp)
            except BaseException:
                self.breakpoints.pop(bp.id, None)
                self._backend_ids.pop(bp.id, None)
                with contextlib.suppress(Exception):
                    await self._apply_for(bp)
                raise
        self._publish_breakpoints(origin)
        return bp

    async def update_breakpoint(self, bp_id: int, origin: Origin, **changes: Any) -> Breakpoint:
        bp = self.get_breakpoint(bp_id)
        old_spec = bp.spec
        bp.spec = bp.spec.model_copy(update={k: v for k, v in changes.items()})
        async with self._bp_lock:
            try:
                await self._apply_for(bp)
            except BaseException:
                bp.spec = old_spec
                with contextlib.suppress(Exception):
                    await self._apply_for(bp)
                raise
        self._publish_breakpoints(origin)
        return bp

    def get_breakpoint(self, bp_id: int) -> Breakpoint:
        bp = self.breakpoints.get(bp_id)
        if bp is None:
            ids = ", ".join(str(i) for i in self.breakpoints) or "none"
            raise InvalidInput(f"No breakpoint {bp_id}. Breakpoints: {ids}. See `break list`.")
        return bp

    async def remove_breakpoints(self, ids: list[int] | None, origin: Origin) -> list[Breakpoint]:
        targets = list(self.breakpoints.values()) if ids is None else [self.get_breakpoint(i) for i in ids]
        async with self._bp_lock:
            self._release_held(targets)
            for bp in targets:
                self.breakpoints.pop(bp.id, None)
                self._backend_ids.pop(bp.id, None)
            paths = {bp.spec.path for bp in targets if bp.spec.path}
            functions = any(bp.spec.function for bp in targets)
            if self._backend_ready():
                for path in sorted(paths):
                    await self._apply_file(path)
                if functions:
                    await self._apply_functions()
        self._publish_breakpoints(origin)
        return targets

    def _reads_its_sources(self) -> bool:
        """Whether the debugger reads a breakpoint's source file itself (debugpy
        and node compile it: a 73 MB file held setBreakpoints 56 s, then it
        failed). A native one maps lines through the binary's debug information.
        Unknown yet (no program started): taken as reading it."""
        from backends import adapters

        return self.adapter is None or not adapters.profile(self.adapter).native_binaries

    def _release_held(self, removed: list[Breakpoint]) -> None:
        """Threads held at breakpoints that are going (threads beside the shown
        stop, each shown by a continue) are held no longer: the next continue
        runs them on, rather than stopping at a breakpoint that is not there.
        A hit held for a breakpoint that stays, or for an exception, is kept."""
        going = {bp.id for bp in removed}
        staying = {str(bid) for bp_id, bid in self._backend_ids.items() if bp_id not in going}

        def released(event: StoppedEvent) -> bool:
            if "breakpoint" not in event.reason:
                return False
            hit = {str(b) for b in event.hit_breakpoint_ids}
            if not hit:  # the adapter did not say which: only when none stays
                return not staying
            return not hit & staying  # no breakpoint that stays holds it

        if self._held:
            self._held = deque(e for e in self._held if not released(e))

    def _backend_ready(self) -> bool:
        return self.backend is not None and self.state in (
            SessionState.running, SessionState.stopped, SessionState.starting
        )

    async def _apply_for(self, bp: Breakpoint) -> None:
        if not self._backend_ready():
            return  # applied in configure when the program starts
        if bp.spec.function:
            await self._apply_functions()
        else:
            await self._apply_file(bp.spec.path)  # type: ignore[arg-type]

    async def _apply_file(self, path: str) -> None:
        self._backend_now()
        bps = [bp for bp in self.breakpoints.values() if bp.spec.path == path]
        states = await self.backend.set_source_breakpoints(path, [bp.spec for bp in bps])
        for bp, state in zip(bps, states):
            self._update_from_state(bp, state)

    async def _apply_functions(self) -> None:
        self._backend_now()
        bps = [bp for bp in self.breakpoints.values() if bp.spec.function]
        states = await self.backend.set_function_breakpoints([bp.spec for bp in bps])
        for bp, state in zip(bps, states):
            self._update_from_state(bp, state)

    def _update_from_state(self, bp: Breakpoint, state) -> None:
        bp.verified = state.verified
        bp.line = state.line if state.line else (bp.spec.line if bp.spec.path else None)
        bp.message = state.message
        if state.backend_id is not None:
            was = self._backend_ids.get(bp.id)
            self._backend_ids[bp.id] = state.backend_id
            if was is not None and str(was) != str(state.backend_id) and self._held:
                # Set again (debugpy numbers a file's breakpoints anew): hits held
                # at it still name it.
                for event in self._held:
                    event.hit_breakpoint_ids = [state.backend_id if str(b) == str(was) else b
                                                for b in event.hit_breakpoint_ids]
        else:
            self._backend_ids.pop(bp.id, None)

    def available_exception_filters(self) -> list[ExceptionFilter]:
        return list(self.backend.capabilities.exception_filters) if self.backend else []

    def enabled_exception_filters(self) -> list[str]:
        if self.exception_filters is not None:
            return list(self.exception_filters)
        return [f.id for f in self.available_exception_filters() if f.default]

    async def set_exception_filters(self, filter_ids: list[str], origin: Origin) -> None:
        """Which exceptions stop the program, from now on (and in the next launch of
        this program: they are saved with its breakpoints)."""
        if self.state == SessionState.terminated:
            raise InvalidInput("The program has ended; exception breakpoints apply to a "
                               "running one (they are remembered for the next launch).")
        filters = list(dict.fromkeys(filter_ids))
        if self.backend is not None and self.state != SessionState.starting:
            await self.backend.set_exception_filters(filters)
        self.exception_filters = filters
        self.publish(events.ExceptionFilters(filters=filters, origin=origin))
