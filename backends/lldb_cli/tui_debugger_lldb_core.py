"""What the helper that the LLDB CLI backend loads into lldb's embedded Python
stands on: the debugger and the markers of its answers (set by setup()), the
answer lines themselves, the target and its launch settings, and frames by id.

tui_debugger_lldb.py imports it by name: `command script import` puts the
directory of the module it imports on sys.path. lldb's namespace holds only
tui_debugger_lldb, so what the backend calls here (setup, create_target,
configure_launch) is named there too. This module's state is set here, by
setup(); the other reads it through these functions, never by importing its
names (that would copy them as they were before setup()).

The same rules as tui_debugger_lldb.py: whatever Python lldb was built with
(Xcode's is 3.9), and nothing outside the standard library.
"""

import base64
import json
import os
import threading

import lldb

# Set by setup() from the backend's nonce: a marker nobody can type into a
# command, since lldb echoes commands onto the same stream.
MARKER = "@@TDBG "
LOG_MARKER = "@@TDBG-LOG "
THREAD_INDEX_SHIFT = 19  # frame ids as lldb-dap makes them: thread index id << 19 | frame index
FRAME_INDEX_MASK = (1 << THREAD_INDEX_SHIFT) - 1

_debugger = None


def _emit(payload):
    print(MARKER + json.dumps(payload))


def _log(payload):
    """A log point's line, read while the program runs: output, not an answer."""
    print(LOG_MARKER + json.dumps(payload))


def _arg(encoded):
    return json.loads(base64.b64decode(encoded).decode("utf-8"))


def _fail(message):
    _emit({"error": message})


def _target():
    return _debugger.GetSelectedTarget()


def _process():
    return _target().GetProcess()


# --------------------------------------------------------------------------- set-up


def setup(interrupt_fifo, nonce):
    """Remember the debugger and the markers, and start the thread that
    interrupts a running process: in synchronous mode lldb reads no command
    while the process runs, so the backend writes a byte to this FIFO instead."""
    global _debugger, MARKER, LOG_MARKER
    MARKER = "@@TDBG-%s " % nonce
    LOG_MARKER = "@@TDBG-LOG-%s " % nonce
    _debugger = lldb.debugger
    debugger = _debugger

    def serve():
        while True:
            try:
                with open(interrupt_fifo, "rb", buffering=0) as fifo:
                    while True:
                        byte = fifo.read(1)
                        if not byte:
                            break
                        _interrupt(debugger)
            except OSError:
                return

    worker = threading.Thread(target=serve, name="tdbg-interrupt")
    worker.daemon = True
    worker.start()
    _emit({"ok": True, "python": ".".join(str(v) for v in __import__("sys").version_info[:3])})


def _interrupt(debugger):
    # Only SendAsyncInterrupt: every other SBProcess call takes the target's API
    # lock, which `process continue` holds until the program stops. An interrupt
    # that comes before lldb resumed the program is ignored by lldb, so the
    # backend repeats it until the stop arrives.
    process = debugger.GetSelectedTarget().GetProcess()
    if process.IsValid():
        process.SendAsyncInterrupt()


def create_target(encoded):
    request = _arg(encoded)
    error = lldb.SBError()
    target = _debugger.CreateTarget(request["program"], None, None, True, error)
    if not target or not target.IsValid():
        _fail(error.GetCString() or "lldb could not load %s" % request["program"])
        return
    _debugger.SetSelectedTarget(target)
    for remote, local in (request.get("path_map") or {}).items():
        # target.source-map, as `settings set target.source-map REMOTE LOCAL` sets it
        _debugger.HandleCommand("settings append target.source-map %s %s"
                                % (_quote(remote), _quote(local)))
    if request.get("core"):
        process = target.LoadCore(request["core"], error)
        if error.Fail() or not process.IsValid():
            _fail("lldb could not open the core file %s: %s"
                  % (request["core"], error.GetCString() or "unknown error"))
            return
    _emit({"ok": True, "triple": target.GetTriple()})


def _quote(text):
    """One argument of an lldb command, as the backend's lldb_quote makes it;
    the backend refused text with a line break or control character before."""
    if not text.isprintable():
        raise ValueError("%r cannot travel in an lldb command" % text)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`") + '"'


def configure_launch(encoded):
    request = _arg(encoded)
    target = _target()
    info = target.GetLaunchInfo()
    info.SetArguments(request.get("args") or [], False)
    env = request.get("env") or {}
    if env:
        info.SetEnvironmentEntries(["%s=%s" % (k, v) for k, v in env.items()], True)
    target.SetLaunchInfo(info)
    _emit({"ok": True})


# --------------------------------------------------------------------------- frames by id


def _frame_id(frame):
    return (frame.GetThread().GetIndexID() << THREAD_INDEX_SHIFT) | frame.GetFrameID()


def _frame_by_id(frame_id):
    process = _process()
    thread = process.GetThreadByIndexID(int(frame_id) >> THREAD_INDEX_SHIFT)
    if not thread.IsValid():
        return None
    frame = thread.GetFrameAtIndex(int(frame_id) & FRAME_INDEX_MASK)
    return frame if frame.IsValid() else None


def _file_path(spec):
    directory, filename = spec.GetDirectory(), spec.GetFilename()
    if not filename:
        return None
    return os.path.join(directory, filename) if directory else filename
