"""Plain-text forms of results, for the CLI and the text part of MCP answers
(what an agent reads beside it is agent.py's)."""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import time
from typing import Any, Callable

from backends import adapters
from backends.models import Breakpoint

from . import views


def mid_line_column(path: str | None, line: int | None, column: int | None) -> int | None:
    """The stop's column (1-based) when it is inside its line, past the first
    statement: two steps in one `for (...)` header then read differently."""
    if not path or not line or not column or column <= 1:
        return None
    import linecache

    # Rendered in a long-lived host (a CLI command's answer too): a file edited
    # since its last read is read again, as a fresh process would.
    linecache.checkcache(path)
    text = linecache.getline(path, line)
    if not text.strip():
        return None
    first = len(text) - len(text.lstrip()) + 1
    return column if column > first else None


def stop_line(stop: Any) -> str:
    if stop is None:
        return ""
    where = ""
    if stop.location is not None and stop.location.path:
        where = f" at {_short(stop.location.path)}:{stop.location.line}"
        column = mid_line_column(stop.location.path, stop.location.line, stop.location.column)
        if column:
            where += f":{column}"
    func = f" in {stop.function}" if stop.function else ""
    reason = stop.reason
    if reason == "run_to":
        reason = f"run to {stop.description}" if stop.description else "run to"
    if stop.breakpoint_ids:
        reason += " " + ", ".join(f"#{i}" for i in stop.breakpoint_ids)
    text = f"Stopped ({reason}){func}{where}"
    if stop.thread_id is not None:
        text += f", thread {stop.thread_id}"
    held = getattr(stop, "held_threads", None) or []
    if held:
        text += (f"\n  {len(held)} more thread(s) held at a breakpoint "
                 f"({', '.join(str(t) for t in held[:10])}{'…' if len(held) > 10 else ''}): "
                 "continue shows the next")
    passed = getattr(stop, "passed_threads", None) or []
    if passed:
        text += (f"\n  {len(passed)} thread(s) reached a breakpoint while the program was being "
                 f"continued and went on: {', '.join(str(t) for t in passed[:10])}")
    if stop.text:
        text += f"\n  {stop.text}"
    elif stop.description and stop.reason == "exception":
        text += f"\n  {stop.description}"
    if getattr(stop, "return_value", None) is not None:
        typ = f" ({stop.return_type})" if stop.return_type else ""
        text += f"\n  {stop.returned_from or 'the function'} returned {stop.return_value}{typ}"
    for change in getattr(stop, "watch_changes", None) or []:
        text += f"\n  watch #{change.watch_id} {watch_change_text(change)}"
    return text


def _changed_lines(stop: Any) -> set[int]:
    """The lines of the stopped frame's file that its watches' changes were
    made at ("dicttoolz.py:297")."""
    location = getattr(stop, "location", None)
    path = getattr(location, "path", None)
    lines: set[int] = set()
    for change in getattr(stop, "watch_changes", None) or []:
        at = getattr(change, "at", None) or ""
        name, _, line = at.rpartition(":")
        if path and line.isdigit() and os.path.basename(path) == os.path.basename(name):
            lines.add(int(line))
    return lines


def watch_change_text(change: Any) -> str:
    """"acct.balance: 100 -> -20 at bank.py:14 (withdraw)" """
    text = f"{change.expression}: {change.old} -> {change.new}"
    if getattr(change, "at", None):
        text += f" at {change.at}" + (f" ({change.function})" if change.function else "")
    if getattr(change, "process", None):
        text += f" in {change.process}"
    if getattr(change, "note", None):
        text += f" [{change.note}]"
    return text


def signal_of(exit_code: int | None, reason: str | None = None) -> str | None:
    """The signal that ended the program, from its exit code as the backends
    report it: negative (-9), or 128+N / 256-N (247 for SIGKILL from debugpy)
    when the session itself ended it, since a program may also exit(137)."""
    import signal

    if exit_code is None:
        return None
    number = None
    if exit_code < 0:
        number = -exit_code
    elif reason and reason.startswith(("stopped by", "detached by")):
        if 128 < exit_code < 160:
            number = exit_code - 128
        elif 224 < exit_code < 256:
            number = 256 - exit_code
        elif reason.startswith("stopped by") and 0 < exit_code < 65:
            # LLDB reports the signal's number as the exit status of a process
            # it killed ("exit code 9" was SIGKILL).
            number = exit_code
    if number is None:
        return None
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def killed(exit_code: int | None, reason: str | None, adapter: str | None = None) -> bool:
    """The session ended the program: a signal, or delve's kill, which tells no
    status (a core dump's session or an attach ends nothing: no adapter given)."""
    return signal_of(exit_code, reason) is not None or (
        exit_code is None and bool(reason) and adapters.profile(adapter).kills_silently
        and reason.startswith("stopped by"))


def ending(exit_code: int | None, reason: str | None, adapter: str | None = None) -> str:
    """How the program ended, in words: 'stopped by cli' (the session ended it:
    which signal did is the session's business, not news), 'killed by SIGSEGV',
    'exit code 1'."""
    sig = signal_of(exit_code, reason)
    if sig is not None and reason and reason.startswith("stopped by"):
        return reason
    if sig is not None:
        return f"killed by {sig}" + (f": {reason}" if reason else "")
    if exit_code is None and killed(exit_code, reason, adapter):
        return reason or "killed"  # delve reports no status for the process it kills
    text = f"exit code {exit_code}" if exit_code is not None else "ended"
    return text + (f" ({reason})" if reason else "")


#: The directory paths are shown relative to: the client's, when a session's
#: host renders a command line's answer for it (default: this process's).
_BASE: contextvars.ContextVar[str | None] = contextvars.ContextVar("render_base", default=None)


@contextlib.contextmanager
def relative_to(directory: str | None) -> Any:
    token = _BASE.set(directory)
    try:
        yield
    finally:
        _BASE.reset(token)


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path, _BASE.get() or os.curdir)
        return rel if not rel.startswith("../..") else path
    except ValueError:
        return path


def context(result: Any, stop: Any = None) -> str:
    """`stop`: the stop, when the answer carries it beside this context."""
    lines: list[str] = []
    stop = stop or result.stop
    if getattr(result, "file", None):
        return "\n".join([f"{_short(result.file)}:", *source_lines(result.source)])
    if result.state != "stopped":
        lines.append(f"Session {result.session} is {result.state}"
                     + (f" (exit code {result.exit_code})" if result.exit_code is not None else "") + ".")
        return "\n".join(lines)
    lines.append(stop_line(stop) or "Stopped.")
    if result.frame is not None and stop and result.frame.index != 0:
        lines.append(f"Frame {result.frame.index}: {result.frame.name}")
    if result.source:
        lines.append("")
        lines.extend(source_lines(result.source, _changed_lines(stop)))
    elif result.source_note:
        lines.append(result.source_note)
    if result.locals:
        lines.append("")
        lines.append("Locals:")
        lines.extend(variable_lines(result.locals))
    if result.locals_note:
        lines.append(f"  ({result.locals_note})")
    lines.extend(others(getattr(result, "others", [])))
    return "\n".join(lines)


def source_lines(source: list[Any], changed: set[int] = frozenset()) -> list[str]:
    """`changed`: the lines a watched value was changed at (marked `W`): a
    data breakpoint's stop is just after that line, the arrow often lines
    below it (on the function's return)."""
    width = len(str(source[-1].line))
    out = []
    for sl in source:
        marker = "->" if sl.current else ("●" if sl.breakpoint else "  ")
        if sl.current and sl.breakpoint:
            marker = "●>"
        elif sl.line in changed and not sl.current:
            marker = "W"
        out.append(f"{marker:>2} {sl.line:>{width}} | {sl.text}")
    return out


def variable_lines(variables: list[Any], indent: str = "  ") -> list[str]:
    out = []
    for v in variables:
        typ = f" ({v.type})" if v.type else ""
        more = " …" if v.has_children else ""
        changed = " *" if getattr(v, "changed", False) else ""
        if not v.value and v.has_children:  # a group such as debugpy's "special variables"
            out.append(f"{indent}{v.name} …")
            continue
        out.append(f"{indent}{v.name}{typ} = {v.value}{more}{changed}")
    return out


def breakpoint_line(bp: Breakpoint) -> str:
    by = " (from the last run)" if bp.set_by == "restored" else \
        f" (set by {bp.set_by})" if bp.set_by not in ("user", "session") else ""
    hits = f" hits={bp.hits}" if bp.hits else ""
    text = bp.describe()
    if bp.spec.path:
        text = text.replace(bp.spec.path, _short(bp.spec.path), 1)
    return f"#{bp.id} {text}{hits}{by}"


def others(entries: list[Any]) -> list[str]:
    if not entries:
        return []
    return ["", "Meanwhile: " + "; ".join(
        f"{e.origin} {e.command}" + (f" {e.summary}" if e.summary else "") for e in entries)]


def run(result: Any) -> str:
    if result.status == "stopped" and result.context is not None:
        text = context(result.context, result.stop)
    elif result.status == "stopped":
        text = "\n".join([stop_line(result.stop), *([result.message] if result.message else [])])
    else:
        text = result.message or result.status
    if not (result.context and result.context.others):
        text = "\n".join([text, *others(result.others)])
    return text


def status(result: Any) -> str:
    lines = [f"Session {result.session}: {result.state}"]
    process = getattr(result, "process", None)
    if process is not None and result.stop is not None and process.session != result.session:
        # a launch answered by a child process's stop
        lines[0] += f"; process {process_line(process)} stopped"
    if result.program:
        lines.append(f"  program: {result.program}" + (f" (pid {result.pid})" if result.pid else ""))
    if result.adapter:
        lines.append(f"  adapter: {result.adapter}")
    if getattr(result, "python", None):
        lines.append(f"  python: {result.python}")
    if result.stop is not None and getattr(result, "context", None) is None:
        lines.append("  " + stop_line(result.stop).replace("\n", "\n  "))
    adapter = None if getattr(result, "post_mortem", False) else result.adapter
    if killed(result.exit_code, result.terminated_reason, adapter):
        lines.append(f"  ended: {ending(result.exit_code, result.terminated_reason, adapter)}")
    else:
        if result.exit_code is not None:
            lines.append(f"  exit code: {result.exit_code}")
        if result.state == "terminated" and result.terminated_reason:
            lines.append(f"  ended: {result.terminated_reason}")
    lines.append(f"  breakpoints: {result.breakpoints}")
    for restored in getattr(result, "restored", []):
        lines.append(f"    restored {restored}")
    if result.clients:
        who = ", ".join(f"{c.origin}" for c in result.clients)
        lines.append(f"  connected: {who}")
    if getattr(result, "context", None) is not None:
        lines.append("")
        lines.append(context(result.context, result.stop))
    if result.message:
        lines.append(f"  {result.message}")
    return "\n".join(lines)


def _warm_line(warm: Any) -> str:
    until = f", until {time.strftime('%H:%M:%S', time.localtime(warm.until))}" if warm.until else ""
    screen = f", the TUI warm in pid {warm.screen}" if warm.screen else ""
    host = f"pid {warm.pid}" if warm.pid else "no host"
    return (f"warm host: {host}{screen}, project {warm.project or '?'}{until} "
            "(the next session starts on it; tui-debugger warm stop ends it)")


def _warm_stopped(result: Any) -> str:
    ended = [f"Warm host {result.pid} ended." if result.pid else "",
             f"Warm screen {result.screen} ended." if result.screen else ""]
    return (" ".join(e for e in ended if e) if result.stopped
            else "No warm host was waiting.")


def _sessions(result: Any) -> str:
    text = _sessions_only(result) or "No live sessions. Start one: tui-debugger start PROGRAM"
    warm = getattr(result, "warm_host", None)
    return text if warm is None else f"{text}\n{_warm_line(warm)}"


def _sessions_only(result: Any) -> str:
    if not result.sessions:
        return ""
    def program_pid(s: Any) -> str:
        live = s.program_pid and s.state not in ("terminated", "idle")
        return f"pid {s.program_pid}" if live else "no program"

    depth: dict[str, int] = {}
    lines = []
    for s in result.sessions:
        parent = getattr(s, "parent", None)
        depth[s.name] = depth.get(parent, -1) + 1 if parent else 0
        indent = "  " * depth[s.name] + ("└ " if parent else "")
        lines.append(
            f"{'*' if s.current else ' '} {indent}{s.name}  {s.state or '-'}  {s.adapter or '-'}  "
            f"{s.program or '-'}  {program_pid(s)}  host {s.pid}  "
            f"started {time.strftime('%H:%M:%S', time.localtime(s.created_at))}"
            f"{' by ' + s.started_by if s.started_by else ''}  "
            f"{'this project' if s.this_project else 'project ' + (s.project or '?')}")
    return "\n".join(lines)


def _breakpoint(result: Any) -> str:
    bp = result.breakpoint
    moved = bool(bp.line and bp.spec.line and bp.line != bp.spec.line)
    # "(moved to line 7)" is in the breakpoint's line and the note says why:
    # "verified" alone, not the line a third time.
    text = f"Breakpoint {breakpoint_line(bp)}" + (
        f", verified at line {bp.line or bp.spec.line}" if bp.verified and not bp.spec.function
        and not moved else ", verified" if bp.verified else "")
    note = result.note
    if moved and note and note.endswith(f"; the breakpoint moved to line {bp.line}."):
        note = note.split(";")[0] + "."  # the move is in the breakpoint's line
    return text + (f"\n  {note}" if note else "")


def _breakpoints(result: Any) -> str:
    return "\n".join(breakpoint_line(bp) for bp in result.breakpoints) or "No breakpoints."


def _removed(result: Any) -> str:
    ids = ", ".join(f"#{i}" for i in result.removed) or "none"
    return f"Removed {ids}; {result.remaining} left."


def _stack(result: Any) -> str:
    lines = []
    for f in result.frames:
        where = f" at {_short(f.file)}:{f.line}" if f.file else ""
        lines.append(f"{'*' if f.selected else ' '} #{f.index} {f.name}{where}")
    if result.truncated:
        lines.append(f"  ... {result.total - len(result.frames)} more frames (maxFrames)")
    return "\n".join(lines) or "No frames."


def _variables(result: Any) -> str:
    head = f"{result.scope}" + (f" / {result.path}" if result.path else "") + ":"
    lines = [head, *variable_lines(result.variables)]
    if result.note:
        lines.append(f"  ({result.note})")
    return "\n".join(lines)


def _evaluate(result: Any) -> str:
    typ = f" ({result.type})" if result.type else ""
    return "\n".join([f"{result.value}{typ}", *variable_lines(result.children)])


def thread_state(thread: Any) -> str:
    if thread.held:
        return f"held: {thread.reason or 'breakpoint'} (next continue)"
    if thread.stopped:
        return f"stopped: {thread.reason}" if thread.reason else "stopped"
    return {None: "", False: "running"}.get(thread.stopped, "")


def thread_place(thread: Any) -> str:
    place = thread.function or ""
    if thread.location is not None and thread.location.path:
        place += f" {_short(thread.location.path)}:{thread.location.line}"
    return place.strip()


def _threads(result: Any) -> str:
    return "\n".join(
        "  ".join(part for part in (f"{'*' if t.selected else ' '} {t.id}", t.name,
                                    thread_state(t), thread_place(t)) if part)
        for t in result.threads
    ) or "No threads."


def _frame(result: Any) -> str:
    if result.context is not None:
        return context(result.context)
    return f"#{result.frame.index} {result.frame.name}"


def _output(result: Any) -> str:
    text = "".join(e.text for e in result.entries)
    if result.dropped:
        text = f"[{result.dropped} earlier entries were dropped]\n" + text
    if getattr(result, "note", None):
        text = f"[{result.note}]\n" + text
    return text.rstrip("\n")


def _doctor(result: Any) -> str:
    lines = [f"python {result.python} on {result.platform}"]
    for a in result.adapters:
        if a.available:
            lines.append(f"  ok       {a.name:9} {a.path or ''} {a.version or ''}".rstrip())
        else:
            lines.append(f"  missing  {a.name:9} {a.install_hint}")
        if a.note:
            lines.append(f"           {'':9} {a.note}")
    if getattr(result, "program_python", None):
        lines.append(f"Python programs started here run under {result.program_python}; "
                     "choose another with --python PATH.")
    if getattr(result, "warm_host", None) is not None:
        lines.append(_warm_line(result.warm_host))
    return "\n".join(lines)


def _activity(result: Any) -> str:
    lines = [f"{time.strftime('%H:%M:%S', time.localtime(e.at))} {e.origin:4} {e.command} "
             f"{e.summary}".rstrip() for e in result.entries]
    if getattr(result, "note", None):
        lines.insert(0, f"({result.note})")
    return "\n".join(lines) or "No activity yet."


def _trace(result: Any) -> str:
    lines = [json.dumps(r.model_dump()) for r in result.results]
    return "\n".join([*lines, result.message or ""]).strip()


def _script(result: Any) -> str:
    return "\n".join(json.dumps(r.model_dump()) for r in result.results) or "No hits."


_RENDERERS: dict[type, Callable[[Any], str]] = {
    views.RunResult: run, views.ContextResult: context, views.SessionStatus: status,
    views.SessionList: _sessions, views.WarmStopped: _warm_stopped, views.BreakpointResult: _breakpoint,
    views.BreakpointList: _breakpoints, views.BreakpointsRemoved: _removed,
    views.StackResult: _stack, views.VariablesResult: _variables,
    views.EvaluateResult: _evaluate, views.ThreadsResult: _threads,
    views.FrameSelected: _frame, views.OutputResult: _output,
    views.RawCommandResult: lambda r: r.output, views.DoctorResult: _doctor,
    views.ActivityResult: _activity, views.ScriptResult: _script, views.TraceResult: _trace,
}


def disassembly_lines(result: Any) -> list[str]:
    """Source lines interleaved with their instructions; `=>` marks the pc."""
    lines: list[str] = []
    for ins in result.instructions:
        if ins.symbol:
            lines.append(f"{ins.symbol}:")
        if ins.line:
            where = f"{os.path.basename(ins.file)}:{ins.line}" if ins.file else f"line {ins.line}"
            lines.append(f"  {where}  {(ins.source or '').strip()}".rstrip())
        marker = "=>" if ins.current else "  "
        lines.append(f"{marker}   {ins.address}  {ins.instruction}")
    return lines


def _disassembly(result: Any) -> str:
    if not result.instructions:
        return f"No instructions at {result.target}."
    return "\n".join(disassembly_lines(result))


def _memory(result: Any) -> str:
    return "\n".join([f"{result.count} bytes at {result.address} ({result.expression}):",
                      *result.rows])


def _watches(result: Any) -> str:
    lines = [result.message] if result.message else []
    for w in result.removed:
        lines.append(f"Removed watch #{w.id} {w.expression}")
    for w in result.watches:
        where = f" at {w.address}, {w.size} bytes" if w.address else ""
        extra = "".join([f", {w.kind}" if w.kind else "",
                         f", if {w.condition}" if w.condition else "",
                         f", from change {w.hit_count}" if w.hit_count else "",
                         ", log only" if w.log_only else "",
                         f", forked with it from pid {w.copied_from_pid}"
                         if getattr(w, "copied_from_pid", None) else ""])
        lines.append(f"#{w.id} {w.expression} = {w.value} ({w.access}{where}{extra}, "
                     f"hits {w.hits})")
        for change in w.history:
            lines.append(f"  {watch_change_text(change)}"
                         + ("" if change.stopped else " (went on)"))
    if not lines:
        lines.append("No watchpoints.")
    return "\n".join(lines)


_RENDERERS[views.DisassemblyResult] = _disassembly
_RENDERERS[views.MemoryResult] = _memory
_RENDERERS[views.WatchResult] = _watches


def render(result: Any) -> str:
    """The short text of a result, for the CLI and beside MCP's structured answer."""
    renderer = _RENDERERS.get(type(result))
    if renderer is not None:
        text = renderer(result)
    elif isinstance(getattr(result, "message", None), str):
        text = result.message
    else:
        return result.model_dump_json(indent=2, by_alias=True)
    return with_process(result, text)


def process_line(process: Any) -> str:
    """A process of the program, in words: "calc.25154 (pid 25154, calc.py)"."""
    said = [f"pid {process.pid}"] if process.pid else []
    if process.program:
        said.append(os.path.basename(process.program) if os.path.isabs(process.program)
                    else process.program)
    return process.session + (f" ({', '.join(said)})" if said else "")


def with_process(result: Any, text: str) -> str:
    """An answer in a program of several processes: which one stopped (when
    it is not the session the caller named), and the stops elsewhere."""
    process = getattr(result, "process", None)
    stop = getattr(result, "stop", None)
    if process is not None and stop is not None and not hasattr(result, "session"):
        text = f"In process {process_line(process)}:\n{text}"
    meanwhile = getattr(result, "meanwhile", None) or []
    if meanwhile:
        text += "\nMeanwhile: " + "; ".join(meanwhile)
    return text


def _completions(result: Any) -> str:
    if not result.items:
        return "No completions."
    said = [] if result.supported else ["(The debugger does not complete: the frame's names that fit.)"]
    return "\n".join(said + [item.label for item in result.items])


_RENDERERS[views.CompletionsResult] = _completions
