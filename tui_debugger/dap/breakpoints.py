"""An editor's breakpoints in the session's registry.

DAP's setBreakpoints sends a file's whole list each time; the session's
registry holds everyone's, each with who set it (`set_by`, the origin). So a
file's list from the editor replaces only the editor's own breakpoints in it:
what it no longer lists is removed, what is new is added with the editor's
origin, a changed condition is an update; a breakpoint another client set on
the same line is shown to the editor (an add there keeps it, the registry
says), never removed or changed by it. The session's own one-shots (run to a
line) are nobody's and never shown.

The breakpoints the editor was told of (answers and `breakpoint` events, by
the session's ids, which DAP's ids are) are kept here, so each change in the
registry is told as new, changed or removed exactly once.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol

from backends.errors import DebuggerError
from backends.models import Breakpoint

if TYPE_CHECKING:
    from .. import events


class Editor(Protocol):
    """What the book uses of its adapter (adapter.DapAdapter)."""

    origin: str
    lines_start_at_1: bool
    handle: Any

    async def call(self, command: str, args: dict[str, Any] | None = None) -> Any: ...

    async def event(self, name: str, body: dict[str, Any] | None = None) -> None: ...

    def _line(self, line: int | None) -> int: ...

#: set_by of the session's own breakpoints (run to a line, stop at main)
SESSION = "session"


class BreakpointBook:
    def __init__(self, adapter: Editor) -> None:
        self.adapter = adapter
        #: what the editor was last told of each breakpoint, by id
        self.told: dict[int, dict[str, Any]] = {}
        #: set while the editor's own list is being applied: its events wait
        self.applying = 0

    def as_dap(self, bp: Breakpoint) -> dict[str, Any]:
        out: dict[str, Any] = {"id": bp.id, "verified": bp.verified}
        line = bp.line or bp.spec.line
        if line:
            out["line"] = self.adapter._line(line)
        if bp.spec.path:
            out["source"] = {"name": os.path.basename(bp.spec.path), "path": bp.spec.path}
        if bp.message:
            out["message"] = bp.message
        return out

    async def learn(self, registry: list[Breakpoint]) -> None:
        """On joining: the session's breakpoints, told to the editor as new ones
        (the CLI's and the agent's show up in its gutter)."""
        await self._tell(registry)

    async def changed(self, event: "events.Breakpoints") -> None:
        if self.applying:
            return  # the answer to the editor's own request tells it; then _tell catches up
        await self._tell(event.breakpoints)

    async def _tell(self, registry: list[Breakpoint]) -> None:
        seen: set[int] = set()
        for bp in registry:
            if bp.set_by == SESSION or not bp.spec.path:
                continue
            seen.add(bp.id)
            now = self.as_dap(bp)
            before = self.told.get(bp.id)
            if before == now:
                continue
            self.told[bp.id] = now
            await self.adapter.event("breakpoint", {"reason": "new" if before is None
                                                    else "changed", "breakpoint": now})
        for gone in [i for i in self.told if i not in seen]:
            body = self.told.pop(gone)
            if "source" in body:
                await self.adapter.event("breakpoint", {"reason": "removed", "breakpoint": body})

    async def set_file(self, path: str, wanted: list[Any]) -> list[dict[str, Any]]:
        path = os.path.normpath(os.path.abspath(path))
        shift = 0 if self.adapter.lines_start_at_1 else 1
        asked = [(item["line"] + shift, item) for item in wanted
                 if isinstance(item, dict) and isinstance(item.get("line"), int)]
        return await self._replace(
            lambda bp: bp.spec.line if bp.spec.path == path else None, asked,
            lambda line: {"file": path, "line": line}, ("condition", "hitCondition", "logMessage"))

    async def set_functions(self, wanted: list[Any]) -> list[dict[str, Any]]:
        asked = [(item["name"], item) for item in wanted
                 if isinstance(item, dict) and isinstance(item.get("name"), str)]
        return await self._replace(lambda bp: bp.spec.function, asked,
                                   lambda name: {"function": name},
                                   ("condition", "hitCondition"))

    async def _replace(self, key_of: Any, asked: list[tuple[Any, dict[str, Any]]],
                       where: Any, fields: tuple[str, ...]) -> list[dict[str, Any]]:
        """The editor's whole list of one kind (a file's lines, the functions):
        its own breakpoints whose `key_of` is not asked for are removed, each
        asked one kept, updated or added, answered in the order asked."""
        self.applying += 1
        try:
            registry = (await self.adapter.call("breakpoint_list")).breakpoints
            mine = {key_of(bp): bp for bp in registry
                    if bp.set_by == self.adapter.origin and key_of(bp) is not None}
            keys = {key for key, _ in asked}
            for key, bp in mine.items():
                if key not in keys:
                    await self.adapter.call("breakpoint_remove", {"breakpointId": bp.id})
            answers = []
            for key, item in asked:
                spec = {"condition": None, "hitCondition": None, "logMessage": None}
                spec.update({name: item.get(name) or None for name in fields})
                answers.append(await self._one(mine.get(key), spec, **where(key)))
            return answers
        finally:
            self.applying -= 1
            await self._catch_up()

    async def _one(self, existing: Breakpoint | None, spec: dict[str, Any],
                   **where: Any) -> dict[str, Any]:
        """One breakpoint of the editor's list: kept, updated or added; refused
        (another client's differs on that line) as an unverified one with why."""
        try:
            if existing is not None:
                same = (existing.spec.condition == spec["condition"]
                        and existing.spec.hit_condition == spec["hitCondition"]
                        and existing.spec.log_message == spec["logMessage"])
                if same:
                    bp = existing
                else:
                    bp = (await self.adapter.call("breakpoint_update", {
                        "breakpointId": existing.id,
                        **{k: v or "" for k, v in spec.items()}})).breakpoint
            else:
                bp = (await self.adapter.call("breakpoint_add", {
                    **where, **{k: v for k, v in spec.items() if v}})).breakpoint
        except DebuggerError as exc:
            return {"verified": False, "message": exc.message, **(
                {"line": self.adapter._line(where["line"])} if "line" in where else {})}
        answer = self.as_dap(bp)
        self.told[bp.id] = answer
        return answer

    async def _catch_up(self) -> None:
        """What changed meanwhile, another client's as well, told now."""
        if self.applying or self.adapter.handle is None:
            return
        try:
            await self._tell((await self.adapter.call("breakpoint_list")).breakpoints)
        except DebuggerError:
            pass
