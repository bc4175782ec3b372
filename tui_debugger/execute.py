"""Running a command in the process that hosts its session: validate the
arguments, resolve the session, run the handler, log the activity and attach
the next steps. Every front end's call ends here, whichever way it came.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import ValidationError

from backends.errors import DebuggerError, InternalError, InvalidInput

from .commands import registry
from .commands.registry import CURRENT_VIEW, Args, Command, CommandContext, Result, SessionHost, View
from .models import CURRENT_CLIENT, client_id
from . import tree
from .session import Session



#: The most text one call's arguments may hold (an expression, a command, a
#: breakpoint list): more is refused before anything reads it.
MAX_ARGS_CHARS = 256 * 1024


def validate_args(cmd: Command, raw: Any, *, strict: bool = False) -> Args:
    """The command's argument model from raw (camelCase or snake_case) arguments;
    every problem in one InvalidInput that names the arguments. `strict` (JSON
    front ends) takes values as they are typed: "1" is not a pid, "true" is
    not a flag."""
    if isinstance(raw, cmd.args):
        return raw
    try:
        size = len(json.dumps(raw, default=str)) if raw else 0
    except (TypeError, ValueError):
        size = 0
    if size > MAX_ARGS_CHARS:
        raise InvalidInput(
            f"The arguments of {cmd.mcp or cmd.id} are {size:,} characters; the limit is "
            f"{MAX_ARGS_CHARS:,}. Send less: a shorter expression or command, fewer items.")
    try:
        if strict and isinstance(raw, dict):
            return cmd.args.model_validate_json(json.dumps(raw), strict=True)
        return cmd.args.model_validate(raw or {})
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "arguments"
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                valid = ", ".join(
                    (f.alias or n) for n, f in cmd.args.model_fields.items()
                )
                msg = f"unknown argument (valid: {valid or 'none'})"
            problems.append(f"{loc}: {msg}")
        raise InvalidInput(
            f"Invalid arguments for {cmd.mcp or cmd.id}: " + "; ".join(problems) + ".",
            problems=problems,
        ) from None


async def execute(
    hub: SessionHost | None, command: str | Command, raw_args: Any, *, origin: str,
    session: Session | None = None, client_cwd: str | None = None,
    session_name: str | None = None, client: str | None = None, view: View | None = None,
    named: bool = False,
) -> Result:
    """Run a command in this process: validate, resolve the session, run the
    handler, log the activity, attach next steps. Raises DebuggerError only.
    A caller that has looked the command up and validated its arguments passes
    the Command and the argument model; neither is done twice. `client`: the
    front end's id (default: the origin in this process). `hub`: the sessions
    this process hosts (None in a front end, which hosts none). `view`: how
    the caller shows the answer (registry.View; default: its origin's).
    `named`: the caller named the session; else a command that acts on one
    process acts on the one of the session's tree this client is focused on
    (tree.focused)."""
    client = client or client_id(origin)
    view = view or View.of(origin)
    token = CURRENT_CLIENT.set(client)
    view_token = CURRENT_VIEW.set(view)
    try:
        return await _execute(hub, command, raw_args, origin=origin, session=session,
                              client_cwd=client_cwd, session_name=session_name, client=client,
                              view=view, named=named)
    finally:
        CURRENT_VIEW.reset(view_token)
        CURRENT_CLIENT.reset(token)


async def _execute(
    hub: SessionHost | None, command: str | Command, raw_args: Any, *, origin: str, session: Session | None,
    client_cwd: str | None, session_name: str | None, client: str, view: View,
    named: bool = False,
) -> Result:
    cmd = command if isinstance(command, Command) else registry.get(command)
    args = validate_args(cmd, raw_args)
    if cmd.creates_session and hub is None:
        raise InternalError(f"{cmd.id} creates a session, which only a host process runs "
                            "(client/router.py starts one). Please report this.")
    if cmd.needs_session and session is None:
        session = hub.local(session_name) if hub is not None else None
        if session is None:
            raise InvalidInput(
                "No live session. Start one: `tui-debugger start PROGRAM` (MCP: debug_launch)."
                if session_name is None else
                f"No session named {session_name!r}. See `tui-debugger sessions`."
            )
    if (session is not None and not named and cmd.id in tree.FOCUSED_COMMANDS
            and tree.has_children(hub, session)):
        session = tree.focused(hub, session, client)
    if session is not None and session.command_guard is not None:
        session.command_guard(cmd.id)
    ctx = CommandContext(hub=hub, origin=origin, session=session, client_cwd=client_cwd,
                         session_name=session_name, view=view)
    resumed = _ResumeRecorder(session, cmd, args, origin, client)
    try:
        result = await cmd.handler(ctx, args)
    except DebuggerError as exc:
        if session is not None and cmd.log_activity and not cmd.read_only:
            session.record_activity(origin, cmd.id, f"failed: {exc.message}", ok=False,
                                    client=client)
        raise
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise
    except Exception as exc:
        raise InternalError(f"{cmd.id} failed unexpectedly: {exc!r}. Please report this.") from exc
    finally:
        resumed.close()
    if isinstance(result, registry.ActionResult) and not result.next_steps:
        result.next_steps = registry.next_step_models(cmd, result)
    target = ctx.session or session
    if target is not None and hub is not None and isinstance(result, Result):
        _name_the_process(hub, cmd, result, target, client)
    # Watches and hovers re-evaluate at every stop; they are looking, not acting.
    quiet = getattr(args, "context", "repl") in ("watch", "hover")
    if (target is not None and cmd.log_activity and not cmd.read_only and not quiet
            and not resumed.recorded):
        target.record_activity(origin, cmd.id, summarize(cmd, args), client=client)
    return result


def _name_the_process(hub: SessionHost | None, cmd: Command, result: Result, target: Session,
                      client: str) -> None:
    """In a program of several processes, an answer says which one it acted
    on (or whose stop it is), and the stops elsewhere this client was not told
    of; a stop answered is this client's focus (tree.py)."""
    if cmd.id in tree.FOCUSED_COMMANDS or cmd.id in ("launch", "restart"):
        tree.answered(hub, target, client)
    if not tree.has_children(hub, target):
        return
    if cmd.id in tree.FOCUSED_COMMANDS or target.parent or result.process is not None:
        pid = target.metadata.get("pid") or (
            target.backend.debuggee_pid if target.backend is not None else None)
        result.process = registry.ProcessRef(session=target.name, pid=pid, program=target.program)
    result.meanwhile = tree.meanwhile(hub, target, client)


class _ResumeRecorder:
    """A call that resumes the program is in the activity log from the moment
    it does, not when it answers: a continue waits up to a minute for the
    stop, and one cancelled meanwhile (its client gave up) still resumed it."""

    def __init__(self, session: Session | None, cmd: Command, args: Args, origin: str,
                 client: str) -> None:
        self.session = session if cmd.log_activity and not cmd.read_only else None
        self.recorded = False
        if self.session is None:
            return
        from . import events

        def on_event(event: Any) -> None:
            if (not self.recorded and isinstance(event, events.Continued)
                    and event.origin == origin and self.session is not None):
                self.recorded = True
                asyncio.get_running_loop().call_soon(
                    self.session.record_activity, origin, cmd.id, summarize(cmd, args),
                    True, client)

        self._listener = on_event
        self.session.add_listener(on_event)

    def close(self) -> None:
        if self.session is not None:
            self.session.remove_listener(self._listener)


#: how a call waits or answers, not what it does: left out of the activity log
_QUIET_ARGS = {"wait_ms", "timeout_ms", "thread_id", "context", "children", "max_items"}


def summarize(cmd: Command, args: Args) -> str:
    parts = []
    for name, value in args.model_dump(exclude_defaults=True).items():
        if value in (None, [], {}, "") or name in _QUIET_ARGS:
            continue
        text = str(value)
        parts.append(f"{name}={text[:60]}")
    return " ".join(parts)
