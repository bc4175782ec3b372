"""What a pause shows, read from the inspector: the stack (each frame's
location through its script's source map), scopes, variables, evaluate, a
value set; and the pause's own record of its frames and variables references,
which the program's running again makes stale."""

from __future__ import annotations

import contextlib
import itertools
import os
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import CommandFailed, DebuggerError, InvalidInput
from ..models import EvalResult, Frame, Scope, ScopeKind, SourceLocation, Variable
from .connection import CdpConnection
from .scripts import ScriptInfo, ScriptRegistry
from .sourcemap import file_url_to_path
from .values import child_counts, child_evaluate_name, format_remote, has_children, remote_type

_SCOPE_KINDS = {
    "local": ScopeKind.locals,
    "closure": ScopeKind.closure,
    "global": ScopeKind.globals,
}
_SCOPE_NAMES = {
    "local": "Local",
    "closure": "Closure",
    "global": "Global",
    "block": "Block",
    "catch": "Catch",
    "with": "With",
    "script": "Script",
    "eval": "Eval",
    "module": "Module",
    "wasm-expression-stack": "Expression stack",
}


@dataclass
class _Handle:
    """A variables reference: an inspector object, plus synthetic children
    (`this`, a return value) shown first in a local scope."""

    object_id: str | None
    evaluate_name: str | None = None
    extras: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: an array's length (from its description), so a window of it is read alone
    indexed: int | None = None
    #: for a scope: its frame and its index in the frame's scope chain (setVariableValue)
    frame_id: int | None = None
    scope_number: int | None = None


#: elements past which an array gets no preview (V8 reads every element for one)
HUGE_ARRAY = 100_000

# A window of an array as a small object of its own: Runtime.getProperties on a
# 10M-element array built every descriptor (node grew to 15 GB, the server to
# 8 GB); this reads only the elements asked for.
_ARRAY_WINDOW = """function (start, count) {
  const out = Object.create(null);
  const end = Math.min(this.length >>> 0, start + count);
  for (let i = start; i < end; i++) out[i] = this[i];
  return out;
}"""


class InspectionHost(Protocol):
    """What InspectionMixin needs of the backend it is mixed into."""

    # the pause, as it is now
    _paused: dict[str, Any] | None
    _visible_stop: bool
    _frame_ids: list[int]
    _frames_by_id: dict[int, dict[str, Any]]
    _handles: dict[int, _Handle]
    _scope_sets: dict[tuple[int, int, str], dict[str, Any]]
    _next_handle: itertools.count[int]
    # where the program's scripts are, here and (attached elsewhere) there
    _scripts: ScriptRegistry
    _path_map: list[tuple[str, str]]

    def _require_conn(self) -> CdpConnection: ...

    # its own, called from one another
    def _require_paused(self) -> dict[str, Any]: ...
    def _frame(self, frame_id: int, index: int, call_frame: dict[str, Any]) -> Frame: ...
    def location_of(self, location: dict[str, Any], url: str | None = None) -> SourceLocation: ...
    def _to_local(self, path: str) -> str: ...
    def _call_frame(self, frame_id: int | None) -> dict[str, Any]: ...
    def _new_handle(self, handle: _Handle) -> int: ...
    async def variables(self, ref: int, start: int = 0, count: int = 0) -> list[Variable]: ...
    async def _properties(self, object_id: str) -> dict[str, Any]: ...
    async def _array_window(self, handle: _Handle, start: int, count: int) -> list[Variable]: ...
    def _variable(self, name: str, value: dict[str, Any],
                  evaluate_name: str | None) -> Variable: ...
    async def _preview_nested(self, value: dict[str, Any]) -> None: ...
    async def evaluate_remote(self, expression: str, frame_id: int | None = None, *,
                              context: str = "repl", return_by_value: bool = False,
                              timeout: float = 10.0) -> dict[str, Any]: ...


class InspectionMixin:
    """Stack, scopes, variables and evaluate of CdpBackend (backend.py)."""

    def _set_pause(self: InspectionHost, params: dict[str, Any]) -> None:
        self._paused = params
        self._visible_stop = False
        self._handles.clear()
        self._scope_sets.clear()
        self._frames_by_id.clear()
        self._frame_ids = []
        for call_frame in params.get("callFrames") or []:
            frame_id = next(self._next_handle)
            self._frame_ids.append(frame_id)
            self._frames_by_id[frame_id] = call_frame

    def _clear_pause(self: InspectionHost) -> None:
        self._paused = None
        self._visible_stop = False
        self._handles.clear()
        self._scope_sets.clear()
        self._frames_by_id.clear()
        self._frame_ids = []

    def _require_paused(self: InspectionHost) -> dict[str, Any]:
        if self._paused is None or not self._visible_stop:
            raise CommandFailed(
                "The program is running; pause it or wait for a breakpoint first."
            )
        return self._paused

    async def stack_trace(
        self: InspectionHost, thread_id: int, start: int = 0, levels: int = 20
    ) -> tuple[list[Frame], int | None]:
        self._require_paused()
        total = len(self._frame_ids)
        end = total if levels <= 0 else min(total, start + levels)
        frames = []
        for index in range(start, end):
            frame_id = self._frame_ids[index]
            frames.append(self._frame(frame_id, index, self._frames_by_id[frame_id]))
        return frames, total

    def _frame(self: InspectionHost, frame_id: int, index: int,
               call_frame: dict[str, Any]) -> Frame:
        location = self.location_of(call_frame.get("location") or {}, call_frame.get("url"))
        internal = location.path is None or "/node_modules/" in (location.path or "")
        return Frame(
            id=frame_id, index=index,
            name=call_frame.get("functionName") or "(anonymous)",
            location=location,
            presentation="subtle" if internal else None,
        )

    def location_of(self: InspectionHost, location: dict[str, Any],
                    url: str | None = None) -> SourceLocation:
        """A protocol location as the user's source: through the script's
        source map when it has one, else the script's own file."""
        script_id = str(location.get("scriptId", ""))
        info = self._scripts.get(script_id)
        line0 = int(location.get("lineNumber", 0))
        column0 = int(location.get("columnNumber", 0))
        if info is not None and info.source_map is not None:
            original = info.source_map.original_position(line0, column0)
            if original is not None:
                path = original.source if os.path.isabs(original.source) else None
                return SourceLocation(
                    path=path, line=original.line + 1, column=original.column + 1,
                    name=os.path.basename(original.source),
                )
        script_url = url or (info.url if info else "")
        path = file_url_to_path(script_url) if script_url else None
        if path:
            path = self._to_local(path)
        return SourceLocation(
            path=path,
            line=line0 + 1,
            column=column0 + 1,
            name=os.path.basename(path) if path else (script_url or f"script {script_id}"),
            source_reference=None if path else (int(script_id) if script_id.isdigit() else None),
        )

    def _to_remote(self: InspectionHost, path: str) -> str | None:
        for remote, local in self._path_map:
            if path == local or path.startswith(local + "/"):
                return remote + path[len(local):]
        return None

    def _to_local(self: InspectionHost, path: str) -> str:
        for remote, local in self._path_map:
            if path == remote or path.startswith(remote + "/"):
                return local + path[len(remote):]
        return path

    async def scopes(self: InspectionHost, frame_id: int) -> list[Scope]:
        self._require_paused()
        call_frame = self._call_frame(frame_id)
        scopes = []
        seen: dict[str, int] = {}
        for index, scope in enumerate(call_frame.get("scopeChain") or []):
            kind = scope.get("type", "other")
            name = _SCOPE_NAMES.get(kind, kind.title())
            if kind == "closure" and scope.get("name"):
                name = f"Closure ({scope['name']})"
            # Nested blocks give several unnamed "Block" scopes; front ends and
            # `variables --scope` address a scope by name, so each needs its own.
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name = f"{name} {seen[name]}"
            extras: list[tuple[str, dict[str, Any]]] = []
            if index == 0 and kind == "local":
                if "returnValue" in call_frame:
                    extras.append(("Return value", call_frame["returnValue"]))
                this = call_frame.get("this") or {}
                if this.get("type") not in (None, "undefined"):
                    extras.append(("this", this))
            ref = self._new_handle(_Handle(scope.get("object", {}).get("objectId"), None, extras,
                                           frame_id=frame_id, scope_number=index))
            scopes.append(Scope(
                name=name, kind=_SCOPE_KINDS.get(kind, ScopeKind.other), ref=ref,
                expensive=kind == "global",
            ))
        return scopes

    def _call_frame(self: InspectionHost, frame_id: int | None) -> dict[str, Any]:
        if frame_id is None:
            if not self._frame_ids:
                raise CommandFailed("The program has no stack frames right now.")
            return self._frames_by_id[self._frame_ids[0]]
        call_frame = self._frames_by_id.get(frame_id)
        if call_frame is None:
            raise CommandFailed(
                f"Frame {frame_id} is gone (the program ran since); list the stack again."
            )
        return call_frame

    def _new_handle(self: InspectionHost, handle: _Handle) -> int:
        ref = next(self._next_handle)
        self._handles[ref] = handle
        return ref

    async def variables(self: InspectionHost, ref: int, start: int = 0,
                        count: int = 0) -> list[Variable]:
        self._require_paused()
        handle = self._handles.get(ref)
        if handle is None:
            raise CommandFailed(
                f"Variables reference {ref} is stale (the program ran since); list scopes again."
            )
        if count > 0 and handle.object_id and handle.indexed is not None and not handle.extras:
            return await self._array_window(handle, start, count)
        out: list[Variable] = [self._variable(name, value, None) for name, value in handle.extras]
        if handle.object_id:
            result = await self._properties(handle.object_id)
            for prop in result.get("result") or []:
                name = prop.get("name", "")
                if name == "__proto__":
                    continue
                if "value" in prop:
                    value = prop["value"]
                elif prop.get("get") or prop.get("set"):
                    out.append(Variable(name=name, value="(getter)" if prop.get("get") else "(setter)",
                                        type="accessor"))
                    continue
                else:
                    value = {"type": "undefined"}
                if handle.scope_number is not None:
                    value = self._scope_sets.get(
                        (handle.frame_id or 0, handle.scope_number, name), value)
                out.append(self._variable(name, value, child_evaluate_name(handle.evaluate_name, name)))
            for prop in result.get("privateProperties") or []:
                if "value" in prop:
                    out.append(self._variable(prop.get("name", "#?"), prop["value"], None))
            for prop in result.get("internalProperties") or []:
                name = prop.get("name", "")
                if name in ("[[Prototype]]", "[[Scopes]]") or "value" not in prop:
                    continue
                out.append(self._variable(name, prop["value"], None))
        if start or count:
            out = out[start: start + count if count else None]
        return out

    async def _properties(self: InspectionHost, object_id: str) -> dict[str, Any]:
        """Runtime.getProperties with previews, unless a child is a huge array:
        V8 builds an array's preview from all its elements (a 10M-element one in
        scope took over 10 s); then the others get their previews one by one."""
        conn = self._require_conn()
        plain = await conn.request("Runtime.getProperties", {
            "objectId": object_id, "ownProperties": True, "generatePreview": False,
        })
        values = [prop.get("value") or {} for prop in plain.get("result") or []]
        if not any((child_counts(v)[1] or 0) > HUGE_ARRAY for v in values):
            return await conn.request("Runtime.getProperties", {
                "objectId": object_id, "ownProperties": True, "generatePreview": True,
            })
        for value in values[:200]:
            if has_children(value) and (child_counts(value)[1] or 0) <= HUGE_ARRAY:
                with contextlib.suppress(DebuggerError):
                    again = await conn.request("Runtime.callFunctionOn", {
                        "objectId": value["objectId"], "functionDeclaration": "function () "
                        "{ return this; }", "generatePreview": True, "silent": True})
                    if "preview" in (again.get("result") or {}):
                        value["preview"] = again["result"]["preview"]
        return plain

    async def _array_window(self: InspectionHost, handle: _Handle, start: int,
                            count: int) -> list[Variable]:
        conn = self._require_conn()
        window = await conn.request("Runtime.callFunctionOn", {
            "objectId": handle.object_id, "functionDeclaration": _ARRAY_WINDOW,
            "arguments": [{"value": int(start)}, {"value": int(count)}], "silent": True,
        })
        object_id = (window.get("result") or {}).get("objectId")
        if not object_id:
            raise CommandFailed("Node did not give the array's elements; list the scope again.")
        try:
            result = await conn.request("Runtime.getProperties", {
                "objectId": object_id, "ownProperties": True, "generatePreview": True,
            })
        finally:
            with contextlib.suppress(DebuggerError):
                await conn.request("Runtime.releaseObject", {"objectId": object_id})
        return [
            self._variable(prop["name"], prop["value"],
                           child_evaluate_name(handle.evaluate_name, prop["name"]))
            for prop in result.get("result") or [] if "value" in prop
        ]

    async def set_variable(self: InspectionHost, container_ref: int, name: str,
                           value: str) -> Variable:
        """A scope's variable through Debugger.setVariableValue, an object's property
        by assignment; `value` is evaluated in the scope's frame first. Answers the
        value as the inspector reads it back."""
        self._require_paused()
        handle = self._handles.get(container_ref)
        if handle is None:
            raise CommandFailed(
                f"Variables reference {container_ref} is stale (the program ran since); "
                "list scopes again.")
        response = await self.evaluate_remote(value, handle.frame_id)
        if response.get("exceptionDetails"):
            raise CommandFailed(f"Could not set {name} to {value}: "
                                f"{exception_message(response['exceptionDetails'])}")
        new = response.get("result") or {"type": "undefined"}
        if "objectId" in new:
            argument: dict[str, Any] = {"objectId": new["objectId"]}
        elif "unserializableValue" in new:
            argument = {"unserializableValue": new["unserializableValue"]}
        elif new.get("type") == "undefined":
            argument = {}
        else:
            argument = {"value": new.get("value")}
        conn = self._require_conn()
        if handle.scope_number is not None and handle.frame_id is not None:
            await conn.request("Debugger.setVariableValue", {
                "scopeNumber": handle.scope_number, "variableName": name, "newValue": argument,
                "callFrameId": self._call_frame(handle.frame_id)["callFrameId"]})
            # Read back in the frame: the scope object still holds the old value.
            now = await self.evaluate_remote(name, handle.frame_id)
            if not now.get("exceptionDetails") and now.get("result"):
                self._scope_sets[(handle.frame_id, handle.scope_number, name)] = now["result"]
        elif handle.object_id:
            answer = await conn.request("Runtime.callFunctionOn", {
                "objectId": handle.object_id,
                "functionDeclaration": "function (key, value) { this[key] = value; }",
                "arguments": [{"value": name}, argument]})
            if answer.get("exceptionDetails"):
                raise CommandFailed(f"Could not set {name}: "
                                    f"{exception_message(answer['exceptionDetails'])}")
        else:
            raise InvalidInput(f"{name} is not a variable that can be changed here.")
        for variable in await self.variables(container_ref):
            if variable.name == name:
                return variable
        return self._variable(name, new, None)

    def _variable(self: InspectionHost, name: str, value: dict[str, Any],
                  evaluate_name: str | None) -> Variable:
        ref = 0
        named, indexed = child_counts(value)
        if has_children(value):
            ref = self._new_handle(_Handle(value["objectId"], evaluate_name or None,
                                           indexed=indexed))
        return Variable(
            name=name, value=format_remote(value), type=remote_type(value), ref=ref,
            named_count=named, indexed_count=indexed,
            evaluate_name=evaluate_name,
        )

    async def evaluate(
        self: InspectionHost, expression: str, frame_id: int | None, context: str = "repl"
    ) -> EvalResult:
        response = await self.evaluate_remote(expression, frame_id, context=context)
        details = response.get("exceptionDetails")
        if details:
            raise CommandFailed(exception_message(details), expression=expression)
        value = response.get("result") or {"type": "undefined"}
        if context == "repl":
            await self._preview_nested(value)
        named, indexed = child_counts(value)
        ref = self._new_handle(_Handle(value["objectId"], expression, indexed=indexed)) \
            if has_children(value) else 0
        return EvalResult(
            value=format_remote(value), type=remote_type(value), ref=ref,
            named_count=named, indexed_count=indexed,
        )

    async def _preview_nested(self: InspectionHost, value: dict[str, Any]) -> None:
        """V8's preview stops at the first level ([0, 2, Array(2)]); an
        evaluate shows nested arrays and objects one level deeper, as Python's
        repr does, from one more read of the value's own properties."""
        preview = value.get("preview") or {}
        nested = [p for p in preview.get("properties") or []
                  if p.get("type") == "object" and p.get("subtype") != "null"
                  and "valuePreview" not in p]
        if not nested or not value.get("objectId"):
            return
        try:
            result = await self._require_conn().request("Runtime.getProperties", {
                "objectId": value["objectId"], "ownProperties": True, "generatePreview": True,
            })
        except DebuggerError:
            return
        previews = {p.get("name"): (p.get("value") or {}).get("preview")
                    for p in result.get("result") or []}
        for prop in nested:
            if previews.get(prop.get("name")):
                prop["valuePreview"] = previews[prop["name"]]

    async def evaluate_remote(
        self: InspectionHost,
        expression: str,
        frame_id: int | None = None,
        *,
        context: str = "repl",
        return_by_value: bool = False,
        timeout: float = 10.0,
    ) -> dict[str, Any]:
        """The inspector's raw answer ({result, exceptionDetails}) for an
        expression: in a frame while paused (the top one when frame_id is
        None), else in the global scope."""
        conn = self._require_conn()
        common: dict[str, Any] = {
            "expression": expression,
            "generatePreview": not return_by_value,
            "returnByValue": return_by_value,
            "includeCommandLineAPI": context == "repl",
            "objectGroup": "tui-debugger",
        }
        if context == "hover":
            common["throwOnSideEffect"] = True
        if self._paused is not None and self._frame_ids:
            call_frame = self._call_frame(frame_id)
            return await conn.request("Debugger.evaluateOnCallFrame", {
                "callFrameId": call_frame["callFrameId"], **common,
            }, timeout)
        if frame_id is not None:
            self._require_paused()
        return await conn.request("Runtime.evaluate", {**common, "replMode": True}, timeout)

    async def source(self: InspectionHost, source_reference: int) -> str:
        result = await self._require_conn().request(
            "Debugger.getScriptSource", {"scriptId": str(source_reference)}
        )
        return str(result.get("scriptSource", ""))

    def script(self: InspectionHost, script_id: str) -> ScriptInfo | None:
        return self._scripts.get(script_id)


def exception_message(details: dict[str, Any]) -> str:
    """The first line of a thrown value's description ("ReferenceError: x is
    not defined"), else the inspector's summary."""
    exception = details.get("exception") or {}
    description = exception.get("description")
    if description:
        return str(description).split("\n", 1)[0]
    if "value" in exception:
        return f"Uncaught {exception['value']!r}"
    return str(details.get("text") or "Evaluation failed")
