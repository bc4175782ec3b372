"""Watchpoints inside a Python program debugged with debugpy (loaded into the
program by an evaluate, see python_watch.py; the standard library and pydevd
only, never this project's packages).

Each watch is a name, an attribute or an item whose value is read again only in
the code that can change it, after each of its lines and when it returns:

* 3.12+: a sys.monitoring tool of our own (pydevd has DEBUGGER_ID, 0). A
  PY_START callback looks at each code object once and turns LINE and
  PY_RETURN on for that code alone when it can change a watched value, else
  returns DISABLE: code that cannot costs nothing after its first call.
* 3.11: pydevd's own trace function (`PyDB.trace_dispatch`, set in every
  thread) is wrapped; a frame of code that can change a watched value gets a
  local tracer that calls pydevd's first, then reads the watched values.

A change is told to the client as a DAP event of ours, `tuiDebuggerWatch`
(debugpy's adapter passes unknown events on), sent before the stop it causes;
the thread is then suspended by pydevd itself in the frame where the change
was seen, so debugpy sends an ordinary `stopped` event there.

A forked child has a copy of the agent and of every watched object. pydevd
makes a debugger of its own there (`settrace_forked`: a new PyDB, connected
to the adapter as the child's session): once it is ready, the agent tells
that session which watches it holds (`copied`), and goes on in the child.
"""

from __future__ import annotations

import ast
import collections
import os
import sys
import threading
import weakref

EVENT = "tuiDebuggerWatch"
_UNBOUND = object()
_NOT_MINE = ("pydevd", "debugpy", os.path.basename(__file__).rsplit(".", 1)[0])
_REPR_CAP = 200


class Gone(Exception):
    """The watched thing no longer exists: the watch ends."""


def _short(value) -> str:
    if value is _UNBOUND:
        return "<unbound>"
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ is the program's, not ours
        text = f"<{type(value).__name__}: repr failed: {exc}>"
    return text if len(text) <= _REPR_CAP else text[:_REPR_CAP - 1] + "…"


def _copy(value):
    # In-place changes (append, +=, d[k] = v) keep the object: a shallow copy
    # of the built-in containers is what tells them.
    if type(value) in (list, dict, set, bytearray):
        return value.copy()
    return _UNBOUND


def _same(a, b) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


class Watch:
    def __init__(self, spec: dict, frame, kind: str, read, applies, holder=None):
        self.id = spec["id"]
        self.expression = spec["expression"]
        self.condition = spec.get("condition") or None
        self.hit_count = int(spec.get("hit_count") or 0)
        self.log_only = bool(spec.get("log_only"))
        self.kind = kind
        self.read = read
        self.applies = applies
        self.frame = frame if kind == "local" else None
        self.anchor_globals = frame.f_globals
        self.anchor_locals = dict(frame.f_locals)
        self.holder = holder  # keeps a weakref (and its callback) alive
        self.hits = 0
        #: the process it was set in (a forked child holds copies of its parent's)
        self.origin_pid = os.getpid()
        self.take(read())

    def take(self, value) -> None:
        self.value, self.copy, self.text = value, _copy(value), _short(value)

    def changed(self, new) -> bool:
        if new is self.value:
            return self.copy is not _UNBOUND and not _same(new, self.copy)
        return not _same(new, self.value)

    def wants_stop(self, old, new) -> tuple[bool, str | None]:
        if self.log_only or self.hits < self.hit_count:
            return False, None
        if not self.condition:
            return True, None
        scope = collections.ChainMap(
            {"new": new, "old": old},
            self.frame.f_locals if self.frame is not None else self.anchor_locals)
        try:
            return bool(eval(self.condition, self.anchor_globals, scope)), None
        except Exception as exc:
            return True, f"condition {self.condition!r} failed: {type(exc).__name__}: {exc}"


def _own(frame) -> bool:
    name = frame.f_code.co_filename
    return any(part in name for part in _NOT_MINE)


def build(spec: dict, frame) -> Watch:
    """A Watch of `spec["expression"]` read in `frame`, or ValueError saying why not."""
    text = spec["expression"].strip()
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"{text} is not a Python expression ({exc.msg})") from None

    def value_of(sub):
        code = compile(ast.Expression(sub), "<watch>", "eval")
        return eval(code, frame.f_globals, frame.f_locals)

    if isinstance(node, ast.Name):
        name, code = node.id, frame.f_code
        is_local = code.co_name != "<module>" and frame.f_locals is not frame.f_globals and (
            name in code.co_varnames or name in code.co_cellvars or name in code.co_freevars)
        if is_local:
            watched = frame
            shared = name in code.co_cellvars or name in code.co_freevars

            def read_local():
                return watched.f_locals.get(name, _UNBOUND)

            def local_applies(c, f):
                # f is None: the code is asked about before any frame of it runs
                here = c is watched.f_code if f is None else f is watched
                return here or (shared and name in c.co_freevars)
            return Watch(spec, frame, "local", read_local, local_applies)
        scope = frame.f_globals
        if name not in scope:
            raise ValueError(f"{name} is not defined here")

        def read_global():
            return scope.get(name, _UNBOUND)

        def global_applies(c, f):
            return name in c.co_names and (f is None or f.f_globals is scope)
        return Watch(spec, frame, "global", read_global, global_applies)

    if isinstance(node, ast.Attribute):
        attr = node.attr
        target = value_of(node.value)
        holder, get = _hold(target, spec)

        def read_attr():
            return getattr(get(), attr, _UNBOUND)

        def attr_applies(c, f):
            return attr in c.co_names
        return Watch(spec, frame, "attribute", read_attr, attr_applies, holder)

    if isinstance(node, ast.Subscript):
        container = value_of(node.value)
        key = value_of(node.slice)
        holder, get = _hold(container, spec)

        def read_item():
            try:
                return get()[key]
            except (KeyError, IndexError):
                return _UNBOUND

        def item_applies(c, f):
            return True  # an item changes through any name the container has
        return Watch(spec, frame, "item", read_item, item_applies, holder)

    raise ValueError(f"{text} is neither a name, an attribute (obj.attr) nor an item "
                     "(obj[key]); watch one of those")


def _hold(target, spec):
    """A weak reference where the object allows one (so its end ends the watch
    at once), else the object itself."""
    try:
        ref = weakref.ref(target, lambda _r, wid=spec["id"]: AGENT.end(wid, "the object is gone"))
    except TypeError:
        return target, lambda: target

    def get():
        obj = ref()
        if obj is None:
            raise Gone("the object is gone")
        return obj
    return ref, get


class Agent:
    def __init__(self) -> None:
        self.watches: dict[int, Watch] = {}
        #: by id(frame): its code and the line it ran last (the code tells a
        #: frame that left by an exception from a new one given its id)
        self.last_line: dict[int, tuple] = {}
        self.lock = threading.RLock()
        self.started = False
        self.tool: int | None = None
        self.enabled: set = set()
        self.pending: list = []  # 3.11: (thread, frame) to arm again at its next call
        #: the process whose session knows these watches (a forked child's does
        #: not until it is told: _announce)
        self.announced_pid = os.getpid()

    # ------------------------------------------------ what the session asks

    def add(self, spec: dict, frame) -> dict:
        try:
            watch = build(spec, frame)
        except Gone as exc:
            return {"ok": False, "message": str(exc)}
        except Exception as exc:
            return {"ok": False, "message": f"{type(exc).__name__}: {exc}"
                    if not isinstance(exc, ValueError) else str(exc)}
        try:
            self._start()
        except Exception as exc:
            return {"ok": False, "message": f"watches cannot run here: {exc}"}
        with self.lock:
            self.watches[watch.id] = watch
        self._refresh()
        return {"ok": True, "value": watch.text, "kind": watch.kind}

    def set_ids(self, ids: list[int]) -> None:
        """Keep only these watches (the session's)."""
        with self.lock:
            for wid in [w for w in self.watches if w not in ids]:
                del self.watches[wid]
        self._refresh()

    def end(self, wid: int, why: str) -> None:
        with self.lock:
            watch = self.watches.pop(wid, None)
        if watch is not None:
            self._send({"id": wid, "gone": why})

    # ------------------------------------------------ turning events on

    def _start(self) -> None:
        if self.started:
            return
        if hasattr(sys, "monitoring"):
            self._start_monitoring()
        else:
            self._start_tracing()
        self._follow_forks()
        self.started = True

    # ------------------------------------------------ a forked child

    def _follow_forks(self) -> None:
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._after_fork)
        pydevd = sys.modules.get("pydevd")
        original = getattr(pydevd, "settrace_forked", None)
        if original is None or getattr(original, "_tui_debugger_watch", False):
            return
        agent = self

        def settrace_forked(*args, **kwargs):
            # pydevd's fork hook (pydev_monkey._on_forked_process) looks it up
            # on the module at each fork: its new debugger is ready when it returns.
            try:
                return original(*args, **kwargs)
            finally:
                agent._forked_ready()
        settrace_forked._tui_debugger_watch = True
        pydevd.settrace_forked = settrace_forked

    def _after_fork(self) -> None:
        """In the child, inside os.fork: only the forking thread goes on."""
        self.lock = threading.RLock()  # another thread may have held it: it is gone
        alive = set()
        frame = sys._getframe()
        while frame is not None:
            alive.add(id(frame))
            frame = frame.f_back
        for wid, watch in list(self.watches.items()):
            if watch.kind == "local" and id(watch.frame) not in alive:
                del self.watches[wid]  # its thread is not in this process
        self.last_line = {k: v for k, v in self.last_line.items() if k in alive}
        me = threading.get_ident()
        self.pending = [(owner, f) for owner, f in self.pending if owner == me]

    def _forked_ready(self) -> None:
        """In a forked child, pydevd's own debugger is connected: the watches go
        on under it, and its session is told which it holds."""
        if self.announced_pid == os.getpid() or _debugger() is None:
            return
        try:
            if self.tool is None:
                # 3.11: the new debugger's tracers, ours around them (also with no
                # watch yet: one set in the child later finds them wrapped)
                self._start_tracing()
            self._refresh()
        finally:
            self._announce()

    def _announce(self) -> None:
        self.announced_pid = os.getpid()
        copied = [{"id": w.id, "expression": w.expression, "condition": w.condition,
                   "hit_count": w.hit_count, "log_only": w.log_only, "kind": w.kind,
                   "value": w.text, "hits": w.hits, "origin_pid": w.origin_pid}
                  for w in list(self.watches.values())]
        if copied:
            self._send({"copied": copied, "pid": os.getpid()})

    def _start_monitoring(self) -> None:
        mon = sys.monitoring
        for tool in (4, 3, 1, 2):  # 0 is pydevd's (DEBUGGER_ID), 5 the optimizer's
            if mon.get_tool(tool) is None:
                mon.use_tool_id(tool, "tui-debugger watch")
                self.tool = tool
                break
        else:
            raise RuntimeError("every sys.monitoring tool id is taken")
        ev = mon.events
        mon.register_callback(self.tool, ev.PY_START, self._on_start)
        mon.register_callback(self.tool, ev.LINE, self._on_line)
        mon.register_callback(self.tool, ev.PY_RETURN, self._on_return)
        mon.set_events(self.tool, ev.PY_START)

    def _refresh(self) -> None:
        """After the watches changed: every code object is looked at again."""
        if self.tool is not None:
            mon = sys.monitoring
            for code in list(self.enabled):
                if not self._wanted(code, None):
                    mon.set_local_events(self.tool, code, 0)
                    self.enabled.discard(code)
            mon.restart_events()
        # Code already running never starts again: its frames are looked at now.
        for ident, top in sys._current_frames().items():
            frame = top
            while frame is not None:
                if not _own(frame) and self._wanted(frame.f_code, frame):
                    self._enable(frame, ident)
                    # what changes from here on is its current line's doing
                    self.last_line.setdefault(id(frame), (frame.f_code, frame.f_lineno))
                frame = frame.f_back

    def _wanted(self, code, frame) -> bool:
        return any(w.applies(code, frame) for w in list(self.watches.values()))

    def _enable(self, frame, ident: int) -> None:
        if self.tool is not None:
            ev = sys.monitoring.events
            sys.monitoring.set_local_events(self.tool, frame.f_code, ev.LINE | ev.PY_RETURN)
            self.enabled.add(frame.f_code)
        else:
            trace = frame.f_trace
            if not isinstance(trace, _LocalTracer):
                frame.f_trace = _LocalTracer(self, trace)
            # A frame stopped in pydevd's tracer gets that tracer back as its
            # f_trace when the tracer returns: armed again at the next call.
            self.pending.append((ident, frame))

    # 3.12+ callbacks: no event of any tool is fired while one runs

    def _on_start(self, code, offset):
        if not _own_code(code) and self._wanted(code, None):
            sys.monitoring.set_local_events(
                self.tool, code, sys.monitoring.events.LINE | sys.monitoring.events.PY_RETURN)
            self.enabled.add(code)
        return sys.monitoring.DISABLE

    def _on_line(self, code, line):
        self.check(sys._getframe(1), line, False)

    def _on_return(self, code, offset, retval):
        self.check(sys._getframe(1), None, True)

    # 3.11: around pydevd's trace function

    def _start_tracing(self) -> None:
        py_db = _debugger()
        if py_db is None:
            raise RuntimeError("pydevd is not running in this program")
        agent = self
        enable_tracing = py_db.enable_tracing

        def chained(inner):
            if inner is None or getattr(inner, "_tui_debugger_watch", False):
                return inner

            def trace_dispatch(frame, event, arg):
                if agent.pending and event == "call":
                    agent._arm_pending()
                local = inner(frame, event, arg)
                if agent.watches and not _own(frame) and agent._wanted(frame.f_code, frame):
                    # Also a frame's own tracer: pydevd sets the thread's tracer as
                    # f_trace of the frames it re-arms (at each stop), in place of ours.
                    if event == "line":
                        agent.check(frame, frame.f_lineno, False)
                    elif event == "return":
                        agent.check(frame, None, True)
                    return _LocalTracer(agent, local)
                return local
            trace_dispatch._tui_debugger_watch = True
            return trace_dispatch

        def enable_tracing_chained(thread_trace_func=None, apply_to_all_threads=False):
            # pydevd gives each thread a tracer of its own (a ThreadTracer) through
            # here: ours goes around it.
            return enable_tracing(chained(thread_trace_func), apply_to_all_threads)

        def untraced(original):
            def no_ftrace(frame, event, arg):
                # pydevd's tracer hands a frame it has no more use for this
                # (NO_FTRACE) as its next f_trace: ours takes it on there.
                if agent.watches and not _own(frame) and agent._wanted(frame.f_code, frame):
                    tracer = _LocalTracer(agent, None)
                    return tracer(frame, event, arg)
                return original(frame, event, arg)
            return no_ftrace

        # The cython tracer reads NO_FTRACE from its module's globals at each use.
        for name in ("_pydevd_bundle.pydevd_cython", "_pydevd_bundle.pydevd_frame"):
            module = sys.modules.get(name)
            if module is not None and callable(getattr(module, "NO_FTRACE", None)) and \
                    not getattr(module.NO_FTRACE, "_tui_debugger_watch", False):
                module.NO_FTRACE = untraced(module.NO_FTRACE)
                module.NO_FTRACE._tui_debugger_watch = True
        py_db.enable_tracing = enable_tracing_chained
        py_db.trace_dispatch = chained(py_db.trace_dispatch)
        threading.settrace(py_db.trace_dispatch)
        # The threads running now: the current one keeps its tracer; each other
        # one finds its own again through trace_dispatch, chained.
        tracing = sys.modules.get("pydevd_tracing")
        if tracing is not None:
            with_ours = chained(sys.gettrace())
            tracing.SetTrace(with_ours)
            debugger_own = {t.ident for t in threading.enumerate()
                            if getattr(t, "is_pydev_daemon_thread", False)}
            others = [t for t in sys._current_frames()
                      if t != threading.get_ident() and t not in debugger_own]
            if others:
                try:
                    tracing.set_trace_to_threads(py_db.trace_dispatch, thread_idents=others)
                except Exception:
                    pass

    def _arm_pending(self) -> None:
        """At a call in a thread (its stop is over: no event fires inside a
        tracer), that thread's frames get ours again."""
        ident = threading.get_ident()
        mine = [frame for owner, frame in self.pending if owner == ident]
        if not mine:
            return
        self.pending = [(owner, frame) for owner, frame in self.pending if owner != ident]
        for frame in mine:
            if not isinstance(frame.f_trace, _LocalTracer):
                frame.f_trace = _LocalTracer(self, frame.f_trace)

    # ------------------------------------------------ a change

    def check(self, frame, line, returning: bool) -> None:
        key = id(frame)
        code = frame.f_code
        seen = self.last_line.get(key)
        prev = seen[1] if seen is not None and seen[0] is code else None
        if returning:
            self.last_line.pop(key, None)
        else:
            self.last_line[key] = (code, line)
        stop = False
        # Every watch sees the change before the thread is suspended: another
        # thread running meanwhile must not be the first to see it.
        for watch in list(self.watches.values()):
            if watch.kind == "local" and returning and frame is watch.frame:
                stop |= self._changed(watch, frame, prev, returning)
                self.end(watch.id, "the frame it lived in returned")
                continue
            if watch.applies(code, frame):
                stop |= self._changed(watch, frame, prev, returning)
        if stop:
            _suspend(frame)

    def _changed(self, watch: Watch, frame, prev, returning) -> bool:
        """Tell a change of `watch`, if there is one; whether to stop for it."""
        try:
            new = watch.read()
        except Gone as exc:
            self.end(watch.id, str(exc))
            return False
        except Exception:
            return False
        if not watch.changed(new):
            return False
        old, old_text = watch.value, watch.text
        watch.take(new)
        watch.hits += 1
        if returning or prev is not None:
            where = frame
            line = frame.f_lineno if returning else prev
        else:  # the frame's first line: the change was made by its caller
            where = frame.f_back or frame
            line = where.f_lineno
        stop, note = watch.wants_stop(old, new)
        body = {"id": watch.id, "old": old_text, "new": watch.text,
                "path": where.f_code.co_filename, "line": line,
                "function": where.f_code.co_name, "hit": watch.hits,
                "stopped": stop, "threadId": _dap_thread_id()}
        if note:
            body["note"] = note
        self._send(body)
        return stop

    def _send(self, body: dict) -> None:
        py_db = _debugger()
        if py_db is None:
            return
        if self.announced_pid != os.getpid() and "copied" not in body:
            self._announce()  # a fork pydevd's hook was not told of
        try:
            from _pydevd_bundle.pydevd_net_command import NetCommand
            py_db.writer.add_command(NetCommand(
                0, 0, {"type": "event", "event": EVENT, "body": body}, is_json=True))
        except Exception:
            pass


class _LocalTracer:
    """3.11: a frame's tracer, pydevd's (if it traces the frame) called first."""

    __slots__ = ("agent", "inner")

    def __init__(self, agent: Agent, inner) -> None:
        self.agent, self.inner = agent, inner

    def __call__(self, frame, event, arg):
        inner = self.inner
        if inner is not None:
            self.inner = inner(frame, event, arg)
        if event == "line":
            self.agent.check(frame, frame.f_lineno, False)
        elif event == "return":
            self.agent.check(frame, None, True)
        return self


def _own_code(code) -> bool:
    return any(part in code.co_filename for part in _NOT_MINE)


def _debugger():
    pydevd = sys.modules.get("pydevd")
    return pydevd.get_global_debugger() if pydevd is not None else None


def _dap_thread_id():
    try:
        from _pydevd_bundle._debug_adapter.pydevd_base_schema import BaseSchema
        from _pydevd_bundle.pydevd_constants import get_current_thread_id
        return BaseSchema._translate_id_to_dap(get_current_thread_id(threading.current_thread()))
    except Exception:
        return None


def _suspend(frame) -> None:
    """Stop this thread in `frame` as a breakpoint would: debugpy sends
    `stopped` there, and its requests are answered until it resumes."""
    py_db = _debugger()
    if py_db is None:
        return
    from _pydevd_bundle.pydevd_comm_constants import CMD_SET_BREAK
    from _pydevd_bundle.pydevd_additional_thread_info import set_additional_thread_info
    thread = threading.current_thread()
    info = set_additional_thread_info(thread)
    try:
        info.hit_breakpoint_ids = None  # not a source breakpoint's stop
    except Exception:
        pass
    py_db.set_suspend(thread, CMD_SET_BREAK)
    py_db.do_wait_suspend(thread, frame, "line", None)


def _anchor(session_globals, session_locals):
    """The frame the session's evaluate runs in (its globals and locals)."""
    frame = sys._getframe(3)  # past _anchor, add and the evaluated text's own frame
    first = None
    while frame is not None:
        if frame.f_globals is session_globals and not _own(frame):
            if first is None:
                first = frame
            try:
                if frame.f_locals is session_locals:
                    return frame
            except Exception:
                pass
        frame = frame.f_back
    return first


AGENT = Agent()


def add(spec_json: str, session_globals, session_locals) -> str:
    import json
    frame = _anchor(session_globals, session_locals)
    if frame is None:
        return json.dumps({"ok": False, "message": "the frame to read it in was not found"})
    try:
        return json.dumps(AGENT.add(json.loads(spec_json), frame))
    finally:
        frame = None


def keep(ids_json: str) -> str:
    import json
    AGENT.set_ids(json.loads(ids_json))
    return "ok"
