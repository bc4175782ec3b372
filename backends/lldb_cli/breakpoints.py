"""Breakpoints of an LldbCliBackend: source, function and data breakpoints
(watchpoints), set while the program is stopped, and their resolution as
libraries load.
"""

from __future__ import annotations

import os
from typing import Any

from ..models import (
    BreakpointChangedEvent,
    BreakpointSpec,
    BreakpointState,
    DataBreakpointSpec,
    DataBreakpointState,
)
from .host import LldbHost
from .lldb_process import _encode


def parse_hit_condition(text: str | None) -> int | None:
    """DAP's hit condition as lldb-dap reads it: stop on the Nth hit, i.e. an
    ignore count of N-1. `>=N` and `==N` are accepted as the same thing."""
    if text is None or not text.strip():
        return 0
    body = text.strip().lstrip("=>").strip()
    if not body.isdigit() or int(body) < 1:
        return None
    return int(body) - 1


class BreakpointsMixin:
    """lldb takes breakpoints only while the program is stopped (`_while_stopped`)."""

    async def set_source_breakpoints(
        self: LldbHost, path: str, specs: list[BreakpointSpec]
    ) -> list[BreakpointState]:
        path = os.path.abspath(path)

        async def apply() -> list[BreakpointState]:
            old = self._source_breakpoints.pop(path, [])
            if old:
                await self._helper("delete_breakpoints", _encode(old))
                for bp_id in old:
                    self._breakpoint_seen.pop(bp_id, None)
            states, ids = await self._create_breakpoints(
                [dict(path=path, line=spec.line) for spec in specs], specs
            )
            self._source_breakpoints[path] = ids
            return states

        return await self._while_stopped(apply)

    async def set_function_breakpoints(
        self: LldbHost, specs: list[BreakpointSpec]
    ) -> list[BreakpointState]:
        async def apply() -> list[BreakpointState]:
            old, self._function_breakpoints = self._function_breakpoints, []
            if old:
                await self._helper("delete_breakpoints", _encode(old))
                for bp_id in old:
                    self._breakpoint_seen.pop(bp_id, None)
            states, ids = await self._create_breakpoints(
                [dict(function=spec.function) for spec in specs], specs
            )
            self._function_breakpoints = ids
            return states

        return await self._while_stopped(apply)

    async def _create_breakpoints(
        self: LldbHost, places: list[dict[str, Any]], specs: list[BreakpointSpec]
    ) -> tuple[list[BreakpointState], list[int]]:
        states: list[BreakpointState | None] = []
        to_send: list[dict[str, Any]] = []
        for place, spec in zip(places, specs):
            if not spec.enabled:
                states.append(BreakpointState(verified=False, message="disabled"))
                continue
            if spec.function is None and (spec.line is None or spec.line < 1):
                states.append(BreakpointState(verified=False, message="a line number is needed"))
                continue
            ignore = parse_hit_condition(spec.hit_condition)
            if ignore is None:
                states.append(BreakpointState(
                    verified=False,
                    message=f"hit condition {spec.hit_condition!r} is not a number; "
                    "lldb stops on the Nth hit, so give N",
                ))
                continue
            to_send.append(dict(place, condition=spec.condition, ignore_count=ignore,
                                log_message=spec.log_message))
            states.append(None)
        created = (await self._helper("set_breakpoints", _encode(to_send)))["breakpoints"] \
            if to_send else []
        answers = iter(created)
        ids: list[int] = []
        out: list[BreakpointState] = []
        for state in states:
            if state is not None:
                out.append(state)
                continue
            answer = next(answers)
            bp_id = answer.get("id")
            if bp_id is not None:
                ids.append(int(bp_id))
                self._breakpoint_seen[int(bp_id)] = (bool(answer["verified"]), answer.get("line"))
            out.append(BreakpointState(
                verified=bool(answer["verified"]),
                line=answer.get("line"),
                backend_id=bp_id,
                message=None if answer["verified"] else
                "no code at this place yet (pending until a library with it loads)",
            ))
        return out, ids

    async def set_data_breakpoints(
        self: LldbHost, specs: list[DataBreakpointSpec]
    ) -> list[DataBreakpointState]:
        async def apply() -> list[DataBreakpointState]:
            answer = await self._helper("set_watchpoints", _encode(
                [{"expression": s.expression, "access": s.access, "frame_id": s.frame_id,
                  "address": s.address, "size": s.size} for s in specs]))
            return [DataBreakpointState(
                verified=bool(raw.get("verified")), message=raw.get("message"),
                address=raw.get("address"), size=raw.get("size"), type=raw.get("type"),
                backend_id=raw.get("id"),
            ) for raw in answer["watchpoints"]]

        return await self._while_stopped(apply)

    def _note_breakpoints(self: LldbHost, info: dict[str, Any]) -> None:
        """Breakpoints resolve (or lose locations) as libraries load; say so."""
        for raw in info.get("breakpoints", []):
            bp_id = int(raw["id"])
            if bp_id not in self._breakpoint_seen:
                continue
            now = (bool(raw["verified"]), raw.get("line"))
            if now != self._breakpoint_seen[bp_id]:
                self._breakpoint_seen[bp_id] = now
                self.emit(BreakpointChangedEvent(
                    backend_id=bp_id,
                    state=BreakpointState(verified=now[0], line=now[1], backend_id=bp_id),
                ))
