"""Loaded into lldb's embedded Python by the LLDB CLI backend.

Every query prints one line, MARKER followed by JSON, so the backend never parses
lldb's human-oriented text. Values are described exactly as lldb-dap describes
them (VariableDescription in lldb-dap's JSONUtils), so the front ends cannot
tell the two LLDB backends apart.

The queries are here; what they stand on (set-up, the answer lines, the target,
frames by id) is in tui_debugger_lldb_core.py beside it.

This file runs under whatever Python lldb was built with (Xcode's is 3.9): keep
it free of newer syntax and of imports outside the standard library.
"""

import json
import os
import time

import lldb
from tui_debugger_lldb_core import (
    _arg,
    _emit,
    _fail,
    _file_path,
    _frame_by_id,
    _frame_id,
    _log,
    _process,
    _target,
    configure_launch,
    create_target,
    setup,
)

#: What the backend and lldb call as tui_debugger_lldb.NAME: lldb's namespace
#: holds this module, not its core
__all__ = [
    "setup", "create_target", "configure_launch", "stop_info", "threads", "select_thread",
    "stack", "scopes", "variables", "set_variable", "return_value", "evaluate",
    "unwind_expression", "set_breakpoints", "delete_breakpoints", "logpoint_hit",
    "disassemble", "resolve_address", "set_watchpoints", "read_memory",
]

LOCALS, GLOBALS, REGISTERS = "locals", "globals", "registers"

# Handles for values with children. They are never reused, so a handle from
# before a resume fails loudly instead of showing some other value.
_refs = {}
_next_ref = [1]
_refs_stop_id = [None]


# --------------------------------------------------------------------------- state


def _thread_name(thread):
    name = thread.GetName()
    if name:
        return name
    queue = thread.GetQueueName()
    if queue:
        return "Thread %d Queue: %s" % (thread.GetIndexID(), queue)
    return "Thread %d" % thread.GetIndexID()


def _stop_reason(thread):
    """(reason, description, text, breakpoint ids) in lldb-dap's vocabulary."""
    reason_code = thread.GetStopReason()
    description = thread.GetStopDescription(1024) or ""
    reason, text, hit = None, None, []
    if reason_code in (lldb.eStopReasonTrace, lldb.eStopReasonPlanComplete):
        reason = "step"
    elif reason_code == lldb.eStopReasonBreakpoint:
        reason = "breakpoint"
        bp_id = thread.GetStopReasonDataAtIndex(0)
        loc_id = thread.GetStopReasonDataAtIndex(1)
        description = "breakpoint %d.%d" % (bp_id, loc_id)
        hit = [int(bp_id)]
    elif reason_code == lldb.eStopReasonWatchpoint:
        reason = "data breakpoint"
        description = "watchpoint %d" % thread.GetStopReasonDataAtIndex(0)
    elif reason_code == lldb.eStopReasonInstrumentation:
        reason = "breakpoint"
    elif reason_code == lldb.eStopReasonSignal:
        # The text is the whole description ("signal SIGSEGV: address not mapped
        # to object ..."), as lldb-dap's exceptionInfo gives it.
        reason = "exception"
        text = description
    elif reason_code == lldb.eStopReasonException:
        reason = "exception"
        text = description
    elif reason_code == lldb.eStopReasonExec:
        reason = "entry"
    return reason, description, text, hit


def _breakpoint_state(bp):
    line = None
    for i in range(bp.GetNumLocations()):
        address = bp.GetLocationAtIndex(i).GetAddress()
        entry = address.GetLineEntry()
        if entry.IsValid() and entry.GetLine():
            line = entry.GetLine()
            break
    verified = bp.GetNumLocations() > 0
    return {
        "id": bp.GetID(),
        "verified": verified,
        "line": line,
        "locations": bp.GetNumLocations(),
        "hits": bp.GetHitCount(),
    }


def stop_info():
    """Where the process is after a command: its state, why each thread stopped,
    and every breakpoint's resolution (they resolve as libraries load)."""
    target = _target()
    process = target.GetProcess() if target.IsValid() else None
    out = {"state": "none", "breakpoints": []}
    if target.IsValid():
        out["breakpoints"] = [
            _breakpoint_state(target.GetBreakpointAtIndex(i))
            for i in range(target.GetNumBreakpoints())
        ]
    if process is None or not process.IsValid():
        _emit(out)
        return
    _restore_suppressed(process)
    state = process.GetState()
    out["pid"] = process.GetProcessID()
    out["stop_id"] = process.GetStopID()
    if state == lldb.eStateExited:
        out["state"] = "exited"
        out["exit_code"] = process.GetExitStatus()
        out["exit_description"] = process.GetExitDescription()
    elif state in (lldb.eStateStopped, lldb.eStateSuspended, lldb.eStateCrashed):
        out["state"] = "stopped"
    elif state in (lldb.eStateRunning, lldb.eStateStepping, lldb.eStateLaunching,
                   lldb.eStateAttaching):
        out["state"] = "running"
    elif state == lldb.eStateDetached:
        out["state"] = "detached"
    else:
        out["state"] = lldb.SBDebugger.StateAsCString(state) or "none"
    if out["state"] == "stopped" and not _remote_alive(process):
        # A gdb-remote server that went away while lldb stepped over a breakpoint
        # leaves the process "stopped" with no thread anywhere: say it is lost.
        out["state"] = "lost"
        _emit(out)
        return
    if out["state"] == "exited" and "lost connection" in (out.get("exit_description") or ""):
        out["state"] = "lost"
    if out["state"] == "stopped":
        threads = []
        selected = process.GetSelectedThread()
        for thread in process:
            reason, description, text, hit = _stop_reason(thread)
            signal = None
            if thread.GetStopReason() == lldb.eStopReasonSignal:
                signal = process.GetUnixSignals().GetSignalAsCString(
                    thread.GetStopReasonDataAtIndex(0))
            threads.append({
                "signal": signal,
                "id": thread.GetThreadID(),
                "index_id": thread.GetIndexID(),
                "name": _thread_name(thread),
                "reason": reason,
                "description": description,
                "text": text,
                "hit": hit,
            })
        out["threads"] = threads
        out["selected"] = selected.GetThreadID() if selected.IsValid() else None
    _emit(out)


def _remote_alive(process):
    if process.GetPluginName() != "gdb-remote":
        return True
    thread = process.GetSelectedThread()
    if not thread.IsValid():
        return False
    pc = thread.GetFrameAtIndex(0).GetPC()
    if pc == lldb.LLDB_INVALID_ADDRESS:
        return False
    error = lldb.SBError()
    process.ReadMemory(pc, 1, error)
    return error.Success()


def threads():
    process = _process()
    _emit({"threads": [
        {"id": t.GetThreadID(), "index_id": t.GetIndexID(), "name": _thread_name(t)}
        for t in process
    ]})


def select_thread(tid):
    """Make `tid` the thread that lldb's thread commands act on; answers its index id."""
    process = _process()
    thread = process.GetThreadByID(int(tid))
    if not thread.IsValid():
        _fail("No thread with id %s; list threads for the valid ids." % tid)
        return
    process.SetSelectedThread(thread)
    _emit({"ok": True, "index_id": thread.GetIndexID()})


# --------------------------------------------------------------------------- stack


def _frame_name(frame):
    name = frame.GetDisplayFunctionName() or frame.GetFunctionName()
    if not name:
        name = "0x%016x" % frame.GetPC()
    if frame.GetFunction().IsValid() and frame.GetFunction().GetIsOptimized():
        name += " [opt]"
    return name


def stack(tid, start, levels):
    thread = _process().GetThreadByID(int(tid))
    if not thread.IsValid():
        _fail("No thread with id %s; list threads for the valid ids." % tid)
        return
    total = thread.GetNumFrames()
    end = total if not levels else min(total, int(start) + int(levels))
    frames = []
    for index in range(int(start), end):
        frame = thread.GetFrameAtIndex(index)
        entry = frame.GetLineEntry()
        record = {
            "id": _frame_id(frame),
            "index": index,
            "name": _frame_name(frame),
            "module": frame.GetModule().GetFileSpec().GetFilename(),
            "pc": "0x%X" % frame.GetPC(),
        }
        path = _file_path(entry.GetFileSpec()) if entry.IsValid() else None
        if path and entry.GetLine():
            record.update(path=path, line=entry.GetLine(), column=entry.GetColumn())
        frames.append(record)
    _emit({"frames": frames, "total": total})


# --------------------------------------------------------------------------- values


def _reset_refs_if_resumed():
    stop_id = _process().GetStopID()
    if _refs_stop_id[0] != stop_id:
        _refs.clear()
        _refs_stop_id[0] = stop_id


def _new_ref(item):
    ref = _next_ref[0]
    _next_ref[0] += 1
    _refs[ref] = item
    return ref


def describe(value):
    """lldb-dap's display value: value and summary, else summary, else type @ address."""
    error = value.GetError()
    if error.Fail():
        return "<error: %s>" % (error.GetCString() or "unknown")
    plain = value.GetValue() or ""
    summary = value.GetSummary() or ""
    if plain:
        return plain + (" " + summary if summary else "")
    if summary:
        return summary
    type_name = value.GetDisplayTypeName() or ""
    if not type_name:
        return ""
    address = value.GetLoadAddress()
    if address != lldb.LLDB_INVALID_ADDRESS:
        return "%s @ 0x%x" % (type_name, address)
    return type_name


def _expandable(value):
    return value.MightHaveChildren() or value.IsSynthetic()


def _variable(value, name=None):
    ref = _new_ref(value) if _expandable(value) else 0
    record = {
        "name": name if name is not None else (value.GetName() or ""),
        "value": describe(value),
        "type": value.GetDisplayTypeName() or None,
        "ref": ref,
    }
    stream = lldb.SBStream()
    if value.GetExpressionPath(stream):
        record["evaluate_name"] = stream.GetData()
    if ref:
        record["named_count"] = value.GetNumChildren()
    return record


def _scope_values(frame, kind):
    if kind == LOCALS:
        return frame.GetVariables(True, True, False, True)
    if kind == GLOBALS:
        return frame.GetVariables(False, False, True, True)
    return frame.GetRegisters()


def scopes(frame_id):
    _reset_refs_if_resumed()
    frame = _frame_by_id(frame_id)
    if frame is None:
        _fail("Frame %s no longer exists; the program moved on. Fetch the stack again." % frame_id)
        return
    out = []
    for name, kind in (("Locals", LOCALS), ("Globals", GLOBALS), ("Registers", REGISTERS)):
        ref = _new_ref(("scope", int(frame_id), kind))
        out.append({"name": name, "kind": kind, "ref": ref,
                    "named_count": _scope_values(frame, kind).GetSize()})
    _emit({"scopes": out})


def _declaration_suffix(value):
    declaration = value.GetDeclaration()
    if not declaration.IsValid():
        return ""
    path = _file_path(declaration.GetFileSpec()) or ""
    return " @ %s:%d" % (os.path.basename(path), declaration.GetLine())


def variables(ref, start, count):
    _reset_refs_if_resumed()
    item = _refs.get(int(ref))
    if item is None:
        _fail("Variable reference %s is stale (the program resumed since). "
              "Fetch the scopes of the current frame again." % ref)
        return
    start, count = int(start), int(count)
    out = []
    if isinstance(item, tuple):
        _, frame_id, kind = item
        frame = _frame_by_id(frame_id)
        if frame is None:
            _fail("Frame %s no longer exists. Fetch the stack again." % frame_id)
            return
        values = _scope_values(frame, kind)
        total = values.GetSize()
        end = total if not count else min(total, start + count)
        chosen = [values.GetValueAtIndex(i) for i in range(start, end)]
        names = {}
        for value in chosen:
            names[value.GetName() or ""] = names.get(value.GetName() or "", 0) + 1
        for value in chosen:
            name = value.GetName() or ""
            if names[name] > 1:
                name += _declaration_suffix(value)
            out.append(_variable(value, name))
    else:
        total = item.GetNumChildren()
        end = total if not count else min(total, start + count)
        for i in range(start, end):
            out.append(_variable(item.GetChildAtIndex(i)))
    _emit({"variables": out})


def _child_named(item, name):
    """The value called `name` in a scope or under a value (a reference's item)."""
    if isinstance(item, tuple):
        _, frame_id, kind = item
        frame = _frame_by_id(frame_id)
        if frame is None:
            return None, None
        values = _scope_values(frame, kind)
        children = [values.GetValueAtIndex(i) for i in range(values.GetSize())]
    else:
        frame = item.GetFrame()
        children = [item.GetChildAtIndex(i) for i in range(item.GetNumChildren())]
    for child in children:
        shown = child.GetName() or ""
        if shown == name or shown + _declaration_suffix(child) == name:
            return child, frame
    return None, frame


def set_variable(encoded):
    """As lldb-dap's setVariable (SetValueFromCString), and an expression's value
    where the text is not a literal (`n + 1`); answers the value lldb reads back."""
    _reset_refs_if_resumed()
    request = _arg(encoded)
    item = _refs.get(int(request["ref"]))
    if item is None:
        _fail("Variable reference %s is stale (the program resumed since). "
              "Fetch the scopes of the current frame again." % request["ref"])
        return
    child, frame = _child_named(item, request["name"])
    if child is None:
        _fail("No variable %s there." % request["name"])
        return
    error = lldb.SBError()
    if not child.SetValueFromCString(request["value"], error):
        computed = frame.EvaluateExpression(request["value"]) if frame is not None else None
        if computed is None or computed.GetError().Fail() or not computed.GetValue() or \
                not child.SetValueFromCString(computed.GetValue(), error):
            _fail("Could not set %s to %s: %s" % (request["name"], request["value"],
                                                  error.GetCString() or "not a value of its type"))
            return
    _emit({"variable": _variable(child, request["name"])})


def return_value(tid):
    """What the function a step out left returned (lldb's "Return value:"), named
    as lldb-dap names it."""
    _reset_refs_if_resumed()
    thread = _process().GetThreadByID(int(tid))
    value = thread.GetStopReturnValue() if thread.IsValid() else None
    if value is None or not value.IsValid():
        _emit({"variable": None})
        return
    _emit({"variable": _variable(value, "(Return Value)")})


def evaluate(encoded):
    """As lldb-dap: a variable path first (reliable and fast), then the expression
    parser. In the repl context the whole description, e.g. "(int) $0 = 6"."""
    _reset_refs_if_resumed()
    request = _arg(encoded)
    expression, context = request["expression"], request.get("context") or "repl"
    frame_id = request.get("frame_id")
    if frame_id is None:
        frame = _process().GetSelectedThread().GetSelectedFrame()
    else:
        frame = _frame_by_id(frame_id)
    if frame is None or not frame.IsValid():
        _fail("No frame to evaluate in; the program is not stopped there. Fetch the stack again.")
        return
    value = frame.GetValueForVariablePath(expression, lldb.eDynamicDontRunTarget)
    if value.GetError().Success() and context == "repl":
        value = value.Persist()
    if value.GetError().Fail() and context != "hover":
        value = run_expression(frame, expression)
    if value.GetError().Fail():
        _fail(_unwound_text(value.GetError().GetCString() or "evaluate failed"))
        return
    result = describe(value)
    if context == "repl":
        stream = lldb.SBStream()
        value.GetDescription(stream)
        result = (stream.GetData() or result).strip()
    ref = _new_ref(value) if _expandable(value) else 0
    _emit({"value": result, "type": value.GetDisplayTypeName() or None, "ref": ref,
           "named_count": value.GetNumChildren() if ref else None})


# Signals an unwound expression left as its thread's stop reason, kept from the
# program until it next runs: {signal number: stop id when suppressed}
_suppressed = {}


def run_expression(frame, expression):
    """frame.EvaluateExpression as SBFrame does it by default, except that the
    expression is not unwound by LLDB when it is interrupted.

    LLDB 19 takes a fork or vfork inside an expression (`(int)system("true")`)
    for a crash and unwinds, leaving the vfork child held by lldb-server and the
    parent blocked in the kernel: the next continue never returns
    (llvm-project#78515). With unwind-on-error off, the fork is handled as it is
    when the program forks on its own and the call completes. A real crash then
    stops inside the expression; unwind_expression takes it back out.

    The expression runs its thread alone for EXPRESSION_ALONE_US, then with
    every thread (a call that waits for another thread finishes, as in gdb),
    and is stopped after EXPRESSION_TIMEOUT_US. SBFrame's default (250 ms
    alone, 500 ms in all) stopped any call of over half a second with
    "interrupted, reason: signal SIGSTOP", and on a loaded machine even
    `system("true")`. The halt after the time alone, met by the expression's
    own crash, resumes the thread with the signal (the program died of it,
    1 run in 20 of the forking-expression fault test when it came at 250 ms):
    at 2 s only a call that runs that long and then crashes can meet it."""
    options = lldb.SBExpressionOptions()
    options.SetFetchDynamicValue(lldb.eDynamicDontRunTarget)  # target.prefer-dynamic-value
    options.SetUnwindOnError(False)
    options.SetIgnoreBreakpoints(True)
    options.SetTryAllThreads(True)
    options.SetOneThreadTimeoutInMicroSeconds(EXPRESSION_ALONE_US)
    options.SetTimeoutInMicroSeconds(EXPRESSION_TIMEOUT_US)
    started = time.monotonic()
    value = frame.EvaluateExpression(expression, options)
    if value.GetError().Fail():
        _unwind(frame.GetThread())
        if time.monotonic() - started >= EXPRESSION_TIMEOUT_US / 1e6 * 0.95:
            error = lldb.SBError()
            error.SetErrorString(TIMED_OUT)
            return _Failed(error)
    return value


#: How long an expression's thread runs alone, then with every thread, before
#: the expression is stopped (microseconds)
EXPRESSION_ALONE_US = 2_000_000
EXPRESSION_TIMEOUT_US = 10_000_000
TIMED_OUT = ("The expression did not finish within %d s and was stopped; the program is back "
             "where it was. If it waits for something (input, a lock, a child process), "
             "evaluate what it would read instead."
             % (EXPRESSION_TIMEOUT_US // 1_000_000))


class _Failed:
    """What run_expression answers for an expression it stopped: an SBValue's
    GetError, and nothing else (its callers ask only that of a failure)."""

    def __init__(self, error):
        self._error = error

    def GetError(self):
        return self._error


def _unwind(thread):
    """Return from an expression left active in `thread` (True if there was one).
    The thread's stop reason is then the expression's own (a SIGSEGV); it is
    kept from the program when it next runs, as LLDB does when it unwinds."""
    if thread.UnwindInnermostExpression().Fail():
        return False
    if thread.GetStopReason() == lldb.eStopReasonSignal:
        signo = int(thread.GetStopReasonDataAtIndex(0))
        signals = thread.GetProcess().GetUnixSignals()
        if not signals.GetShouldSuppress(signo):
            signals.SetShouldSuppress(signo, True)
            _suppressed[signo] = thread.GetProcess().GetStopID()
    return True


def _restore_suppressed(process):
    for signo, stop_id in list(_suppressed.items()):
        if not process.IsValid() or process.GetStopID() != stop_id:
            process.GetUnixSignals().SetShouldSuppress(signo, False)
            del _suppressed[signo]


def _unwound_text(message):
    """LLDB's error for an expression run with unwind-on-error off, once
    run_expression has unwound it."""
    return message.replace(
        'The process has been left at the point where it was interrupted, use '
        '"thread return -x" to return to the state before expression evaluation.',
        "The process has been returned to the state before expression evaluation.")


def unwind_expression():
    """After a raw `expression` run with unwind-on-error off: take the
    selected thread out of an expression that was interrupted."""
    thread = _process().GetSelectedThread()
    _emit({"unwound": bool(thread.IsValid() and _unwind(thread))})


# --------------------------------------------------------------------------- breakpoints


def _apply_options(bp, spec):
    if spec.get("condition"):
        bp.SetCondition(spec["condition"])
    if spec.get("ignore_count"):
        bp.SetIgnoreCount(int(spec["ignore_count"]))
    if spec.get("log_message"):
        extra = lldb.SBStructuredData()
        extra.SetFromJSON(json.dumps({"message": spec["log_message"]}))
        bp.SetScriptCallbackFunction(__name__ + ".logpoint_hit", extra)


def set_breakpoints(encoded):
    """Create one breakpoint per spec ({path, line} or {function}) and answer their states."""
    target = _target()
    out = []
    for spec in _arg(encoded):
        if spec.get("function"):
            bp = target.BreakpointCreateByName(spec["function"])
        else:
            bp = target.BreakpointCreateByLocation(spec["path"], int(spec["line"]))
        if not bp.IsValid():
            out.append({"id": None, "verified": False, "line": None, "locations": 0, "hits": 0})
            continue
        _apply_options(bp, spec)
        out.append(_breakpoint_state(bp))
    _emit({"breakpoints": out})


def delete_breakpoints(encoded):
    target = _target()
    for bp_id in _arg(encoded):
        target.BreakpointDelete(int(bp_id))
    _emit({"ok": True})


def _interpolate(frame, message):
    """lldb-dap's logpoint format: text with {expression} parts."""
    out, i = [], 0
    while i < len(message):
        ch = message[i]
        if ch == "{":
            end = message.find("}", i)
            if end < 0:
                out.append(message[i:])
                break
            expression = message[i + 1:end]
            value = frame.GetValueForVariablePath(expression, lldb.eDynamicDontRunTarget)
            if value.GetError().Fail():
                value = frame.EvaluateExpression(expression)
            if value.GetError().Fail():
                out.append("<error: %s>" % (value.GetError().GetCString() or expression))
            else:
                out.append(value.GetSummary() or value.GetValue() or describe(value))
            i = end + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def logpoint_hit(frame, bp_loc, extra_args, internal_dict):
    message = extra_args.GetValueForKey("message").GetStringValue(65536) or ""
    _log({"text": _interpolate(frame, message) + "\n"})
    return False  # a log point never stops the program


# --------------------------------------------------------------------------- memory


def disassemble(address, count, offset):
    """`count` instructions from `offset` instructions after `address`. A
    negative offset starts at the enclosing function (instructions cannot be
    decoded backwards), then keeps -offset of them before `address`."""
    target = _target()
    load = int(address, 0)
    count, offset = int(count), int(offset)
    start = target.ResolveLoadAddress(load)
    if offset < 0:
        context = start.GetSymbolContext(lldb.eSymbolContextFunction | lldb.eSymbolContextSymbol)
        begin = None
        if context.GetFunction().IsValid():
            begin = context.GetFunction().GetStartAddress()
        elif context.GetSymbol().IsValid():
            begin = context.GetSymbol().GetStartAddress()
        if begin is not None and begin.GetLoadAddress(target) <= load:
            span = load - begin.GetLoadAddress(target)
            listed = target.ReadInstructions(begin, span + count + 1)
            items = [listed.GetInstructionAtIndex(i) for i in range(listed.GetSize())]
            at = [i for i, ins in enumerate(items)
                  if ins.GetAddress().GetLoadAddress(target) >= load]
            index = at[0] if at else len(items)
            first = max(0, index + offset)
            items = items[first:first + count]
        else:
            items = []
    else:
        listed = target.ReadInstructions(start, count + offset)
        items = [listed.GetInstructionAtIndex(i) for i in range(listed.GetSize())][offset:]
    out = []
    previous_line = None
    for instruction in items:
        address_obj = instruction.GetAddress()
        record = {
            "address": "0x%x" % address_obj.GetLoadAddress(target),
            "instruction": ("%s %s" % (instruction.GetMnemonic(target),
                                       instruction.GetOperands(target))).strip(),
            "bytes": " ".join("%02x" % b for b in
                              bytearray(instruction.GetData(target).ReadRawData(
                                  lldb.SBError(), 0, instruction.GetByteSize()) or b"")),
        }
        comment = instruction.GetComment(target)
        if comment:
            record["instruction"] += " ; " + comment
        symbol = address_obj.GetSymbol()
        if symbol.IsValid() and symbol.GetStartAddress().GetLoadAddress(target) == \
                address_obj.GetLoadAddress(target):
            record["symbol"] = symbol.GetDisplayName() or symbol.GetName()
        entry = address_obj.GetLineEntry()
        if entry.IsValid() and entry.GetLine():
            key = (_file_path(entry.GetFileSpec()), entry.GetLine())
            if key != previous_line:
                record["path"], record["line"] = key
                record["column"] = entry.GetColumn()
            previous_line = key
        out.append(record)
    _emit({"instructions": out})


def resolve_address(encoded):
    """A function name, or an expression whose value is an address."""
    request = _arg(encoded)
    target = _target()
    name = request["expression"]
    functions = target.FindFunctions(name)
    for i in range(functions.GetSize()):
        context = functions.GetContextAtIndex(i)
        if context.GetFunction().IsValid():
            _emit({"address": "0x%x" % context.GetFunction().GetStartAddress()
                   .GetLoadAddress(target)})
            return
        if context.GetSymbol().IsValid():
            _emit({"address": "0x%x" % context.GetSymbol().GetStartAddress()
                   .GetLoadAddress(target)})
            return
    frame_id = request.get("frame_id")
    frame = _frame_by_id(frame_id) if frame_id is not None else \
        _process().GetSelectedThread().GetSelectedFrame()
    if frame is None or not frame.IsValid():
        _fail("%r is not a function; stop the program to evaluate it as an address." % name)
        return
    value = run_expression(frame, name)
    if value.GetError().Fail():
        _fail("%r does not name a function or an address here: %s"
              % (name, (value.GetError().GetCString() or "").strip()))
        return
    _emit({"address": "0x%x" % value.GetValueAsUnsigned()})


def set_watchpoints(encoded):
    """Replace every watchpoint with the given specs: {expression, access, frame_id}."""
    target = _target()
    target.DeleteAllWatchpoints()
    out = []
    for spec in _arg(encoded):
        if spec.get("address") and spec.get("size"):
            access = spec.get("access") or "write"
            error = lldb.SBError()
            watch = target.WatchAddress(int(spec["address"], 16), int(spec["size"]),
                                        access in ("read", "readWrite"),
                                        access in ("write", "readWrite"), error)
            if error.Fail() or not watch.IsValid():
                out.append({"verified": False,
                            "message": error.GetCString() or "lldb could not set the watchpoint"})
            else:
                out.append({"verified": True, "id": watch.GetID(), "address": spec["address"],
                            "size": int(spec["size"])})
            continue
        frame_id = spec.get("frame_id")
        frame = _frame_by_id(frame_id) if frame_id is not None else \
            _process().GetSelectedThread().GetSelectedFrame()
        if frame is None or not frame.IsValid():
            out.append({"verified": False, "message": "no frame to read the expression in"})
            continue
        value = frame.GetValueForVariablePath(spec["expression"], lldb.eDynamicDontRunTarget)
        if value.GetError().Fail():
            value = run_expression(frame, spec["expression"])
        if value.GetError().Fail():
            out.append({"verified": False,
                        "message": (value.GetError().GetCString() or "").strip().splitlines()[0]})
            continue
        address = value.GetLoadAddress()
        size = value.GetByteSize()
        if address == lldb.LLDB_INVALID_ADDRESS or not size:
            out.append({"verified": False,
                        "message": "%s is not in memory (a register or a temporary value); "
                                   "watch a variable or *pointer" % spec["expression"]})
            continue
        access = spec.get("access") or "write"
        error = lldb.SBError()
        watch = target.WatchAddress(address, size, access in ("read", "readWrite"),
                                    access in ("write", "readWrite"), error)
        if error.Fail() or not watch.IsValid():
            out.append({"verified": False,
                        "message": error.GetCString() or "lldb could not set the watchpoint"})
            continue
        out.append({"verified": True, "id": watch.GetID(), "address": "0x%x" % address,
                    "size": size, "type": value.GetDisplayTypeName() or None})
    _emit({"watchpoints": out})


def read_memory(address, count):
    error = lldb.SBError()
    data = _process().ReadMemory(int(address, 0), int(count), error)
    if error.Fail():
        _fail("Cannot read %s bytes at %s: %s" % (count, address, error.GetCString()))
        return
    _emit({"hex": bytes(data).hex()})
