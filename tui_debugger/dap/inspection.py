"""The DAP requests that read a stopped program: threads, stack, scopes,
variables, evaluate, setVariable, completions, exception info. A mixin of
`adapter.DapAdapter`, which owns what it uses (`call`, `handles`, the
editor's line and column base, the selected thread); apart only to keep each
module to one job.

Each request is the registry's command of the same job: `stack`,
`variables` (by frame, scope and path: a variables reference is those three,
handles.py), `evaluate`, `set_variable`, `complete`, `status`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from backends.errors import InvalidInput

from ..commands.context import join_path
from .handles import FrameRef, Handles, ValuesRef

#: children listed for one variables request at most (the editor pages for more)
MAX_CHILDREN = 1000

#: DAP's evaluate contexts our evaluate knows; the others are asked as the REPL's
EVALUATE_CONTEXTS = {"repl": "repl", "watch": "watch", "hover": "hover",
                     "variables": "watch", "clipboard": "repl"}


def _count(args: dict[str, Any], name: str, default: int) -> int:
    """A paging argument: a whole number, 0 or more (DAP's 0 or absent: no limit)."""
    value = args.get(name, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidInput(f"{name} must be a whole number, 0 or more; got {value!r}.")
    return value


class InspectionRequests:
    handles: Handles
    lines_start_at_1: bool
    columns_start_at_1: bool
    selected_thread: int | None

    if TYPE_CHECKING:  # adapter.DapAdapter's
        async def call(self, command: str, args: dict[str, Any] | None = None) -> Any: ...

    async def request_threads(self, args: dict[str, Any]) -> dict[str, Any]:
        threads = (await self.call("threads")).threads
        return {"threads": [{"id": t.id, "name": t.name} for t in threads]}

    def _line(self, line: int | None) -> int:
        if line is None:
            return 0
        return line if self.lines_start_at_1 else line - 1

    async def request_stackTrace(self, args: dict[str, Any]) -> dict[str, Any]:
        thread = args.get("threadId")
        if not isinstance(thread, int):
            raise InvalidInput("stackTrace needs threadId (see the threads request).")
        start = _count(args, "startFrame", 0)
        levels = _count(args, "levels", 0)
        stack = await self.call("stack", {"threadId": thread,
                                          "maxFrames": min(1000, start + (levels or 200))})
        frames = []
        for f in stack.frames[start:]:
            frame: dict[str, Any] = {"id": self.handles.frame_id(thread, f.index),
                                     "name": f.name, "line": self._line(f.line),
                                     "column": 1 if f.line else 0}
            if f.file:
                frame["source"] = {"name": os.path.basename(f.file), "path": f.file}
            else:
                frame["presentationHint"] = "subtle"
            frames.append(frame)
        total = stack.total if stack.total is not None else len(stack.frames)
        return {"stackFrames": frames, "totalFrames": total}

    def _frame(self, frame_id: Any) -> FrameRef:
        ref = self.handles.frame(frame_id) if isinstance(frame_id, int) else None
        if ref is None:
            raise InvalidInput(f"No frame {frame_id} at this stop: ask stackTrace again.")
        return ref

    async def _select(self, frame: FrameRef) -> None:
        """Variables and evaluate read the selected thread's frames: a frame of
        another thread selects that thread first (as the TUI's stack pane does)."""
        if frame.thread_id != self.selected_thread:
            await self.call("thread_select", {"threadId": frame.thread_id})
            self.selected_thread = frame.thread_id

    async def request_scopes(self, args: dict[str, Any]) -> dict[str, Any]:
        frame = self._frame(args.get("frameId"))
        await self._select(frame)
        listed = await self.call("variables", {"frameIndex": frame.index, "maxItems": 1})
        scopes = []
        for name in listed.scopes or [listed.scope]:
            expensive = name.lower().startswith(("global", "register"))
            scopes.append({"name": name, "expensive": expensive,
                           "variablesReference": self.handles.values_id(
                               ValuesRef(frame, scope=name))})
        return {"scopes": scopes}

    def _child_ref(self, parent: ValuesRef, path: str) -> int:
        if parent.expression is not None:
            return self.handles.values_id(ValuesRef(parent.frame, expression=path))
        return self.handles.values_id(ValuesRef(parent.frame, scope=parent.scope, path=path))

    async def request_variables(self, args: dict[str, Any]) -> dict[str, Any]:
        ref = self.handles.values(args.get("variablesReference"))  # type: ignore[arg-type]
        if ref is None:
            raise InvalidInput(f"No variables reference {args.get('variablesReference')} at "
                               "this stop: ask scopes again.")
        await self._select(ref.frame)
        start = _count(args, "start", 0)
        count = min(MAX_CHILDREN, _count(args, "count", 0) or MAX_CHILDREN)
        out: list[dict[str, Any]] = []
        if ref.expression is not None:
            result = await self.call("evaluate", {"expression": ref.expression,
                                                  "frameIndex": ref.frame.index,
                                                  "children": min(count, 200), "start": start})
            children = result.children
        else:
            children = []
            while len(children) < count:
                page = await self.call("variables", {
                    "frameIndex": ref.frame.index, "scope": ref.scope, "path": ref.path,
                    "start": start + len(children),
                    "maxItems": min(count - len(children), 5000)})
                children += page.variables
                if not page.truncated or not page.variables:
                    break
        for var in children:
            item: dict[str, Any] = {"name": var.name, "value": var.value,
                                    "variablesReference": self._child_ref(ref, var.path)
                                    if var.has_children else 0}
            if var.type:
                item["type"] = var.type
            if var.child_count is not None and var.has_children:
                item["namedVariables"] = var.child_count
            out.append(item)
        return {"variables": out}

    async def request_evaluate(self, args: dict[str, Any]) -> dict[str, Any]:
        expression = args.get("expression")
        if not isinstance(expression, str) or not expression.strip():
            raise InvalidInput("evaluate needs an expression.")
        call: dict[str, Any] = {"expression": expression,
                                "context": EVALUATE_CONTEXTS.get(str(args.get("context")),
                                                                 "repl")}
        frame = None
        if args.get("frameId") is not None:
            frame = self._frame(args["frameId"])
            await self._select(frame)
            call["frameIndex"] = frame.index
        result = await self.call("evaluate", call)
        if frame is None:
            frame = FrameRef(self.selected_thread or 0, 0)
        return {"result": result.value, "type": result.type,
                "variablesReference": self.handles.values_id(ValuesRef(
                    frame, expression=expression)) if result.has_children else 0}

    async def request_setVariable(self, args: dict[str, Any]) -> dict[str, Any]:
        ref = self.handles.values(args.get("variablesReference"))  # type: ignore[arg-type]
        name, value = args.get("name"), args.get("value")
        if ref is None or not isinstance(name, str) or not isinstance(value, str):
            raise InvalidInput("setVariable needs a variablesReference of this stop, a name "
                               "and a value.")
        await self._select(ref.frame)
        path = join_path(ref.expression or ref.path, name)
        result = await self.call("set_variable", {"path": path, "value": value,
                                                  "frameIndex": ref.frame.index})
        var = result.variable
        return {"value": var.value, "type": var.type,
                "variablesReference": self._child_ref(ref, var.path) if var.has_children else 0}

    async def request_completions(self, args: dict[str, Any]) -> dict[str, Any]:
        text = args.get("text")
        if not isinstance(text, str):
            raise InvalidInput("completions needs the text typed.")
        shift = 1 if self.columns_start_at_1 else 0
        call: dict[str, Any] = {"text": text}
        if isinstance(args.get("column"), int):
            call["column"] = max(0, args["column"] - shift)
        if args.get("frameId") is not None:
            frame = self._frame(args["frameId"])
            await self._select(frame)
            call["frameIndex"] = frame.index
        result = await self.call("complete", call)
        return {"targets": [{"label": item.label, "text": item.text, "start": item.start + shift,
                             "length": item.length}
                            for item in result.items]}

    async def request_exceptionInfo(self, args: dict[str, Any]) -> dict[str, Any]:
        stop = (await self.call("status")).stop
        if stop is None or stop.reason != "exception":
            raise InvalidInput("The program is not stopped at an exception.")
        body: dict[str, Any] = {"exceptionId": (stop.text or "exception").split(":")[0],
                                "description": stop.text, "breakMode": "always"}
        if stop.traceback:
            body["details"] = {"message": stop.text, "stackTrace": stop.traceback}
        return body
