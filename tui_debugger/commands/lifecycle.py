"""Session lifecycle: launch, attach (process, port, simulator), detach,
terminate, restart, status and the list of sessions."""

import asyncio
import os
import shlex
from typing import Any

from pydantic import Field, model_validator

from backends import adapters, native_build, probe
from backends.errors import InvalidInput
from backends.models import STDIN_PIPE, AttachRequest, BreakpointSpec, LaunchRequest, empty_list

from .. import paths, persist, tree
from ..persist import add_note
from ..config import settings
from ..models import CURRENT_CLIENT, SessionState
from ..session import Session
from ..stops import SessionStops
from .context import LIVE, abs_path, build_context, parse_location, session_of, status_of
from .render import breakpoint_line
from .registry import Args, CliSpec, Command, CommandContext, NoArgs, register
from .views import SessionList, SessionListEntry, SessionStatus, WarmHostView, WarmStopped


class LaunchBreakpoint(Args):
    file: str
    line: int = Field(ge=1)
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None


class LaunchArgs(Args):
    program: str = Field("", description="A .py, .js, native or Go program, or a .c/.cpp/.rs/.go "
                         "source; with launchConfig: its ${file}.")
    args: list[str] = Field(default_factory=empty_list)  # the program's: the name says it
    cwd: str | None = Field(None, description="Runs and resolves paths here (default: caller's dir).")
    env: dict[str, str] = Field(default_factory=dict)
    adapter: str | None = Field(None, description="debugpy, lldb-dap, lldb-cli, dlv or node (default: by program type).")
    stop_on_entry: bool = Field(False, description="Stop at the first line (native: at main).")
    launch_config: str | None = Field(None, description="A configuration of .vscode/launch.json.")
    session_name: str | None = Field(None)
    breakpoints: list[str | LaunchBreakpoint] = Field(
        default_factory=empty_list,
        description="Set before it starts: \"FILE:LINE\" or {file, line, condition, "
        "hitCondition, logMessage}.")
    wait_ms: int | None = Field(None, ge=0, le=600_000,
                                description="How long to wait for the first stop (default 10 s).")
    core_file: str | None = Field(None, description="Open this core dump of the program "
                                  "post-mortem (native, Go).")
    module: str | None = Field(None, description="Python module to run (-m).")
    stdin: str | None = Field(None, description="Input: a file, or 'pipe' (debug_send_input).")
    python: str | None = Field(None, description="The Python that runs it (default: a venv's, "
                               "else python3).")
    just_my_code: bool | None = Field(None, description="false: stop and step in libraries too.")
    #: with breakpoints given, the saved ones too (docs/mcp.md; its name says it in tools/list)
    restore_breakpoints: bool = False


async def _launch(ctx: CommandContext, args: LaunchArgs) -> SessionStatus:
    base = args.cwd and abs_path(ctx, args.cwd) or ctx.client_cwd or os.getcwd()
    caller_base = base
    request_extra: dict[str, Any] = {}
    program = args.program
    prog_args = list(args.args)
    adapter_hint = args.adapter
    env = dict(args.env)
    stop_on_entry = args.stop_on_entry
    notes: list[str] = []
    python_module = False
    if args.module:
        if program:
            raise InvalidInput(f"Give a program ({program}) or a module ({args.module}), not both; "
                               "the module's own arguments go in args.")
        # python -m MODULE: no file to check; the session is named after the module.
        python_module = True
        request_extra["module"] = args.module
        program = os.path.join(base, args.module)
        adapter_hint = adapter_hint or "debugpy"
    elif not program and not args.launch_config:
        raise InvalidInput("Give the program to debug (e.g. app.py), a Python module, or "
                           "launchConfig: the name of a configuration in .vscode/launch.json.")
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
        request_extra = {**cfg.extra, **request_extra}
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
    session_hint = program_path
    entry_function: str | None = None
    if native_build.is_native_source(program_path) and (
            adapter_hint is None or adapters.profile(adapter_hint).native_binaries):
        # A C, C++ or Rust source: built with debug information, then debugged
        # (as dlv builds a Go source); the command is said, in the output.
        source = program_path
        program_path, command = await native_build.build(source)
        notes.append(f"built: {shlex.join(command)}")
        if source.endswith(".rs"):  # a Rust program's own main, not the runtime's C main
            entry_function = f"{os.path.splitext(os.path.basename(source))[0].replace('-', '_')}::main"
    adapter = adapters.select_adapter(adapter_hint, program_path)
    facts = adapters.profile(adapter)
    interpreter = None
    if facts.chooses_python:
        from backends.python_env import find_python

        # The user's Python, not ours: the program's packages are in its environment.
        explicit = args.python or request_extra.get("python")
        interpreter = await asyncio.to_thread(
            find_python, explicit, base if python_module else os.path.dirname(program_path),
            cwd=ctx.client_cwd or base,
            explicit_source="--python" if args.python else "launch.json \"python\"")
        request_extra["python"] = [interpreter.path]
        if interpreter.path_first:
            # As the wrapper it was found through would have set it (pyenv exec).
            env["PATH"] = os.pathsep.join(
                [interpreter.path_first, env.get("PATH", os.environ.get("PATH", ""))])
    elif args.python:
        raise InvalidInput(f"--python is for Python programs; {program_path} runs with {adapter}.")
    if args.just_my_code is not None:
        if not facts.chooses_python:
            raise InvalidInput(f"--no-just-my-code (justMyCode) is for Python programs; "
                               f"{program_path} runs with {adapter}.")
        request_extra["justMyCode"] = args.just_my_code
    no_symbols = False
    if facts.native_binaries:
        info = native_build.debug_info(program_path)
        if info is not None and not info[0]:
            no_symbols = not info[1]
            notes.append(
                f"{os.path.basename(program_path)} has no debug information"
                + (" and no symbols (stripped)" if no_symbols else "")
                + ": no source lines or locals, and breakpoints on a file's lines cannot bind. "
                "Rebuild it with -g -O0 (or give `run` its .c/.cpp/.rs source), or read it with "
                "disassemble and stepi.")
    specs: list[BreakpointSpec] = []
    for given in args.breakpoints:
        extra: dict[str, Any] = {}
        if isinstance(given, str):
            file, line = parse_location(given)
        else:
            file, line = given.file, given.line
            extra = {"condition": given.condition, "hit_condition": given.hit_condition,
                     "log_message": given.log_message}
        path = file if os.path.isabs(file) else os.path.join(caller_base, file)
        spec = BreakpointSpec(path=os.path.normpath(path), line=line, **extra)
        specs = [s for s in specs if not (s.path == spec.path and s.line == spec.line)] + [spec]
    session = await ctx.hub.create_session(args.session_name, hint=session_hint,
                                           cwd=ctx.client_cwd, origin=ctx.origin)
    ctx.session = session
    session.cwd = base
    if interpreter is not None:
        session.metadata["python"] = interpreter.describe()
        if not interpreter.is_ours:
            session.metadata["python_short"] = interpreter.short()
        if request_extra.get("module") == "pytest" and session.exception_filters is None:
            # A failing test stops where it failed, as `pytest --pdb` does: the
            # assertion leaves the test (the user's code) into pytest's, which
            # catches it: debugpy's userUnhandled (docs/architecture.md).
            session.exception_filters = ["uncaught", "userUnhandled"]
    try:
        for note in notes:
            add_note(session, note)
        # The breakpoints asked for now come first: a saved one on the same
        # line (persist.py restores them after) does not replace them.
        for spec in specs:
            await session.add_breakpoint(spec, ctx.origin)
        # An agent that lists its breakpoints gets those (the CLI and the TUI
        # keep a person's saved ones beside them, as editors do).
        restore = not specs or args.restore_breakpoints or ctx.origin != "mcp"
        report = await persist.track(session, program_path, base, restore_saved=restore)
        restored = [session.breakpoints[i] for i in (report.restored if report else [])
                    if i in session.breakpoints]
        core_file = abs_path(ctx, args.core_file) if args.core_file else None
        if core_file and not os.path.isfile(core_file):
            raise InvalidInput(f"There is no core file at {core_file}. Check the path.")
        if core_file and stop_on_entry:
            raise InvalidInput("A core dump is already stopped where it died; drop stopOnEntry.")
        if stop_on_entry and facts.entry_function and not no_symbols:
            # A native program's entry point is the loader's _start, with no source:
            # stop at main instead, as gdb's `start` and cppdbg's stopAtEntry do.
            entry = await session.add_breakpoint(
                BreakpointSpec(function=entry_function or facts.entry_function), "session")
            session.entry_breakpoint_id = entry.id
            stop_on_entry = False
        elif stop_on_entry and request_extra.get("module"):
            # debugpy does not stop on entry into a module run as `-m`: stop at the
            # module's first statement with a one-shot breakpoint instead.
            first = _module_first_line(str(request_extra["module"]), base)
            if first is not None:
                entry = await session.add_breakpoint(
                    BreakpointSpec(path=first[0], line=first[1]), "session")
                session.entry_breakpoint_id = entry.id
        stdin = args.stdin if args.stdin == STDIN_PIPE else (
            abs_path(ctx, args.stdin) if args.stdin else None)
        if stdin and stdin != STDIN_PIPE and (not os.path.exists(stdin) or os.path.isdir(stdin)):
            raise InvalidInput(f"There is no file {stdin} to give the program as its stdin.")
        request = LaunchRequest(
            program=program_path, args=prog_args, cwd=base, env=env,
            stop_on_entry=stop_on_entry, extra=request_extra, core_file=core_file, stdin=stdin,
        )
        first_stop = SessionStops(session, ctx.origin)  # the stop of this run is the answer
        await session.launch(request, adapter, ctx.origin)
    except BaseException:
        await ctx.hub.close_session(session.name)
        raise
    ctx.hub.update_meta(session)
    # A core opens stopped where the program died: that stop is the first answer too.
    will_stop = bool(core_file) or args.stop_on_entry or stop_on_entry or \
        session.entry_breakpoint_id is not None or any(
        not bp.spec.log_message for bp in session.breakpoints.values() if bp.set_by != "session")
    member = None
    if will_stop:
        # Answer with the first stop (or the end), so the next call does not
        # race it: in any process of the program (a worker's breakpoint).
        wait = settings().continue_wait_ms if args.wait_ms is None else args.wait_ms
        member = await _first_stop(ctx, session, first_stop, wait / 1000)
    return await launch_status(session, restored, ctx.origin, member)


async def _first_stop(ctx: CommandContext, session: Session, first_stop: SessionStops,
                      timeout: float) -> Session | None:
    """The first stop of a run, in any process of the program (tree.py); the
    process it is in becomes the call's (its answer names it)."""
    if ctx.hub is None:
        await first_stop.next_stop(timeout)
        return None
    member = await tree.next_stop(ctx.hub, session, CURRENT_CLIENT.get(), timeout)
    if member is not None:
        ctx.session = member
    return member


async def launch_status(session: Session, restored: list[Any], origin: str,
                        member: Session | None = None) -> SessionStatus:
    status = status_of(session)
    status.restored = [breakpoint_line(bp) for bp in restored]
    if member is not None and member is not session and member.stop is not None:
        # A child process's stop answers the launch: its stop and place, as the
        # program's own would be; `process` (execute) names it.
        status.stop = member.stop
        status.context = await build_context(member, lines=3, origin=origin, embedded=True)
    elif session.state == SessionState.stopped and session.stop is not None:
        status.context = await build_context(session, lines=3, origin=origin, embedded=True)
    elif session.state == SessionState.running and not status.message:
        status.message = ("Running; no stop yet. debug_wait waits for the first stop; "
                          "debug_pause interrupts.")
        if session.first_stop_notice and session.last_stop is None:
            status.message += " " + session.first_stop_notice
    return status


def _module_first_line(module: str, base: str) -> tuple[str, int] | None:
    """The file `python -m module` runs and the line of its first statement."""
    import ast
    import importlib.util
    import sys

    sys.path.insert(0, base)  # -m finds modules in the working directory first
    try:
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.submodule_search_locations is not None:
            spec = importlib.util.find_spec(module + ".__main__")
    except (ImportError, ValueError):
        return None
    finally:
        sys.path.remove(base)
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        return None
    try:
        with open(spec.origin, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return None
    return (spec.origin, tree.body[0].lineno) if tree.body else None


register(Command(
    id="launch", help="Start a program under the debugger in a new session.",
    description="Launch a program under the debugger as the current session. With "
    "breakpoints or stopOnEntry it answers with the first stop, as a step does.",
    args=LaunchArgs, result=SessionStatus, handler=_launch, needs_session=False,
    creates_session=True, mcp="debug_launch", tui_action=False,
    next_steps=lambda r: (["stack", "memory_read", "disassemble"] if r.post_mortem
                          else [] if r.state == "stopped" or r.stop is not None
                          else ["breakpoint_add", "await", "continue"]),
))


class AttachArgs(Args):
    pid: int | None = Field(None)
    host: str | None = Field(None)
    port: int | None = Field(None)
    adapter: str | None = Field(None, description="debugpy, lldb-dap, lldb-cli, dlv or node.")
    session_name: str | None = Field(None)
    program: str | None = Field(None, description="The executable, for symbols (native).")
    wait_for: str | None = Field(None, description="Wait for a process of this name (lldb).")
    path_map: dict[str, str] = Field(default_factory=dict, description="{remote source path: "
                                     "local one}.")
    ray: str | None = Field(None, description="A Ray dashboard (\"\": the local one): its "
                            "paused tasks become sessions under `ray`; pid picks one.")

    @model_validator(mode="after")
    def _one_target(self) -> "AttachArgs":
        if self.ray is not None:
            if self.port or self.wait_for:
                raise ValueError("give ray alone, or with the pid of one of its paused workers")
            return self
        given = [n for n, v in (("pid", self.pid), ("host/port", self.port), ("waitFor", self.wait_for)) if v]
        if len(given) > 1:
            raise ValueError(f"give only one of pid, host+port, waitFor (got {', '.join(given)})")
        if not given:
            raise ValueError("give pid, or host and port, or waitFor")
        if self.host and not self.port:
            raise ValueError("host needs a port")
        return self


async def _attach(ctx: CommandContext, args: AttachArgs, extra: dict[str, Any] | None = None,
                  notes: list[str] | None = None) -> SessionStatus:
    if args.ray is not None:
        from .ray import attach_ray

        return await attach_ray(ctx, args, _attach)
    host = args.host or ("127.0.0.1" if args.port else None)
    if args.adapter:
        adapter = adapters.select_adapter(args.adapter)
    elif os.environ.get(adapters.ENV_ADAPTER):
        adapter = adapters.select_adapter(None)
    elif args.pid:
        adapter = probe.adapter_for_pid(args.pid)
    elif args.port:
        adapter = await asyncio.to_thread(probe.adapter_for_port, host or "127.0.0.1", args.port)
    else:
        adapter = "lldb-dap"
    hint = args.program or args.wait_for or (
        probe.process_name(args.pid) if args.pid else f"port{args.port}")
    session = await ctx.hub.create_session(args.session_name, hint=os.path.basename(hint),
                                            cwd=ctx.client_cwd, origin=ctx.origin)
    ctx.session = session
    session.cwd = ctx.client_cwd or os.getcwd()
    try:
        for note in notes or []:
            add_note(session, note)
        path_map = {remote: abs_path(ctx, local) for remote, local in args.path_map.items()}
        request = AttachRequest(pid=args.pid, host=host, port=args.port, wait_for=args.wait_for,
                                program=abs_path(ctx, args.program) if args.program else None,
                                path_map=path_map, extra=extra or {})
        await session.attach(request, adapter, ctx.origin)
        await session.settle(10.0)  # a gdb-remote program's first stop is the answer
    except BaseException:
        await ctx.hub.close_session(session.name)
        raise
    if args.pid and not args.program:
        session.program = probe.process_program(args.pid) or session.program
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
    description="Attach to a running process by pid, or to host:port (a debug adapter, a "
    "Node inspector, a gdbserver), in a new session.",
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
    session = await ctx.hub.create_session(args.session_name, hint=args.bundle_id or "simulator",
                                            cwd=ctx.client_cwd, origin=ctx.origin)
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
    description="Attach LLDB to an app (bundle id or pid) in an iOS simulator (UDID or name; "
    "booted first); macOS with Xcode. Simulator and bundle id are remembered.",
    args=AttachSimArgs, result=SessionStatus, handler=_attach_sim, needs_session=False,
    creates_session=True, mcp="debug_attach_sim", tui_action=False,
    next_steps=lambda r: ["breakpoint_add", "stack", "lldb_command"],
))


async def _listed_as_it_is(ctx: CommandContext) -> None:
    """The session's file (what `sessions` lists, from any process) says the
    state this answer says: written by the host's writer thread, it could
    still say "stopped" when the next call listed it (seen under load)."""
    if ctx.hub is not None:
        await ctx.hub.meta_written()


async def _detach(ctx: CommandContext, args: NoArgs) -> SessionStatus:
    session = session_of(ctx)
    await session.detach(ctx.origin)
    await _listed_as_it_is(ctx)
    return status_of(session)


register(Command(
    id="detach", help="Detach the debugger and leave the program running.",
    description="Detach from the program, leaving it running, and end the session.",
    args=NoArgs, result=SessionStatus, handler=_detach, mcp="debug_detach",
    cli=[CliSpec(("detach",))], destructive=True, next_steps=lambda r: ["sessions"],
    applies_in=LIVE,
))


async def _terminate(ctx: CommandContext, args: NoArgs) -> SessionStatus:
    session = session_of(ctx)
    await session.terminate(ctx.origin)
    await _listed_as_it_is(ctx)
    return status_of(session)


register(Command(
    id="terminate", help="Stop the program and end the session.",
    description="End the debug session and kill the program and its debugger.",
    args=NoArgs, result=SessionStatus, handler=_terminate, mcp="debug_terminate",
    cli=[CliSpec(("stop",))], keys=("shift+f5",), destructive=True,
    next_steps=lambda r: ["launch"],
    applies_in=LIVE,
))


class RestartArgs(Args):
    wait_ms: int | None = Field(None, ge=0, le=600_000,
                                description="How long to wait for the first stop (default 10 s).")


async def _restart(ctx: CommandContext, args: RestartArgs) -> SessionStatus:
    session = session_of(ctx)
    if session.launch_request is None or session.adapter is None:
        raise InvalidInput("Only a launched program can be restarted; attach again instead.")
    first_stop = SessionStops(session, ctx.origin)
    session.seen_locals.clear()  # a new run: its first stops are told whole
    before = (session.adapter, session.metadata.get("python"))
    await session.restart(ctx.origin)
    # As launch does: a run that will stop answers with its first stop.
    request = session.launch_request
    will_stop = bool(request and request.stop_on_entry) or \
        session.entry_breakpoint_id is not None or any(
            not bp.spec.log_message and bp.spec.enabled
            for bp in session.breakpoints.values() if bp.set_by != "session")
    member = None
    if will_stop and session.state != SessionState.stopped:
        wait = settings().continue_wait_ms if args.wait_ms is None else args.wait_ms
        member = await _first_stop(ctx, session, first_stop, wait / 1000)
    status = await launch_status(session, [], ctx.origin, member)
    status._as_before = (status.adapter, status.python) == before
    return status


register(Command(
    id="restart", help="Restart the program, keeping breakpoints.",
    description="Relaunch the program with the same arguments and breakpoints; answers as "
    "debug_launch does.",
    args=RestartArgs, result=SessionStatus, handler=_restart, mcp="debug_restart",
    cli=[CliSpec(("restart",))], keys=("ctrl+shift+f5",), destructive=True,
    next_steps=lambda r: ["await", "context"],
    applies_in=frozenset({"starting", "running", "stopped", "terminated"}),
))


async def _status(ctx: CommandContext, args: NoArgs) -> SessionStatus:
    return status_of(session_of(ctx))


register(Command(
    id="status", help="Show the session's state, stop reason and connected clients.",
    description="The session's state (running, stopped, terminated), stop reason and exception "
    "text, adapter, program, exit code and connected clients.",
    args=NoArgs, result=SessionStatus, handler=_status, read_only=True, mcp="debug_status",
    cli=[CliSpec(("status",))],
))


async def _sessions(ctx: CommandContext, args: NoArgs) -> SessionList:
    project = paths.project_of(ctx.client_cwd)
    entries: list[SessionListEntry] = []
    seen: set[str] = set()
    hub = ctx.hub
    for name, session in (hub.sessions.items() if hub is not None else ()):
        seen.add(name)
        backend = session.backend
        origin = hub.origins.get(name, {})
        entries.append(SessionListEntry(
            name=name, pid=os.getpid(), program=session.program, adapter=session.adapter,
            created_at=session.created_at, current=name == hub.current,
            parent=session.parent, state=session.state.value,
            program_pid=backend.debuggee_pid if backend is not None else None,
            project=origin.get("project"), started_by=origin.get("started_by"),
        ))
    for s in paths.live_sessions():
        if s.name not in seen:
            entries.append(SessionListEntry(name=s.name, pid=s.pid, program=s.program,
                                            adapter=s.adapter, created_at=s.created_at,
                                            state=s.state, program_pid=s.program_pid,
                                             parent=s.parent, project=s.project,
                                             started_by=s.started_by))
    for entry in entries:
        entry.this_project = entry.project == project
    if not any(e.current for e in entries):
        # The one a call without a session name reaches: the one this client
        # works on, else the only one of its project (never a child process's).
        named = [e for e in entries if e.name == ctx.session_name]
        mine = [e for e in entries if e.this_project and not e.parent]
        for entry in named or (mine if len(mine) == 1 else []):
            entry.current = True
    return SessionList(sessions=_as_tree(entries), warm_host=warm_host_view())


def warm_host_view() -> WarmHostView | None:
    """The user's warm host, as `sessions` and `doctor` show it."""
    from .. import warm, warm_screen

    screen = warm_screen.status()
    info = warm.status() or screen
    if info is None:
        return None
    return WarmHostView(pid=info["pid"] if info is not screen else None,
                        project=info.get("project"), python=info.get("python"),
                        until=info.get("until"), screen=screen["pid"] if screen else None)


async def _warm_stop(ctx: CommandContext, args: NoArgs) -> WarmStopped:
    from .. import warm, warm_screen

    pid = await asyncio.to_thread(warm.stop)
    screen = await asyncio.to_thread(warm_screen.stop)
    return WarmStopped(stopped=pid is not None or screen is not None, pid=pid, screen=screen)


def _as_tree(entries: list[SessionListEntry]) -> list[SessionListEntry]:
    """Each session followed by its child processes' sessions, depth first."""
    names = {e.name for e in entries}
    out: list[SessionListEntry] = []

    def add(entry: SessionListEntry) -> None:
        out.append(entry)
        for child in entries:
            if child.parent == entry.name:
                add(child)

    for entry in entries:
        if not entry.parent or entry.parent not in names:
            add(entry)
    return out


register(Command(
    id="sessions", help="List live sessions.",
    description="Live sessions, each with its child processes; a name is a debugSessionId.",
    args=NoArgs, result=SessionList, handler=_sessions, read_only=True, needs_session=False,
    mcp="debug_sessions", cli=[CliSpec(("sessions",))],
))


register(Command(
    id="warm_stop", help="End the warm host: a finished session's host kept for the next one.",
    description="A session's host stays warm for `warm_idle_s` after its session ends, so the "
    "next session of the project (run, start, an agent's launch) starts sooner; this ends it "
    "now (TUI_DEBUGGER_WARM=0 or the `warm` setting turns warm hosts off).",
    args=NoArgs, result=WarmStopped, handler=_warm_stop, needs_session=False,
    cli=[CliSpec(("warm", "stop"))], tui_action=False,
))
