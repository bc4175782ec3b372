"""Run control: continue, step, pause, run to a line, and waiting for a stop.
Each waits a bounded time for the next stop and answers with where it stopped."""

import argparse
import asyncio
import contextlib
import json
import os
import time

from pydantic import Field

from backends.errors import BackendDied, DebuggerError, InvalidInput
from backends.models import BreakpointSpec
from backends.stop_and_go import stop_and_go

from .. import tree
from ..config import settings
from ..models import CURRENT_CLIENT, SessionState
from ..redact import redact_hit
from ..session import Session
from ..stops import SessionStops
from .context import (
    RUNNING,
    STOPPED,
    abs_path,
    after_stop,
    build_context,
    others_activity,
    parse_line_location,
    parse_location,
    session_of,
)
from .registry import Args, CliSpec, Command, CommandContext, register
from .render import ending, stop_line
from .views import InputSent, RunResult, ScriptHit, TraceResult


class RunArgs(Args):
    thread_id: int | None = Field(None, description="Thread to act on (default: the selected one).")
    wait_ms: int | None = Field(None, ge=0, le=600_000,
                                description="How long to wait for the next stop before answering 'running'.")


class ContinueArgs(RunArgs):
    #: every process of the program goes on (the tool's description says it)
    all: bool = False


async def _run(ctx: CommandContext, how: str, args: RunArgs, label: str) -> RunResult:
    session = session_of(ctx)
    client = CURRENT_CLIENT.get()
    default_wait = settings().continue_wait_ms if how == "continue" else settings().step_wait_ms
    wait_ms = default_wait if args.wait_ms is None else args.wait_ms
    started = time.monotonic()
    # The adapter's answer counts against the same bound as the stop: an adapter
    # that never answers a continue (debugpy issue 2048) must not hold the call.
    # A floor, so a refusal (a step where none is possible) still reaches a
    # caller that waits 0 ms, as the TUI does.
    stops = SessionStops(session, ctx.origin)
    # Waiting from the go on: a stop that comes with the adapter's answer to it
    # is read for this answer too (Session.answering_stop); with no wait (the
    # TUI's steps) the answer says "running" and reads nothing.
    # In a program of several processes the answer is the first stop in any of
    # them (tree.py): a continue's, any this client was not told of yet; a
    # step's, one after it (its own, as a rule).
    tree.answered(ctx.hub, session, client)  # the stop it leaves is told
    await tree.breakpoints_settled(ctx.hub, session)
    newer_than = 0 if how == "continue" else tree.last_serial()
    with session.answering_stop() if wait_ms > 0 else contextlib.nullcontext():
        await stops.go(how, args.thread_id,
                       answer_timeout=max(wait_ms, ANSWER_FLOOR_MS) / 1000)
        if getattr(args, "all", False) and ctx.hub is not None:
            await _resume_the_others(ctx, session)
        remaining = wait_ms / 1000 - (time.monotonic() - started)
        if ctx.hub is None or (how != "continue" and not tree.has_children(ctx.hub, session)):
            # One process (a step starts no child, as a rule): its own stop, by
            # the shortest way (a step's latency is measured in milliseconds).
            await stops.next_stop(remaining)
        else:
            member = await tree.next_stop(ctx.hub, session, client, remaining, newer_than)
            if member is not None and member is not session:
                ctx.session = member  # the answer's process: this client's focus now
                return await run_result(member, label, started, ctx.origin)
    return await run_result(session, label, started, ctx.origin, stops.generation)


async def _resume_the_others(ctx: CommandContext, session: Session) -> None:
    """`continue --all`: every other stopped process of the tree goes on too."""
    for member in tree.tree_of(ctx.hub, session):
        if member is not session and member.state == SessionState.stopped:
            with contextlib.suppress(DebuggerError):
                await member.resume("continue", ctx.origin, answer_timeout=ANSWER_FLOOR_MS / 1000)


#: the least time a run command waits for the adapter to accept it
ANSWER_FLOOR_MS = 250


async def run_result(session: Session, label: str, started: float,
                     origin: str | None = None, generation: int | None = None) -> RunResult:
    waited = int((time.monotonic() - started) * 1000)
    others = others_activity(session, origin)
    if session.state == SessionState.stopped and session.stop is not None:
        # The stop this run made, taken before the context is read: another
        # client may resume the program meanwhile, and an answer of a stop
        # without its stop would say neither where nor why.
        stop = session.stop
        context = await build_context(session, lines=3, embedded=True)
        message = None
        if session.state != SessionState.stopped:
            message = (f"Stopped, then resumed at once by {session.resumed_by or 'another client'}"
                       ": it is running again. Call debug_wait (`tui-debugger await`) for its "
                       "next stop.")
        return RunResult(status="stopped", command=label, waited_ms=waited, stop=stop,
                         context=context, others=others, message=message)
    if (generation is not None and session.state == SessionState.running
            and session.last_stop is not None and session.last_stop_generation == generation):
        # This run did stop, but another client resumed the program before this
        # answer was written: say where it stopped, and who let it go on.
        who = session.resumed_by or "another client"
        return RunResult(status="stopped", command=label, waited_ms=waited, stop=session.last_stop,
                         others=others,
                         message=f"Stopped, then resumed at once by {who}: it is running again. "
                         "Call debug_wait (`tui-debugger await`) for its next stop.")
    if session.state == SessionState.terminated and session.adapter_died:
        raise BackendDied(
            f"The debugger ({session.adapter}) died while the program ran: "
            f"{session.adapter_died.strip()[:300]}. The program was ended with it; start the "
            "session again (debug_launch / tui-debugger start).", adapter=session.adapter)
    if session.state == SessionState.terminated:
        passed = session.take_passed_hits()
        told = (f" Before it ended, {len(passed)} thread(s) reached a breakpoint while it was "
                f"being continued and went on: {', '.join(map(str, passed))}." if passed else "")
        return RunResult(status="terminated", command=label, waited_ms=waited,
                         exit_code=session.exit_code, others=others,
                         message="The program ended: " + ending(session.exit_code,
                                                                 session.terminated_reason) + "."
                         + told)
    unanswered = (f"; the adapter has not answered {session.resume_unanswered}"
                  if session.resume_unanswered else "")
    image = session.undebugged_exec()
    if image:
        return RunResult(status="running", command=label, waited_ms=waited, others=others,
                         message=f"Still running after {waited} ms, undebugged: {image}")
    return RunResult(status="running", command=label, waited_ms=waited, others=others,
                     message=f"Still running after {waited} ms{unanswered}. Call debug_wait "
                     "(`tui-debugger await`) for the next stop, or debug_pause "
                     "(`tui-debugger pause`).")


def _run_command(id: str, how: str, cli: str, mcp: str, help: str, keys: tuple[str, ...],
                 aliases: tuple[tuple[str, ...], ...] = (),
                 args: type[RunArgs] = RunArgs) -> None:
    async def handler(ctx: CommandContext, args: RunArgs) -> RunResult:
        return await _run(ctx, how, args, id)

    register(Command(
        id=id, help=help,
        description=help,
        args=args, result=RunResult, handler=handler, mcp=mcp,
        cli=[CliSpec((cli,), aliases=aliases)], keys=keys, next_steps=after_stop,
        applies_in=STOPPED,
    ))


_run_command("continue", "continue", "continue", "debug_continue",
             "Continue to the next breakpoint or the end (all: every process).", ("f5",),
             (("c",),),
             ContinueArgs)
_run_command("next", "next", "next", "debug_step_over",
             "Step over: run the current line, stopping at the next one.", ("f10",), (("n",),))
_run_command("step", "step_in", "step", "debug_step_into",
             "Step into the call on the current line.", ("f11",), (("s",),))
_run_command("finish", "step_out", "finish", "debug_step_out",
             "Step out: run until the current function returns.", ("shift+f11",), (("out",),))
_run_command("stepi", "stepi", "stepi", "debug_stepi",
             "Step one machine instruction, into calls.", ("alt+f11",), (("si",),))
_run_command("nexti", "nexti", "nexti", "debug_nexti",
             "Step one machine instruction, over calls.", ("alt+f10",), (("ni",),))


async def _pause(ctx: CommandContext, args: RunArgs) -> RunResult:
    session = session_of(ctx)
    started = time.monotonic()
    stops = SessionStops(session, ctx.origin)  # the stop of this run is the pause's
    wait_ms = args.wait_ms if args.wait_ms is not None else 5000
    image = session.undebugged_exec()
    if image:
        raise InvalidInput(f"Cannot pause: {image}")
    await session.pause(ctx.origin, args.thread_id,
                        answer_timeout=max(wait_ms, ANSWER_FLOOR_MS) / 1000)
    await stops.next_stop(wait_ms / 1000 - (time.monotonic() - started))
    return await run_result(session, "pause", started, ctx.origin)


register(Command(
    id="pause", help="Pause the running program.",
    description="Interrupt the running program and answer with where it stopped.",
    args=RunArgs, result=RunResult, handler=_pause, mcp="debug_pause",
    cli=[CliSpec(("pause",))], keys=("f6",), next_steps=after_stop,
    applies_in=RUNNING,
))


class UntilArgs(RunArgs):
    file: str = Field("", description="Source file.")
    line: int = Field(description="Line to run to.")
    jump: bool = Field(False, description="Make that line the next statement instead; the code "
                       "between is not run.")


async def _until(ctx: CommandContext, args: UntilArgs) -> RunResult:
    session = session_of(ctx)
    if not args.file:
        here = session.stop.location if session.stop is not None else None
        if here is None or not here.path:
            raise InvalidInput(f"Give the line as FILE:LINE: {session.name} is not stopped in a "
                               "source file, so a bare line number has no file.")
        args = args.model_copy(update={"file": here.path})
    if args.jump:
        started = time.monotonic()
        stops = SessionStops(session, ctx.origin)
        await stops.go("goto", args.thread_id, target=(abs_path(ctx, args.file), args.line))
        wait_ms = settings().step_wait_ms if args.wait_ms is None else args.wait_ms
        await stops.next_stop(wait_ms / 1000)
        return await run_result(session, "jump", started, ctx.origin, stops.generation)
    bp = await session.add_breakpoint(BreakpointSpec(path=abs_path(ctx, args.file), line=args.line), "session")
    session.run_to_ids.add(bp.id)
    try:
        return await _run(ctx, "continue", args, "until")
    finally:
        session.run_to_ids.discard(bp.id)
        if bp.id in session.breakpoints:
            await session.remove_breakpoints([bp.id], "session")


def _location_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("location", metavar="[FILE:]LINE",
                        help="a line of the current frame's file, or FILE:LINE")


register(Command(
    id="until", help="Run to a line (run to cursor), or jump there (set next statement).",
    description="Run until file:line (a one-shot breakpoint) or another stop; with jump, set "
    "the next statement there instead (debugpy, lldb-dap).",
    args=UntilArgs, result=RunResult, handler=_until, mcp="debug_run_to",
    cli=[CliSpec(("until",), build=_location_cli,
                 adapt=lambda ns: dict(zip(("file", "line"), parse_line_location(ns.location))),
                 help="Run to a line and stop there (run to cursor)."),
         CliSpec(("jump",), build=_location_cli, fixed={"jump": True},
                 help="Make a line the next to run, without running (set next statement).",
                 adapt=lambda ns: dict(zip(("file", "line"), parse_line_location(ns.location))))],
    keys=("ctrl+f10",), next_steps=after_stop,
    applies_in=STOPPED,
))


class AwaitArgs(Args):
    timeout_ms: int | None = Field(None, ge=0, le=3_600_000, description="How long to wait (default 30 s).")


async def _await(ctx: CommandContext, args: AwaitArgs) -> RunResult:
    session = session_of(ctx)
    started = time.monotonic()
    timeout = (settings().await_timeout_ms if args.timeout_ms is None else args.timeout_ms) / 1000
    if session.state == SessionState.stopped or ctx.hub is None:
        if session.state not in (SessionState.stopped, SessionState.terminated):
            await SessionStops(session, ctx.origin).next_stop(timeout)
        return await run_result(session, "await", started, ctx.origin)
    # The first stop in any process of the program this client was not told of.
    root = tree.root_of(ctx.hub, session)
    if session.state == SessionState.terminated and root.state == SessionState.terminated:
        return await run_result(session, "await", started, ctx.origin)
    member = await tree.next_stop(ctx.hub, session, CURRENT_CLIENT.get(), timeout)
    if member is not None:
        ctx.session = member
        return await run_result(member, "await", started, ctx.origin)
    # A child process that ended: the program is its root's.
    return await run_result(root if session.state == SessionState.terminated else session,
                            "await", started, ctx.origin)


def _await_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=float, default=None, metavar="S", help="seconds to wait (default 30)")


register(Command(
    id="await", help="Wait for the program to stop (or end).",
    description="Wait up to timeoutMs for a stop in any process (or the end); at once if "
    "stopped.",
    args=AwaitArgs, result=RunResult, handler=_await, read_only=True, mcp="debug_wait",
    cli=[CliSpec(("await",), aliases=(("wait",),), build=_await_cli,
                 adapt=lambda ns: {} if ns.timeout is None else {"timeout_ms": int(ns.timeout * 1000)})],
    tui_action=False, next_steps=after_stop, log_activity=False,
))


# ============================================================================ trace


class TraceArgs(Args):
    file: str
    line: int = Field(ge=1)
    expression: str
    max_hits: int = Field(10, ge=1, le=1000, description="At most this many hits.")
    timeout_ms: int = Field(10_000, ge=1, le=600_000, description="At most this long.")


async def _trace(ctx: CommandContext, args: TraceArgs) -> TraceResult:
    """Stop-and-go on a breakpoint of the session's own: at each hit the value is
    read and the program continued at once, with no one asked to press
    continue. (Logpoints would not stop at all, but answer text, not typed
    values, and each adapter formats them its own way.)"""
    from ..script import evaluate_typed, is_hit, value_kind

    session = session_of(ctx)
    if not args.expression.strip():
        raise InvalidInput("Give the expression to read at each hit, e.g. `total`.")
    await session.settle()
    session._require_state({SessionState.stopped, SessionState.running}, "trace")
    path = abs_path(ctx, args.file)
    kind = value_kind(session.adapter)
    where = f"{os.path.basename(path)}:{args.line}"
    bp = await session.add_breakpoint(BreakpointSpec(path=path, line=args.line), "session")

    async def read() -> dict:
        hit = await evaluate_typed(session, kind, args.expression)
        if settings().redact:  # as debug_evaluate and debug-script answer it
            hit = redact_hit(args.expression, hit)
        # The trace fills in the activity log as it goes (the TUI shows it).
        session.record_activity(ctx.origin, "trace", f"{where} {args.expression} = "
                                f"{json.dumps(hit['value'])[:80]} ({hit['type']})")
        return hit

    async def remove() -> None:
        # Gone before the program goes on: a loop would be back at the line
        # before a removal sent after the continue reached the debugger.
        if bp.id in session.breakpoints:
            await session.remove_breakpoints([bp.id], "session")

    stops = SessionStops(session, ctx.origin, is_hit=lambda: is_hit(session, bp.id, path, args.line),
                         read=read, before_last_go=remove)
    deadline = asyncio.get_running_loop().time() + args.timeout_ms / 1000
    try:
        if session.state == SessionState.stopped:
            await stops.go()
        collected = await stop_and_go(stops, deadline, max_hits=args.max_hits,
                                      leave_elsewhere=True)
    finally:
        await remove()
    results, stopped_elsewhere = collected.values, collected.elsewhere
    status = session.state.value if session.state.value in ("stopped", "terminated") else "running"
    elsewhere = ""
    if stopped_elsewhere and session.stop is not None:
        # Name the stop that ended the trace: "Stopped (breakpoint #1) in f at a.py:9".
        elsewhere = "; then " + stop_line(session.stop).split("\n")[0].replace(
            "Stopped", "stopped", 1) + "."
    elif stopped_elsewhere:
        elsewhere = "; then the program stopped elsewhere."
    message = (f"{len(results)} hit(s) of {where}"
               + (" (maxHits reached)" if len(results) >= args.max_hits else "")
               + (elsewhere or ("; the program ended." if status == "terminated"
                                else "; it runs on.")))
    if not results and status == "running":
        message = f"No hit of {where} within {args.timeout_ms} ms; the program runs on."
    return TraceResult(results=[ScriptHit(**r) for r in results], status=status, message=message)


def _trace_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("location", metavar="FILE:LINE")
    parser.add_argument("expression", nargs="+", metavar="EXPR")
    parser.add_argument("--max-hits", type=int, default=None, metavar="N")
    parser.add_argument("--timeout", type=float, default=None, metavar="S")


register(Command(
    id="trace", help="Collect an expression's value at each hit of FILE:LINE, without stopping.",
    description="Read `expression` each time file:line runs (up to maxHits or timeoutMs) "
    "without stopping; answers the values. Another breakpoint ends it there.",
    args=TraceArgs, result=TraceResult, handler=_trace, mcp="debug_trace",
    cli=[CliSpec(("trace",), build=_trace_cli, adapt=lambda ns: {
        "file": parse_location(ns.location)[0], "line": parse_location(ns.location)[1],
        "expression": " ".join(ns.expression),
        **({"max_hits": ns.max_hits} if ns.max_hits else {}),
        **({"timeout_ms": int(ns.timeout * 1000)} if ns.timeout else {})})],
    tui_action=False, next_steps=lambda r: ["context"] if r.status == "stopped" else [],
    applies_in=frozenset({"running", "stopped"}),
))


class SendInputArgs(Args):
    text: str = Field("", description="A line (newline added).")
    eof: bool = Field(False, description="Then end the input.")


async def _send_input(ctx: CommandContext, args: SendInputArgs) -> InputSent:
    session = session_of(ctx)
    data = args.text + "\n" if args.text else ""
    await session.send_input(data, args.eof, ctx.origin)
    sent = f"Sent {len(data)} characters" if data else "Nothing sent"
    return InputSent(message=sent + (", then end of input." if args.eof else "."))


register(Command(
    id="send_input", help="Type a line into the program's input (launched with --stdin pipe).",
    description="Type a line into the program's input (launched with stdin 'pipe').",
    args=SendInputArgs, result=InputSent, handler=_send_input, mcp="debug_send_input",
    cli=[CliSpec(("input",), build=lambda p: (
        p.add_argument("text", nargs="*", help="the line to send"),
        p.add_argument("--eof", action="store_true", help="then close the input")),
        adapt=lambda ns: {"text": " ".join(ns.text), "eof": ns.eof})],
    applies_in=RUNNING | STOPPED,
    log_activity=True,
))
