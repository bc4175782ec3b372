"""The DAP backend's breakpoints: source, function and data breakpoints,
exception filters, and the adapter's word on each (`breakpoint` events).

A mixin of DapBackend (backend.py), typed through DapHost (host.py).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable

from ..errors import InvalidInput, NotSupported
from ..models import (
    BackendEvent,
    BreakpointChangedEvent,
    BreakpointSpec,
    BreakpointState,
    DataBreakpointSpec,
    DataBreakpointState,
)
from .client import Message
from .values import _hex

if TYPE_CHECKING:
    from .host import DapHost as _Host
else:
    _Host = object  # the protocol types the mixin for a checker only


class BreakpointsMixin(_Host):
    """Setting breakpoints and watchpoints, and hearing of their changes."""

    async def event_breakpoint(self, body: Message) -> BackendEvent | None:
        raw = body.get("breakpoint") or {}
        if raw.get("id") is None:
            return None
        return BreakpointChangedEvent(
            backend_id=raw["id"],
            state=_breakpoint_state(raw, self.breakpoint_message),
            reason=str(body.get("reason") or "changed"),
        )

    def breakpoint_message(self, text: str) -> str:
        """The adapter's note on a breakpoint (why it is not bound), as the
        person or agent should read it: the adapter's own words by default; an
        adapter whose advice names its own configuration says ours instead."""
        return text

    async def set_source_breakpoints(
        self, path: str, specs: list[BreakpointSpec]
    ) -> list[BreakpointState]:
        states: list[BreakpointState | None] = []
        sent: list[dict[str, Any]] = []
        for spec in specs:
            if spec.line is None or spec.line < 1:
                raise InvalidInput(
                    f"A breakpoint in {path} needs a line number of 1 or more.", path=path
                )
            refusal = self._unsupported_feature(spec)
            if not spec.enabled or refusal:
                states.append(BreakpointState(verified=False, line=spec.line,
                                              message=refusal or "disabled"))
                continue
            states.append(None)
            sent.append(_source_breakpoint(spec))
        body = await self._request(
            "setBreakpoints",
            {
                "source": {"path": path, "name": os.path.basename(path)},
                "breakpoints": sent,
                "lines": [b["line"] for b in sent],
                "sourceModified": False,
            },
        )
        merged = _merge_states(states, body.get("breakpoints") or [], self.breakpoint_message)
        # Plain breakpoints (no condition, hit count or log message), by line: a
        # thread paused on one of those lines was held before it could hit it.
        self._plain_breakpoints[path] = {
            state.line or spec.line: state.backend_id
            for spec, state in zip(specs, merged)
            if state.verified and state.backend_id is not None and spec.enabled
            and not (spec.condition or spec.hit_condition or spec.log_message)}
        return merged

    async def set_function_breakpoints(self, specs: list[BreakpointSpec]) -> list[BreakpointState]:
        if not specs and not self.capabilities.function_breakpoints:
            return []
        if not self.capabilities.function_breakpoints:
            raise NotSupported(
                f"The {self.profile.name} adapter has no function breakpoints; "
                "set a breakpoint at FILE:LINE instead."
            )
        states: list[BreakpointState | None] = []
        sent: list[dict[str, Any]] = []
        for spec in specs:
            if not spec.function:
                raise InvalidInput("A function breakpoint needs a function name.")
            refusal = self._unsupported_feature(spec)
            if not spec.enabled or refusal:
                states.append(BreakpointState(verified=False, message=refusal or "disabled"))
                continue
            states.append(None)
            entry: dict[str, Any] = {"name": spec.function}
            if spec.condition:
                entry["condition"] = spec.condition
            if spec.hit_condition:
                entry["hitCondition"] = spec.hit_condition
            sent.append(entry)
        body = await self._request("setFunctionBreakpoints", {"breakpoints": sent})
        return _merge_states(states, body.get("breakpoints") or [], self.breakpoint_message)

    def _unsupported_feature(self, spec: BreakpointSpec) -> str | None:
        caps = self.capabilities
        if spec.condition and not caps.conditional_breakpoints:
            return f"the {self.profile.name} adapter has no conditional breakpoints"
        if spec.hit_condition and not caps.hit_conditional_breakpoints:
            return f"the {self.profile.name} adapter has no hit-count breakpoints"
        if spec.log_message and not caps.log_points:
            return f"the {self.profile.name} adapter has no logpoints"
        return None

    async def set_exception_filters(self, filter_ids: list[str]) -> None:
        known = {f.id for f in self.capabilities.exception_filters}
        unknown = [f for f in filter_ids if f not in known]
        if unknown and not known:
            raise NotSupported(
                f"The {self.profile.name} adapter has no exception filters; "
                "set a breakpoint where the error is raised instead."
            )
        if unknown:
            raise InvalidInput(
                f"Unknown exception filter {', '.join(unknown)}. The {self.profile.name} "
                f"adapter offers: {', '.join(sorted(known)) or 'none'}.",
                valid=sorted(known),
            )
        if not known:
            return
        self._exception_filters_sent = True
        await self._request("setExceptionBreakpoints", {"filters": list(filter_ids)})

    async def set_data_breakpoints(
        self, specs: list[DataBreakpointSpec]
    ) -> list[DataBreakpointState]:
        if not self.capabilities.data_breakpoints:
            return await super().set_data_breakpoints(specs)
        self._require_stopped()
        states: list[DataBreakpointState | None] = []
        sent: list[dict[str, Any]] = []
        sent_details: list[tuple[str, str, Any]] = []
        for spec in specs:
            info = await self._data_breakpoint_info(spec)
            data_id = info.get("dataId")
            if not data_id:
                states.append(DataBreakpointState(
                    verified=False,
                    message=str(info.get("description") or "the adapter cannot watch that"),
                ))
                continue
            access = list(info.get("accessTypes") or [])
            if access and spec.access not in access:
                states.append(DataBreakpointState(
                    verified=False,
                    message=f"{spec.expression} can be watched for {', '.join(access)} "
                            f"only, not {spec.access}",
                ))
                continue
            address, _, size = str(data_id).partition("/")
            if spec.address:
                address, size = spec.address, str(spec.size or size)
            states.append(None)
            sent.append({"dataId": data_id, "accessType": spec.access})
            sent_details.append((address, size, info.get("type")))
        body = await self._request("setDataBreakpoints", {"breakpoints": sent})
        answers = iter(body.get("breakpoints") or [])
        details = iter(sent_details)
        merged: list[DataBreakpointState] = []
        for state in states:
            if state is not None:
                merged.append(state)
                continue
            raw = next(answers, {}) or {}
            address, size, type_name = next(details, (None, None, None))
            merged.append(DataBreakpointState(
                verified=bool(raw.get("verified", False)),
                message=raw.get("message") or None,
                address=_hex(address) if address else None,
                size=int(size) if str(size or "").isdigit() else None,
                type=type_name,
                backend_id=raw.get("id"),
            ))
        return merged

    async def _data_breakpoint_info(self, spec: DataBreakpointSpec) -> Message:
        arguments: dict[str, Any] = {"name": spec.expression}
        if spec.frame_id is not None:
            arguments["frameId"] = spec.frame_id
        return await self._request("dataBreakpointInfo", arguments)


def _source_breakpoint(spec: BreakpointSpec) -> dict[str, Any]:
    entry: dict[str, Any] = {"line": spec.line}
    if spec.condition:
        entry["condition"] = spec.condition
    if spec.hit_condition:
        entry["hitCondition"] = spec.hit_condition
    if spec.log_message:
        entry["logMessage"] = spec.log_message
    return entry


def _breakpoint_state(raw: Message, said: Callable[[str], str]) -> BreakpointState:
    line = raw.get("line")
    message = raw.get("message")
    return BreakpointState(
        verified=bool(raw.get("verified", False)),
        line=line if isinstance(line, int) else None,
        # One line (an adapter's may run over several), in our words where they differ.
        message=said(" ".join(message.split())) if isinstance(message, str) and message.strip()
        else None,
        backend_id=raw.get("id"),
    )


def _merge_states(
    states: list[BreakpointState | None], answered: list[Message], said: Callable[[str], str]
) -> list[BreakpointState]:
    """Put the adapter's answers (one per sent spec, in order) where the specs were."""
    answers = iter(answered)
    merged = []
    for state in states:
        if state is not None:
            merged.append(state)
            continue
        raw = next(answers, None)
        merged.append(
            _breakpoint_state(raw, said) if raw is not None
            else BreakpointState(verified=False, message="the adapter did not answer for it")
        )
    return merged
