"""The DAP backend's values: a stopped thread's stack, its scopes and
variables, evaluate (and lldb-dap's repl of LLDB commands), setVariable,
completions, source by reference, disassembly and memory.

A mixin of DapBackend (backend.py), typed through DapHost (host.py).
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
from typing import TYPE_CHECKING, Any

from ..errors import CommandDenied, CommandFailed, DebuggerError, InvalidInput, NotSupported
from ..lldb_commands import names_lldb_command, vet_lldb_command
from ..models import (
    Completion,
    EvalResult,
    Frame,
    Instruction,
    Scope,
    ScopeKind,
    SourceLocation,
    Variable,
)
from .client import Message

if TYPE_CHECKING:
    from .host import DapHost as _Host
else:
    _Host = object  # the protocol types the mixin for a checker only


def user_error(message: str) -> str:
    """One line, type and message ("SyntaxError: invalid syntax"), of an error
    the adapter answered with its own traceback (pydevd's runs 20 lines through
    pydevd_comm.py)."""
    text = message.strip()
    if "Traceback (most recent call last)" not in text:
        return text
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b", line):
            return line
    return lines[-1] if lines else text


class ValuesMixin(_Host):
    """Reading and changing what a stopped program holds."""

    async def stack_trace(
        self, thread_id: int, start: int = 0, levels: int = 20
    ) -> tuple[list[Frame], int | None]:
        self._require_stopped()
        arguments: dict[str, Any] = {"threadId": thread_id, "startFrame": start, "levels": levels}
        body = await self._request("stackTrace", arguments)
        frames = []
        for i, raw in enumerate(body.get("stackFrames") or []):
            ip = raw.get("instructionPointerReference")
            if ip:
                self._frame_ips[raw["id"]] = ip
            module = raw.get("moduleId")
            frames.append(
                Frame(
                    id=raw["id"],
                    index=start + i,
                    name=self.profile.frame_name(str(raw.get("name") or "??")),
                    location=_location(raw),
                    module=str(module) if module is not None else None,
                    instruction_pointer=ip,
                    presentation=raw.get("presentationHint"),
                )
            )
        total = body.get("totalFrames")
        return frames, total if isinstance(total, int) else None

    async def scopes(self, frame_id: int) -> list[Scope]:
        self._require_stopped()
        body = await self._request("scopes", {"frameId": frame_id})
        return [
            Scope(
                name=str(raw.get("name") or ""),
                kind=_scope_kind(raw),
                ref=int(raw.get("variablesReference") or 0),
                expensive=bool(raw.get("expensive", False)),
                named_count=raw.get("namedVariables"),
                indexed_count=raw.get("indexedVariables"),
            )
            for raw in body.get("scopes") or []
        ]

    async def variables(self, ref: int, start: int = 0, count: int = 0) -> list[Variable]:
        self._require_stopped()
        if ref <= 0:
            raise InvalidInput("That value has no children to expand.")
        arguments: dict[str, Any] = {"variablesReference": ref}
        # supportsVariablePaging is the client's capability (sent in initialize),
        # not one an adapter answers with: lldb-dap pages without declaring it,
        # and one that does not page answers every child, as without a window.
        if count > 0:
            arguments["start"] = start
            arguments["count"] = count
        body = await self._request("variables", arguments)
        return [
            Variable(
                name=str(raw.get("name", "")),
                value=str(raw.get("value", "")),
                type=raw.get("type") or None,
                ref=int(raw.get("variablesReference") or 0),
                named_count=raw.get("namedVariables"),
                indexed_count=raw.get("indexedVariables"),
                evaluate_name=raw.get("evaluateName"),
            )
            for raw in body.get("variables") or []
        ]

    async def return_value(self, thread_id: int) -> Variable | None:
        prefix = self.profile.return_value_prefix
        if not prefix:
            return None
        frames, _ = await self.stack_trace(thread_id, 0, 1)
        if not frames:
            return None
        for scope in (await self.scopes(frames[0].id))[:1]:
            for variable in await self.variables(scope.ref):
                if variable.name.startswith(prefix):
                    return variable
        return None

    async def set_variable(self, container_ref: int, name: str, value: str) -> Variable:
        self._require_stopped()
        if not self.capabilities.set_variable:
            raise NotSupported(
                f"The {self.profile.name} adapter cannot change variables (no setVariable); "
                "assign it in the console where the language allows."
            )
        try:
            body = await self._request("setVariable", {"variablesReference": container_ref,
                                                       "name": name, "value": value})
        except CommandFailed as exc:
            raise CommandFailed(f"Could not set {name} to {value}: {exc.message.strip()}",
                                **exc.details) from exc
        return Variable(
            name=name,
            value=str(body.get("value", "")),
            type=body.get("type") or None,
            ref=int(body.get("variablesReference") or 0),
            named_count=body.get("namedVariables"),
            indexed_count=body.get("indexedVariables"),
        )

    async def completions(self, text: str, column: int, frame_id: int | None) -> list[Completion]:
        if not self.capabilities.completions:
            return []
        self._require_stopped()
        arguments: dict[str, Any] = {"text": text, "column": column + 1}  # columnsStartAt1
        if frame_id is not None:
            arguments["frameId"] = frame_id
        body = await self._request("completions", arguments, self.profile.request_timeout)
        items = []
        for target in body.get("targets") or []:
            label = str(target.get("label", ""))
            start = target.get("start")
            items.append(Completion(
                label=label, text=str(target.get("text") or label), type=target.get("type") or None,
                start=None if start is None else max(0, int(start) - self.profile.completion_start_base),
                length=int(target.get("length") or 0)))
        return items

    async def evaluate(
        self, expression: str, frame_id: int | None, context: str = "repl"
    ) -> EvalResult:
        if frame_id is not None:
            self._require_stopped()
        else:
            self._require_session()
        if self.profile.repl_is_command_language and context == "repl":
            return await self._evaluate_command_repl(expression, frame_id)
        return await self._evaluate_expression(expression, frame_id, context,
                                               self.profile.request_timeout)

    async def _evaluate_command_repl(self, text: str, frame_id: int | None) -> EvalResult:
        """An evaluate in a REPL that also runs the debugger's commands (lldb-dap's
        runs any LLDB command, `platform shell` included). The text is evaluated as
        an expression (the 'watch' context never runs a command); only when that
        fails and the text is a command on the read-only allowlist does it run, spelled
        out in full and forced to command mode with lldb-dap's backtick prefix.
        Other commands need debug_lldb_command with allowUnsafe."""
        timeout = self.profile.request_timeout
        text = text.strip()
        if text.startswith("`"):  # an explicit command
            vetted = vet_lldb_command(text[1:])
            return await self._evaluate("`" + vetted.text, frame_id, "repl", timeout)
        try:
            vetted, denied = vet_lldb_command(text), None
        except (CommandDenied, InvalidInput) as exc:
            vetted, denied = None, exc
        try:
            return await self._evaluate_expression(text, frame_id, "watch", timeout)
        except CommandFailed:
            if vetted is not None:
                return await self._evaluate("`" + vetted.text, frame_id, "repl", timeout)
            if isinstance(denied, CommandDenied) and names_lldb_command(text):
                raise denied from None
            raise

    async def _evaluate_expression(
        self, expression: str, frame_id: int | None, context: str, timeout: float
    ) -> EvalResult:
        """An expression (never a command) in the program's language; an adapter
        profile may evaluate it its own way."""
        return await self._evaluate(expression, frame_id, context, timeout)

    async def _evaluate(
        self, expression: str, frame_id: int | None, context: str, timeout: float
    ) -> EvalResult:
        arguments: dict[str, Any] = {"expression": expression, "context": context}
        if frame_id is not None:
            arguments["frameId"] = frame_id
        try:
            body = await self._request("evaluate", arguments, timeout=timeout)
        except CommandFailed as exc:
            # The adapter's words are the error text ("NameError: name 'x' is not defined");
            # of a traceback through the adapter's own code, the user's part is the last line.
            raise CommandFailed(user_error(exc.message), expression=expression,
                                **exc.details) from exc
        return EvalResult(
            value=str(body.get("result", "")),
            type=body.get("type") or None,
            ref=int(body.get("variablesReference") or 0),
            named_count=body.get("namedVariables"),
            indexed_count=body.get("indexedVariables"),
        )

    async def raw_command(self, command: str, timeout: float) -> str:
        self._require_session()
        frame_id = None
        if self._state == "stopped" and self._last_stopped_thread is not None:
            with contextlib.suppress(DebuggerError):
                frames, _ = await self.stack_trace(self._last_stopped_thread, 0, 1)
                frame_id = frames[0].id if frames else None
        if self.profile.repl_is_command_language:
            # lldb-dap's backtick prefix: a command, even if a variable has its name.
            command = "`" + command.lstrip("`")
        result = await self._evaluate(command, frame_id, "repl", timeout)
        return result.value

    async def source(self, source_reference: int) -> str:
        self._require_session()
        body = await self._request(
            "source",
            {"sourceReference": source_reference, "source": {"sourceReference": source_reference}},
        )
        return str(body.get("content", ""))

    async def disassemble(self, address: str, count: int = 32, offset: int = 0) -> list[Instruction]:
        if not self.capabilities.disassemble:
            return await super().disassemble(address, count, offset)
        self._require_stopped()
        body = await self._request(
            "disassemble",
            {"memoryReference": address, "instructionOffset": offset,
             "instructionCount": count, "resolveSymbols": True},
        )
        out: list[Instruction] = []
        for raw in body.get("instructions") or []:
            text = str(raw.get("instruction") or "").strip()
            if not text or text == "??":
                continue  # delve pads a range that runs past the code with "??"
            symbol = raw.get("symbol") or None
            if symbol and text.startswith(f"{symbol}:"):
                text = text[len(symbol) + 1:].strip()  # lldb-dap labels a function's first
            text = re.sub(r"\s+", " ", text, count=1)  # lldb-dap pads the mnemonic
            location = None
            if raw.get("line"):
                location = _location({"source": raw.get("location") or {},
                                      "line": raw.get("line"), "column": raw.get("column")})
            out.append(Instruction(
                address=_hex(raw.get("address")),
                instruction=text,
                bytes=raw.get("instructionBytes") or None,
                symbol=symbol,
                location=location,
            ))
        return out

    async def resolve_address(self, expression: str, frame_id: int | None) -> str:
        """A number, or what the adapter evaluates a function or pointer to."""
        text = expression.strip()
        if _HEX.fullmatch(text) or text.isdigit():
            return hex(int(text, 0))
        self._require_stopped()
        try:
            result = await self._evaluate(text, frame_id, "watch", self.profile.request_timeout)
        except CommandFailed as exc:
            said = exc.message.strip().splitlines()[0] if exc.message.strip() else "unknown"
            raise InvalidInput(
                f"{expression!r} does not name a function or an address here: {said}"
            ) from None
        found = _HEX.search(result.value)
        if not found:
            raise InvalidInput(
                f"{expression!r} is {result.value!r}, not an address; give a function name, "
                "a pointer, or an address like 0x401000."
            )
        return hex(int(found.group(0), 16))

    async def read_memory(self, address: str, count: int) -> bytes:
        if not self.capabilities.read_memory:
            return await super().read_memory(address, count)
        self._require_stopped()
        body = await self._request("readMemory", {"memoryReference": address, "count": count})
        data = body.get("data") or ""
        return base64.b64decode(data) if data else b""


_HEX = re.compile(r"0x[0-9a-fA-F]+")


def _hex(value: Any) -> str:
    """An address as 0x-prefixed lower-case hex, whatever form the adapter used."""
    text = str(value or "").strip()
    try:
        return hex(int(text, 16) if not text.lower().startswith("0x") else int(text, 0))
    except ValueError:
        return text

def _location(frame: Message) -> SourceLocation | None:
    source = frame.get("source")
    line = int(frame.get("line") or 0)
    column = int(frame.get("column") or 0)
    if not isinstance(source, dict):
        return SourceLocation(line=line, column=column) if line else None
    path = source.get("path") or None
    reference = source.get("sourceReference") or None
    if path and not path.startswith("<") and not os.path.isabs(path):
        # A relative path (libc's "sysdeps/...") is relative to where that code
        # was built, not to us: keep it only if it happens to exist from here.
        candidate = os.path.abspath(path)
        path = candidate if os.path.exists(candidate) else path
    if path and path.startswith("<"):
        # A pseudo-file like "<string>": no file on disk to open.
        path, name = None, source.get("name") or path
    else:
        name = source.get("name")
    return SourceLocation(
        path=path, line=line, column=column, name=name,
        source_reference=reference if isinstance(reference, int) and reference > 0 else None,
    )


_SCOPE_HINTS = {
    "locals": ScopeKind.locals,
    "arguments": ScopeKind.arguments,
    "registers": ScopeKind.registers,
    "globals": ScopeKind.globals,
}

_SCOPE_NAMES = (
    ("local", ScopeKind.locals),
    ("argument", ScopeKind.arguments),
    ("global", ScopeKind.globals),
    ("static", ScopeKind.globals),
    ("register", ScopeKind.registers),
    ("closure", ScopeKind.closure),
)


def _scope_kind(raw: Message) -> ScopeKind:
    hint = str(raw.get("presentationHint") or "").lower()
    if hint in _SCOPE_HINTS:
        return _SCOPE_HINTS[hint]
    name = str(raw.get("name") or "").lower()
    for word, kind in _SCOPE_NAMES:
        if word in name:
            return kind
    return ScopeKind.other
