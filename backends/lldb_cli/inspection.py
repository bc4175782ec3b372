"""Inspection for an LldbCliBackend: what the stopped program holds, asked of
the Python helper as JSON: threads, frames, scopes and values, expressions,
disassembly and memory.
"""

from __future__ import annotations

import contextlib
import os
import re

from ..errors import CommandFailed, DebuggerError, InvalidInput
from ..models import (
    EvalResult,
    Frame,
    Instruction,
    Scope,
    ScopeKind,
    SourceLocation,
    Thread,
    Variable,
)
from .host import LldbHost
from .lldb_process import RUNNING, _encode

SCOPE_KINDS = {"locals": ScopeKind.locals, "globals": ScopeKind.globals,
               "registers": ScopeKind.registers}


class InspectionMixin:
    """Each asks the helper once; most need the program stopped."""

    async def threads(self: LldbHost) -> list[Thread]:
        if self._state == "running":
            return [t.model_copy(update={"stopped": False}) for t in self._threads_seen]
        if self._state != "stopped":
            return []
        answer = await self._helper("threads")
        threads = [Thread(id=t["id"], name=t["name"], stopped=True) for t in answer["threads"]]
        self._threads_seen = threads
        return threads

    async def stack_trace(
        self: LldbHost, thread_id: int, start: int = 0, levels: int = 20
    ) -> tuple[list[Frame], int | None]:
        self._require_stopped()
        answer = await self._helper("stack", int(thread_id), int(start), int(levels))
        frames = []
        for raw in answer["frames"]:
            location = None
            if raw.get("path"):
                location = SourceLocation(
                    path=raw["path"], line=raw["line"], column=raw.get("column") or 0,
                    name=os.path.basename(raw["path"]),
                )
            frames.append(Frame(
                id=raw["id"], index=raw["index"], name=raw["name"], location=location,
                module=raw.get("module"), instruction_pointer=raw.get("pc"),
            ))
        return frames, answer.get("total")

    async def scopes(self: LldbHost, frame_id: int) -> list[Scope]:
        self._require_stopped()
        answer = await self._helper("scopes", int(frame_id))
        return [
            Scope(name=s["name"], kind=SCOPE_KINDS.get(s["kind"], ScopeKind.other), ref=s["ref"],
                  expensive=False, named_count=s.get("named_count"))
            for s in answer["scopes"]
        ]

    async def variables(self: LldbHost, ref: int, start: int = 0, count: int = 0) -> list[Variable]:
        self._require_stopped()
        answer = await self._helper("variables", int(ref), int(start), int(count))
        return [
            Variable(name=v["name"], value=v["value"], type=v.get("type"), ref=v.get("ref", 0),
                     evaluate_name=v.get("evaluate_name"))
            for v in answer["variables"]
        ]

    async def return_value(self: LldbHost, thread_id: int) -> Variable | None:
        self._require_stopped()
        v = (await self._helper("return_value", int(thread_id)))["variable"]
        if v is None:
            return None
        return Variable(name=v["name"], value=v["value"], type=v.get("type"), ref=v.get("ref", 0))

    async def set_variable(self: LldbHost, container_ref: int, name: str, value: str) -> Variable:
        self._require_stopped()
        answer = await self._helper("set_variable", _encode(
            {"ref": int(container_ref), "name": name, "value": value}))
        v = answer["variable"]
        return Variable(name=v["name"], value=v["value"], type=v.get("type"), ref=v.get("ref", 0),
                        evaluate_name=v.get("evaluate_name"))

    async def evaluate(
        self: LldbHost, expression: str, frame_id: int | None, context: str = "repl"
    ) -> EvalResult:
        if not expression.strip():
            raise InvalidInput("Nothing to evaluate; give an expression.")
        self._require_stopped()
        try:
            answer = await self._helper(
                "evaluate",
                _encode({"expression": expression, "frame_id": frame_id, "context": context}),
            )
        except CommandFailed:
            # An expression that calls into the program can end it, or stop it elsewhere.
            with contextlib.suppress(DebuggerError):
                self._after_raw(await self._helper("stop_info"))
            raise
        return EvalResult(value=answer["value"], type=answer.get("type"), ref=answer.get("ref", 0),
                          named_count=answer.get("named_count"))

    async def disassemble(
        self: LldbHost, address: str, count: int = 32, offset: int = 0
    ) -> list[Instruction]:
        self._require_stopped()
        try:
            int(str(address), 0)
        except ValueError:
            raise InvalidInput(f"{address!r} is not an address; give one like 0x401000.") from None
        answer = await self._helper("disassemble", repr(str(address)), int(count), int(offset))
        out = []
        for raw in answer["instructions"]:
            location = None
            if raw.get("path"):
                location = SourceLocation(path=raw["path"], line=raw["line"],
                                          column=raw.get("column") or 0,
                                          name=os.path.basename(raw["path"]))
            out.append(Instruction(address=raw["address"], instruction=raw["instruction"],
                                   bytes=raw.get("bytes") or None, symbol=raw.get("symbol"),
                                   location=location))
        return out

    async def resolve_address(self: LldbHost, expression: str, frame_id: int | None) -> str:
        text = expression.strip()
        if re.fullmatch(r"0[xX][0-9a-fA-F]+|\d+", text):
            return hex(int(text, 0))
        if self._state == "running":
            raise InvalidInput(RUNNING)
        self._require_channel()
        answer = await self._helper(
            "resolve_address", _encode({"expression": text, "frame_id": frame_id}))
        return str(answer["address"])

    async def read_memory(self: LldbHost, address: str, count: int) -> bytes:
        self._require_stopped()
        try:
            int(str(address), 0)
        except ValueError:
            raise InvalidInput(f"{address!r} is not an address; give one like 0x7ffc1000.") from None
        answer = await self._helper("read_memory", repr(str(address)), int(count))
        return bytes.fromhex(answer["hex"])
