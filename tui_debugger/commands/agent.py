"""What an agent reads of a result (docs/architecture.md, "What an agent
reads"): the result model, lean (defaults, echoes of the request and what an
earlier answer said left out), and one short line of text. Made in the
session's host, for MCP calls; the CLI's --json, the wire and the TUI keep the
whole model, and render.py writes the CLI's text."""

from __future__ import annotations

import re
from typing import Any

from . import views
from .render import (
    _breakpoint, _short, breakpoint_line, ending, killed, mid_line_column, others, process_line,
    render, stop_line, watch_change_text,
)


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
    structured.pop("capabilities", None)  # an editor's (dap/), which maps them to DAP's
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
    for watch in structured.get("watches") or []:
        for change in (watch.get("history") or []) if isinstance(watch, dict) else []:
            change.pop("watch_id", None)  # the watch's own: said once above
            change.pop("expression", None)
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
        for change in stop.get("watch_changes") or []:
            if isinstance(change, dict) and change.get("thread_id") == stop.get(
                    "thread_id", change.get("thread_id")):
                change.pop("thread_id", None)  # the stop's own thread
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
        text += f"; watch #{change.watch_id} {watch_change_text(change)}"
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
    process = getattr(result, "process", None)
    if isinstance(result, views.SessionStatus):
        text = f"Session {result.session}: {result.state}"
        if stop is not None and process is not None and process.session != result.session:
            # a launch answered by a child process's stop
            text += f"; process {process_line(process)} stopped. " + _short_stop(stop)
        elif stop is not None and result.state == "stopped":
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
    elif isinstance(result, views.BreakpointList) and len(result.breakpoints) > 1:
        # The first, and how many more the data holds: "the first of 25" read as all.
        first = breakpoint_line(result.breakpoints[0])
        text = f"{first} (+{len(result.breakpoints) - 1} more)"
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
    if isinstance(result, views.RunResult) and process is not None and stop is not None:
        text = f"[{process_line(process)}] {text}"
    context = getattr(result, "context", None)
    met = getattr(result, "others", None) or getattr(context, "others", None) or []
    meanwhile = getattr(result, "meanwhile", None) or []
    return "\n".join([text, *others(met)[1:],
                      *(["Meanwhile: " + "; ".join(meanwhile)] if meanwhile else [])])


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
