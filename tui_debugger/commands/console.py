"""The program's and the debugger's own words: the program's output (read by
cursor), raw debugger commands (LLDB's, vetted by the allowlist), and the
activity log of who did what."""

import os
from typing import Any

from pydantic import Field, model_validator

from backends import adapters
from backends.errors import CommandFailed, InvalidInput, NotSupported

from ..config import settings
from .context import cap, command_name, option_hint, redact_text, session_of
from .registry import Args, CliSpec, Command, CommandContext, register
from .views import ActivityResult, OutputResult, RawCommandResult


#: The default answer (the newest lines) stays well inside an agent's 4 KB
#: answer budget: the lines travel twice, as text and as structured entries.
TAIL_CHARS = 1_600


class OutputArgs(Args):
    since: int | None = Field(None, ge=0, description="Read on from this cursor (an answer's "
                              "nextCursor; 0: the oldest kept).")
    limit: int = Field(200, ge=1, le=5000, description="With since: at most this many entries.")
    tail: int | None = Field(None, ge=1, le=5000, description="The last N lines.")
    head: int | None = Field(None, ge=1, le=5000, description="The first N lines (from since).")

    @model_validator(mode="after")
    def _one_way(self) -> "OutputArgs":
        if self.tail is not None and (self.since is not None or self.head is not None):
            raise ValueError("tail reads the newest lines and cannot start at a cursor; give "
                             "head (with since, or alone from the start) to read lines forward")
        return self


async def _output(ctx: CommandContext, args: OutputArgs) -> OutputResult:
    session = session_of(ctx)
    if args.head is not None or args.since is not None:
        if args.head is not None:
            chunk = session.output.head_lines(args.head, args.since or 0,
                                              settings().max_result_chars)
        else:
            chunk = session.output.read(args.since, args.limit, settings().max_result_chars)
        entries = [e.model_copy(update={"text": redact_text(e.text)}) for e in chunk.entries]
        note = None
        if chunk.truncated:
            note = (f"More output follows; read on with "
                    f"{option_hint(ctx.view, 'since', chunk.next_cursor)}"
                    + (f" and {option_hint(ctx.view, 'head', args.head)}" if args.head else "")
                    + ".")
        return OutputResult(entries=entries, next_cursor=chunk.next_cursor, dropped=chunk.dropped,
                            truncated=chunk.truncated, note=note)
    tail = session.output.tail_lines(args.tail, TAIL_CHARS if args.tail is None else
                                     settings().max_result_chars)
    # Consecutive lines of one stream travel as one entry: per-line entries
    # would cost more than the lines themselves.
    lines: list[Any] = []
    for line in tail.lines:
        if lines and lines[-1].category == line.category:
            lines[-1].text += line.text
        else:
            lines.append(line.model_copy())
    lines = [e.model_copy(update={"text": redact_text(e.text)}) for e in lines]
    note = None
    if tail.earlier_lines:
        note = (f"{tail.earlier_lines} earlier line(s) not shown"
                + (f" ({tail.dropped} older entries already dropped)" if tail.dropped else "")
                + f"; read them from the start with {option_hint(ctx.view, 'head', 20)}, "
                f"or new output with {option_hint(ctx.view, 'since', tail.next_cursor)}.")
    return OutputResult(entries=lines, next_cursor=tail.next_cursor, dropped=0,
                        truncated=False, earlier_lines=tail.earlier_lines, note=note)


register(Command(
    id="output", help="Read the program's output (stdout, stderr, debugger messages).",
    description="Program output: the newest lines (`tail`, or `head` for the first), or what "
    "followed the cursor `since`.",
    args=OutputArgs, result=OutputResult, handler=_output, read_only=True, mcp="debug_output",
    cli=[CliSpec(("output",), build=lambda p: (
        p.add_argument("--tail", type=int, metavar="N", help="the newest N lines"),
        p.add_argument("--head", type=int, metavar="N",
                       help="the first N lines (from --since, else from the start)"),
        p.add_argument("--since", type=int, default=None, metavar="CURSOR",
                       help="read forward from this cursor (a previous answer's next cursor)"),
        p.add_argument("--limit", type=int, default=None, metavar="N",
                       help="with --since: at most N entries"),
        p.add_argument("--follow", "-f", action="store_true", help="keep printing new output")),
        adapt=lambda ns: {k: v for k, v in {"tail": ns.tail, "head": ns.head, "since": ns.since,
                                              "limit": ns.limit}.items()
                          if v is not None})],
    tui_action=False, log_activity=False,
))


class RawCommandArgs(Args):
    command: str = Field(description="An LLDB command, e.g. 'register read' or 'memory read &x'.")
    timeout_ms: int = Field(30_000, ge=100, le=600_000, description="How long it may run.")
    allow_unsafe: bool = Field(False, description="Run a command that is not on the read-only allowlist. Only with the user's explicit consent.")


async def _raw(ctx: CommandContext, args: RawCommandArgs) -> RawCommandResult:
    from backends.lldb_commands import vet_lldb_command

    session = session_of(ctx)
    session._live_backend("run a debugger command")  # a session with a debugger, or why not
    if not args.command.strip():
        raise InvalidInput("Give a command, e.g. `thread backtrace`.")
    lldb = adapters.profile(session.adapter).lldb
    command, unsafe = args.command, False
    if lldb:
        # Without allowUnsafe only the read-only allowlist runs, spelled out in full.
        vetted = vet_lldb_command(args.command, args.allow_unsafe)
        command, unsafe = vetted.text, vetted.unsafe
    if unsafe:
        session.record_activity(ctx.origin, "lldb_command", f"[UNSAFE] {args.command}")
    if not lldb:
        # DAP adapters without a command language evaluate in their REPL context.
        try:
            text = await session.raw_command(command, args.timeout_ms / 1000)
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
        text = await session.raw_command(command, args.timeout_ms / 1000)
    text, truncated = cap(redact_text(text), settings().max_result_chars)
    return RawCommandResult(command=args.command, output=("[UNSAFE] " if unsafe else "") + text,
                            unsafe=unsafe, truncated=truncated)


register(Command(
    id="lldb_command", help="Run a raw LLDB command (commands off the read-only allowlist need allowUnsafe).",
    description="Run a raw LLDB command (other adapters: their REPL). Read-only ones only (bt, "
    "p, memory read, ...); allowUnsafe needs the user's explicit consent.",
    args=RawCommandArgs, result=RawCommandResult, handler=_raw, mcp="debug_lldb_command",
    cli=[CliSpec(("lldb",), build=lambda p: (
        p.add_argument("command", nargs="+"),
        p.add_argument("--timeout", type=float, default=30.0, metavar="S"),
        p.add_argument("--allow-unsafe", action="store_true")),
        adapt=lambda ns: {"command": " ".join(ns.command), "timeout_ms": int(ns.timeout * 1000),
                          "allow_unsafe": ns.allow_unsafe})],
    next_steps=lambda r: ["context", "stack"],
))


class ActivityArgs(Args):
    breakpoint_id: int | None = Field(None, description="Only what was done to this breakpoint.")
    client: str | None = Field(None, description="Only this client's: tui, cli, mcp.")
    last: int = Field(10, ge=1, le=1000, description="The last N entries.")


#: An activity answer's default size: it was the largest answer of a hunt
#: (4.6 KB) when the agent wanted to know who set one breakpoint.
ACTIVITY_BUDGET = 1_500


def _about_breakpoint(entry, bp) -> bool:
    if not entry.command.startswith("breakpoint"):
        return False
    if f"breakpoint_id={bp.id}" in entry.summary.split():
        return True
    spec = bp.spec
    if spec.function:
        return f"function={spec.function}" in entry.summary
    return (f"line={spec.line}" in entry.summary.split() and spec.path is not None
            and os.path.basename(spec.path) in entry.summary)


async def _activity(ctx: CommandContext, args: ActivityArgs) -> ActivityResult:
    session = session_of(ctx)
    entries = list(session.activity)
    if args.client:
        entries = [e for e in entries if e.origin == args.client or e.client == args.client]
    if args.breakpoint_id is not None:
        bp = session.breakpoints.get(args.breakpoint_id)
        if bp is None:
            raise InvalidInput(f"No breakpoint #{args.breakpoint_id}; "
                               f"{command_name(ctx.view, 'breakpoint_list')} lists them.")
        entries = [e for e in entries if _about_breakpoint(e, bp)]
    matched = len(entries)
    # The TUI's pane shows the log as it was (its last 100) unless told.
    last = 100 if ctx.view.panes and "last" not in args.model_fields_set else args.last
    shown = entries[-last:]
    if not ctx.view.panes and "last" not in args.model_fields_set:
        # The default answer is kept small; `last`, asked for, is honoured
        # (the note below sends the reader to it).
        size = 0
        kept: list = []
        for entry in reversed(shown):
            size += len(entry.command) + len(entry.summary) + 40
            if kept and size > ACTIVITY_BUDGET:
                break
            kept.append(entry)
        shown = kept[::-1]
    earlier = matched - len(shown)
    note = (f"{earlier} earlier entries; ask for more with `last`, or filter by client or "
            "breakpoint." if earlier else None)
    return ActivityResult(entries=shown, earlier=earlier, note=note)


register(Command(
    id="activity", help="Who did what in this session (person, agent, CLI).",
    description="Who did what in the session (each command, with the client that ran it); "
    "filter by breakpointId or client, the last 10 by default.",
    args=ActivityArgs, result=ActivityResult, handler=_activity, read_only=True,
    mcp="debug_activity", cli=[CliSpec(("activity",))], log_activity=False,
))
