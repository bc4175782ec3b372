"""Machine level: disassembly, memory and watchpoints (data breakpoints). The
instruction steps (stepi, nexti) are run control and live in control.py."""


import string
from typing import Literal

from pydantic import Field, model_validator

from backends.errors import InvalidInput

from .. import tree
from ..models import SessionState
from .context import STOPPED, session_of
from .registry import Args, CliSpec, Command, CommandContext, register
from .views import DisassemblyResult, InstructionView, MemoryResult, WatchResult

MAX_INSTRUCTIONS = 400
MAX_MEMORY = 4096


class DisassembleArgs(Args):
    address: str | None = Field(None, description="Address to start at (0x401000), or an "
                                "expression whose value is one (a pointer).")
    function: str | None = Field(None, description="Function to disassemble from its start.")
    count: int = Field(32, ge=1, le=MAX_INSTRUCTIONS, description="How many instructions.")
    frame_index: int | None = Field(None, description="Frame whose pc to show (default: the "
                                    "selected one); also where expressions are read.")

    @model_validator(mode="after")
    def _one_target(self) -> "DisassembleArgs":
        if self.address and self.function:
            raise ValueError("give address or function, not both")
        return self


def _source_text(path: str | None, line: int, cache: dict[str, list[str] | None]) -> str | None:
    if not path:
        return None
    if path not in cache:
        from ..paths import source_problem

        if source_problem(path):
            cache[path] = None
            return None
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                cache[path] = handle.read().splitlines()
        except OSError:
            cache[path] = None
    lines = cache[path]
    return lines[line - 1] if lines and 0 < line <= len(lines) else None


async def _disassemble(ctx: CommandContext, args: DisassembleArgs) -> DisassemblyResult:
    session = session_of(ctx)
    target = args.function or args.address
    instructions, pc = await session.disassemble(target, args.count, args.frame_index)
    cache: dict[str, list[str] | None] = {}
    views = []
    shown: tuple[str | None, int] | None = None
    for ins in instructions:
        location = ins.location
        if location is not None and (location.path, location.line) == shown:
            location = None  # the same line again (another column): one header is enough
        elif location is not None and location.line:
            shown = (location.path, location.line)
        views.append(InstructionView(
            address=ins.address, instruction=ins.instruction, bytes=ins.bytes,
            symbol=ins.symbol,
            current=pc is not None and int(ins.address, 16) == int(pc, 16),
            file=location.path if location else None,
            line=location.line if location and location.line else None,
            source=_source_text(location.path, location.line, cache) if location else None,
        ))
    return DisassemblyResult(target=target or "the current frame",
                             pc=hex(int(pc, 16)) if pc else None, instructions=views)


register(Command(
    id="disassemble", help="Disassemble around the pc, or a function or an address.",
    description="Machine instructions with their source lines; without address or function, "
    "around the selected frame's pc (marked current). lldb-dap, lldb-cli, dlv.",
    args=DisassembleArgs, result=DisassemblyResult, handler=_disassemble, read_only=True,
    mcp="debug_disassemble",
    cli=[CliSpec(("disassemble",), aliases=(("disas",),), build=lambda p: (
        p.add_argument("target", nargs="?", metavar="ADDRESS|FUNCTION"),
        p.add_argument("--count", "-c", type=int, default=None, metavar="N"),
        p.add_argument("--frame", type=int, dest="frame_index")),
        adapt=lambda ns: _disassemble_cli(ns))],
    next_steps=lambda r: ["stepi", "nexti", "memory_read"],
    applies_in=STOPPED,
))


def _disassemble_cli(ns) -> dict:
    out: dict = {}
    if ns.target:
        text = ns.target.strip()
        looks_like_address = text.lower().startswith("0x") or text.isdigit() or \
            text.startswith(("&", "*", "("))
        out["address" if looks_like_address else "function"] = text
    if ns.count is not None:
        out["count"] = ns.count
    if ns.frame_index is not None:
        out["frame_index"] = ns.frame_index
    for name in ("condition", "hit_count"):
        if getattr(ns, name, None) is not None:
            out[name] = getattr(ns, name)
    if getattr(ns, "log", False):
        out["log"] = True
    return out


class MemoryArgs(Args):
    address: str | None = Field(None, description="Address to read (0x7ffc1000).")
    expression: str | None = Field(None, description="A pointer, an array or a variable: reads "
                                   "what it points to, or its own bytes.")
    count: int = Field(64, ge=1, le=MAX_MEMORY, description="How many bytes.")
    frame_index: int | None = Field(None, description="Frame to read the expression in.")

    @model_validator(mode="after")
    def _one_target(self) -> "MemoryArgs":
        if self.address and self.expression:
            raise ValueError("give address or expression, not both")
        if not (self.address or self.expression):
            raise ValueError("give an address or an expression to read memory at")
        return self


_PRINTABLE = set(string.printable) - set("\t\n\r\x0b\x0c")


def hex_rows(start: int, data: bytes, width: int = 16) -> list[str]:
    """`0x...: 48 65 6c 6c 6f ...  |Hello...|`, 16 bytes a row."""
    rows = []
    for offset in range(0, len(data), width):
        chunk = data[offset:offset + width]
        hexes = " ".join(f"{b:02x}" for b in chunk).ljust(width * 3 - 1)
        text = "".join(chr(b) if chr(b) in _PRINTABLE else "." for b in chunk)
        rows.append(f"{start + offset:#x}: {hexes}  |{text}|")
    return rows


async def _memory(ctx: CommandContext, args: MemoryArgs) -> MemoryResult:
    session = session_of(ctx)
    target = (args.address or args.expression or "").strip()
    address, data = await session.read_memory(target, args.count, args.frame_index)
    start = int(address, 16)
    return MemoryResult(expression=target, address=f"{start:#x}", count=len(data),
                        hex=data.hex(), rows=hex_rows(start, data))


register(Command(
    id="memory_read", help="Read memory as hex and ASCII.",
    description="Read `count` bytes at an address, or where an expression points (a pointer, "
    "an array, &variable): hex and ASCII rows. lldb-dap, lldb-cli.",
    args=MemoryArgs, result=MemoryResult, handler=_memory, read_only=True,
    mcp="debug_memory_read",
    cli=[CliSpec(("memory",), aliases=(("x",),), build=lambda p: (
        p.add_argument("target", metavar="ADDRESS|EXPRESSION"),
        p.add_argument("--count", "-c", type=int, default=None, metavar="N"),
        p.add_argument("--frame", type=int, dest="frame_index")),
        adapt=lambda ns: {
            ("address" if ns.target.lower().startswith("0x") else "expression"): ns.target,
            **({"count": ns.count} if ns.count is not None else {}),
            **({"frame_index": ns.frame_index} if ns.frame_index is not None else {})})],
    next_steps=lambda r: ["watch", "disassemble"],
    applies_in=STOPPED,
))


class WatchArgs(Args):
    expression: str | None = Field(None, description="What to watch: a variable, a field, "
                                   "*pointer. Without it: list the watchpoints.")
    access: Literal["write", "read", "readWrite"] = Field(
        "write", description="Stop on write (default), read, or readWrite.")
    remove: list[int] | None = Field(None, description="Ids of watchpoints to remove.")
    all: bool = Field(False, description="With remove: every watchpoint.")
    frame_index: int | None = Field(None, description="Frame to read the expression in.")
    condition: str | None = Field(None, description="Python: stop only when true; `new` and "
                                  "`old` are the values, e.g. 'new < 0'.")
    hit_count: int | None = Field(None, description="Python: stop from the Nth change on.")
    log: bool = Field(False, description="Python: never stop; record each change with its "
                      "line (list the watches for the history).")

    @model_validator(mode="after")
    def _one_action(self) -> "WatchArgs":
        if self.expression and (self.remove or self.all):
            raise ValueError("give an expression to watch, or remove, not both")
        return self


async def _watch(ctx: CommandContext, args: WatchArgs) -> WatchResult:
    session = session_of(ctx)
    if args.remove or args.all:
        removed = await session.remove_watches(None if args.all else args.remove, ctx.origin)
        return WatchResult(watches=list(session.watches.values()), removed=removed,
                           message=_copies_left(ctx, session, removed))
    if not args.expression:
        return WatchResult(watches=list(session.watches.values()),
                           message=_unwatched(ctx, session))
    watch = await session.add_watch(args.expression, args.access, ctx.origin, args.frame_index,
                                    condition=args.condition, hit_count=args.hit_count,
                                    log_only=args.log)
    what = ("records each change with its line (list the watches for the history)"
            if watch.log_only else "stops when it changes, and the stop says old and new")
    return WatchResult(
        watches=list(session.watches.values()),
        message=f"Watching {watch.expression} ({watch.access}) = {watch.value}: the program "
        f"{what}.{_PYTHON_SEES + _processes(ctx, session) if watch.kind else ''}")


def _processes(ctx: CommandContext, session) -> str:
    """Which processes a Python watch covers: said when one is set."""
    text = _PYTHON_COVERS
    others = [m for m in tree.tree_of(ctx.hub, session)
              if m is not session and m.state != SessionState.terminated] if ctx.hub else []
    if others:
        text += (" Running now, not watched by this one: "
                 + ", ".join(tree.describe(m) for m in others[:5])
                 + ("…" if len(others) > 5 else "") + " (set it there when one stops).")
    return text


def _unwatched(ctx: CommandContext, session) -> str | None:
    """The processes of the tree no Python watch reaches (tree._tell_unwatched):
    said beside the list."""
    if ctx.hub is None or not any(w.kind for w in session.watches.values()):
        return None
    fresh = [m for m in tree.tree_of(ctx.hub, session) if m is not session
             and m.state != SessionState.terminated and m.metadata.get("unwatched")]
    if not fresh:
        return None
    return ("Not watched (started afresh, or forked from a process with no watch): "
            + ", ".join(tree.describe(m) for m in fresh[:5]) + ("…" if len(fresh) > 5 else "")
            + ". Set the watch there when it stops.")


def _copies_left(ctx: CommandContext, session, removed: list) -> str | None:
    """Forked children keep their copies of a removed watch: said, with where."""
    if ctx.hub is None or not removed:
        return None
    pid = tree.pid_of(session)
    ids = {w.id for w in removed}
    holders = [m for m in tree.tree_of(ctx.hub, session)
               if m is not session and m.state != SessionState.terminated
               and any(w.id in ids and w.copied_from_pid == pid for w in m.watches.values())]
    if not holders:
        return None
    return ("Forked child processes keep their copies: "
            + ", ".join(tree.describe(m) for m in holders)
            + ". Remove them there (--session NAME / debugSessionId) while it is stopped.")


#: what a Python watch cannot see, said when one is set
_PYTHON_SEES = (" Seen: rebinding and in-place changes (append, +=) by code that names it "
                "(any code, for an item); not setattr() with a computed name or an alias in "
                "code that never names it, until code that names it runs.")
#: which processes a Python watch covers
_PYTHON_COVERS = (" Watched in this process and the child processes it forks from now on "
                  "(os.fork, multiprocessing fork), each stopping where it changes its copy; "
                  "not in processes started afresh (subprocess, multiprocessing spawn or "
                  "forkserver).")


def _watch_cli(ns) -> dict:
    out: dict = {"access": ns.access}
    if ns.remove:
        if ns.remove == ["all"]:
            out["all"] = True
        else:
            try:
                out["remove"] = [int(i) for i in ns.remove]
            except ValueError:
                raise InvalidInput("--remove takes watchpoint ids, or `all`.") from None
    elif ns.expression:
        out["expression"] = " ".join(ns.expression)
    if ns.frame_index is not None:
        out["frame_index"] = ns.frame_index
    for name in ("condition", "hit_count"):
        if getattr(ns, name, None) is not None:
            out[name] = getattr(ns, name)
    if getattr(ns, "log", False):
        out["log"] = True
    return out


register(Command(
    id="watch", help="Stop when a value changes (a watchpoint).",
    description="Stop when a value changes: a variable, field or *pointer (native), a name, "
    "obj.attr or obj[key] (Python, in any function or thread). The stop says old, new, where. "
    "No expression: list.",
    args=WatchArgs, result=WatchResult, handler=_watch, mcp="debug_watch",
    cli=[CliSpec(("watch",), build=lambda p: (
        p.add_argument("expression", nargs="*", metavar="EXPRESSION"),
        p.add_argument("--access", choices=["write", "read", "readWrite"], default="write"),
        p.add_argument("--remove", nargs="+", metavar="ID|all"),
        p.add_argument("--frame", type=int, dest="frame_index"),
        p.add_argument("--condition", metavar="C", help="Python: stop only when C is true "
                       "(`new`, `old`: the values)"),
        p.add_argument("--hit-count", type=int, dest="hit_count", metavar="N",
                       help="Python: stop from the Nth change on"),
        p.add_argument("--log", action="store_true",
                       help="Python: record each change with its line, never stop")),
        adapt=_watch_cli)],
    next_steps=lambda r: ["continue", "watch"],
    applies_in=STOPPED,
))



