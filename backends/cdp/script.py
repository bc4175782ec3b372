"""The one-shot `debug-script` flow (seeds/002) on the CDP backend: run a node
command that carries --inspect-brk, stop at one breakpoint as often as it is
hit, evaluate one expression at each hit, and return the typed values.

Choices where the seed leaves room (also in docs/backends/cdp.md):

- The expression is evaluated in the paused frame (Debugger.evaluateOnCallFrame),
  not in the global scope, so local variables are visible.
- `type` is the JavaScript `typeof` of the value, read in the same evaluation
  as JSON.stringify so the expression runs once: "object" for objects, arrays
  and null. When JSON.stringify throws (a BigInt, a cycle), the raw expression
  is evaluated as the seed says, and its value is the inspector's one-line
  rendering. When the expression itself throws, the entry is
  {"type": "error", "value": "<the error's first line>"}.
- The timeout covers the whole run, start-up included. The two errors are
  raised only when no hit was collected: a run that hit the breakpoint and was
  then cut short by the timeout returns what it collected.
- The breakpoint file may be a TypeScript (or any source-mapped) file: it is
  mapped to the compiled JavaScript through the source maps found next to the
  program and under the working directory.
- The port named by --inspect-brk=PORT is only a fallback: the inspector's own
  "Debugger listening on ws://..." line is read first, so --inspect-brk=0 and
  --inspect-brk=HOST:PORT work too.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
from typing import Any

from ..errors import DebuggerError, InvalidInput
from ..models import BreakpointSpec, StoppedEvent
from ..stop_and_go import EXITED_MESSAGE, TIMEOUT_MESSAGE, Seen, hits_or_outcome, stop_and_go
from .backend import CdpBackend
from .inspection import exception_message
from .launching import _as_inspect_brk
from .stops import THREAD_ID
from .values import format_remote

__all__ = ["EXITED_MESSAGE", "TIMEOUT_MESSAGE", "evaluate_typed", "inspector_port",
           "run_debug_script_node"]

DEFAULT_PORT = 9229
_PORT = re.compile(r"--inspect-brk=(\d+)")
_INSPECT_FLAG = re.compile(r"(^|\s)--inspect(-brk|-wait)?(=|\s|$)")


def inspector_port(command: str) -> int:
    """The port the seed's regex finds in a command, 9229 when there is none."""
    match = _PORT.search(command)
    return int(match.group(1)) if match else DEFAULT_PORT


def _typed_expression(expression: str) -> str:
    # The expression is an argument, evaluated once in the frame's own scope;
    # the newlines keep a trailing // comment from swallowing the parenthesis.
    return f"(($value) => [typeof $value, JSON.stringify($value)])((\n{expression}\n))"


async def evaluate_typed(backend: CdpBackend, expression: str) -> dict[str, Any]:
    """{type, value} for the expression in the top frame, as the seed describes."""
    response = await backend.evaluate_remote(
        _typed_expression(expression), None, context="watch", return_by_value=True
    )
    if not response.get("exceptionDetails"):
        pair = (response.get("result") or {}).get("value")
        if isinstance(pair, list) and len(pair) == 2:
            kind, text = pair
            if isinstance(text, str):
                try:
                    return {"type": kind, "value": json.loads(text)}
                except ValueError:
                    return {"type": kind, "value": text}
            if kind in ("undefined",):
                return {"type": kind, "value": None}
            # JSON has no form for functions and symbols: fall through to the raw value.
    raw = await backend.evaluate_remote(expression, None, context="watch")
    details = raw.get("exceptionDetails")
    if details:
        return {"type": "error", "value": exception_message(details)}
    value = raw.get("result") or {"type": "undefined"}
    kind = value.get("type", "undefined")
    if "value" in value:
        return {"type": kind, "value": value["value"]}
    if "unserializableValue" in value:
        return {"type": kind, "value": value["unserializableValue"]}
    if kind == "object" and value.get("subtype") == "null":
        return {"type": "object", "value": None}
    return {"type": kind, "value": format_remote(value)}


def _port_free(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _with_default_inspector(argv: list[str]) -> list[str]:
    """A node command without --inspect-brk gets the seed's default port (9229),
    or any free port when 9229 is taken: the inspector's own "Debugger
    listening on" line says which. `app.js` alone runs under `node`."""
    if not argv:
        raise InvalidInput("command is empty; pass e.g. 'node --inspect-brk=9229 app.js'.")
    if os.path.basename(argv[0]) not in ("node", "nodejs"):
        argv = ["node", *argv]
    port = DEFAULT_PORT if _port_free(DEFAULT_PORT) else 0
    return [argv[0], f"--inspect-brk={port}", *argv[1:]]


async def _stopped_on(backend: CdpBackend, path: str, line: int) -> bool:
    """Whether the pause is on the requested line. V8 moves a breakpoint on a
    line without code (a blank line, a function never compiled) to the next
    place it can stop, possibly in another function: that is no hit of the
    line the caller asked for."""
    try:
        frames, _ = await backend.stack_trace(THREAD_ID, 0, 1)
    except DebuggerError:
        return False
    loc = frames[0].location if frames else None
    if loc is None or not loc.path or loc.line != line:
        return False
    return os.path.realpath(loc.path) == os.path.realpath(path)


async def run_debug_script_node(
    command: str,
    file: str,
    line: int,
    expression: str,
    timeout_ms: int,
    cwd: str | None = None,
) -> list[dict]:
    """Run `command`, evaluate `expression` at every hit of file:line, and
    return [{type, value}, ...] in hit order.

    Raises NoHitInTime("Timeout waiting for breakpoint after {timeout}ms") or
    EndedBeforeHit("Process exited before breakpoint was hit") (backends/errors.py)
    when the run ended without a single hit, and InvalidInput for a command
    that is not a node --inspect-brk command.
    """
    if not command or not command.strip():
        raise InvalidInput("command is empty; pass e.g. 'node --inspect-brk=9229 app.js'.")
    if len(command) > 16_384:  # shlex is quadratic on one long word
        raise InvalidInput(f"command is {len(command):,} characters; the limit is 16,384.")
    try:
        argv = [_as_inspect_brk(a) for a in shlex.split(command)]
    except ValueError as exc:
        raise InvalidInput(f"Cannot split the command ({exc}); check its quoting.") from exc
    if not _INSPECT_FLAG.search(command):
        argv = _with_default_inspector(argv)
    if line < 1:
        raise InvalidInput(f"line must be 1 or more, not {line}.")
    if timeout_ms <= 0:
        raise InvalidInput(f"timeout must be a positive number of milliseconds, not {timeout_ms}.")
    if not expression or not expression.strip():
        raise InvalidInput("expression is empty; pass the JavaScript expression to evaluate.")

    work_dir = os.path.abspath(cwd or os.getcwd())
    path = os.path.normpath(os.path.join(work_dir, file))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_ms / 1000
    events: asyncio.Queue[Any] = asyncio.Queue()
    backend = CdpBackend(events.put_nowait)
    breakpoint_ids: set[int | str] = set()

    async def configure() -> None:
        await backend.set_exception_filters([])
        states = await backend.set_source_breakpoints(path, [BreakpointSpec(path=path, line=line)])
        breakpoint_ids.update(s.backend_id for s in states if s.backend_id is not None)

    # Where the compiled JavaScript of a TypeScript breakpoint file may live.
    backend.add_source_root(os.path.dirname(os.path.dirname(path)))

    stops = _BackendStops(backend, events, breakpoint_ids, path, line, expression)
    results: list[dict] = []
    timed_out = False
    try:
        try:
            await asyncio.wait_for(
                backend.launch_command(
                    argv, cwd=work_dir, env=dict(os.environ), configure=configure,
                    port_hint=inspector_port(command), stop_on_entry=False,
                ),
                max(deadline - loop.time(), 0.001),
            )
        except asyncio.TimeoutError:
            timed_out = True
        except DebuggerError as exc:
            if isinstance(exc, InvalidInput):
                raise
            stops.exit_detail = {"cause": exc.message}
        else:
            collected = await stop_and_go(stops, deadline)
            results, timed_out = collected.values, collected.timed_out
    finally:
        await backend.dispose()
    return hits_or_outcome(results, timed_out, timeout_ms, stops.exit_detail)


class _BackendStops:
    """The CDP backend's own events, run from stop to stop (stop_and_go.Stops)."""

    def __init__(self, backend: CdpBackend, events: "asyncio.Queue[Any]",
                 breakpoint_ids: set[int | str], path: str, line: int, expression: str) -> None:
        self.backend, self.events = backend, events
        self.breakpoint_ids, self.path, self.line = breakpoint_ids, path, line
        self.expression = expression
        self.exit_detail: dict[str, Any] = {}
        self._stop: StoppedEvent | None = None

    async def next_stop(self, timeout: float) -> Seen:
        loop = asyncio.get_running_loop()
        until = loop.time() + timeout
        while True:
            remaining = until - loop.time()
            if remaining <= 0:
                return "timeout"
            try:
                event = await asyncio.wait_for(self.events.get(), remaining)
            except asyncio.TimeoutError:
                return "timeout"
            if event.kind in ("exited", "terminated"):
                if event.kind == "exited":
                    self.exit_detail = {"exit_code": event.exit_code}
                    if self.backend.stderr_tail:
                        self.exit_detail["stderr"] = "".join(self.backend.stderr_tail)[-2000:]
                return "ended"
            if isinstance(event, StoppedEvent):
                self._stop = event
                return "stopped"

    async def is_hit(self) -> bool:
        assert self._stop is not None
        return bool(self.breakpoint_ids.intersection(self._stop.hit_breakpoint_ids)) and \
            await _stopped_on(self.backend, self.path, self.line)

    async def read(self) -> dict[str, Any]:
        try:
            return await evaluate_typed(self.backend, self.expression)
        except DebuggerError as exc:
            return {"type": "error", "value": exc.message}

    async def go_on(self, last: bool) -> bool:
        try:
            await self.backend.continue_(THREAD_ID)
        except DebuggerError:
            return False  # the program ended while we evaluated
        return True
