"""Every command, declared once. Front ends are generated from these."""

from __future__ import annotations

import argparse
import asyncio
import linecache
import os
import platform
import re
import shlex
import sys
import time
from typing import Any

from pydantic import Field, model_validator

from backends import adapters
from backends.errors import CommandFailed, DebuggerError, InvalidInput, NotSupported
from backends.models import AttachRequest, BreakpointSpec, LaunchRequest, Variable

from .. import paths, persist
from ..config import settings
from ..persist import add_note
from ..redact import redact, redact_named
from ..session import Session, SessionState
from .registry import Args, CliSpec, Command, CommandContext, NoArgs, register
from .views import (
    ActivityResult,
    AdapterView,
    BreakpointList,
    BreakpointResult,
    BreakpointsRemoved,
    ContextResult,
    DoctorResult,
    EvaluateResult,
    FrameSelected,
    FrameView,
    OutputResult,
    RawCommandResult,
    RunResult,
    ScriptResult,
    SessionList,
    SessionListEntry,
    SessionStatus,
    SourceLineView,
    StackResult,
    ThreadsResult,
    ThreadView,
    VariablesResult,
    VariableView,
)

# ============================================================================ helpers


def _redact(text: str) -> str:
    return redact(text) if settings().redact else text


def _redact_value(name: str, text: str) -> str:
    """Values are also judged by their name: `password = 'hunter2'` is a secret."""
    return redact_named(name, text) if settings().redact else text


def cap(text: str, limit: int | None = None) -> tuple[str, bool]:
    limit = limit or settings().max_value_chars
    if len(text) <= limit:
        return text, False
    return text[:limit] + f"… ({len(text) - limit} more chars)", True


def status_of(session: Session) -> SessionStatus:
    backend = session.backend
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
    )


def frame_view(frame, selected: bool = False) -> FrameView:
    loc = frame.location
    return FrameView(
        index=frame.index, name=frame.name,
        file=loc.path if loc else None, line=loc.line if loc else None,
        selected=selected, has_source=bool(loc and loc.path and os.path.exists(loc.path)),
    )


def _value_tracker(session: Session) -> tuple[dict[str, str], dict[str, str]]:
    """Values seen at this stop and at the previous one, keyed by path, for
    'changed since the last stop' highlighting."""
    meta = session.metadata
    gen = session.run_generation
    if meta.get("values_gen") != gen:
        meta["values_prev"] = meta.get("values_now", {}) if meta.get("values_gen") is not None else {}
        meta["values_now"] = {}
        meta["values_gen"] = gen
    return meta["values_now"], meta["values_prev"]


def variable_view(session: Session, var: Variable, path: str) -> VariableView:
    value, truncated = cap(_redact_value(var.name, var.value))
    now, prev = _value_tracker(session)
    now[path] = var.value
    changed = path in prev and prev[path] != var.value
    count = None
    if var.named_count or var.indexed_count:
        count = (var.named_count or 0) + (var.indexed_count or 0)
    return VariableView(
        name=var.name, value=value, type=var.type, path=path, has_children=var.ref > 0,
        child_count=count, changed=changed, value_truncated=truncated,
    )


def split_path(path: str) -> list[str]:
    """`a.b[0]['k']` -> ['a', 'b', '0', "'k'"]. Dots inside brackets stay."""
    parts: list[str] = []
    buf = ""
    depth = 0
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


async def resolve_path(session: Session, ref: int, path: str) -> tuple[int, Variable]:
    current_ref = ref
    found: Variable | None = None
    walked: list[str] = []
    for segment in split_path(path):
        if current_ref <= 0:
            raise InvalidInput(f"{'.'.join(walked) or path} has no children to walk into.")
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


def read_source(path: str, line: int, around: int) -> list[SourceLineView]:
    if not path or not os.path.exists(path):
        return []
    linecache.checkcache(path)
    start = max(1, line - around)
    out: list[SourceLineView] = []
    for n in range(start, line + around + 1):
        text = linecache.getline(path, n)
        if not text and n > line:
            break
        out.append(SourceLineView(line=n, text=text.rstrip("\n")[:300], current=n == line))
    return out


def others_activity(session: Session, origin: str | None, limit: int = 5,
                    window: float = 300.0) -> list:
    """The latest things other clients did, so a person's moves reach the agent's
    next answer (and the reverse) without a separate call."""
    if origin is None:
        return []
    since = time.time() - window
    picked = [e for e in session.activity if e.origin != origin and e.at >= since]
    return picked[-limit:]


async def build_context(session: Session, lines: int | None = None, frame_index: int | None = None,
                        with_locals: bool = True, origin: str | None = None) -> ContextResult:
    lines = settings().context_lines if lines is None else lines
    result = ContextResult(session=session.name, state=session.state.value, stop=session.stop,
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
        bp_lines = {bp.line or bp.spec.line for bp in session.breakpoints.values()
                    if bp.spec.path == loc.path}
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
            scope, _ = await pick_scope(session, idx, None)
            children = await session.variables(scope.ref)
            limit = 40
            result.locals = [variable_view(session, v, v.name) for v in children[:limit]]
            if len(children) > limit:
                result.locals_note = f"{len(children) - limit} more locals; use `locals` to list them."
        except DebuggerError as exc:
            result.locals_note = str(exc)
    return result


STOPPED = frozenset({"stopped"})
RUNNING = frozenset({"running"})
LIVE = frozenset({"starting", "running", "stopped"})


def _session(ctx: CommandContext) -> Session:
    assert ctx.session is not None
    return ctx.session


def _abs(ctx: CommandContext, path: str) -> str:
    path = os.path.expanduser(path)
    if os.path.isabs(path):
        return os.path.normpath(path)
    base = ctx.client_cwd or (ctx.session.cwd if ctx.session else os.getcwd())
    return os.path.normpath(os.path.join(base, path))


def parse_location(text: str) -> tuple[str, int]:
    match = re.fullmatch(r"(.+):(\d+)", text.strip())
    if not match:
        raise InvalidInput(f"Expected FILE:LINE (e.g. app.py:12), got {text!r}.")
    return match.group(1), int(match.group(2))


def _after_stop(result: Any) -> list[str]:
    status = getattr(result, "status", None) or getattr(result, "state", None)
    if status == "stopped":
        return ["context", "variables", "next", "step", "continue"]
    if status == "running":
        return ["await", "pause", "output"]
    if status in ("terminated",):
        return ["output", "launch"]
    return ["status"]


# ============================================================================ session lifecycle


#: Where "stop on entry" stops in a native program: its main function.
ENTRY_FUNCTIONS = {"lldb-dap": "main", "lldb-cli": "main", "dlv": "main.main"}


class LaunchArgs(Args):
    program: str = Field("", description="Program to debug: a .py file, a .js/.mjs/.cjs file, a native "
                         "or Go binary. With launchConfig: optional, and it stands for ${file}.")
    args: list[str] = Field(default_factory=list, description="Arguments for the program.")
    cwd: str | None = Field(None, description="Working directory (default: the caller's).")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    adapter: str | None = Field(None, description="debugpy, lldb-dap, lldb-cli, dlv or node (default: by program type).")
    stop_on_entry: bool = Field(False, description="Stop at the program's first line (native programs: at main).")
    launch_config: str | None = Field(None, description="Name of a configuration in .vscode/launch.json.")
    session_name: str | None = Field(None, description="Name for the new session (default: from the program).")
    breakpoints: list[str] = Field(default_factory=list, description="Breakpoints to set before start, as FILE:LINE.")


async def _launch(ctx: CommandContext, args: LaunchArgs) -> SessionStatus:
    base = args.cwd and _abs(ctx, args.cwd) or ctx.client_cwd or os.getcwd()
    caller_base = base
    request_extra: dict[str, Any] = {}
    program = args.program
    prog_args = list(args.args)
    adapter_hint = args.adapter
    env = dict(args.env)
    stop_on_entry = args.stop_on_entry
    notes: list[str] = []
    python_module = False
    if not program and not args.launch_config:
        raise InvalidInput("Give the program to debug (e.g. app.py), or launchConfig: the name of "
                           "a configuration in .vscode/launch.json.")
    if args.launch_config:
        # .vscode/launch.json (launch_json.py). What the caller gives itself wins
        # over the configuration; a given PROGRAM also stands for ${file}.
        from ..launch_json import resolve_launch_config

        provided = {name for name in ("program", "args") if getattr(args, name)}
        cfg = resolve_launch_config(args.launch_config, base, current_file=args.program or None,
                                    provided=provided)
        notes = [f"launch.json {cfg.name!r}: {w}" for w in cfg.warnings]
        if cfg.request == "attach":
            return await _attach_from_launch_json(ctx, args, cfg, notes)
        if program and not os.path.isabs(program) and os.path.exists(os.path.join(base, program)):
            program = os.path.join(base, program)
        program = program or cfg.program or ""
        prog_args = prog_args or cfg.args
        adapter_hint = adapter_hint or cfg.adapter
        request_extra = dict(cfg.extra)
        env = {**cfg.env, **args.env}
        stop_on_entry = stop_on_entry or cfg.stop_on_entry
        base = base if args.cwd else (cfg.cwd or base)
        if not program and (cfg.module or "code" in cfg.extra):
            # python -m MODULE: no file to check; the session is named after the module.
            python_module = True
            program = os.path.join(base, cfg.module or "code")
    # `node [--inspect-brk=...] script.js args` -> the script, with node's own flags kept.
    if os.path.basename(program) in ("node", "nodejs"):
        flags = [a for a in prog_args if a.startswith("-")]
        rest = [a for a in prog_args if not a.startswith("-")]
        if not rest:
            raise InvalidInput("Give the script to run: node [FLAGS] SCRIPT.js [ARGS].")
        program, prog_args = rest[0], rest[1:]
        request_extra.setdefault("runtimeArgs", [f for f in flags if not f.startswith("--inspect")])
        adapter_hint = adapter_hint or "node"
    program_path = program if os.path.isabs(program) else os.path.join(base, program)
    if not os.path.exists(program_path) and not python_module:
        found = None
        if os.sep not in program:
            import shutil

            found = shutil.which(program)
        if not found:
            raise InvalidInput(
                f"No such program: {program_path}. Check the path (relative paths are resolved "
                f"against {base})."
            )
        program_path = found
    program_path = os.path.normpath(program_path)
    adapter = adapters.select_adapter(adapter_hint, program_path)
    specs: list[BreakpointSpec] = []
    for text in args.breakpoints:
        file, line = parse_location(text)
        path = file if os.path.isabs(file) else os.path.join(caller_base, file)
        specs.append(BreakpointSpec(path=os.path.normpath(path), line=line))
    session = await ctx.hub.create_session(args.session_name, hint=program_path)
    ctx.session = session
    session.cwd = base
    try:
        for note in notes:
            add_note(session, note)
        # Breakpoints saved by the last session of this program (persist.py).
        await persist.track(session, program_path, base)
        for spec in specs:
            if not any(bp.spec.path == spec.path and bp.spec.line == spec.line
                       for bp in session.breakpoints.values()):
                await session.add_breakpoint(spec, ctx.origin)
        if stop_on_entry and adapter in ENTRY_FUNCTIONS:
            # A native program's entry point is the loader's _start, with no source:
            # stop at main instead, as gdb's `start` and cppdbg's stopAtEntry do.
            entry = await session.add_breakpoint(
                BreakpointSpec(function=ENTRY_FUNCTIONS[adapter]), "session")
            session.entry_breakpoint_id = entry.id
            stop_on_entry = False
        request = LaunchRequest(
            program=program_path, args=prog_args, cwd=base, env=env,
            stop_on_entry=stop_on_entry, extra=request_extra,
        )
        await session.launch(request, adapter, ctx.origin)
    except BaseException:
        await ctx.hub.close_session(session.name)
        raise
    ctx.hub.update_meta(session)
    return status_of(session)


register(Command(
    id="launch", help="Start a program under the debugger in a new session.",
    description="Launch a program under the debugger and make it the current session. "
    "Picks the adapter by program type unless `adapter` is given. Returns the session status; "
    "then add breakpoints and call debug_continue, or debug_wait for the first stop.",
    args=LaunchArgs, result=SessionStatus, handler=_launch, needs_session=False,
    creates_session=True, mcp="debug_launch", tui_action=False,
    next_steps=lambda r: ["breakpoint_add", "await", "continue"],
))


class AttachArgs(Args):
    pid: int | None = Field(None, description="Process id to attach to.")
    host: str | None = Field(None, description="Host of a listening adapter or inspector.")
    port: int | None = Field(None, description="Port of a listening adapter or inspector.")
    adapter: str | None = Field(None, description="debugpy, lldb-dap, lldb-cli, dlv or node.")
    session_name: str | None = Field(None, description="Name for the new session.")
    program: str | None = Field(None, description="The executable, for symbols (native attach).")
    wait_for: str | None = Field(None, description="Wait for a process with this name to start (lldb).")

    @model_validator(mode="after")
    def _one_target(self) -> "AttachArgs":
        given = [n for n, v in (("pid", self.pid), ("host/port", self.port), ("waitFor", self.wait_for)) if v]
        if len(given) > 1:
            raise ValueError(f"give only one of pid, host+port, waitFor (got {', '.join(given)})")
        if not given:
            raise ValueError("give pid, or host and port, or waitFor")
        if self.host and not self.port:
            raise ValueError("host needs a port")
        return self


def _process_program(pid: int) -> str | None:
    """What an attached process runs: its script (python app.py) or executable."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    words = [a.decode(errors="replace") for a in argv if a]
    script = next((w for w in words[1:] if not w.startswith("-") and "." in os.path.basename(w)), None)
    return script or (words[0] if words else None)


def _process_name(pid: int) -> str:
    """A session name for an attached process: its script or executable's name."""
    program = _process_program(pid)
    return os.path.basename(program) if program else f"pid{pid}"


def _adapter_for_pid(pid: int) -> str:
    try:
        exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        if not os.path.exists(f"/proc/{pid}") and sys.platform.startswith("linux"):
            raise InvalidInput(f"No process {pid}. Check the pid (ps -e).") from None
        return "lldb-dap"
    if exe.startswith("python"):
        return "debugpy"
    if exe in ("node", "nodejs"):
        return "node"
    try:
        if adapters.is_go_binary(f"/proc/{pid}/exe"):
            return "dlv"
    except OSError:
        pass
    return "lldb-dap"


def _listener_pid(port: int) -> int | None:
    """The local process listening on `port`, from /proc (Linux), without
    connecting: a probe connection would take a debug server's one client slot."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f, None)
                for row in f:
                    cols = row.split()
                    if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(cols[9])
        except OSError:
            continue
    if not inodes:
        return None
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{entry}/fd"):
                link = os.readlink(f"/proc/{entry}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(entry)
        except OSError:
            continue
    return None


def _adapter_for_port(host: str, port: int) -> str:
    """Which debugger listens there: by the listening process when it is local
    (node's inspector, dlv, or a Python program under debugpy)."""
    if host in ("127.0.0.1", "localhost", "::1", "0.0.0.0"):
        pid = _listener_pid(port)
        if pid is not None:
            try:
                exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
            except OSError:
                exe = ""
            if exe in ("node", "nodejs"):
                return "node"
            if exe == "dlv":
                return "dlv"
    return "debugpy"


async def _attach(ctx: CommandContext, args: AttachArgs, extra: dict[str, Any] | None = None,
                  notes: list[str] | None = None) -> SessionStatus:
    host = args.host or ("127.0.0.1" if args.port else None)
    if args.adapter:
        adapter = adapters.select_adapter(args.adapter)
    elif os.environ.get(adapters.ENV_ADAPTER):
        adapter = adapters.select_adapter(None)
    elif args.pid:
        adapter = _adapter_for_pid(args.pid)
    elif args.port:
        adapter = await asyncio.to_thread(_adapter_for_port, host or "127.0.0.1", args.port)
    else:
        adapter = "lldb-dap"
    hint = args.program or args.wait_for or (
        _process_name(args.pid) if args.pid else f"port{args.port}")
    session = await ctx.hub.create_session(args.session_name, hint=os.path.basename(hint))
    ctx.session = session
    session.cwd = ctx.client_cwd or os.getcwd()
    try:
        for note in notes or []:
            add_note(session, note)
        request = AttachRequest(pid=args.pid, host=host, port=args.port, wait_for=args.wait_for,
                                program=_abs(ctx, args.program) if args.program else None,
                                extra=extra or {})
        await session.attach(request, adapter, ctx.origin)
    except BaseException:
        await ctx.hub.close_session(session.name)
        raise
    if args.pid and not args.program:
        session.program = _process_program(args.pid) or session.program
    ctx.hub.update_meta(session)
    return status_of(session)


async def _attach_from_launch_json(ctx: CommandContext, args: LaunchArgs, cfg: Any,
                                   notes: list[str]) -> SessionStatus:
    """An attach configuration of launch.json, given to `launch --launch NAME`."""
    from pydantic import ValidationError

    try:
        attach_args = AttachArgs(
            pid=cfg.pid, host=None if cfg.pid else cfg.host, port=None if cfg.pid else cfg.port,
            wait_for=None if cfg.pid or cfg.port else cfg.wait_for,
            adapter=args.adapter or cfg.adapter, session_name=args.session_name,
            program=cfg.program,
        )
    except ValidationError as exc:
        raise InvalidInput(f"Launch configuration {cfg.name!r} cannot attach: "
                           f"{exc.errors()[0]['msg']}.") from None
    return await _attach(ctx, attach_args, extra=cfg.extra, notes=notes)


register(Command(
    id="attach", help="Attach to a running process (PID) or a listening adapter (HOST:PORT).",
    description="Attach the debugger to a running process by pid, or to a debug adapter or "
    "Node inspector listening on host:port, in a new session.",
    args=AttachArgs, result=SessionStatus, handler=_attach, needs_session=False,
    creates_session=True, mcp="debug_attach", tui_action=False,
    next_steps=lambda r: ["breakpoint_add", "pause", "threads"],
))


class AttachSimArgs(Args):
    simulator_id: str | None = Field(None, description="Simulator UDID.")
    simulator_name: str | None = Field(None, description="Simulator name, e.g. 'iPhone 15'.")
    bundle_id: str | None = Field(None, description="App bundle id, e.g. com.example.App.")
    pid: int | None = Field(None, description="App process id, instead of bundleId.")
    wait_for: bool = Field(False, description="Wait for the app to launch if it is not running.")
    continue_on_attach: bool = Field(True, description="Let the app run after attaching.")
    make_current: bool = Field(True, description="Make this the current session.")
    adapter: str | None = Field(None, description="lldb-cli (default) or lldb-dap.")
    session_name: str | None = Field(None, description="Name for the new session.")

    @model_validator(mode="after")
    def _exclusive(self) -> "AttachSimArgs":
        if self.simulator_id and self.simulator_name:
            raise ValueError("give simulatorId or simulatorName, not both")
        if self.bundle_id and self.pid:
            raise ValueError("give bundleId or pid, not both")
        return self


async def _attach_sim(ctx: CommandContext, args: AttachSimArgs) -> SessionStatus:
    from backends.simctl import prepare_sim_attach

    kind = adapters.canonical_name(args.adapter) if args.adapter else None
    if kind not in (None, "lldb-cli", "lldb-dap"):
        raise InvalidInput("Simulator apps are debugged with lldb-cli or lldb-dap.")
    previous = ctx.hub.current
    session = await ctx.hub.create_session(args.session_name, hint=args.bundle_id or "simulator")
    ctx.session = session
    try:
        backend, request = await prepare_sim_attach(
            session._sink(), simulator_id=args.simulator_id,
            simulator_name=args.simulator_name, bundle_id=args.bundle_id, pid=args.pid,
            wait_for=args.wait_for, continue_on_attach=args.continue_on_attach, backend=kind,
            owner=f"session {session.name} ({ctx.origin})",
        )
        session.metadata["simulator"] = backend.info.model_dump(mode="json")
        await session.attach(request, backend.info.backend, ctx.origin, backend=backend)
    except BaseException:
        await ctx.hub.close_session(session.name)
        raise
    if not args.make_current and previous:
        ctx.hub.current = previous
    ctx.hub.update_meta(session)
    return status_of(session)


register(Command(
    id="attach_sim", help="Attach LLDB to an app running in an iOS simulator.",
    description="Find an iOS simulator (by UDID or name; booted ones preferred) and the app's "
    "process (by bundle id via launchctl, or pid), then attach LLDB to it. macOS with Xcode only. "
    "Simulator and bundle id given once are remembered as defaults.",
    args=AttachSimArgs, result=SessionStatus, handler=_attach_sim, needs_session=False,
    creates_session=True, mcp="debug_attach_sim", tui_action=False,
    next_steps=lambda r: ["breakpoint_add", "stack", "lldb_command"],
))


async def _detach(ctx: CommandContext, args: NoArgs) -> SessionStatus:
    session = _session(ctx)
    await session.detach(ctx.origin)
    return status_of(session)


register(Command(
    id="detach", help="Detach the debugger and leave the program running.",
    description="Detach from the program, leaving it running, and end the session.",
    args=NoArgs, result=SessionStatus, handler=_detach, mcp="debug_detach",
    cli=[CliSpec(("detach",))], destructive=True, next_steps=lambda r: ["sessions"],
    applies_in=LIVE,
))


async def _terminate(ctx: CommandContext, args: NoArgs) -> SessionStatus:
    session = _session(ctx)
    await session.terminate(ctx.origin)
    return status_of(session)


register(Command(
    id="terminate", help="Stop the program and end the session.",
    description="End the debug session and kill the program and its debugger.",
    args=NoArgs, result=SessionStatus, handler=_terminate, mcp="debug_terminate",
    cli=[CliSpec(("stop",))], keys=("shift+f5",), destructive=True,
    next_steps=lambda r: ["launch"],
    applies_in=LIVE,
))


async def _restart(ctx: CommandContext, args: NoArgs) -> SessionStatus:
    session = _session(ctx)
    if session.launch_request is None or session.adapter is None:
        raise InvalidInput("Only a launched program can be restarted; attach again instead.")
    await session.restart(ctx.origin)
    return status_of(session)


register(Command(
    id="restart", help="Restart the program, keeping breakpoints.",
    description="Kill and relaunch the program with the same arguments and breakpoints.",
    args=NoArgs, result=SessionStatus, handler=_restart, mcp="debug_restart",
    cli=[CliSpec(("restart",))], keys=("ctrl+shift+f5",), destructive=True,
    next_steps=lambda r: ["await", "context"],
    applies_in=frozenset({"starting", "running", "stopped", "terminated"}),
))


async def _status(ctx: CommandContext, args: NoArgs) -> SessionStatus:
    return status_of(_session(ctx))


register(Command(
    id="status", help="Show the session's state, stop reason and connected clients.",
    description="The session's state (running, stopped, terminated), stop reason and exception "
    "text, adapter, program, exit code and connected clients.",
    args=NoArgs, result=SessionStatus, handler=_status, read_only=True, mcp="debug_status",
    cli=[CliSpec(("status",))],
))


async def _sessions(ctx: CommandContext, args: NoArgs) -> SessionList:
    entries: list[SessionListEntry] = []
    seen: set[str] = set()
    for name, session in ctx.hub.sessions.items():
        seen.add(name)
        entries.append(SessionListEntry(
            name=name, pid=os.getpid(), program=session.program, adapter=session.adapter,
            created_at=session.created_at, current=name == ctx.hub.current,
        ))
    live = paths.live_sessions()
    for s in live:
        if s.name not in seen:
            entries.append(SessionListEntry(name=s.name, pid=s.pid, program=s.program,
                                            adapter=s.adapter, created_at=s.created_at))
    if entries and not any(e.current for e in entries):
        max(entries, key=lambda e: e.created_at).current = True
    return SessionList(sessions=entries)


register(Command(
    id="sessions", help="List live sessions.",
    description="List live debug sessions (name, program, adapter). Pass a name as "
    "debugSessionId to any tool to address one.",
    args=NoArgs, result=SessionList, handler=_sessions, read_only=True, needs_session=False,
    mcp="debug_sessions", cli=[CliSpec(("sessions",))],
))


# ============================================================================ breakpoints


class BreakpointAddArgs(Args):
    file: str | None = Field(None, description="Source file (absolute, or relative to the caller's directory).")
    line: int | None = Field(None, description="1-based line number.")
    function: str | None = Field(None, description="Function name, instead of file + line.")
    condition: str | None = Field(None, description="Stop only when this expression is true.")
    hit_condition: str | None = Field(None, description="Stop only on this hit count, e.g. '3' or '>= 3'.")
    log_message: str | None = Field(None, description="Log this message instead of stopping ({expr} interpolates).")
    enabled: bool = Field(True, description="False adds it disabled.")

    @model_validator(mode="after")
    def _where(self) -> "BreakpointAddArgs":
        if self.function and (self.file or self.line):
            raise ValueError("give file + line, or function, not both")
        if not self.function and not (self.file and self.line):
            raise ValueError("give file and line (e.g. file='app.py', line=12), or function")
        return self


async def _bp_add(ctx: CommandContext, args: BreakpointAddArgs) -> BreakpointResult:
    session = _session(ctx)
    spec = BreakpointSpec(
        path=_abs(ctx, args.file) if args.file else None, line=args.line, function=args.function,
        condition=args.condition, hit_condition=args.hit_condition, log_message=args.log_message,
        enabled=args.enabled,
    )
    bp = await session.add_breakpoint(spec, ctx.origin)
    note = None
    if session.backend is not None and session.state != SessionState.starting:
        if not bp.verified:
            note = "Not verified yet" + (f": {bp.message}" if bp.message else "") + \
                   ". It binds when the code loads, or never if the line has no code."
        elif bp.line and args.line and bp.line != args.line:
            note = f"Line {args.line} has no code; the breakpoint moved to line {bp.line}."
    else:
        note = "Set before start; it is sent to the debugger when the program starts."
    return BreakpointResult(breakpoint=bp, note=note)


def _bp_add_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("location", nargs="?", metavar="FILE:LINE", help="where to stop, e.g. app.py:12")
    parser.add_argument("--function", "-f", help="break on entry to this function instead")
    parser.add_argument("--condition", "-c", help="stop only when this expression is true")
    parser.add_argument("--hit-count", help="stop only on this hit count (e.g. 3 or '>= 3')")
    parser.add_argument("--log", dest="log_message", help="log this message instead of stopping")
    parser.add_argument("--disabled", action="store_true", help="add it disabled")


def _bp_add_adapt(ns: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"condition": ns.condition, "hit_condition": ns.hit_count,
                           "log_message": ns.log_message, "function": ns.function}
    if ns.location:
        out["file"], out["line"] = parse_location(ns.location)
    if ns.disabled:
        out["enabled"] = False
    return {k: v for k, v in out.items() if v is not None}


register(Command(
    id="breakpoint_add", help="Add a breakpoint at FILE:LINE or on a function.",
    description="Add a breakpoint at file + line, or on a function, optionally with a condition, "
    "a hit condition or a log message (a logpoint prints instead of stopping). The answer says "
    "whether the debugger verified it and where it actually landed.",
    args=BreakpointAddArgs, result=BreakpointResult, handler=_bp_add, mcp="debug_breakpoint_add",
    cli=[CliSpec(("break", "add"), aliases=(("b",),), build=_bp_add_cli, adapt=_bp_add_adapt)],
    next_steps=lambda r: ["continue", "breakpoint_list"],
))


class BreakpointRemoveArgs(Args):
    breakpoint_id: int | None = Field(None, description="Id from debug_breakpoint_list.")
    all: bool = Field(False, description="Remove every breakpoint.")

    @model_validator(mode="after")
    def _which(self) -> "BreakpointRemoveArgs":
        if self.all and self.breakpoint_id is not None:
            raise ValueError("give breakpointId or all=true, not both")
        if not self.all and self.breakpoint_id is None:
            raise ValueError("give breakpointId, or all=true")
        return self


async def _bp_remove(ctx: CommandContext, args: BreakpointRemoveArgs) -> BreakpointsRemoved:
    session = _session(ctx)
    removed = await session.remove_breakpoints(None if args.all else [args.breakpoint_id], ctx.origin)  # type: ignore[list-item]
    return BreakpointsRemoved(removed=[bp.id for bp in removed], remaining=len(session.breakpoints))


def _bp_remove_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", nargs="?", type=int, metavar="ID", help="breakpoint id (see break list)")
    parser.add_argument("--all", action="store_true", help="remove every breakpoint")


register(Command(
    id="breakpoint_remove", help="Remove a breakpoint by id, or all of them.",
    description="Remove one breakpoint by id, or all with all=true.",
    args=BreakpointRemoveArgs, result=BreakpointsRemoved, handler=_bp_remove,
    mcp="debug_breakpoint_remove",
    cli=[CliSpec(("break", "remove"), aliases=(("break", "rm"),), build=_bp_remove_cli,
                 adapt=lambda ns: {"all": True} if ns.all else (
                     {} if ns.id is None else {"breakpoint_id": ns.id}))],
    next_steps=lambda r: ["breakpoint_list", "continue"],
))


async def _bp_list(ctx: CommandContext, args: NoArgs) -> BreakpointList:
    return BreakpointList(breakpoints=list(_session(ctx).breakpoints.values()))


register(Command(
    id="breakpoint_list", help="List breakpoints with their verified state and hit counts.",
    description="List breakpoints: id, location, condition, verified state (and the line the "
    "debugger moved it to), hit count, and who set it.",
    args=NoArgs, result=BreakpointList, handler=_bp_list, read_only=True,
    mcp="debug_breakpoint_list", cli=[CliSpec(("break", "list"), aliases=(("break", "ls"),))],
))


class BreakpointUpdateArgs(Args):
    breakpoint_id: int = Field(description="Id from debug_breakpoint_list.")
    enabled: bool | None = Field(None, description="Enable or disable it.")
    condition: str | None = Field(None, description="New condition ('' clears it).")
    hit_condition: str | None = Field(None, description="New hit condition ('' clears it).")
    log_message: str | None = Field(None, description="New log message ('' makes it a plain breakpoint).")


async def _bp_update(ctx: CommandContext, args: BreakpointUpdateArgs) -> BreakpointResult:
    session = _session(ctx)
    changes: dict[str, Any] = {}
    for field_name in ("enabled", "condition", "hit_condition", "log_message"):
        value = getattr(args, field_name)
        if value is not None:
            changes[field_name] = (value or None) if isinstance(value, str) else value
    if not changes:
        raise InvalidInput("Nothing to change: give enabled, condition, hitCondition or logMessage.")
    bp = await session.update_breakpoint(args.breakpoint_id, ctx.origin, **changes)
    return BreakpointResult(breakpoint=bp)


def _bp_edit_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", type=int, metavar="ID")
    parser.add_argument("--condition", "-c")
    parser.add_argument("--hit-count")
    parser.add_argument("--log", dest="log_message")
    parser.add_argument("--enable", dest="enabled", action="store_const", const=True)
    parser.add_argument("--disable", dest="enabled", action="store_const", const=False)


register(Command(
    id="breakpoint_update", help="Enable, disable or edit a breakpoint's condition.",
    description="Change a breakpoint: enable/disable it, or set its condition, hit condition "
    "or log message.",
    args=BreakpointUpdateArgs, result=BreakpointResult, handler=_bp_update,
    mcp="debug_breakpoint_update",
    cli=[
        CliSpec(("break", "edit"), build=_bp_edit_cli, adapt=lambda ns: {
            k: v for k, v in {"breakpoint_id": ns.id, "condition": ns.condition,
                              "hit_condition": ns.hit_count, "log_message": ns.log_message,
                              "enabled": ns.enabled}.items() if v is not None}),
        CliSpec(("break", "enable"), positional=("breakpoint_id",), fixed={"enabled": True}),
        CliSpec(("break", "disable"), positional=("breakpoint_id",), fixed={"enabled": False}),
    ],
    next_steps=lambda r: ["breakpoint_list"],
))


# ============================================================================ run control


class RunArgs(Args):
    thread_id: int | None = Field(None, description="Thread to act on (default: the selected one).")
    wait_ms: int | None = Field(None, ge=0, le=600_000,
                                description="How long to wait for the next stop before answering 'running'.")


async def _run(ctx: CommandContext, how: str, args: RunArgs, label: str) -> RunResult:
    session = _session(ctx)
    default_wait = settings().continue_wait_ms if how == "continue" else settings().step_wait_ms
    wait_ms = default_wait if args.wait_ms is None else args.wait_ms
    started = time.monotonic()
    generation = await session.resume(how, ctx.origin, args.thread_id)
    await session.wait_for_stop(wait_ms / 1000, generation)
    return await run_result(session, label, started, ctx.origin)


async def run_result(session: Session, label: str, started: float,
                     origin: str | None = None) -> RunResult:
    waited = int((time.monotonic() - started) * 1000)
    others = others_activity(session, origin)
    if session.state == SessionState.stopped and session.stop is not None:
        context = await build_context(session, lines=3)
        return RunResult(status="stopped", command=label, waited_ms=waited, stop=session.stop,
                         context=context, others=others)
    if session.state == SessionState.terminated:
        return RunResult(status="terminated", command=label, waited_ms=waited,
                         exit_code=session.exit_code, others=others,
                         message="The program ended" + (
                             f" with exit code {session.exit_code}." if session.exit_code is not None else "."))
    return RunResult(status="running", command=label, waited_ms=waited, others=others,
                     message=f"Still running after {waited} ms. Call debug_wait (`tui-debugger await`) "
                     "for the next stop, or debug_pause (`tui-debugger pause`).")


def _run_command(id: str, how: str, cli: str, mcp: str, help: str, keys: tuple[str, ...],
                 aliases: tuple[tuple[str, ...], ...] = ()) -> None:
    async def handler(ctx: CommandContext, args: RunArgs) -> RunResult:
        return await _run(ctx, how, args, id)

    register(Command(
        id=id, help=help,
        description=help + " Waits up to waitMs for the next stop and answers with where it "
        "stopped (source and locals), or 'running' (then call debug_wait), or the exit code.",
        args=RunArgs, result=RunResult, handler=handler, mcp=mcp,
        cli=[CliSpec((cli,), aliases=aliases)], keys=keys, next_steps=_after_stop,
        applies_in=STOPPED,
    ))


_run_command("continue", "continue", "continue", "debug_continue",
             "Continue until the next breakpoint or the end.", ("f5",), (("c",),))
_run_command("next", "next", "next", "debug_step_over",
             "Step over: run the current line, stopping at the next one.", ("f10",), (("n",),))
_run_command("step", "step_in", "step", "debug_step_into",
             "Step into the call on the current line.", ("f11",), (("s",),))
_run_command("finish", "step_out", "finish", "debug_step_out",
             "Step out: run until the current function returns.", ("shift+f11",), (("out",),))


async def _pause(ctx: CommandContext, args: RunArgs) -> RunResult:
    session = _session(ctx)
    started = time.monotonic()
    generation = session.run_generation
    await session.pause(ctx.origin, args.thread_id)
    await session.wait_for_stop((args.wait_ms if args.wait_ms is not None else 5000) / 1000, generation)
    return await run_result(session, "pause", started, ctx.origin)


register(Command(
    id="pause", help="Pause the running program.",
    description="Interrupt the running program and answer with where it stopped.",
    args=RunArgs, result=RunResult, handler=_pause, mcp="debug_pause",
    cli=[CliSpec(("pause",))], keys=("f6",), next_steps=_after_stop,
    applies_in=RUNNING,
))


class UntilArgs(RunArgs):
    file: str = Field(description="Source file.")
    line: int = Field(description="Line to run to.")


async def _until(ctx: CommandContext, args: UntilArgs) -> RunResult:
    session = _session(ctx)
    bp = await session.add_breakpoint(BreakpointSpec(path=_abs(ctx, args.file), line=args.line), "session")
    try:
        return await _run(ctx, "continue", args, "until")
    finally:
        if bp.id in session.breakpoints:
            await session.remove_breakpoints([bp.id], "session")


register(Command(
    id="until", help="Run to a line (run to cursor).",
    description="Continue until the program reaches file:line (a one-shot breakpoint), or stops "
    "elsewhere first.",
    args=UntilArgs, result=RunResult, handler=_until, mcp="debug_run_to",
    cli=[CliSpec(("until",), build=lambda p: p.add_argument("location", metavar="FILE:LINE"),
                 adapt=lambda ns: dict(zip(("file", "line"), parse_location(ns.location))))],
    keys=("ctrl+f10",), next_steps=_after_stop,
    applies_in=STOPPED,
))


class AwaitArgs(Args):
    timeout_ms: int | None = Field(None, ge=0, le=3_600_000, description="How long to wait (default 30 s).")


async def _await(ctx: CommandContext, args: AwaitArgs) -> RunResult:
    session = _session(ctx)
    started = time.monotonic()
    timeout = (settings().await_timeout_ms if args.timeout_ms is None else args.timeout_ms) / 1000
    if session.state not in (SessionState.stopped, SessionState.terminated):
        await session.wait_for_stop(timeout, session.run_generation)
    return await run_result(session, "await", started, ctx.origin)


def _await_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=float, default=None, metavar="S", help="seconds to wait (default 30)")


register(Command(
    id="await", help="Wait for the program to stop (or end).",
    description="Wait until the program stops at a breakpoint, a step, an exception or a pause "
    "(or ends), up to timeoutMs. Answers at once if it is already stopped.",
    args=AwaitArgs, result=RunResult, handler=_await, read_only=True, mcp="debug_wait",
    cli=[CliSpec(("await",), aliases=(("wait",),), build=_await_cli,
                 adapt=lambda ns: {} if ns.timeout is None else {"timeout_ms": int(ns.timeout * 1000)})],
    tui_action=False, next_steps=_after_stop, log_activity=False,
))


# ============================================================================ inspection


class ContextArgs(Args):
    lines: int | None = Field(None, ge=0, le=200, description="Source lines shown around the current one.")
    frame_index: int | None = Field(None, ge=0, description="Frame (0 = innermost; default: the selected one).")


async def _context(ctx: CommandContext, args: ContextArgs) -> ContextResult:
    return await build_context(_session(ctx), args.lines, args.frame_index, origin=ctx.origin)


register(Command(
    id="context", help="Where the program is: source around the current line, then locals.",
    description="The best first call after a stop: stop reason and exception text, the source "
    "around the current line, and the frame's locals.",
    args=ContextArgs, result=ContextResult, handler=_context, read_only=True, mcp="debug_context",
    cli=[CliSpec(("context",), aliases=(("where",),))], tui_action=False,
))


class StackArgs(Args):
    thread_id: int | None = Field(None, description="Thread (default: the stopped/selected one).")
    max_frames: int = Field(20, ge=1, le=1000, description="How many frames at most.")


async def _stack(ctx: CommandContext, args: StackArgs) -> StackResult:
    session = _session(ctx)
    frames, total = await session.stack(args.thread_id, args.max_frames)
    tid = args.thread_id or session.selected_thread_id or 0
    same_thread = tid == session.selected_thread_id
    views = [frame_view(f, same_thread and f.index == session.selected_frame_index) for f in frames]
    return StackResult(thread_id=tid, frames=views, total=total,
                       truncated=total is not None and total > len(views))


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
    path: str | None = Field(None, description="Drill into a value, e.g. 'order.items[0]'.")
    names: list[str] | None = Field(None, description="Only these variable names.")
    max_items: int | None = Field(None, ge=1, le=5000, description="At most this many (default 100).")
    start: int = Field(0, ge=0, description="Skip this many (paging).")


async def _variables(ctx: CommandContext, args: VariablesArgs) -> VariablesResult:
    session = _session(ctx)
    if session.state != SessionState.stopped:
        session._require_state({SessionState.stopped}, "read variables")
    frame_index = session.selected_frame_index if args.frame_index is None else args.frame_index
    scope, scopes = await pick_scope(session, frame_index, args.scope)
    ref = scope.ref
    base_path: str | None = None
    if args.path:
        ref, var = await resolve_path(session, scope.ref, args.path)
        base_path = args.path
        if ref <= 0:
            view = variable_view(session, var, args.path)
            return VariablesResult(frame_index=frame_index, scope=scope.name, path=args.path,
                                   scopes=[s.name for s in scopes], variables=[view], total=1)
    children = await session.variables(ref)
    if args.path and len(children) == 1 and children[0].name in ("", "*") and children[0].ref > 0:
        # A pointer whose one child is the value it points to (delve names it ""):
        # show the fields, as `p.X` would reach them.
        children = await session.variables(children[0].ref)
    if args.names:
        wanted = set(args.names)
        children = [c for c in children if c.name in wanted or c.name.strip("'\"") in wanted]
    total = len(children)
    limit = args.max_items or settings().max_items
    window = children[args.start: args.start + limit]
    views: list[VariableView] = []
    chars = 0
    cut_for_size = False
    for child in window:
        view = variable_view(session, child, join_path(base_path, child.name))
        chars += len(view.value) + len(view.name) + 40
        if views and chars > settings().max_result_chars:
            cut_for_size = True
            break
        views.append(view)
    shown_end = args.start + len(views)
    note = None
    if shown_end < total:
        why = "the answer size cap" if cut_for_size else f"maxItems={limit}"
        note = (f"Showing {args.start + 1}-{shown_end} of {total} ({why}). "
                f"Pass start={shown_end} for more, or names/path to narrow it.")
    return VariablesResult(frame_index=frame_index, scope=scope.name, path=base_path,
                           scopes=[s.name for s in scopes], variables=views, total=total,
                           truncated=shown_end < total, note=note)


register(Command(
    id="variables", help="List variables of a frame, or drill into one by path.",
    description="Variables of the selected frame's scope (locals by default). Values are capped; "
    "use `path` to drill into a structured value (e.g. 'data.items[2]'), `names` to pick some, "
    "`maxItems`/`start` to page.",
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
    expression: str = Field(description="Expression in the program's language.")
    frame_index: int | None = Field(None, ge=0, description="Frame to evaluate in (default: selected).")
    context: str = Field("repl", description="repl (default), watch or hover.")


async def _evaluate(ctx: CommandContext, args: EvaluateArgs) -> EvaluateResult:
    session = _session(ctx)
    if not args.expression.strip():
        raise InvalidInput("Give an expression to evaluate, e.g. `print len(items)`.")
    result = await session.evaluate(args.expression, args.frame_index, args.context)
    value, truncated = cap(_redact_value(args.expression, result.value), settings().max_value_chars * 4)
    children: list[VariableView] = []
    if result.ref > 0 and args.context == "repl":
        try:
            kids = await session.variables(result.ref)
            children = [variable_view(session, k, join_path(args.expression, k.name)) for k in kids[:20]]
        except DebuggerError:
            pass
    return EvaluateResult(expression=args.expression, value=value, type=result.type,
                          has_children=result.ref > 0, children=children, value_truncated=truncated)


register(Command(
    id="evaluate", help="Evaluate an expression in the selected frame.",
    description="Evaluate an expression in a frame of the stopped program (it may have side "
    "effects). An expression that raises answers with the error text.",
    args=EvaluateArgs, result=EvaluateResult, handler=_evaluate, mcp="debug_evaluate",
    cli=[CliSpec(("print",), aliases=(("p",), ("eval",)), build=lambda p: (
        p.add_argument("expression", nargs="+", help="the expression"),
        p.add_argument("--frame", type=int, dest="frame_index")),
        adapt=lambda ns: {"expression": " ".join(ns.expression),
                          **({"frame_index": ns.frame_index} if ns.frame_index is not None else {})})],
    next_steps=lambda r: ["variables", "next", "continue"],
    applies_in=STOPPED,
))


async def _threads(ctx: CommandContext, args: NoArgs) -> ThreadsResult:
    session = _session(ctx)
    threads = await session.threads()
    return ThreadsResult(threads=[
        ThreadView(id=t.id, name=t.name, selected=t.id == session.selected_thread_id, stopped=t.stopped)
        for t in threads
    ])


register(Command(
    id="threads", help="List threads.",
    description="The program's threads (goroutines for Go), marking the selected one.",
    args=NoArgs, result=ThreadsResult, handler=_threads, read_only=True, mcp="debug_threads",
    cli=[CliSpec(("threads",))],
))


class ThreadSelectArgs(Args):
    thread_id: int = Field(description="Thread id from debug_threads.")


async def _thread_select(ctx: CommandContext, args: ThreadSelectArgs) -> FrameSelected:
    session = _session(ctx)
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
    session = _session(ctx)
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


class OutputArgs(Args):
    since: int = Field(0, ge=0, description="Cursor from a previous answer's nextCursor (0 = from the start).")
    limit: int = Field(200, ge=1, le=5000, description="At most this many entries.")
    tail: int | None = Field(None, ge=1, description="Only the last N entries.")


async def _output(ctx: CommandContext, args: OutputArgs) -> OutputResult:
    session = _session(ctx)
    chunk = session.output.tail(args.tail) if args.tail else session.output.read(
        args.since, args.limit, settings().max_result_chars)
    entries = [e.model_copy(update={"text": _redact(e.text)}) for e in chunk.entries]
    return OutputResult(entries=entries, next_cursor=chunk.next_cursor, dropped=chunk.dropped,
                        truncated=chunk.truncated)


register(Command(
    id="output", help="Read the program's output (stdout, stderr, debugger messages).",
    description="Program output since a cursor. Pass the answer's nextCursor as `since` next "
    "time to read only new output; `dropped` says how much was evicted before you read it.",
    args=OutputArgs, result=OutputResult, handler=_output, read_only=True, mcp="debug_output",
    cli=[CliSpec(("output",), build=lambda p: (
        p.add_argument("--tail", type=int, metavar="N"),
        p.add_argument("--since", type=int, default=0),
        p.add_argument("--follow", "-f", action="store_true", help="keep printing new output")),
        adapt=lambda ns: {k: v for k, v in {"tail": ns.tail, "since": ns.since or None}.items()
                          if v is not None})],
    tui_action=False, log_activity=False,
))


class RawCommandArgs(Args):
    command: str = Field(description="An LLDB command, e.g. 'register read' or 'memory read &x'.")
    timeout_ms: int = Field(30_000, ge=100, le=600_000, description="How long it may run.")
    allow_unsafe: bool = Field(False, description="Bypass the denylist. Only with the user's explicit consent.")


async def _raw(ctx: CommandContext, args: RawCommandArgs) -> RawCommandResult:
    from backends.denylist import check_lldb_command

    session = _session(ctx)
    backend = session._live_backend("run a debugger command")
    if not args.command.strip():
        raise InvalidInput("Give a command, e.g. `thread backtrace`.")
    unsafe = bool(check_lldb_command(args.command, args.allow_unsafe))
    if unsafe:
        session.record_activity(ctx.origin, "lldb_command", f"[UNSAFE] {args.command}")
    if not backend.capabilities.raw_commands and session.adapter not in ("lldb-dap", "simctl"):
        # DAP adapters without a command language evaluate in their REPL context.
        try:
            text = await session.raw_command(args.command, args.timeout_ms / 1000)
        except NotSupported as exc:
            raise NotSupported(
                f"{exc} This session uses {session.adapter}; raw LLDB commands need the lldb-cli "
                "or lldb-dap adapter. Use debug_evaluate instead."
            ) from None
        except CommandFailed as exc:
            # The REPL's own traceback runs through the adapter's internals; its
            # last line is the part that says what went wrong.
            lines = [ln.strip() for ln in exc.message.strip().splitlines() if ln.strip()]
            raise CommandFailed(
                f"{session.adapter} could not run {args.command!r}: "
                f"{lines[-1] if lines else exc.message}. This session is not an LLDB session, so "
                "the command went to the adapter's REPL; use debug_evaluate for expressions.",
                adapter=session.adapter,
            ) from None
    else:
        text = await session.raw_command(args.command, args.timeout_ms / 1000)
    text, truncated = cap(_redact(text), settings().max_result_chars)
    return RawCommandResult(command=args.command, output=("[UNSAFE] " if unsafe else "") + text,
                            unsafe=unsafe, truncated=truncated)


register(Command(
    id="lldb_command", help="Run a raw LLDB command (denylisted commands need allowUnsafe).",
    description="Run a raw LLDB command in an LLDB session (lldb-cli, lldb-dap, simulator). "
    "Commands that mutate memory, kill the process or run shell/scripts are denied unless "
    "allowUnsafe is true, which needs the user's explicit consent. On other adapters the command "
    "is evaluated in the adapter's REPL.",
    args=RawCommandArgs, result=RawCommandResult, handler=_raw, mcp="debug_lldb_command",
    cli=[CliSpec(("lldb",), build=lambda p: (
        p.add_argument("command", nargs="+"),
        p.add_argument("--timeout", type=float, default=30.0, metavar="S"),
        p.add_argument("--allow-unsafe", action="store_true")),
        adapt=lambda ns: {"command": " ".join(ns.command), "timeout_ms": int(ns.timeout * 1000),
                          "allow_unsafe": ns.allow_unsafe})],
    next_steps=lambda r: ["context", "stack"],
))


async def _activity(ctx: CommandContext, args: NoArgs) -> ActivityResult:
    return ActivityResult(entries=list(_session(ctx).activity)[-100:])


register(Command(
    id="activity", help="Who did what in this session (person, agent, CLI).",
    description="The session's activity log: every command any client ran, with who ran it.",
    args=NoArgs, result=ActivityResult, handler=_activity, read_only=True, mcp="debug_activity",
    cli=[CliSpec(("activity",))], log_activity=False,
))


# ============================================================================ machine-level


async def _doctor(ctx: CommandContext, args: NoArgs) -> DoctorResult:
    infos = await asyncio.to_thread(adapters.discover_all)
    return DoctorResult(
        adapters=[AdapterView(**i.to_dict()) for i in infos],
        python=sys.version.split()[0], platform=f"{platform.system()} {platform.machine()}",
    )


register(Command(
    id="doctor", help="Which debuggers this machine has, and how to install the missing ones.",
    description="Report each backend's debugger: path and version, or how to install it.",
    args=NoArgs, result=DoctorResult, handler=_doctor, read_only=True, needs_session=False,
    mcp="debug_doctor", cli=[CliSpec(("doctor",))], tui_action=False,
))


class ScriptBreakpoint(Args):
    file: str
    line: int


class ScriptArgs(Args):
    command: str = Field(description="Command that starts the program, e.g. 'node --inspect-brk=9229 app.js' or 'python app.py'.")
    breakpoint: ScriptBreakpoint = Field(description="Where to evaluate: {file, line}.")
    expression: str = Field(description="Expression evaluated at every hit.")
    timeout: int = Field(description="Milliseconds to wait for the program to finish.")


async def _script(ctx: CommandContext, args: ScriptArgs) -> ScriptResult:
    from ..script import run_debug_script

    results = await run_debug_script(
        args.command, args.breakpoint.file, args.breakpoint.line, args.expression, args.timeout,
        cwd=ctx.client_cwd,
    )
    return ScriptResult(results=results)


register(Command(
    id="debug_script", help="One shot: run a command, evaluate an expression at every hit of one breakpoint.",
    description="Run a program once, evaluate `expression` each time `breakpoint` is hit, and "
    "return the typed values in order. Node commands must include --inspect-brk=PORT; Python "
    "scripts and native binaries work too.",
    args=ScriptArgs, result=ScriptResult, handler=_script, needs_session=False,
    mcp="debug-script", tui_action=False,
    cli=[CliSpec(("script",), build=lambda p: (
        p.add_argument("--break", dest="location", required=True, metavar="FILE:LINE"),
        p.add_argument("--expr", required=True, dest="expression"),
        p.add_argument("--timeout", type=float, default=30.0, metavar="S"),
        p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="COMMAND")),
        adapt=lambda ns: {
            "command": shlex.join(ns.cmd[1:] if ns.cmd[:1] == ["--"] else ns.cmd),
            "breakpoint": dict(zip(("file", "line"), parse_location(ns.location))),
            "expression": ns.expression, "timeout": int(ns.timeout * 1000)})],
))

__all__ = ["build_context", "status_of"]
