"""Watchpoints for Python under debugpy, which has no data breakpoints of its
own: python_watch_agent.py is loaded into the program by an evaluate in the
stopped frame and watches there; each change comes back as a DAP event of its
own (`tuiDebuggerWatch`, passed on by debugpy's adapter) before the stop."""

from __future__ import annotations

import ast
import json
import os
from typing import TYPE_CHECKING, Any

from ..errors import DebuggerError
from ..models import (BackendEvent, CopiedWatch, DataBreakpointSpec, DataBreakpointState,
                      SourceLocation, WatchChangeEvent, WatchesCopiedEvent)

if TYPE_CHECKING:
    from .host import DapHost as _Host
else:
    _Host = object

AGENT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_watch_agent.py")
_MODULE = "_tui_debugger_watch"

#: the agent as a module of the program, loaded once (an expression: the
#: evaluate must not leave a name behind in the program's frame)
_AGENT = (
    f"(__import__('sys').modules.get({_MODULE!r}) or [m for m in ["
    "__import__('importlib.util').util.module_from_spec("
    f"__import__('importlib.util').util.spec_from_file_location({_MODULE!r}, {AGENT_PATH!r}))]"
    f" if not __import__('sys').modules.__setitem__({_MODULE!r}, m)"
    " and not m.__spec__.loader.exec_module(m)][0])"
)


class PythonWatches(_Host):
    """Part of DebugpyBackend: watchpoints kept by the agent in the program."""

    _python_watches: set[int]

    @property
    def _watch_keys(self) -> set[int]:
        """The keys of the watches the agent holds (made at the first use: a
        mixin has no __init__ of its own)."""
        if not hasattr(self, "_python_watches"):
            self._python_watches = set()
        return self._python_watches

    async def set_data_breakpoints(
        self, specs: list[DataBreakpointSpec]
    ) -> list[DataBreakpointState]:
        if not self.capabilities.data_breakpoints:  # not launched yet
            return await super().set_data_breakpoints(specs)
        self._require_stopped()
        keys = [spec.key for spec in specs if spec.key is not None]
        if set(keys) != self._watch_keys and self._watch_keys:
            await self._agent_call(f"keep({json.dumps(keys)!r})", None)
            self._python_watches &= set(keys)
        states = []
        for spec in specs:
            if spec.key in self._python_watches:
                states.append(DataBreakpointState(verified=True))
                continue
            states.append(await self._add_python_watch(spec))
        return states

    async def _add_python_watch(self, spec: DataBreakpointSpec) -> DataBreakpointState:
        if spec.access != "write":
            return DataBreakpointState(message="Python watches see changes (access write) only")
        if spec.frame_id is None:
            return DataBreakpointState(message="the frame is gone")
        wire = json.dumps({"id": spec.key, "expression": spec.expression,
                           "condition": spec.condition, "hit_count": spec.hit_count,
                           "log_only": spec.log_only})
        try:
            answer = await self._agent_call(f"add({wire!r}, globals(), locals())", spec.frame_id)
        except DebuggerError as exc:
            return DataBreakpointState(message=str(exc))
        if not answer.get("ok"):
            return DataBreakpointState(message=str(answer.get("message") or "it cannot be watched"))
        if spec.key is not None:
            self._python_watches.add(spec.key)
        return DataBreakpointState(verified=True, value=answer.get("value"),
                                   kind=answer.get("kind"), backend_id=spec.key)

    async def _agent_call(self, call: str, frame_id: int | None) -> dict[str, Any]:
        if frame_id is None:
            frame_id = await self._any_frame()
        result = await self._evaluate(f"{_AGENT}.{call}", frame_id, "repl",
                                      self.profile.request_timeout)
        try:
            text = ast.literal_eval(result.value)
            return json.loads(text) if text != "ok" else {"ok": True}
        except (ValueError, SyntaxError, TypeError):
            raise DebuggerError(f"the watch could not be set in the program: {result.value}")

    async def _any_frame(self) -> int:
        """A frame of the stopped thread: the agent's calls need one to run in."""
        thread = self._last_stopped_thread
        if thread is None:
            raise DebuggerError("no stopped thread to change the watches in")
        body = await self._request("stackTrace", {"threadId": thread, "startFrame": 0,
                                                  "levels": 1})
        frames = body.get("stackFrames") or []
        if not frames:
            raise DebuggerError("no frame to change the watches in")
        return int(frames[0]["id"])

    async def event_tuiDebuggerWatch(self, body: dict[str, Any]) -> BackendEvent | None:  # noqa: N802
        if isinstance(body.get("copied"), list):
            return self._copied_watches(body)
        key = body.get("id")
        if not isinstance(key, int):
            return None
        path, line = body.get("path"), body.get("line")
        location = SourceLocation(path=path, line=line) if path and isinstance(line, int) else None
        thread = body.get("threadId")
        return WatchChangeEvent(
            key=key, old=body.get("old"), new=body.get("new"), location=location,
            function=body.get("function"), thread_id=thread if isinstance(thread, int) else None,
            hit=int(body.get("hit") or 0), stopped=bool(body.get("stopped")),
            note=body.get("note"), gone=body.get("gone"))

    def _copied_watches(self, body: dict[str, Any]) -> WatchesCopiedEvent | None:
        """A forked child's agent holds its parent's watches: they are this
        session's now (kept, removed and told of as if set here)."""
        copies = []
        for item in body["copied"]:
            if not isinstance(item, dict) or not isinstance(item.get("id"), int):
                continue
            copies.append(CopiedWatch(
                key=item["id"], expression=str(item.get("expression") or ""),
                condition=item.get("condition"), hit_count=item.get("hit_count") or None,
                log_only=bool(item.get("log_only")), kind=item.get("kind"),
                value=item.get("value"), hits=int(item.get("hits") or 0),
                origin_pid=item.get("origin_pid")))
        if not copies:
            return None
        self._watch_keys.update(c.key for c in copies)
        pid = body.get("pid")
        return WatchesCopiedEvent(watches=copies, pid=pid if isinstance(pid, int) else None)
