"""What the commands share: the views they build from a session (status,
frames, variables, the context of a stop), capping and redaction of program
data, and how paths are resolved (a caller's relative file, a variable path
such as `order.items[0]`)."""

from __future__ import annotations

import linecache
import os
import re
from typing import Any

from backends import adapters
from backends.errors import CommandFailed, DebuggerError, InvalidInput
from backends.models import Variable

from ..config import settings
from ..models import CURRENT_CLIENT, SessionState
from ..redact import redact, redact_named
from ..session import Session
from .cvalues import c_data_value, is_byte_data
from .registry import CURRENT_VIEW, CommandContext, View
from .views import ContextResult, FrameView, SessionStatus, SourceLineView, VariableView


def redact_text(text: str) -> str:
    return redact(text) if settings().redact else text


def redact_value(name: str, text: str) -> str:
    """Values are also judged by their name: `password = 'hunter2'` is a secret."""
    return redact_named(name, text) if settings().redact else text


def cap(text: str, limit: int | None = None, true_length: int | None = None,
        rendered_length: int | None = None) -> tuple[str, bool]:
    """`text` cut at `limit`, with a note of the length cut. `true_length`: the
    value's real length when the debugger's rendering was itself cut (debugpy
    renders at most ~64 KB of a string), so the note tells the truth.
    `rendered_length`: the rendering's length when `text` is already a cut of it."""
    limit = limit or settings().max_value_chars
    full = max(len(text), rendered_length or 0)
    if full <= limit:
        return text, False
    if true_length is not None and true_length > full - 2:
        return text[:limit] + f"… ({true_length:,} chars in all)", True
    return text[:limit] + f"… ({full - limit} more chars)", True


_PLAIN_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*|\[[^\[\]()]*\])*")
_SIZED_TYPES = {"str", "bytes", "list", "dict", "set", "frozenset", "tuple", "deque",
                "OrderedDict", "defaultdict", "Counter", "bytearray"}


async def true_length(session: Session, expression: str, type_name: str | None,
                      frame_index: int | None = None) -> int | None:
    """len(expression) in the program, for Python values whose rendering or
    children list the debugger cut; only for plain paths, which have no side
    effects when evaluated again. None when unknown."""
    if adapters.profile(session.adapter).values != "python" or type_name not in _SIZED_TYPES:
        return None
    if not _PLAIN_PATH.fullmatch(expression.strip()):
        return None
    try:
        result = await session.evaluate(f"len({expression})", frame_index, "watch")
        return int(result.value)
    except (DebuggerError, ValueError):
        return None


def is_ray_root(session: Any) -> bool:
    """A Ray tree's root: it stands for the cluster and has no program of its own
    (commands/ray.make_root marks it with its dashboard; a worker has a backend)."""
    return session is not None and "ray" in session.metadata and session.backend is None


def status_of(session: Session) -> SessionStatus:
    backend = session.backend
    image = session.undebugged_exec() if session.state == SessionState.running else None
    return SessionStatus(
        session=session.name,
        state=session.state.value,
        adapter=session.adapter,
        program=session.program,
        pid=backend.debuggee_pid if backend else None,
        host_pid=os.getpid(),
        stop=session.stop,
        exit_code=session.exit_code,
        terminated_reason=session.terminated_reason,
        breakpoints=len(session.breakpoints),
        output_cursor=session.output.next_seq,
        clients=list(session.clients.values()),
        selected_thread_id=session.selected_thread_id,
        selected_frame_index=session.selected_frame_index,
        post_mortem=bool(backend and backend.post_mortem),
        root_without_program=is_ray_root(session),
        python=session.metadata.get("python"),
        python_short=session.metadata.get("python_short"),
        capabilities=[name for name, on in backend.capabilities if on is True] if backend else [],
        message=f"Running, undebugged: {image}" if image else None,
    )


def frame_view(frame, selected: bool = False) -> FrameView:
    loc = frame.location
    return FrameView(
        index=frame.index, name=frame.name,
        file=loc.path if loc else None, line=loc.line if loc else None,
        selected=selected, has_source=bool(loc and loc.path and os.path.exists(loc.path)),
    )


#: Characters kept past the cut before redacting, so a secret that straddles the
#: cut is still recognised whole (and then cut).
REDACT_MARGIN = 512


def variable_view(session: Session, var: Variable, path: str, limit: int | None = None,
                  length: int | None = None, frame: str | None = None,
                  short_bytes: bool = True) -> VariableView:
    limit = limit or settings().max_value_chars
    # A byte buffer: its first bytes with C escapes, and its length.
    rendered = var.value
    if short_bytes and is_byte_data(var.type):
        # Redacted whole before it is cut to its first bytes: a secret the cut
        # splits (`"db_password\":\"hu…`) would no longer be recognised.
        rendered = c_data_value(redact_value(var.name, rendered), var.type)
    shown = rendered
    if len(shown) > limit + REDACT_MARGIN:
        # Redacting a 64 KB rendering to show 1,000 characters cost ~10 ms a stop.
        shown = shown[:limit + REDACT_MARGIN]
    value, truncated = cap(redact_value(var.name, shown), limit, length, len(rendered))
    changed = session.note_value(path, var.value, frame)
    count = None
    if var.named_count or var.indexed_count:
        count = (var.named_count or 0) + (var.indexed_count or 0)
    return VariableView(
        name=var.name, value=value, type=var.type, path=path, has_children=var.ref > 0,
        child_count=count, changed=changed, value_truncated=truncated,
    )


#: how the return value of a step out is named among the caller's locals
RETURN_VALUE_NAME = "(Return Value)"


def with_return_value(session: Session, children: list[Variable], frame_name: str | None,
                      scope: Any) -> list[Variable]:
    """The caller's locals after a step out, the returned value first (as lldb-dap
    lists it in later versions), unless the debugger lists it already (debugpy's
    "(return) f")."""
    stop = session.stop
    if (stop is None or stop.return_value is None or frame_name != stop.function
            or getattr(scope.kind, "value", scope.kind) != "locals"):
        return children
    if any(c.name.startswith("(return") or c.name == RETURN_VALUE_NAME for c in children):
        return children
    return [Variable(name=RETURN_VALUE_NAME, value=stop.return_value, type=stop.return_type),
            *children]


def split_path(path: str) -> list[str]:
    """`a.b[0]['k']` -> ['a', 'b', '0', "'k'"]. Dots inside brackets stay."""
    parts: list[str] = []
    buf = ""
    depth = 0
    path = path.replace("->", ".")  # C's member of a pointer: the debuggers' paths walk through it
    for ch in path:
        if ch == "[" and depth == 0:
            if buf:
                parts.append(buf)
            buf = ""
            depth = 1
            continue
        if ch == "]" and depth == 1:
            parts.append(buf)
            buf = ""
            depth = 0
            continue
        if ch == "." and depth == 0:
            if buf:
                parts.append(buf)
            buf = ""
            continue
        buf += ch
    if buf:
        parts.append(buf)
    return parts


def join_path(parent: str | None, name: str) -> str:
    if not parent:
        return name
    if name.startswith("["):  # native array elements come named "[0]" already
        return f"{parent}{name}"
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return f"{parent}.{name}"
    return f"{parent}[{name}]"


def _match_child(children: list[Variable], segment: str) -> Variable | None:
    candidates = [segment, segment.strip("'\""), f"'{segment}'", f'"{segment}"', f"[{segment}]"]
    for cand in candidates:
        for child in children:
            if child.name == cand:
                return child
    return None


async def pick_scope(session: Session, frame_index: int | None, scope: str | None):
    scopes = await session.scopes(frame_index)
    if not scopes:
        raise CommandFailed("This frame has no variable scopes (the adapter reported none).")
    if scope is None:
        for s in scopes:
            if s.kind.value == "locals":
                return s, scopes
        return scopes[0], scopes
    wanted = scope.lower()
    for s in scopes:
        if s.name.lower() == wanted or s.kind.value == wanted or s.name.lower().startswith(wanted):
            return s, scopes
    names = ", ".join(s.name for s in scopes)
    raise InvalidInput(f"No scope {scope!r} in this frame. Scopes: {names}.")


def _is_block(scope) -> bool:
    # CDP's scopes of `let`/`const` blocks and catch clauses; each stands before
    # the function's Local scope, innermost first.
    return scope.name.lower().startswith(("block", "catch"))


async def first_locals(session: Session, frame_index: int | None) -> tuple[Any, list[Variable]]:
    """The locals an agent sees first: the frame's locals scope, with the
    variables of the block scopes inside it (JavaScript `let`/`const` of the
    loop or block being run) before them, an inner name hiding an outer one,
    as the program sees them. Answers the locals scope and the variables."""
    scope, scopes = await pick_scope(session, frame_index, None)
    blocks = []
    for s in scopes:
        if s is scope:
            break
        if _is_block(s):
            blocks.append(s)
    if not blocks:
        return scope, await session.variables(scope.ref)
    merged: dict[str, Variable] = {}
    for s in [*blocks, scope]:
        for var in await session.variables(s.ref):
            merged.setdefault(var.name, var)
    return scope, list(merged.values())


#: debugpy's groups of a scope's names (kept grouped: the dunder ones).
_GROUP_SUFFIX = " variables"


async def find_names(session: Session, frame_index: int | None, names: list[str],
                     first: list[Variable]) -> tuple[list[tuple[Variable, str]], list[str]]:
    """`names` looked for in every scope of the frame and every group in one
    (debugpy's "special variables"), after the locals seen first. Answers each
    found variable with where it was found ("" for the first locals), and the
    names found nowhere."""
    wanted = list(dict.fromkeys(names))

    def match(var: Variable) -> str | None:
        for name in wanted:
            if var.name == name or var.name.strip("'\"") == name:
                return name
        return None

    found: dict[str, tuple[Variable, str]] = {}

    def take(children: list[Variable], where: str) -> list[Variable]:
        groups = []
        for var in children:
            name = match(var)
            if name is not None and name not in found:
                found[name] = (var, where)
            elif (not var.value and var.ref > 0 and var.name.endswith(_GROUP_SUFFIX)):
                groups.append(var)
        return groups

    pending = take(first, "")
    _, scopes = await pick_scope(session, frame_index, None)
    scope_queue = list(scopes)
    while len(found) < len(wanted) and (pending or scope_queue):
        if pending:
            group = pending.pop(0)
            take(await session.variables(group.ref), group.name)
            continue
        s = scope_queue.pop(0)
        try:
            children = await session.variables(s.ref)
        except DebuggerError:
            continue
        pending.extend(take(children, s.name))
    return list(found.values()), [n for n in wanted if n not in found]


def command_name(view: View, command_id: str) -> str:
    """How the caller names a command: the MCP tool for an agent, else the
    CLI words (the command id for one without)."""
    from . import registry

    cmd = registry.REGISTRY.get(command_id)
    if cmd is None:
        return command_id
    if view.names == "mcp" and cmd.mcp:
        return cmd.mcp
    if cmd.cli:
        return " ".join(cmd.cli[0].path)
    return command_id


async def resolve_path(session: Session, ref: int, path: str) -> tuple[int, Variable]:
    current_ref = ref
    found: Variable | None = None
    walked: list[str] = []
    for segment in split_path(path):
        if current_ref <= 0:
            raise InvalidInput(f"{'.'.join(walked) or path} has no children to walk into.")
        if found is not None and segment.isdigit() and (found.indexed_count or 0) > 10_000:
            # one element of a huge array: read it alone, not all of them
            children = await session.variables(current_ref, int(segment), 1)
        else:
            children = await session.variables(current_ref)
        found = _match_child(children, segment)
        if found is None and len(children) == 1 and children[0].name in ("", "*") and children[0].ref > 0:
            children = await session.variables(children[0].ref)  # through a pointer
            found = _match_child(children, segment)
        if found is None:
            sample = ", ".join(c.name for c in children[:20])
            raise InvalidInput(
                f"No {segment!r} under {'.'.join(walked) or 'the scope'}. Children: {sample}"
                + ("…" if len(children) > 20 else "") + "."
            )
        walked.append(segment)
        current_ref = found.ref
    assert found is not None
    return current_ref, found


async def resolve_container(session: Session, ref: int, path: str) -> tuple[int, Variable]:
    """The container that holds the value at `path` (its variables reference) and
    the value itself, named as the debugger names it ("[0]", "'key'")."""
    path = path.replace("->", ".")
    segments = split_path(path)
    if not segments:
        raise InvalidInput("Give the path of a variable, e.g. 'count' or 'order.items[0]'.")
    parent_ref = ref
    if len(segments) > 1:
        parent_ref, parent = await resolve_path(session, ref, path[: _parent_end(path)])
        if parent_ref <= 0:
            raise InvalidInput(f"{parent.name} has no members to change.")
    children = await session.variables(parent_ref)
    found = _match_child(children, segments[-1])
    if found is None and len(children) == 1 and children[0].name in ("", "*") and children[0].ref > 0:
        parent_ref = children[0].ref  # through a pointer
        children = await session.variables(parent_ref)
        found = _match_child(children, segments[-1])
    if found is None:
        sample = ", ".join(c.name for c in children[:20])
        raise InvalidInput(f"No {segments[-1]!r} there. Names: {sample}" +
                           ("…" if len(children) > 20 else "") + ".")
    return parent_ref, found


def _parent_end(path: str) -> int:
    """Where the parent part of `path` ends: before its last `.name` or `[index]`."""
    depth = 0
    for i in range(len(path) - 1, -1, -1):
        ch = path[i]
        if ch == "]":
            depth += 1
        elif ch == "[":
            depth -= 1
            if depth == 0:
                return i
        elif ch == "." and depth == 0:
            return i
    return len(path)


def read_source(path: str, line: int, around: int) -> list[SourceLineView]:
    from ..paths import source_problem

    if not path or source_problem(path):  # (one stat: a missing file is a problem too)
        return []
    linecache.checkcache(path)
    start = max(1, line - around)
    out: list[SourceLineView] = []
    for n in range(start, line + around + 1):
        text = linecache.getline(path, n)
        if not text and n > line:
            break
        # A source line can hold a secret too (password = "..."): redacted like output.
        out.append(SourceLineView(line=n, text=redact_text(text.rstrip("\n")[:300]),
                                  current=n == line))
    return out


def _is_def(source: list[SourceLineView], line: int) -> bool:
    current = next((s.text for s in source if s.line == line), "")
    return current.lstrip().startswith(("def ", "async def ", "function ", "func "))


def _body_after(path: str, line: int, count: int) -> list[SourceLineView]:
    """The `def` line and the body's first `count - 1` lines, a docstring left out."""
    below = read_source(path, line + count + 40, count + 40)
    out = [s for s in below if s.line >= line]
    shown: list[SourceLineView] = out[:1]
    quote = None
    for s in out[1:]:
        text = s.text.strip()
        if quote is None and len(shown) == 1 and text[:3] in ('"""', "'''"):
            quote = text[:3]
            if len(text) >= 6 and text.endswith(quote):
                quote = "done"
            continue
        if quote not in (None, "done"):
            if text.endswith(quote):
                quote = "done"
            continue
        shown.append(s)
        if len(shown) >= count:
            break
    return shown


def others_activity(session: Session, origin: str | None, limit: int = 5) -> list:
    """What other clients did since this client's last call, so a person's moves
    reach the agent's next answer (and the reverse) without a separate call;
    each move is told once."""
    if origin is None:
        return []
    client = CURRENT_CLIENT.get()
    if client is None:
        return []
    return session.others_since_last_call(client, limit)


async def build_context(session: Session, lines: int | None = None, frame_index: int | None = None,
                        with_locals: bool = True, origin: str | None = None,
                        embedded: bool = False) -> ContextResult:
    """Where the program is. `embedded`: inside an answer that carries the stop
    itself (a step's, a launch's), so the stop is not said twice."""
    lines = settings().context_lines if lines is None else lines
    await session.settle()  # a stop on its way (a step just sent) is the one to show
    result = ContextResult(session=session.name, state=session.state.value,
                           stop=None if embedded else session.stop,
                           exit_code=session.exit_code, thread_id=session.selected_thread_id,
                           others=others_activity(session, origin))
    if session.state != SessionState.stopped:
        return result
    try:
        frame = await session.frame(frame_index)
    except DebuggerError as exc:
        result.source_note = str(exc)
        return result
    idx = session.selected_frame_index if frame_index is None else frame_index
    result.frame = frame_view(frame, selected=True)
    loc = frame.location
    if loc and loc.path and loc.line:
        result.source = read_source(loc.path, loc.line, lines)
        if result.source and _is_def(result.source, loc.line):
            # A function breakpoint stops on its `def`: what follows (past the
            # docstring) is what the person or agent wants to read, not what precedes.
            result.source = _body_after(loc.path, loc.line, 2 * lines + 1)
        bp_lines = {bp.line or bp.spec.line for bp in session.breakpoints.values()
                    if bp.spec.path == loc.path and bp.set_by != "session"}
        for sl in result.source:
            sl.breakpoint = sl.line in bp_lines
        if not result.source:
            result.source_note = f"Source not available: {loc.path}"
    elif loc and loc.source_reference and session.backend:
        try:
            text = await session.backend.source(loc.source_reference)
            all_lines = text.splitlines()
            lo = max(1, loc.line - lines)
            result.source = [
                SourceLineView(line=n, text=all_lines[n - 1][:300], current=n == loc.line)
                for n in range(lo, min(len(all_lines), loc.line + lines) + 1)
            ]
        except DebuggerError:
            result.source_note = "No source for this frame."
    else:
        result.source_note = "No source for this frame (library or generated code)."
    if with_locals:
        try:
            scope, children = await first_locals(session, idx)
            children = with_return_value(session, children, frame.name, scope)
            # An answer that carries a stop stays small: short values, and as
            # many locals as fit; debug_variables has the rest.
            value_limit, budget = (160, 1_200) if embedded else (None, 6_000)
            used = 0
            unchanged = 0
            previous = None
            client = CURRENT_CLIENT.get()
            if embedded and client is not None:
                # A step answers what changed: the locals this client saw in
                # this frame at its last answer are left out when they are the same.
                key = (session.selected_thread_id, frame.name,
                       loc.path if loc else None)
                # The same stop told again (an await after the launch's answer) is told whole.
                key = (*key, session.run_generation)
                previous = session.seen_locals.get(client)
                previous = previous[1] if previous and previous[0][:3] == key[:3] and \
                    previous[0][3] != key[3] else None
                session.seen_locals[client] = (key, {v.name: v.value for v in children})
                result._same_frame = previous is not None
                if previous is not None and loc is not None:
                    # The lines before were in the last answer: the new line and what follows.
                    result.source = [s for s in result.source if loc.line <= s.line <= loc.line + 1]
            for var in children[:40]:
                if previous is not None and previous.get(var.name) == var.value:
                    unchanged += 1
                    continue
                # A rendering this long was probably cut by the debugger itself:
                # its true length is asked for (one evaluation) by debug_context,
                # not at every step, which must stay fast.
                length = None
                if len(var.value) > 10_000 and not embedded:
                    length = await true_length(session, var.name, var.type, idx)
                view = variable_view(session, var, var.name, value_limit, length, frame.name)
                if len(var.value) > 10_000 and length is None and view.value_truncated:
                    view.value = view.value.rsplit("… (", 1)[0] + \
                        f"… (at least {len(var.value):,} chars; debug_variables has its length)"
                used += len(view.name) + len(view.value) + len(view.type or "") + 10
                if result.locals and used > budget:
                    break
                result.locals.append(view)
            more = len(children) - len(result.locals) - unchanged
            listing = command_name(CURRENT_VIEW.get(), "variables")
            if unchanged:
                result.locals_note = (f"{unchanged} unchanged" + (f", {more} more" if more else "")
                                      + f" ({listing})")
            elif more > 0:
                result.locals_note = f"{more} more locals; {listing} lists them."
        except DebuggerError as exc:
            result.locals_note = str(exc)
    return result


STOPPED = frozenset({"stopped"})
RUNNING = frozenset({"running"})
LIVE = frozenset({"starting", "running", "stopped"})


def session_of(ctx: CommandContext) -> Session:
    assert ctx.session is not None
    return ctx.session


def abs_path(ctx: CommandContext, path: str) -> str:
    """A caller's path, made absolute and normal where it enters (the command
    layer knows the caller's directory); nothing below normalizes it again."""
    path = os.path.expanduser(path)
    if os.path.isabs(path):
        return os.path.normpath(path)
    base = ctx.client_cwd or (ctx.session.cwd if ctx.session else os.getcwd())
    return os.path.normpath(os.path.join(base, path))


def option_hint(view: View, name: str, value: object) -> str:
    """An argument as the caller's front end spells it: `--since 3` on the command
    line, `since: 3` for an agent (MCP's camelCase)."""
    from pydantic.alias_generators import to_camel

    if view.names == "cli":
        return f"`--{name.replace('_', '-')} {value}`"
    return f"`{to_camel(name)}: {value}`"


def parse_location(text: str) -> tuple[str, int]:
    match = re.fullmatch(r"(.+):(\d+)", text.strip())
    if not match:
        raise InvalidInput(f"Expected FILE:LINE (e.g. app.py:12), got {text!r}.")
    return match.group(1), int(match.group(2))


def parse_line_location(text: str) -> tuple[str, int]:
    """FILE:LINE, or a bare LINE: ("", LINE), a line of the current frame's file
    (run to it, jump there), as pdb's `until 18` and gdb's `jump 18` take it."""
    if text.strip().isdigit():
        return "", int(text.strip())
    try:
        return parse_location(text)
    except InvalidInput:
        raise InvalidInput(f"Expected LINE or FILE:LINE (e.g. 12 or app.py:12), got {text!r}.") from None


def after_stop(result: Any) -> list[str]:
    status = getattr(result, "status", None) or getattr(result, "state", None)
    if status == "stopped":
        return ["variables", "next", "continue"]
    if status == "running":
        return ["await", "pause", "output"]
    if status in ("terminated",):
        return ["output", "launch"]
    return ["status"]
