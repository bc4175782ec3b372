"""Breakpoints: add, remove, list and edit."""

import argparse
from typing import Any

from pydantic import Field, model_validator

from backends.errors import InvalidInput, ResourceBusy
from backends.models import BreakpointSpec

from .. import persist
from ..models import SessionState
from .context import abs_path, command_name, parse_location, session_of
from .registry import Args, CliSpec, Command, CommandContext, NoArgs, register
from .views import (BreakpointList, BreakpointResult, BreakpointsRemoved, ExceptionBreakpointsResult,
                    ExceptionFilterView)


class BreakpointAddArgs(Args):
    file: str | None = Field(None, description="Absolute, or relative to the caller's directory.")
    line: int | None = Field(None)
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
    session = session_of(ctx)
    # The one place a caller's file becomes a path (against the caller's
    # directory): the session, the registry and the backend take it as it is.
    spec = BreakpointSpec(
        path=abs_path(ctx, args.file) if args.file else None, line=args.line, function=args.function,
        condition=args.condition, hit_condition=args.hit_condition, log_message=args.log_message,
        enabled=args.enabled,
    )
    existing = _same_place(session, spec)
    if existing is not None:
        kept = await _onto_existing(ctx, session, existing, spec)
        if kept is not None:
            return kept
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


def _qualifiers(spec: BreakpointSpec) -> str:
    """What makes a breakpoint more than 'stop here', in words."""
    parts = []
    if spec.condition:
        parts.append(f"condition {spec.condition!r}")
    if spec.hit_condition:
        parts.append(f"hit count {spec.hit_condition!r}")
    if spec.log_message:
        parts.append(f"log message {spec.log_message!r}")
    return ", ".join(parts)


async def _onto_existing(ctx: CommandContext, session, existing, spec: BreakpointSpec
                         ) -> BreakpointResult | None:
    """An add where a breakpoint stands. The same one again adds nothing; the
    asker's own (or a disabled one) gets the new one beside it (None); another
    client's (or one restored from the last run, which a person set) is never
    changed by an add: a plain add keeps it and says so, a different condition
    or log message is refused with who set it and how to change it deliberately."""
    if _same_spec(existing.spec, spec):
        return BreakpointResult(breakpoint=existing, note=f"Already set as #{existing.id}; "
                                "nothing added.")
    owner = existing.set_by
    if owner == ctx.origin or not existing.spec.enabled:
        return None  # the asker's own, or a disabled one: the new one stands beside it
    who = "the last run (restored)" if owner == persist.RESTORED_BY else owner
    what = _qualifiers(existing.spec)
    update = (f"debug_breakpoint_update (breakpointId {existing.id})" if ctx.view.names == "mcp"
              else f"`{command_name(ctx.view, 'breakpoint_update')} {existing.id}`")
    if not (spec.condition or spec.hit_condition or spec.log_message):
        return BreakpointResult(breakpoint=existing, note=(
            f"Kept #{existing.id} as it is (set by {who}" + (f", {what}" if what else "") +
            f"): a plain add does not replace it. To change it: {update}."))
    raise ResourceBusy(
        f"Line taken by breakpoint #{existing.id}, set by {who}" + (f" ({what})" if what else "")
        + f". Change it deliberately with {update}, or remove it first.",
        breakpointId=existing.id, setBy=owner)


def _same_spec(a: BreakpointSpec, b: BreakpointSpec) -> bool:
    return all(getattr(a, k) == getattr(b, k)
               for k in ("condition", "hit_condition", "log_message", "enabled"))


def _same_place(session, spec: BreakpointSpec):
    for bp in session.breakpoints.values():
        if bp.set_by == "session":
            continue  # the session's own one-shots (run to a line, stop at main)
        if spec.function and bp.spec.function == spec.function:
            return bp
        if spec.path and bp.spec.path == spec.path and bp.spec.line == spec.line:
            return bp
    return None


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
    description="Add a breakpoint at file + line, or on a function; a logMessage prints instead "
    "of stopping. Answers whether it is verified and the line it landed on.",
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
    session = session_of(ctx)
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
    # A run to a line's one-shot is nobody's breakpoint: it is not listed.
    return BreakpointList(breakpoints=[bp for bp in session_of(ctx).breakpoints.values()
                                       if bp.set_by != "session"])


register(Command(
    id="breakpoint_list", help="List breakpoints with their verified state and hit counts.",
    description="List breakpoints: id, place, condition, verified (or moved) line, hits, who "
    "set it.",
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
    session = session_of(ctx)
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


class ExceptionBreakpointsArgs(Args):
    filters: list[str] | None = Field(
        None, description="Filter ids to turn on (others go off); [] none; omit to list them.")


async def _exception_breakpoints(ctx: CommandContext, args: ExceptionBreakpointsArgs) -> ExceptionBreakpointsResult:
    session = session_of(ctx)
    if args.filters is not None:
        await session.set_exception_filters(args.filters, ctx.origin)
    available = session.available_exception_filters()
    enabled = set(session.enabled_exception_filters())
    views = [ExceptionFilterView(id=f.id, label=f.label, enabled=f.id in enabled, default=f.default)
             for f in available]
    if not available:
        message = ("This debugger offers no exception filters"
                   + (" (yet: they are known once the program has started)."
                      if session.state in (SessionState.idle, SessionState.starting) else "."))
    else:
        lines = [f"  [{'x' if v.enabled else ' '}] {v.id:<16} {v.label}" for v in views]
        head = "Exceptions that stop the program:" if args.filters is None else \
            ("Now stopping on: " + (", ".join(f.id for f in views if f.enabled) or "no exceptions") + ".")
        message = "\n".join([head, *lines])
    return ExceptionBreakpointsResult(filters=views, message=message)


def _exception_breakpoints_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("filters", nargs="*", metavar="FILTER",
                        help="filter ids to turn on (the others go off); none: list them")
    parser.add_argument("--none", action="store_true", help="stop on no exception")


register(Command(
    id="exception_breakpoints", help="Choose which exceptions stop the program (list with no filters).",
    description="Which exceptions stop the program: the adapter's filter ids (Python raised, "
    "uncaught; JS all, uncaught; C++ cpp_throw). Kept for the program's next launch.",
    args=ExceptionBreakpointsArgs, result=ExceptionBreakpointsResult,
    handler=_exception_breakpoints, mcp="debug_exception_breakpoints",
    cli=[CliSpec(("break", "exceptions"), build=_exception_breakpoints_cli,
                 adapt=lambda ns: {"filters": []} if ns.none else (
                     {"filters": ns.filters} if ns.filters else {}))],
    next_steps=lambda r: ["continue"],
))
