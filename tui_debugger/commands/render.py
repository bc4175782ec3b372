"""Plain-text forms of results, for the CLI and the text part of MCP answers."""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import re
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
        text += f"\n  watch #{change.watch_id} {change.expression}: {change.old} -> {change.new}"
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
    """How the program ended, in words: 'killed by SIGKILL: stopped by cli',
    'exit code 1'."""
    sig = signal_of(exit_code, reason)
    if sig is not None:
        return f"killed by {sig}" + (f": {reason}" if reason else "")
    if exit_code is None and killed(exit_code, reason, adapter):
        return f"killed: {reason}"  # delve reports no status for the process it kills
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
        lines.extend(source_lines(result.source))
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


def source_lines(source: list[Any]) -> list[str]:
    width = len(str(source[-1].line))
    out = []
    for sl in source:
        marker = "->" if sl.current else ("●" if sl.breakpoint else "  ")
        if sl.current and sl.breakpoint:
            marker = "●>"
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
    by = f" (set by {bp.set_by})" if bp.set_by not in ("user", "session") else ""
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


def _sessions(result: Any) -> str:
    if not result.sessions:
        return "No live sessions. Start one: tui-debugger start PROGRAM"
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
    views.SessionList: _sessions, views.BreakpointResult: _breakpoint,
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
        lines.append(f"#{w.id} {w.expression} = {w.value} ({w.access}{where}, hits {w.hits})")
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
        return renderer(result)
    if isinstance(getattr(result, "message", None), str):
        return result.message
    return result.model_dump_json(indent=2, by_alias=True)


# ============================================================================ for agents


def lean_dump(result: Any) -> dict[str, Any]:
    """The result model without the fields left at their defaults (None, false,
    0, []): an agent pays for every byte it reads, and an absent field means
    its default, as the model documents."""
    return _lean(result.model_dump(mode="json", by_alias=True, exclude_defaults=True))


def _lean(node: Any, key: str | None = None) -> Any:
    """What repeats is said once: a variable's path when it is its name, a
    stop's clock time and column, and inside an answer that carries the stop
    (a step's `context`) the session, state, thread and innermost frame."""
    if isinstance(node, list):
        return [_lean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _lean(v, k) for k, v in node.items()}
    if "path" in out and out.get("path") == out.get("name"):
        del out["path"]
    if "seq" in out and "origin" in out and "command" in out:
        out.pop("seq")  # an activity entry's: the order says it
        out.pop("client", None)
    if "connected_at" in out and "origin" in out:
        out.pop("connected_at")  # a client's clock time: noise to an agent
    if key == "stop":
        out.pop("at", None)
        loc = out.get("location")
        if isinstance(loc, dict) and not mid_line_column(loc.get("path"), loc.get("line"),
                                                         loc.get("column")):
            loc.pop("column", None)
    if key == "context":
        for repeated in ("session", "state", "threadId"):
            out.pop(repeated, None)
        frame = out.get("frame")
        if isinstance(frame, dict) and frame.get("index", 0) == 0:
            del out["frame"]  # the innermost frame: the stop's own place
    return out


#: Fields an agent's answer leaves out: what the agent sent (echoed back), and
#: what only a person's screen or another client needs.
_ECHOED = ("command", "waitedMs", "expression", "hostPid", "outputCursor",
           "selectedThreadId", "selectedFrameIndex")
#: Types a value already says (None, 3, 'text', True, 1.5): naming them again
#: cost 20 bytes a local.
_EVIDENT_TYPES = {"NoneType", "int", "str", "bool", "float", "number", "string", "boolean",
                  "undefined", "null"}
#: The step commands: their answer's stop reason "step" is the step asked for.
_STEPS = ("next", "step", "finish", "stepi", "nexti")


def _agent_lean(structured: dict[str, Any], command_id: str) -> dict[str, Any]:
    for key in _ECHOED:
        if key != "waitedMs" or (structured.get("status") != "running" and command_id != "await"):
            structured.pop(key, None)
    if command_id in ("launch", "restart", "attach", "attach_sim"):
        structured.pop("program", None)  # the caller named it
    clients = structured.get("clients")
    if isinstance(clients, list) and all(c.get("origin") == "mcp" for c in clients):
        structured.pop("clients")  # only the agent itself
    # nextSteps only where the next step is not obvious: a stop is followed by
    # looking and stepping, an end by nothing; a program still running is not.
    state = structured.get("status") or structured.get("state")
    if state != "running" and not structured.get("postMortem"):
        structured.pop("nextSteps", None)
    structured.pop("pythonShort", None)  # `python` says it, and the TUI's status bar uses it
    if command_id in ("terminate", "detach") or state == "terminated":
        # What the program was is known to the caller; what is left is how it ended.
        adapter = None if structured.get("postMortem") else structured.get("adapter")
        for gone in ("program", "python", "adapter", "breakpoints", "pid"):
            structured.pop(gone, None)
        if killed(structured.get("exitCode"), structured.get("terminatedReason"), adapter):
            structured["ended"] = ending(structured.get("exitCode"),
                                         structured.get("terminatedReason"), adapter)
            if command_id == "terminate":
                # "killed by SIGKILL: stopped by mcp": the agent's own stop, said
                # whole (a status keeps the fields, which a lost server fills).
                structured.pop("exitCode", None)
                structured.pop("terminatedReason", None)
    if isinstance(structured.get("variable"), dict):
        structured.pop("message", None)  # "name = value (type)": the variable again
    if command_id == "evaluate" and (structured.get("type") in _EVIDENT_TYPES or _type_in_value(
            structured.get("type"), structured.get("value"))):
        structured.pop("type")  # `0`, `(1, 2)`: the value says it, as a local's does
    if command_id == "activity":
        structured.pop("note", None)  # `earlier` says it; the text says how to ask for more
        for entry in structured.get("entries") or []:
            if isinstance(entry, dict):
                entry.pop("at", None)  # the clock time: the order says it
    stop = structured.get("stop")
    if isinstance(stop, dict):
        stop.pop("caused_by", None)  # the agent's own step, or told in `others`
        if stop.pop("only_thread", False):
            # the selected thread, which every tool defaults to; with several
            # threads the stop says which one (each hit of a busy breakpoint)
            stop.pop("thread_id", None)
        if stop.get("reason") not in ("exception", "signal"):
            stop.pop("description", None)  # "Paused on breakpoint": the reason again
        if command_id in _STEPS and stop.get("reason") == "step":
            # The step asked for completed; a stop on the way (a breakpoint, an
            # exception) keeps its reason. The instructions say so.
            stop.pop("reason")
        if structured.get("status") == "stopped":
            structured.pop("status")  # the stop says it
        if isinstance(stop.get("location"), dict):
            stop["location"].pop("name", None)  # the file's name: the path says it
    if isinstance(stop, dict) and "return_value" in stop:
        if stop.get("return_type") in _EVIDENT_TYPES:
            stop.pop("return_type")
        inner = structured.get("context")
        if isinstance(inner, dict) and isinstance(inner.get("locals"), list):
            # "(return) f = None" is the stop's return_value again
            inner["locals"] = [v for v in inner["locals"] if not (
                isinstance(v, dict) and str(v.get("name", "")).startswith("(return)"))]
    inner = structured.get("context")
    if isinstance(inner, dict) and isinstance(inner.get("stop"), dict):
        inner["stop"].pop("only_thread", None)  # the flag is for the answer's own stop
    if structured.get("frameIndex") == 0:
        structured.pop("frameIndex")
    if structured.get("total") == len(structured.get("variables") or []) and not structured.get(
            "truncated"):
        structured.pop("total", None)
    if command_id == "variables" and structured.get("variables"):
        # The scopes searched say where else to look when nothing was found;
        # beside what was found they are noise.
        structured.pop("scopes", None)
    context = structured.get("context") if isinstance(structured.get("context"), dict) else structured
    for var in [*(context.get("locals") or []), *(structured.get("variables") or []),
                *(structured.get("children") or [])]:
        if isinstance(var, dict) and (var.get("type") in _EVIDENT_TYPES
                                      or _type_in_value(var.get("type"), var.get("value"))):
            var.pop("type")
        if isinstance(var, dict) and context.get("localsNote", "").count("unchanged"):
            var.pop("changed", None)  # a step's answer lists only what changed
    note = context.get("localsNote")
    unchanged = re.fullmatch(r"(\d+) unchanged \(debug_variables\)", note) \
        if isinstance(note, str) else None
    if unchanged:
        # "unchanged": 22, a count: the instructions say debug_variables lists them.
        del context["localsNote"]
        context["unchanged"] = int(unchanged.group(1))
    if isinstance(context.get("locals"), list):
        _fold_empty_locals(context)
    if isinstance(context.get("source"), list):
        # Blank lines at the window's edges say nothing (two of seven lines
        # around a function's first line).
        src = context["source"]
        while len(src) > 1 and not src[0].get("current") and not src[0].get("text", "").strip():
            src.pop(0)
        while len(src) > 1 and not src[-1].get("current") and not src[-1].get("text", "").strip():
            src.pop()
        _dedent(context["source"])
        context["source"] = _source_text(context["source"])
    return structured


def _type_in_value(typ: Any, value: Any) -> bool:
    """The value names its type already: `datetime.date(2024, 3, 15)` is a
    date, `<foo.Bar object at 0x...>` a Bar (15-20 bytes a local)."""
    if not isinstance(typ, str) or not isinstance(value, str) or not typ.isidentifier():
        return False
    if {"list": "[", "dict": "{", "tuple": "("}.get(typ) == value[:1]:
        return True
    return re.match(rf"<?(?:[\w.]*\.)?{re.escape(typ)}\b", value) is not None


def _source_text(source: list[dict[str, Any]]) -> str:
    """The lines as a reader sees them, `->` on the current one, `●` on a
    breakpoint's: a list of {line, text} objects cost 20 bytes a line more."""
    width = len(str(max((s.get("line", 0) for s in source), default=0)))
    out = []
    for s in source:
        mark = "->" if s.get("current") else "●" if s.get("breakpoint") else ""
        if s.get("current") and s.get("breakpoint"):
            mark = "●>"
        out.append(f"{mark:>2}{s.get('line', 0):>{width}}| {s.get('text', '')}".rstrip())
    return "\n".join(out)


#: Values that say "not set": a function with many keyword defaults answered a
#: line each for them (12 of relativedelta's 25 locals were None or 0).
_EMPTY_VALUES = ("None", "0", "''", '""', "[]", "{}", "()", "undefined", "null", "nil")


def _fold_empty_locals(context: dict[str, Any]) -> None:
    """Locals whose value is empty are listed by value, names joined: all of
    them are still there, in a fifth of the bytes."""
    empty = [v for v in context["locals"] if v.get("value") in _EMPTY_VALUES
             and not v.get("hasChildren") and set(v) <= {"name", "value", "changed"}]
    if len(empty) < 4:
        return
    folded: dict[str, str] = {}
    for var in empty:
        folded[var["value"]] = (folded[var["value"]] + ", " if var["value"] in folded else "") \
            + var["name"]
    context["locals"] = [v for v in context["locals"] if v not in empty]
    context["localsByValue"] = folded


def _dedent(source: list[dict[str, Any]]) -> None:
    """The lines shown lose the indentation they share (their relative
    indentation stays): 12 to 16 spaces a line inside a method."""
    texts = [s.get("text", "") for s in source if s.get("text", "").strip()]
    if not texts:
        return
    cut = min(len(t) - len(t.lstrip(" ")) for t in texts)
    if cut:
        for s in source:
            s["text"] = s.get("text", "")[cut:]


def _short_stop(stop: Any) -> str:
    """The stop in one line, with the exception's first line when it is one."""
    lines = stop_line(stop).split("\n")
    text = re.sub(r", thread \d+$", "", lines[0])
    if len(lines) > 1 and stop.reason == "exception":
        text += ": " + lines[1].strip()[:160]
    for change in getattr(stop, "watch_changes", None) or []:
        text += f"; watch #{change.watch_id} {change.expression}: {change.old} -> {change.new}"
    return text


def _same_frame_step(result: Any) -> bool:
    stop = getattr(result, "stop", None)
    context = getattr(result, "context", None)
    return (isinstance(result, views.RunResult) and stop is not None and stop.reason == "step"
            and stop.location is not None and bool(stop.location.path)
            and context is not None and context._same_frame)


def short_text(result: Any) -> str:
    """One line that says what the answer is (the data is in structuredContent),
    and what other clients did meanwhile, which an agent must not miss."""
    stop = getattr(result, "stop", None)
    if isinstance(result, views.SessionStatus):
        text = f"Session {result.session}: {result.state}"
        if stop is not None and result.state == "stopped":
            text += ". " + _short_stop(stop)
        if result.exit_code is not None or (result.state == "terminated"
                                            and result.terminated_reason):
            text += ", " + ending(result.exit_code, result.terminated_reason,
                                  None if result.post_mortem else result.adapter)
        if result.restored:
            text += f"; restored {len(result.restored)} breakpoint(s) of the last run"
    elif isinstance(result, views.ContextResult) and result.file:
        text = f"{_short(result.file)}" + (
            f", lines {result.source[0].line}-{result.source[-1].line}" if result.source else "")
    elif isinstance(result, views.TraceResult):
        text = result.message or f"{len(result.results)} hit(s)"
    elif isinstance(result, views.BreakpointResult):
        text = _breakpoint(result).replace("\n  ", " ")
    elif isinstance(result, views.OutputResult):
        lines = sum(e.text.count("\n") or 1 for e in result.entries)
        text = (f"[{result.note}]" if result.note else
                f"{lines} line(s) of output" if result.entries else "No new output.")
        if result.dropped:
            text += f" [{result.dropped} earlier entries were dropped]"
    elif stop is not None and getattr(result, "state", getattr(result, "status", "")) == "stopped":
        text = _short_stop(stop)
        if isinstance(result, views.RunResult) and result.command in _STEPS and \
                text.startswith("Stopped (step)"):
            text = "Stopped" + text[len("Stopped (step)"):]  # the step asked for: as the data says
        if _same_frame_step(result):
            # The function and file were in the last answer: the line is what moved.
            loc = stop.location
            column = mid_line_column(loc.path, loc.line, loc.column)
            col = f":{column}" if column else ""
            said = (f" in {stop.function}" if stop.function else "") + \
                f" at {_short(loc.path)}:{loc.line}{col}"
            text = text.replace(said, f" at line {loc.line}{col}", 1)
    else:
        text = (render(result) or "").strip().split("\n")[0]
        if len(text) > 200:
            text = text[:199] + "…"
    context = getattr(result, "context", None)
    met = getattr(result, "others", None) or getattr(context, "others", None) or []
    return "\n".join([text, *others(met)[1:]])


def agent_answer(command_id: str, result: Any, cwd: str | None = None
                 ) -> tuple[dict[str, Any], str]:
    """What an agent reads of a result: the lean structured answer (the data)
    and one short line of text. Clients that support structured output give
    the model the structuredContent alone; the text line is for the others
    (`mcp_text = "full"` gives them the whole rendering). Made where the result
    is (the session's host), so a joined MCP call carries it over the socket as
    is, validated and serialized once."""
    from ..config import settings

    if settings().mcp_text == "full":
        text = render(result)
    else:
        text = short_text(result)
    text = text or ("No new output." if command_id == "output" else "Done.")
    structured = _agent_lean(lean_dump(result), command_id)
    if command_id == "restart" and getattr(result, "_as_before", False):
        # The same adapter and interpreter as the launch answer said (the pid is new).
        structured.pop("adapter", None)
        structured.pop("python", None)
    stop = structured.get("stop")
    if _same_frame_step(result) and isinstance(stop, dict):
        # A step in the frame of this client's last answer: like its unchanged
        # locals, the file and function it stays in are not said again.
        stop.pop("function", None)
        if isinstance(stop.get("location"), dict):
            stop["location"].pop("path", None)
    if cwd:
        _relative_to(structured, cwd.rstrip("/") + "/")
    if cwd and isinstance(stop, dict) and isinstance(stop.get("location"), dict):
        # A stop's file relative to the caller's directory when it is below it:
        # the caller's relative paths mean the same (breakpoints, run to).
        path = stop["location"].get("path")
        if isinstance(path, str) and path.startswith(cwd.rstrip("/") + "/"):
            stop["location"]["path"] = path[len(cwd.rstrip("/")) + 1:]
    return structured, text


def _relative_to(structured: dict[str, Any], base: str) -> None:
    """Breakpoint paths and the activity's summaries relative to the caller's
    directory when below it (its relative paths mean the same), and a
    breakpoint's landed line only when the debugger moved it."""
    bps = list(structured.get("breakpoints") or []) if isinstance(
        structured.get("breakpoints"), list) else []
    if isinstance(structured.get("breakpoint"), dict):
        bps.append(structured["breakpoint"])
    for bp in bps:
        spec = bp.get("spec") if isinstance(bp, dict) else None
        if isinstance(spec, dict) and isinstance(spec.get("path"), str) and \
                spec["path"].startswith(base):
            spec["path"] = spec["path"][len(base):]
        if isinstance(spec, dict) and bp.get("line") == spec.get("line"):
            bp.pop("line", None)
    for entry in structured.get("entries") or []:
        if isinstance(entry, dict) and isinstance(entry.get("summary"), str):
            entry["summary"] = entry["summary"].replace(base, "")


def _completions(result: Any) -> str:
    if not result.items:
        return "No completions."
    said = [] if result.supported else ["(The debugger does not complete: the frame's names that fit.)"]
    return "\n".join(said + [item.label for item in result.items])


_RENDERERS[views.CompletionsResult] = _completions
