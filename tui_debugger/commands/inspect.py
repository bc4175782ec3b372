"""Inspection of a stopped program: context, stack, variables, evaluate,
completion, setting a variable, threads and frames (output, raw debugger
commands and the activity log are console.py's)."""

import asyncio
import contextlib
import os
import re
from typing import Any

from pydantic import Field, model_validator

from backends import adapters
from backends.errors import DebuggerError, InvalidInput, NotSupported
from backends.models import Completion

from ..config import settings
from ..models import SessionState
from ..session import Session
from .cvalues import BYTE_POINTER, c_data_value, is_byte_data
from .context import (
    option_hint,
    true_length,
    STOPPED,
    build_context,
    command_name,
    find_names,
    first_locals,
    cap,
    frame_view,
    join_path,
    pick_scope,
    redact_value,
    resolve_container,
    resolve_path,
    session_of,
    variable_view,
    with_return_value,
)
from .registry import Args, CliSpec, Command, CommandContext, NoArgs, register
from .views import (
    CompletionsResult,
    CompletionView,
    ContextResult,
    EvaluateResult,
    FrameSelected,
    SetVariableResult,
    StackResult,
    ThreadsResult,
    ThreadView,
    VariablesResult,
    VariableView,
)


class ContextArgs(Args):
    lines: int | None = Field(None, ge=0, le=200, description="Source lines each side; given, "
                              "the answer is the source alone.")
    frame_index: int | None = Field(None, ge=0, description="Frame (0 = innermost; default: the selected one).")
    file: str | None = Field(None, description="FILE or FILE:LINE: that file's lines, stopped "
                             "or not.")


#: Lines each side of FILE:LINE when `file` is given without `lines`.
FILE_LINES = 10


def _file_context(ctx: CommandContext, args: ContextArgs) -> ContextResult:
    """A file's lines, stopped or not: where an agent reads code it has not
    stopped in yet (before it sets a breakpoint or runs to a line)."""
    from .context import abs_path, read_source

    session = session_of(ctx)
    text = args.file.strip()
    match = re.fullmatch(r"(.+):(\d+)", text)
    path, line = (match.group(1), int(match.group(2))) if match else (text, None)
    path = abs_path(ctx, path)
    if not os.path.isfile(path):
        raise InvalidInput(f"No file {path}. Give FILE or FILE:LINE, relative to where you "
                           "are or absolute.")
    around = FILE_LINES if args.lines is None else args.lines
    source = read_source(path, line or 1 + around, around)
    if not source:
        raise InvalidInput(f"{path} has no line {line}, or cannot be shown (not text, or a "
                           "file of secrets).")
    bp_lines = {bp.line or bp.spec.line for bp in session.breakpoints.values()
                if bp.spec.path == path and bp.set_by != "session"}
    here = session.stop.location if session.stop is not None else None
    for sl in source:
        sl.current = bool(here and here.path == path and here.line == sl.line
                          and session.state == SessionState.stopped)
        sl.breakpoint = sl.line in bp_lines
    return ContextResult(session=session.name, state=session.state.value, file=path,
                         source=source)


async def _context(ctx: CommandContext, args: ContextArgs) -> ContextResult:
    if args.file is not None:
        return _file_context(ctx, args)
    result = await build_context(session_of(ctx), args.lines, args.frame_index,
                                 with_locals=args.lines is None, origin=ctx.origin)
    if args.lines is not None and result.state == "stopped":
        # More lines is a question about the code: the locals were in the stop's
        # answer already (a C buffer among them cost kilobytes again).
        result.locals_note = (f"Locals: {command_name(ctx.view, 'context')} without lines, "
                              f"or {command_name(ctx.view, 'variables')}.")
    return result


register(Command(
    id="context", help="Where the program is: source around the current line, then locals.",
    description="Where it is stopped and why: the source around the line, and every local.",
    args=ContextArgs, result=ContextResult, handler=_context, read_only=True, mcp="debug_context",
    cli=[CliSpec(("context",), aliases=(("where",),))], tui_action=False,
))


class StackArgs(Args):
    thread_id: int | None = Field(None, description="Thread (default: the stopped/selected one).")
    max_frames: int = Field(20, ge=1, le=1000, description="How many frames at most.")


async def _stack(ctx: CommandContext, args: StackArgs) -> StackResult:
    session = session_of(ctx)
    frames, total = await session.stack(args.thread_id, args.max_frames)
    tid = args.thread_id or session.selected_thread_id or 0
    same_thread = tid == session.selected_thread_id
    views = []
    chars = 0
    for f in frames:
        view = frame_view(f, same_thread and f.index == session.selected_frame_index)
        # A caller's maxFrames is capped by the server's answer size, like every list.
        chars += len(view.model_dump_json())
        if views and chars > settings().max_result_chars:
            break
        views.append(view)
    cut = len(views) < len(frames)
    return StackResult(thread_id=tid, frames=views, total=total if total is not None else (
                           len(frames) if cut else None),
                       truncated=cut or (total is not None and total > len(views)))


register(Command(
    id="stack", help="Show the call stack of the stopped thread.",
    description="The call stack (innermost first) of the stopped or given thread.",
    args=StackArgs, result=StackResult, handler=_stack, read_only=True, mcp="debug_stack",
    cli=[CliSpec(("backtrace",), aliases=(("bt",),))],
    applies_in=STOPPED,
))


class VariablesArgs(Args):
    frame_index: int | None = Field(None, ge=0, description="Frame (default: the selected one).")
    scope: str | None = Field(None, description="Scope name: locals (default), globals, arguments, registers…")
    path: str | None = Field(None, description="A value inside, e.g. 'a.b[0]'.")
    names: list[str] | None = Field(None, description="Only these variable names.")
    max_items: int | None = Field(None, ge=1, le=5000, description="At most this many (default 100).")
    start: int = Field(0, ge=0, description="Skip this many (paging).")


#: children past which an indexed value (an array) is read by window, not whole
WINDOWED_CHILDREN = 10_000


async def _variables(ctx: CommandContext, args: VariablesArgs) -> VariablesResult:
    session = session_of(ctx)
    # A call sent while a step's stop is on its way answers that stop (the TUI
    # asks for the locals as soon as the step is under way).
    await session.settle()
    if session.state != SessionState.stopped:
        session._require_state({SessionState.stopped}, "read variables")
    frame_index = session.selected_frame_index if args.frame_index is None else args.frame_index
    scope, scopes = await pick_scope(session, frame_index, args.scope)
    frame_name = (await session.frame(frame_index)).name  # cached with the stack
    ref = scope.ref
    base_path: str | None = None
    if args.path:
        ref, var = await resolve_path(session, scope.ref, args.path)
        base_path = args.path
        if ref <= 0:
            length = await true_length(session, args.path, var.type, frame_index) if len(
                var.value) > settings().max_value_chars else None
            view = variable_view(session, var, args.path, length=length, frame=frame_name)
            return VariablesResult(frame_index=frame_index, scope=scope.name, path=args.path,
                                   scopes=[s.name for s in scopes], variables=[view], total=1)
    # debugpy lists at most a few hundred children of a big container: its true
    # length is asked for at the same time as the children, not one round after.
    length_call = (asyncio.ensure_future(true_length(session, args.path, var.type, frame_index))
                   if args.path and not args.names else None)
    limit = args.max_items or settings().max_items
    # A huge array is read a window at a time: the debugger builds only what is
    # shown (Node built all 10M elements for maxItems=10: 15 GB).
    windowed = bool(args.path and not args.names and var.indexed_count
                    and var.indexed_count > WINDOWED_CHILDREN)
    where: dict[str, str] = {}
    missing: list[str] = []
    try:
        if windowed:
            children = await session.variables(ref, args.start, limit)
        elif args.path is None and args.scope is None and not ctx.view.panes:
            # The TUI shows each scope as its own node; everyone else gets the
            # block scopes' let/const with the function's locals.
            scope, children = await first_locals(session, frame_index)
        else:
            children = await session.variables(ref)
        if args.names and args.path is None and args.scope is None:
            hits, missing = await find_names(session, frame_index, args.names, children)
            children = [var for var, _ in hits]
            where = {var.name: place for var, place in hits if place}
        if args.path and len(children) == 1 and children[0].name in ("", "*") and children[0].ref > 0:
            # A pointer whose one child is the value it points to (delve names it ""):
            # show the fields, as `p.X` would reach them.
            children = await session.variables(children[0].ref)
    except BaseException:
        if length_call is not None:
            length_call.cancel()
        raise
    if not args.path and not args.names:
        children = with_return_value(session, children, frame_name, scope)
    if args.names and not (args.path is None and args.scope is None):
        wanted = set(args.names)
        missing = [n for n in args.names if not any(
            c.name == n or c.name.strip("'\"") == n for c in children)]
        children = [c for c in children if c.name in wanted or c.name.strip("'\"") in wanted]
    total = len(children)
    if length_call is not None:
        length = await length_call
        if length is not None:
            total = max(total, length)
    window = children[args.start: args.start + limit]
    if windowed:
        if len(children) > limit:  # a debugger without paging answered them all
            children = children[args.start: args.start + limit]
        total, window = max(var.indexed_count or 0, args.start + len(children)), children
    views: list[VariableView] = []
    chars = 0
    cut_for_size = False
    for child in window:
        child_path = join_path(base_path, child.name)
        length = None
        # The TUI cuts a value at its pane's width: the note of its true length, one
        # evaluate per big value at every stop, would never be seen there.
        if len(child.value) > settings().max_value_chars and not base_path and not ctx.view.panes:
            length = await true_length(session, child_path, child.type, frame_index)
        view = variable_view(session, child, child_path, length=length, frame=frame_name)
        # What the item costs in the answer (its path, type and all), not a guess:
        # a guess let a drilled-in dict of 5,000 items answer 31,577 characters.
        chars += len(view.model_dump_json(by_alias=True, exclude_defaults=True))
        if views and chars > settings().max_result_chars:
            cut_for_size = True
            break
        views.append(view)
    shown_end = args.start + len(views)
    note = None
    if shown_end < total:
        why = "the answer size cap" if cut_for_size else option_hint(ctx.view, "max_items", limit)
        note = (f"Showing {args.start + 1}-{shown_end} of {total:,} ({why}). "
                f"Pass {option_hint(ctx.view, 'start', shown_end)} for more, or names/path "
                "to narrow it.")
        if total > len(children) and not windowed:
            note += (f" The debugger lists only the first {len(children)}; evaluate an item "
                     f"(e.g. {args.path}[KEY]) for the others.")
    extra = []
    if where:
        extra.append("Found in " + ", ".join(f"{n}: {w}" for n, w in where.items()) + ".")
    if missing:
        looked = ("any scope of this frame (" + ", ".join(s.name for s in scopes)
                  + ")") if args.path is None and args.scope is None else (
                      args.path or scope.name)
        extra.append(f"No {', '.join(missing)} in {looked}. Try another frame "
                     f"({command_name(ctx.view, 'stack')}), or "
                     f"{command_name(ctx.view, 'evaluate')} for an expression.")
    if extra:
        note = " ".join([*([note] if note else []), *extra])
    return VariablesResult(frame_index=frame_index, scope=scope.name, path=base_path,
                           scopes=[s.name for s in scopes], variables=views, total=total,
                           truncated=shown_end < total, note=note)


register(Command(
    id="variables", help="List variables of a frame, or drill into one by path.",
    description="A frame's variables (every local by default). `names` finds names in every "
    "scope; `path` drills into a value ('data.items[2]').",
    args=VariablesArgs, result=VariablesResult, handler=_variables, read_only=True,
    mcp="debug_variables",
    cli=[CliSpec(("locals",), build=lambda p: (
        p.add_argument("path", nargs="?", help="drill into a value, e.g. data.items[0]"),
        p.add_argument("--scope"), p.add_argument("--frame", type=int, dest="frame_index"),
        p.add_argument("--names", nargs="+"), p.add_argument("--max-items", type=int),
        p.add_argument("--start", type=int, default=0)),
        adapt=lambda ns: {k: v for k, v in {"path": ns.path, "scope": ns.scope,
                                              "frame_index": ns.frame_index, "names": ns.names,
                                              "max_items": ns.max_items, "start": ns.start or None}.items()
                          if v is not None})],
    applies_in=STOPPED,
))


class EvaluateArgs(Args):
    expression: str = Field(description="Expression in the program's language; C/Go: `e,x` in hex.")
    frame_index: int | None = Field(None, ge=0, description="Frame to evaluate in (default: selected).")
    context: str = Field("repl", description="repl (default), watch or hover.")
    children: int = Field(0, ge=0, le=200, description="List this many of its children.")
    start: int = Field(0, ge=0, description="Skip this many children (paging).")
    depth: int = Field(1, ge=0, le=4, description="Levels of a C struct's fields shown.")


_ADDRESS_ONLY = re.compile(r"\S.* @ 0x[0-9a-fA-F]+")
_POINTER = re.compile(r"0x[0-9a-fA-F]+")
_DESCRIPTION = re.compile(r"\(.*?\) \$\d+ = (.*)", re.DOTALL)


#: Children read to show a value's fields: more than the answer's budget shows.
FIELDS_READ = 64


async def _fields(session: Session, ref: int, depth: int, budget: int) -> str:
    """`{name = value, …}` of a value's children, `depth` levels deep, in about
    `budget` characters; byte buffers short, deeper structs as `{…}`."""
    parts: list[str] = []
    used = 0
    # A window, not every child: an array of a million ints has a million (and
    # reading them all took lldb-cli 30 s); a struct has far fewer than this.
    kids = await session.variables(ref, 0, FIELDS_READ)
    for kid in kids:
        # Redacted by the field's name (`password = 0x… "x"`) and whole, before
        # a byte buffer is cut short; the answer's text is redacted again.
        value = c_data_value(redact_value(kid.name, kid.value), kid.type)
        if kid.ref > 0 and (_ADDRESS_ONLY.fullmatch(kid.value) or not kid.value):
            value = (await _fields(session, kid.ref, depth - 1, max(budget - used, 40))
                     if depth > 1 else "{…}")
        elif not is_byte_data(kid.type) and len(value) > 80:  # (a byte buffer is short already)
            value = value[:80] + "…"
        part = f"{kid.name} = {value}"
        if parts and used + len(part) > budget:
            more = len(kids) - len(parts)
            parts.append(f"… {more}{'+' if len(kids) >= FIELDS_READ else ''} more")
            break
        parts.append(part)
        used += len(part) + 2
    else:
        if len(kids) >= FIELDS_READ:
            parts.append("… more")
    return "{" + ", ".join(parts) + "}"


async def _with_fields(session: Session, result: Any, depth: int, budget: int) -> str | None:
    """A struct's (or a pointer to one's) value with its fields, for LLDB, whose
    value of a struct is `point @ 0x7ffff7d82040` and of a pointer an address."""
    if depth < 1 or result.ref <= 0 or not adapters.profile(session.adapter).lldb:
        return None
    # lldb's own description (lldb-cli's repl answer): `(point) $0 = (out = 0, …)`
    described = _DESCRIPTION.fullmatch(result.value)
    plain = described.group(1) if described else result.value
    try:
        if _ADDRESS_ONLY.fullmatch(plain) or (described and plain[:1] in "({"):
            return await _fields(session, result.ref, depth, budget)
        address = _POINTER.match(plain)
        # A char * is its string (`0x… "{\"key\": …}"`), not its first char.
        if address and BYTE_POINTER.fullmatch((result.type or "").strip()) \
                and '"' in plain[address.end():]:
            return None
        if address and (result.type or "").rstrip().endswith("*"):
            kids = await session.variables(result.ref)
            # LLDB lists a struct's fields under a pointer to it, and `*p` under
            # a pointer to anything else (an int, a char *).
            if len(kids) == 1 and kids[0].name.startswith("*"):
                return f"{address.group(0)} -> {c_data_value(kids[0].value, kids[0].type)}"
            return f"{address.group(0)} -> " + await _fields(session, result.ref, depth, budget)
    except DebuggerError:
        return None
    return None


#: `expr,x`: the value in hex, as Visual Studio's and VS Code's C/C++ debuggers
#: read it. Only where a comma cannot end a meaningful expression (C's comma
#: operator would drop the left side; Go has none): in Python or JavaScript
#: `a,x` is a tuple or the comma operator, and hex(a) / a.toString(16) exist.
_HEX_SUFFIX = re.compile(r"^(?P<expr>.*\S)\s*,\s*[xX]$", re.DOTALL)
#: an integer or a C character literal standing alone in a rendering, outside quotes
_NUMBER_OR_CHAR = re.compile(r"'(?:[^'\\]|\\[^']*)'|(?<![\w.$])-?\d+(?![\w.])")


def hex_value(value: str) -> str:
    """A rendering with its integers and character literals in hex: `194` ->
    `0xc2`, `'\\xc0'` -> `0xc0`, `{a = 1, b = 300}` -> `{a = 0x1, b = 0x12c}`;
    strings ("...") stay as they are."""
    from .cvalues import lldb_string_bytes

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith("'"):
            data, _ = lldb_string_bytes(token[1:-1])
            return "0x" + data.hex() if len(data) == 1 else token
        number = int(token)
        return f"-0x{-number:x}" if number < 0 else f"0x{number:x}"

    parts = re.split(r'("(?:[^"\\]|\\.)*")', value)
    return "".join(part if n % 2 else _NUMBER_OR_CHAR.sub(one, part)
                   for n, part in enumerate(parts))


async def _evaluate(ctx: CommandContext, args: EvaluateArgs) -> EvaluateResult:
    session = session_of(ctx)
    if not args.expression.strip():
        raise InvalidInput("Give an expression to evaluate, e.g. `print len(items)`.")
    as_hex = (_HEX_SUFFIX.match(args.expression)
              if adapters.profile(session.adapter).values == "native" else None)
    if as_hex is not None:
        args = args.model_copy(update={"expression": as_hex.group("expr")})
    try:
        result = await session.evaluate(args.expression, args.frame_index, args.context)
    except DebuggerError as exc:
        if "NameError" in exc.message and args.context == "repl":
            where = await _frame_named(session, args.frame_index)
            if where:
                exc.message += (f" (evaluated in {where}; {command_name(ctx.view, 'backtrace')} "
                                "lists the frames, and a frame index picks another)")
        raise
    limit = EVALUATE_CHARS if args.context == "repl" else settings().max_value_chars * 4
    length = None
    if len(result.value) > limit and args.context == "repl":
        length = await true_length(session, args.expression, result.type, args.frame_index)
    shown = c_data_value(result.value, result.type, max_bytes=None)
    if args.context == "repl":
        shown = await _with_fields(session, result, args.depth, limit - 100) or shown
    if as_hex is not None:
        described = _DESCRIPTION.fullmatch(shown)  # lldb-cli's `(int) $0 = 194`
        shown = hex_value(described.group(1) if described else shown)
    value, truncated = cap(redact_value(args.expression, shown), limit, length)
    children: list[VariableView] = []
    children_total = None
    if result.ref > 0 and args.context == "repl" and args.children:
        try:
            kids = await session.variables(result.ref)
            children = [variable_view(session, k, join_path(args.expression, k.name), 200)
                        for k in kids[args.start:args.start + args.children]]
            children_total = len(kids)
        except DebuggerError:
            pass
    return EvaluateResult(expression=args.expression, value=value, type=result.type,
                          has_children=result.ref > 0, children=children,
                          children_total=children_total, value_truncated=truncated)


async def _frame_named(session: Any, frame_index: int | None) -> str | None:
    """'frame 1: update_in at dicttoolz.py:297', the frame an expression was
    evaluated in, for an error that depends on it (a name not found)."""
    index = session.selected_frame_index if frame_index is None else frame_index
    try:
        frames, _ = await session.stack(max_frames=index + 1)
    except (DebuggerError, TypeError):
        return None
    if index >= len(frames):
        return None
    frame = frames[index]
    loc = frame.location
    place = f" at {os.path.basename(loc.path)}:{loc.line}" if loc is not None and loc.path else ""
    return f"frame {index}: {frame.name}{place}"


class CompleteArgs(Args):
    text: str = Field(description="What is typed, e.g. 'order.it'.")
    column: int | None = Field(None, ge=0, description="Cursor offset in text (default: its end).")
    frame_index: int | None = Field(None, ge=0, description="Frame (default: selected).")


#: the word a completion without a start replaces (lldb-dap answers whole words)
WORD_AT_END = re.compile(r"[A-Za-z0-9_$]*$")
#: the name being typed at the end of the text: `ware`, `warehouse.she`
NAME_AT_END = re.compile(r"[A-Za-z_][\w.]*$|$")
MAX_COMPLETIONS = 200


async def _complete(ctx: CommandContext, args: CompleteArgs) -> CompletionsResult:
    session = session_of(ctx)
    column = len(args.text) if args.column is None else min(args.column, len(args.text))
    supported, items = await session.completions(args.text, column, args.frame_index)
    if not supported:
        items = await _names_completing(session, args.text[:column], args.frame_index)
    word = len(WORD_AT_END.search(args.text[:column]).group(0))
    views = []
    for item in items[:MAX_COMPLETIONS]:
        if item.start is None:  # the spec: at the cursor; adapters mean the word there
            start, length = column - word, max(item.length, word)
        else:
            start, length = min(item.start, column), item.length
        views.append(CompletionView(label=item.label, text=item.text, start=start,
                                    length=length, type=item.type))
    return CompletionsResult(supported=supported, items=views)


async def _names_completing(session: Session, before: str, frame_index: int | None) -> list[Completion]:
    """Where the debugger does not complete: the names that complete the one being
    typed, from the frame (locals, then the global scopes), or a value's members
    after a dot. Each replaces the word at the cursor."""
    owner, _, prefix = NAME_AT_END.search(before).group(0).rpartition(".")
    scope, scopes = await pick_scope(session, frame_index, None)
    if owner:
        try:
            ref, _ = await resolve_path(session, scope.ref, owner)
        except InvalidInput:
            return []  # not a name of this frame (yet): nothing to complete
        names = [v.name for v in await session.variables(ref)] if ref > 0 else []
    else:
        names = [v.name for v in await session.variables(scope.ref)]
        for other in scopes:
            if other is not scope and other.name.lower().startswith("global"):
                names += [v.name for v in await session.variables(other.ref)]
    fitting = sorted({n for n in names if n.isidentifier() and n.startswith(prefix)})
    return [Completion(label=name, text=name) for name in fitting]


register(Command(
    id="complete", help="Complete an expression as the debugger proposes.",
    description="Completions of `text` at `column` in a frame; supported=false: the frame's "
    "names (a value's members after a dot) that fit.",
    args=CompleteArgs, result=CompletionsResult, handler=_complete, read_only=True,
    mcp="debug_complete",
    cli=[CliSpec(("complete",), build=lambda p: (
        p.add_argument("text", help="what is typed"),
        p.add_argument("--column", type=int), p.add_argument("--frame", type=int, dest="frame_index")))],
    applies_in=STOPPED, tui_action=False, log_activity=False,
))


#: An evaluation answers within an agent's 4 KB budget (the value travels as
#: text and as structured content); drill down with a narrower expression.
EVALUATE_CHARS = 1_500


register(Command(
    id="evaluate", help="Evaluate one expression in the selected frame.",
    description="Evaluate one expression in a frame of the stopped program (it may have side "
    "effects). A buffer's raw bytes: debug_memory_read (callable unlisted).",
    args=EvaluateArgs, result=EvaluateResult, handler=_evaluate, mcp="debug_evaluate",
    cli=[CliSpec(("print",), aliases=(("p",), ("eval",)), build=lambda p: (
        p.add_argument("expression", nargs="+", metavar="EXPRESSION",
                       help="ONE expression: its words are joined with spaces (`print a + b`); "
                       "print each of several expressions with its own call"),
        p.add_argument("--frame", type=int, dest="frame_index"),
        p.add_argument("--depth", type=int, default=None,
                       help="levels of a C struct's fields to show (default 1)")),
        adapt=lambda ns: {"expression": " ".join(ns.expression),
                          **({"frame_index": ns.frame_index} if ns.frame_index is not None else {}),
                          **({"depth": ns.depth} if ns.depth is not None else {})})],
    next_steps=lambda r: ["variables", "next", "continue"],
    applies_in=STOPPED,
))


class SetVariableArgs(Args):
    path: str = Field(description="Variable path, e.g. 'order.items[0]'.")
    value: str = Field(description="New value (an expression).")
    frame_index: int | None = Field(None, ge=0, description="Frame (default: selected).")


async def _set_variable(ctx: CommandContext, args: SetVariableArgs) -> SetVariableResult:
    session = session_of(ctx)
    session._require_state({SessionState.stopped}, "change a variable")
    if session.backend is not None and not session.backend.capabilities.set_variable:
        raise NotSupported(
            f"The {session.adapter or 'current'} debugger cannot change variables; assign it "
            "in the console where the language allows (e.g. `print x = 5` in C through lldb).")
    frame_index = session.selected_frame_index if args.frame_index is None else args.frame_index
    # Locals first, then the frame's other scopes (globals, registers...).
    scope, scopes = await pick_scope(session, frame_index, None)
    candidates = [scope] + [s for s in scopes if s is not scope]
    first_error: DebuggerError | None = None
    for candidate in candidates:
        try:
            container, found = await resolve_container(session, candidate.ref, args.path)
        except InvalidInput as exc:
            first_error = first_error or exc
            continue
        variable = await session.set_variable(container, found.name, args.value, ctx.origin)
        # The answer is the value the debugger reports now, read again from fresh
        # scopes: lldb-dap 19 replies "" for a member it did change, and delve's
        # old scopes keep the old value.
        with contextlib.suppress(DebuggerError):
            fresh = next((s for s in await session.scopes(frame_index)
                          if s.name == candidate.name), None)
            if fresh is not None:
                _, variable = await resolve_container(session, fresh.ref, args.path)
        view = variable_view(session, variable, args.path)
        return SetVariableResult(variable=view,
                                 message=f"{args.path} = {view.value}" +
                                 (f"  ({view.type})" if view.type else ""))
    assert first_error is not None
    raise first_error


register(Command(
    id="set_variable", help="Change a variable's value in the stopped program.",
    description="Set a variable (a path as in debug_variables) to a new value; answers the "
    "value the debugger now reports.",
    args=SetVariableArgs, result=SetVariableResult, handler=_set_variable,
    mcp="debug_set_variable",
    cli=[CliSpec(("set",), build=lambda p: (
        p.add_argument("path", metavar="PATH", help="the variable, e.g. count or order.total"),
        p.add_argument("value", nargs="+", metavar="VALUE", help="the new value (an expression)"),
        p.add_argument("--frame", type=int, dest="frame_index")),
        adapt=lambda ns: {"path": ns.path, "value": " ".join(ns.value),
                          **({"frame_index": ns.frame_index} if ns.frame_index is not None else {})})],
    next_steps=lambda r: ["variables", "continue", "next"],
    applies_in=STOPPED,
))


async def _threads(ctx: CommandContext, args: NoArgs) -> ThreadsResult:
    session = session_of(ctx)
    threads = await session.threads(with_frames=True)
    return ThreadsResult(threads=[
        ThreadView(id=t.id, name=t.name, selected=t.id == session.selected_thread_id,
                   stopped=t.stopped, reason=t.reason, held=t.held, function=t.function,
                   location=t.location)
        for t in threads
    ])


register(Command(
    id="threads", help="List threads.",
    description="The program's threads (goroutines for Go), the selected one marked: each "
    "one's state (running, stopped and why, or `held` at a breakpoint till the next "
    "continue) and, when stopped, its top frame.",
    args=NoArgs, result=ThreadsResult, handler=_threads, read_only=True, mcp="debug_threads",
    cli=[CliSpec(("threads",))],
))


class ThreadSelectArgs(Args):
    thread_id: int = Field(description="Thread id from debug_threads.")


async def _thread_select(ctx: CommandContext, args: ThreadSelectArgs) -> FrameSelected:
    session = session_of(ctx)
    await session.select_thread(args.thread_id, ctx.origin)
    frame = await session.frame(0)
    return FrameSelected(frame=frame_view(frame, True), context=await build_context(session))


register(Command(
    id="thread_select", help="Select a thread; stack and variables follow it.",
    description="Select a thread; later stack, variables and step calls use it.",
    args=ThreadSelectArgs, result=FrameSelected, handler=_thread_select, mcp="debug_select_thread",
    cli=[CliSpec(("thread",), positional=("thread_id",))],
    next_steps=lambda r: ["stack", "context"],
    applies_in=STOPPED,
))


class FrameArgs(Args):
    index: int | None = Field(None, ge=0, description="Frame to select (0 = innermost).")
    offset: int | None = Field(None, description="Move relative: +1 = up (toward the caller), -1 = down.")

    @model_validator(mode="after")
    def _one(self) -> "FrameArgs":
        if self.index is not None and self.offset is not None:
            raise ValueError("give index or offset, not both")
        return self


async def _frame(ctx: CommandContext, args: FrameArgs) -> FrameSelected:
    session = session_of(ctx)
    if args.index is None and args.offset is None:
        frame = await session.frame(None)
        return FrameSelected(frame=frame_view(frame, True), context=await build_context(session))
    target = args.index if args.index is not None else session.selected_frame_index + (args.offset or 0)
    frames, _ = await session.stack(None, max(session.stack_levels, target + 1))
    if target < 0:
        raise InvalidInput("Already at the innermost frame (0).")
    if target >= len(frames):
        raise InvalidInput(f"Already at the outermost frame ({len(frames) - 1}).")
    frame = await session.select_frame(target, ctx.origin)
    return FrameSelected(frame=frame_view(frame, True), context=await build_context(session))


register(Command(
    id="frame", help="Select a stack frame (or move up/down).",
    description="Select a frame by index, or move by offset (+1 toward the caller). Later "
    "variables and evaluate calls use it.",
    args=FrameArgs, result=FrameSelected, handler=_frame, mcp="debug_frame",
    cli=[
        CliSpec(("frame",), build=lambda p: p.add_argument("index", nargs="?", type=int),
                adapt=lambda ns: {} if ns.index is None else {"index": ns.index}),
        CliSpec(("up",), fixed={"offset": 1}),
        CliSpec(("down",), fixed={"offset": -1}),
    ],
    keys=(), next_steps=lambda r: ["variables", "context"],
    applies_in=STOPPED,
))
