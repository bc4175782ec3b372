"""The one-shot `debug-script` run (seeds/002): start a command, evaluate one
expression at every hit of one breakpoint, return the typed values in hit
order, and leave nothing running.

Node commands (`node --inspect-brk=PORT app.js`) go to the CDP backend's own
implementation of the seed. Python programs (`python app.py ...`, `app.py`)
run under debugpy, native binaries under lldb-dap (lldb-cli when lldb-dap is
missing) and Go binaries under dlv, all through a private Session.

Types are each language's own: Python's `type(v).__name__` (int, str, dict,
list, NoneType), the debugger's C type (int, char *, point) or Go type. The
value is a JSON value when there is one (Python: json.dumps of the value, as
the seed uses JSON.stringify; native: numbers, booleans, strings, structs as
objects, arrays as lists), else the debugger's rendering of it. An expression
that raises yields {"type": "error", "value": "<message>"}.

The timeout covers the whole run, start-up included, as on Node; its two
errors come only when nothing was collected. A run cut short after some hits
returns them.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import json
import math
import os
import re
import shlex
import shutil
from dataclasses import dataclass, field
from typing import Any

from backends import adapters
from backends.errors import DebuggerError, InvalidInput
from backends.models import BreakpointSpec, EvalResult, LaunchRequest
from backends.stop_and_go import EXITED_MESSAGE, TIMEOUT_MESSAGE, hits_or_outcome, stop_and_go

from .config import settings
from .redact import redact_hit
from .models import SessionState
from .session import Session
from .stops import SessionStops

__all__ = ["EXITED_MESSAGE", "TIMEOUT_MESSAGE", "classify", "evaluate_typed", "is_hit",
           "run_debug_script", "value_kind"]

#: The longest debug-script run: a day (a bigger number is a mistake, not a wish).
MAX_TIMEOUT_MS = 24 * 3600 * 1000

_PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)*)?$")
# Interpreter options that take the next word as their value.
_PYTHON_OPTS_WITH_VALUE = {"-W", "-X", "--check-hash-based-pycs"}
_NATIVE_DEPTH = 3
_NATIVE_ITEMS = 100



#: The longest debug-script command read (a command line, not a file).
MAX_COMMAND_CHARS = 16_384

@dataclass
class ScriptTarget:
    kind: str  # node / python / native
    adapter: str
    program: str = ""
    args: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


# ============================================================================ entry point


async def run_debug_script(
    command: str, file: str, line: int, expression: str, timeout_ms: float,
    cwd: str | None = None,
) -> list[dict[str, Any]]:
    """[{type, value}, ...], one per hit of file:line, in order. `timeout_ms` is
    any positive number (1000.5 is fine); 3000.0 is said as 3000."""
    if not command or not command.strip():
        raise InvalidInput("command is empty; pass e.g. 'python app.py' or 'node --inspect-brk=9229 app.js'.")
    if not expression or not expression.strip():
        raise InvalidInput("expression is empty; pass the expression to evaluate at the breakpoint.")
    if line < 1:
        raise InvalidInput(f"breakpoint.line must be 1 or more, not {line}.")
    # NaN passes `<= 0` and Infinity (JSON's 1e309 too) never ends: both refused.
    if not math.isfinite(timeout_ms) or timeout_ms <= 0 or timeout_ms > MAX_TIMEOUT_MS:
        raise InvalidInput(f"timeout must be a positive number of milliseconds up to "
                           f"{MAX_TIMEOUT_MS:,} (a day), not {timeout_ms}.")
    if float(timeout_ms).is_integer():
        timeout_ms = int(timeout_ms)
    work_dir = os.path.abspath(cwd or os.getcwd())
    if len(command) > MAX_COMMAND_CHARS:
        # shlex takes quadratic time on one long word (4 s for 256 KB, on the loop)
        raise InvalidInput(f"command is {len(command):,} characters; the limit is "
                           f"{MAX_COMMAND_CHARS:,}. Put long arguments in a file.")
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise InvalidInput(f"Cannot split the command ({exc}); check its quoting.") from exc
    target = classify(argv, work_dir)
    if target.kind == "node":
        results = await _run_node(command, file, line, expression, timeout_ms, work_dir)
    else:
        path = os.path.normpath(os.path.join(work_dir, os.path.expanduser(file)))
        results = await _run_session(target, path, line, expression, timeout_ms, work_dir)
    # Strings anywhere in a value pass through the same redaction as output, and
    # a string under a secret name (the expression, a dict key) is hidden.
    return [redact_hit(expression, r) for r in results] if settings().redact else results


def classify(argv: list[str], cwd: str) -> ScriptTarget:
    """What the command starts: node, a Python program, or a native binary."""
    if not argv:
        raise InvalidInput("command is empty.")
    head = argv[0]
    if adapters.is_node_command(argv) or head.lower().endswith(adapters.JS_SUFFIXES):
        return ScriptTarget("node", "node")
    if _PYTHON_NAME.match(os.path.basename(head)):
        return _python_target(argv, cwd)
    program = _resolve_program(head, cwd)
    adapter = adapters.adapter_for_program(program)
    kind = adapters.profile(adapter).values
    if kind == "node":
        return ScriptTarget("node", "node")
    return ScriptTarget(kind, adapters.stand_in(adapter), program, argv[1:])


def _resolve_program(word: str, cwd: str) -> str:
    candidate = os.path.join(cwd, os.path.expanduser(word))
    if os.path.exists(candidate):
        return os.path.normpath(candidate)
    if os.sep not in word:
        found = shutil.which(word)
        if found:
            return found
    raise InvalidInput(f"No such program: {candidate}. Check the command (paths are relative to {cwd}).")


def _python_target(argv: list[str], cwd: str) -> ScriptTarget:
    interpreter = shutil.which(argv[0]) if os.sep not in argv[0] else os.path.join(cwd, argv[0])
    if not interpreter or not os.path.exists(interpreter):
        raise InvalidInput(f"No Python interpreter {argv[0]!r} here. Use e.g. 'python3 app.py'.")
    options: list[str] = []
    i = 1
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        word = argv[i]
        if word == "-m":
            if i + 1 >= len(argv):
                raise InvalidInput("python -m needs a module name.")
            return ScriptTarget("python", "debugpy", argv[i + 1], argv[i + 2:],
                                {"module": argv[i + 1], "python": [interpreter, *options]})
        if word == "-c":
            raise InvalidInput("python -c code has no source file to break in; save it to a file.")
        options.append(word)
        if word in _PYTHON_OPTS_WITH_VALUE and i + 1 < len(argv):
            options.append(argv[i + 1])
            i += 1
        i += 1
    if i >= len(argv):
        raise InvalidInput("Give the script to run, e.g. 'python app.py'.")
    program = os.path.normpath(os.path.join(cwd, argv[i]))
    if not os.path.isfile(program):
        raise InvalidInput(f"No such Python file: {program}. Paths are relative to {cwd}.")
    return ScriptTarget("python", "debugpy", program, argv[i + 1:],
                        {"python": [interpreter, *options]})


# ============================================================================ Node


async def _run_node(command: str, file: str, line: int, expression: str, timeout_ms: int,
                    cwd: str) -> list[dict[str, Any]]:
    try:
        from backends.cdp.script import run_debug_script_node
    except ImportError as exc:  # pragma: no cover - ships with the package
        raise InvalidInput(f"The Node backend is not available here: {exc}.") from exc
    return await run_debug_script_node(command, file, line, expression, timeout_ms, cwd=cwd)


# ============================================================================ Python and native


async def _run_session(target: ScriptTarget, path: str, line: int, expression: str,
                       timeout_ms: int, cwd: str) -> list[dict[str, Any]]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_ms / 1000
    session = Session(f"script-{os.getpid()}")
    session.cwd = cwd
    # An uncaught exception is the program's business here: it should end the
    # run, not hold it at a stop nobody will look at.
    session.exception_filters = []
    breakpoint = await session.add_breakpoint(BreakpointSpec(path=path, line=line), "mcp")
    request = LaunchRequest(program=target.program, args=target.args, cwd=cwd, extra=target.extra)
    results: list[dict[str, Any]] = []
    timed_out = False
    exit_detail: dict[str, Any] = {}
    try:
        try:
            await asyncio.wait_for(session.launch(request, target.adapter, "mcp"),
                                   max(deadline - loop.time(), 0.001))
        except asyncio.TimeoutError:
            timed_out = True
        except DebuggerError as exc:
            if session.state != SessionState.terminated or not _ended_on_its_own(exc):
                raise
            exit_detail = {"cause": exc.message}
        if not timed_out:
            # Stops elsewhere (a line the debugger moved the breakpoint to) are
            # gone past; a program that ends while it is read ends the run.
            stops = SessionStops(
                session, "mcp", is_hit=lambda: is_hit(session, breakpoint.id, path, line),
                read=lambda: evaluate_typed(session, target.kind, expression), gone_ends=True)
            collected = await stop_and_go(stops, deadline)
            results, timed_out = collected.values, collected.timed_out
        if session.exit_code is not None:
            exit_detail.setdefault("exit_code", session.exit_code)
    finally:
        with contextlib.suppress(Exception):
            await asyncio.shield(session.close())
    return hits_or_outcome(results, timed_out, timeout_ms, exit_detail)


def _ended_on_its_own(exc: DebuggerError) -> bool:
    # A program that exits during start-up (before the adapter's handshake is
    # over) is the seed's "exited" outcome; a missing debugger or a bad path is not.
    from backends.errors import BackendDied

    return isinstance(exc, BackendDied)


def is_hit(session: Session, breakpoint_id: int, path: str, line: int) -> bool:
    """A stop of our breakpoint ON the requested line. A debugger moves a
    breakpoint on a line without code (blank, past the end of the file, in a
    function never compiled) to the next line that has some: stops there are
    no hits of the line asked for, so they are never reported as its values."""
    stop = session.stop
    if stop is None or stop.location is None or not stop.location.path:
        return False
    if stop.location.line != line or (
            os.path.realpath(stop.location.path) != os.path.realpath(path)):
        return False
    if breakpoint_id in stop.breakpoint_ids:
        return True
    # Adapters that do not name the breakpoint they hit: the stop's place says it.
    return stop.reason == "breakpoint" and not stop.breakpoint_ids


def value_kind(adapter: str | None) -> str:
    """How a session's values are typed: python, node or native."""
    return adapters.profile(adapter).values


async def evaluate_typed(session: Session, kind: str, expression: str) -> dict[str, Any]:
    try:
        if kind == "python":
            return await _python_typed(session, expression)
        if kind == "node":
            from backends.cdp.script import evaluate_typed as node_typed

            return await node_typed(session.backend, expression)  # type: ignore[arg-type]
        return await _native_typed(session, expression)
    except DebuggerError as exc:
        return {"type": "error", "value": _first_line(exc.message)}


def _first_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    # Python tracebacks put the exception last; lldb puts it first.
    if lines and lines[0].startswith("Traceback"):
        return lines[-1].strip()
    return lines[0].strip() if lines else text


# Both run the expression once, as the argument of a lambda, so its own scope
# is the paused frame's; the answer is one ASCII JSON string, which the
# adapter renders as a quoted repr that ast.literal_eval reads back whole.
_PY_JSON = ("__import__('json').dumps((lambda _tdv: [type(_tdv).__name__, "
            "__import__('json').dumps(_tdv, allow_nan=False)])(({expr}\n)))")
_PY_REPR = ("__import__('json').dumps((lambda _tdv: [type(_tdv).__name__, None, "
            "repr(_tdv)])(({expr}\n)))")


async def _python_typed(session: Session, expression: str) -> dict[str, Any]:
    try:
        pair = _decode_python(await session.evaluate(_PY_JSON.format(expr=expression), None, "watch"))
        return {"type": pair[0], "value": json.loads(pair[1])}
    except (DebuggerError, ValueError, TypeError, IndexError):
        pass  # not JSON-able (or the expression raised): the seed's fallback, the raw value
    try:
        triple = _decode_python(await session.evaluate(_PY_REPR.format(expr=expression), None, "watch"))
        return {"type": triple[0], "value": triple[2]}
    except (ValueError, TypeError, IndexError):
        result = await session.evaluate(expression, None, "watch")
        return {"type": result.type or "unknown", "value": result.value}


def _decode_python(result: EvalResult) -> list[Any]:
    text = ast.literal_eval(result.value)
    if not isinstance(text, str):
        raise ValueError("not a string")
    value = json.loads(text)
    if not isinstance(value, list):
        raise ValueError("not a list")
    return value


async def _native_typed(session: Session, expression: str) -> dict[str, Any]:
    result = await session.evaluate(expression, None, "watch")
    type_name = result.type or "unknown"
    return {"type": type_name, "value": await _native_value(session, result.value, type_name,
                                                             result.ref, _NATIVE_DEPTH)}


_C_STRING = re.compile(r'^(?:0x[0-9a-fA-F]+\s+)?"((?:[^"\\]|\\.)*)"$')
_C_CHAR = re.compile(r"^(?:-?\d+\s+)?'((?:[^'\\]|\\.)+)'$")
_GO_QUOTED = re.compile(r'^"((?:[^"\\]|\\.)*)"$')


def _native_scalar(text: str, type_name: str) -> Any:
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if text in ("nil", "NULL") or (text == "0x0000000000000000" and type_name.endswith("*")):
        return None
    with contextlib.suppress(ValueError):
        number = json.loads(text)
        if isinstance(number, (int, float)) and not isinstance(number, bool):
            return number
    for pattern in (_C_STRING, _GO_QUOTED, _C_CHAR):
        match = pattern.match(text)
        if match:
            with contextlib.suppress(ValueError, SyntaxError):
                return ast.literal_eval('"' + match.group(1).replace('"', '\\"') + '"')
            return match.group(1)
    return text


async def _native_value(session: Session, text: str, type_name: str, ref: int, depth: int) -> Any:
    stripped = type_name.replace("const ", "").strip()
    if ref <= 0 or depth <= 0 or stripped.endswith("*"):
        # A C pointer's children are its pointee: its value is the address (or,
        # for a C string, the string). Go pointers (`*main.Point`) read through.
        return _native_scalar(text, stripped)
    children = await session.variables(ref)
    children = children[:_NATIVE_ITEMS]
    if len(children) == 1 and children[0].name == "":
        # A Go pointer: delve shows the pointee as one nameless child, and
        # encoding/json would write the pointee too.
        only = children[0]
        return await _native_value(session, only.value, only.type or "", only.ref, depth - 1)
    if children and all(re.fullmatch(r"\[\d+\]", c.name) for c in children):
        return [await _native_value(session, c.value, c.type or "", c.ref, depth - 1) for c in children]
    return {c.name: await _native_value(session, c.value, c.type or "", c.ref, depth - 1)
            for c in children}
