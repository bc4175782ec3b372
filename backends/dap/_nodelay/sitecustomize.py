"""Sets TCP_NODELAY on debugpy's own sockets (adapter, launcher, debuggee),
keeps other local users out of them, spares pydevd listing a big dict's
keys to show the first few (`_faster_dict_repr`), and spares pydevd's
pure-Python sys.monitoring tracer (Python 3.12+) two costs it pays per line
event (`_faster_sys_monitoring`).

debugpy's processes talk over loopback TCP with Nagle's algorithm on, so every
small DAP message waits out the peer's delayed ACK (~40 ms per hop; debugpy
issue #2054). This module is put first on PYTHONPATH of the adapter and of the
debuggee; Python imports it at start-up. It touches only sockets that debugpy
or pydevd code connects or accepts, then hands over to the sitecustomize this
one shadows, if any, and takes its directory back off sys.path so the program
sees the path it would have had.

Other users: debugpy's adapter listens on loopback ports (for debug servers and
for more clients) that any local user can connect to, and a client that sends
`launch` runs a program as us. On Linux an accepted connection whose peer
belongs to another uid (read from /proc/net/tcp, as delve's --only-same-user
does) is closed at once. And the access token the launcher passes to the
debuggee moves from its command line (which `ps` shows every user) to
DEBUGPY_EXTRA_ARGV in its environment (readable by its owner only).
"""

import os
import sys


def _from_debugger(depth):
    """Whether the caller `depth` frames up is debugpy's or pydevd's code."""
    try:
        module = sys._getframe(depth).f_globals.get("__name__") or ""
    except Exception:
        return False
    return module.startswith(("debugpy", "_pydevd", "pydevd", "_pydev"))


def _install():
    import socket

    def _nodelay(sock):
        try:
            if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except Exception:
            pass

    original_connect = socket.socket.connect
    original_accept = socket.socket.accept

    def connect(self, address):
        result = original_connect(self, address)
        if _from_debugger(2):
            _nodelay(self)
            _faster_dict_repr()
            _faster_sys_monitoring()
            _no_start_sleep()
            _prompt_wakeups()
        return result

    def accept(self):
        while True:
            conn, address = original_accept(self)
            if not _from_debugger(2):
                return conn, address
            if _same_user(conn):
                _nodelay(conn)
                return conn, address
            try:
                conn.close()
            except Exception:
                pass

    connect.__doc__ = original_connect.__doc__
    accept.__doc__ = original_accept.__doc__
    socket.socket.connect = connect
    socket.socket.accept = accept


_DICT_REPR = []  # patched once, when pydevd first connects (its modules are loaded)


def _faster_dict_repr():
    """pydevd's safe repr of a dict lists all its keys (`list(obj)`) to show the
    first few: 2 ms for 200,000 keys, paid twice per `variables` answer. Hand it
    a dict of just the keys it shows; its output is the same (it stops at
    `maxcollection[level]` keys and says "..."), and a dict that holds itself
    among them is left to pydevd as it is."""
    if _DICT_REPR:
        return
    _DICT_REPR.append(True)
    module = sys.modules.get("_pydevd_bundle.pydevd_safe_repr")
    safe_repr = getattr(module, "SafeRepr", None)
    original = getattr(safe_repr, "_repr_dict", None)
    if original is None or getattr(original, "_tui_debugger_head", False):
        return
    import itertools

    def _repr_dict(self, obj, level, *rest, **kwargs):
        try:
            limit = self.maxcollection[level]
            if len(obj) > limit + 1:
                head = {}
                for key in itertools.islice(obj, limit):
                    value = obj[key]
                    if value is obj:
                        raise LookupError("a dict inside itself")
                    head[key] = value
                obj = head
        except Exception:
            pass
        return original(self, obj, level, *rest, **kwargs)

    _repr_dict._tui_debugger_head = True
    _repr_dict.__doc__ = original.__doc__
    safe_repr._repr_dict = _repr_dict


_CHECKED = []  # [pydevd module or None], once known


def _checked_pydevd():
    """The pydevd module when its pydevd.py is the one the session checked and
    named by its sha256 (TUI_DEBUGGER_PYDEVD_WAKEUPS), else None: the patches
    below that stand in for a line of pydevd.py apply to that file only."""
    if _CHECKED:
        return _CHECKED[0]
    found = None
    wanted = os.environ.get("TUI_DEBUGGER_PYDEVD_WAKEUPS")
    pydevd = sys.modules.get("pydevd")
    if wanted and pydevd is not None:
        try:
            import hashlib

            with open(pydevd.__file__, "rb") as source:
                if hashlib.sha256(source.read()).hexdigest() == wanted:
                    found = pydevd
        except Exception:
            pass
    _CHECKED.append(found)
    return found


def _first_time_in_checked_pydb(done, name):
    """(the pydevd module, its PyDB's method `name`) the first time a patch
    asks (`done` marks it asked), when pydevd is the one the session checked;
    else None."""
    if done:
        return None
    done.append(True)
    pydevd = _checked_pydevd()
    original = getattr(getattr(pydevd, "PyDB", None), name, None)
    return None if original is None else (pydevd, original)


_START_SLEEP = []  # patched once, when pydevd first connects


def _no_start_sleep():
    """PyDB.initialize_network starts pydevd's reader and writer threads on the
    new connection, then sleeps 0.1 s "to give threads time to start". Thread.start()
    returns only once the thread runs, so the sleep only holds the program
    back: every program and every child process it starts paid it between
    connecting and running, on the way to its first stop, while the session's
    configurationDone was already waiting (docs/performance.md). That one
    sleep, and no other, returns at once; only in the pydevd.py the session
    checked (_checked_pydevd)."""
    found = _first_time_in_checked_pydb(_START_SLEEP, "initialize_network")
    if found is None or getattr(found[0], "time", None) is None:
        return
    pydevd, code, real_time = found[0], found[1].__code__, found[0].time
    real_sleep = real_time.sleep

    def sleep(seconds):
        if sys._getframe(1).f_code is code:
            return
        real_sleep(seconds)

    # pydevd.py's `time`, all of it as it was (a module's own attributes, looked
    # up as fast) but for that sleep.
    own = type(real_time)(real_time.__name__, real_time.__doc__)
    own.__dict__.update(real_time.__dict__)
    own.sleep = sleep
    pydevd.time = own


_WAKEUPS = []  # patched once, when pydevd first connects


def _prompt_wakeups():
    """pydevd's stopped thread takes one queued request, runs it, then waits on
    its wake-up event (0.2 s at most) and clears it: of three requests that
    arrive together, the third waits out the 0.2 s (docs/backends/dap.md).
    The event it is handed with its queue now returns at once while the queue
    holds a request, so requests sent together are answered one after another
    without a wait. Only for the pydevd.py the session checked and named by
    its sha256 (TUI_DEBUGGER_PYDEVD_WAKEUPS): the session then sends them
    together, and one at a time otherwise."""
    found = _first_time_in_checked_pydb(_WAKEUPS, "get_internal_queue_and_event")
    if found is None or getattr(found[1], "_tui_debugger_prompt", False):
        return
    cls, original = found[0].PyDB, found[1]

    class _Wakeup(object):
        __slots__ = ("_event", "_queue")

        def __init__(self, event, queue):
            self._event = event
            self._queue = queue

        def set(self):
            self._event.set()

        def clear(self):
            self._event.clear()

        def is_set(self):
            return self._event.is_set()

        def wait(self, timeout=None):
            if not self._queue.empty():
                return True
            return self._event.wait(timeout)

    def get_internal_queue_and_event(self, thread_id):
        queue, event = original(self, thread_id)
        return queue, _Wakeup(event, queue)

    get_internal_queue_and_event._tui_debugger_prompt = True
    get_internal_queue_and_event.__doc__ = original.__doc__
    cls.get_internal_queue_and_event = get_internal_queue_and_event


_SYS_MONITORING = []  # patched once, when pydevd first connects (breakpoints come after)

#: sha256 (first 16 hex digits) of the source of the two pydevd functions the
#: patch below stands in front of, as debugpy 1.8.22 ships them: another
#: debugpy keeps its own code until these are checked against it.
_SYS_MONITORING_SOURCES = {
    "_internal_line_event": "363ce0a410202f3c",
    "_get_func_code_info": "6df265c0ce781faf",
}


def _faster_sys_monitoring():
    """Two per-event costs of pydevd's pure-Python sys.monitoring tracer, the
    one Python 3.12+ runs when debugpy's compiled speed-ups were built for
    another Python (ours: 3.11; the program's: the user's 3.12 or 3.13).

    1. A line of a code object that holds a breakpoint fires a Python callback
       every time it runs, even when nothing is stepping: pydevd answers None
       where, for code without breakpoints, it answers sys.monitoring.DISABLE.
       A loop of 3,000,000 `total += i` before a module-level breakpoint,
       as the program times it: 0.62 s alone, 24 s under debugpy on 3.12,
       0.75 s with this (docs/performance.md). We answer DISABLE for a line
       that holds no breakpoint when no thread steps or is suspended and no
       plugin breakpoint applies: the condition under which pydevd's own
       callback does nothing. DISABLE is per code location, and pydevd calls
       sys.monitoring.restart_events(), which enables every location again,
       whenever a breakpoint is added, on every suspension (breakpoint, step,
       pause, exception) before any step starts, and on stop-on-entry.
    2. pydevd finds a code object's FuncCodeInfo in a dict keyed by the code
       object, and on 3.12/3.13 hashing a code object walks all its bytecode
       and constants (not cached): 2.5 ms per line event in a 100,000-line
       module. An identity-keyed cache in front answers the same object (a
       breakpoint at its line 99,995 on 3.12: 608 s before, 186 s now; the
       rest is CPython numbering each line event, fixed in 3.14).
    """
    if _SYS_MONITORING:
        return
    _SYS_MONITORING.append(True)
    constants = sys.modules.get("_pydevd_bundle.pydevd_constants")
    if not getattr(constants, "PYDEVD_USE_SYS_MONITORING", False):
        return  # Python 3.11 and older, or pydevd told to use settrace: nothing to do
    module = sys.modules.get("_pydevd_sys_monitoring._pydevd_sys_monitoring")
    chosen = sys.modules.get("_pydevd_sys_monitoring.pydevd_sys_monitoring")
    if module is None or chosen is None:
        return  # pydevd not loaded
    if getattr(chosen, "start_monitoring", None) is not getattr(module, "start_monitoring", 0):
        return  # pydevd runs its compiled module: its own speed
    if os.environ.get("TUI_DEBUGGER_PYDEVD_SPEEDUPS") == "0":
        module._tui_debugger_faster = "left as it is: TUI_DEBUGGER_PYDEVD_SPEEDUPS=0"
        return  # the way back to pydevd's own, for a before/after or a suspected fault
    try:
        import hashlib
        import inspect

        for name, digest in _SYS_MONITORING_SOURCES.items():
            source = inspect.getsource(getattr(module, name))
            if hashlib.sha256(source.encode()).hexdigest()[:16] != digest:
                raise LookupError("%s differs from debugpy 1.8.22's" % name)
        line_event = module._internal_line_event
        func_code_info = module._get_func_code_info
        holder = module.GlobalDebuggerHolder
        any_thread_stepping = module.any_thread_stepping
        suspended = module.STATE_SUSPEND
        disable = module.monitor.DISABLE
    except Exception as exc:
        module._tui_debugger_faster = "left as it is: %s" % (exc,)
        try:
            from _pydev_bundle import pydev_log

            pydev_log.info("tui-debugger: pydevd's sys.monitoring tracer %s",
                           module._tui_debugger_faster)
        except Exception:
            pass
        return

    def _internal_line_event(func_code_info, frame, line):
        if (func_code_info.breakpoint_found
                and not func_code_info.plugin_line_breakpoint_found
                and line not in func_code_info.bp_line_to_breakpoint):
            # module._thread_local_info, looked up now: pydevd replaces it after a fork.
            info = module._thread_local_info.thread_info.additional_info
            if (info.pydev_step_cmd == -1 and info.pydev_state != suspended
                    and not any_thread_stepping()):
                return disable
        return line_event(func_code_info, frame, line)

    by_id = {}  # id(code) -> (code, FuncCodeInfo); the code held, so its id stays its own

    def _get_func_code_info(code_obj, frame_or_depth):
        known = by_id.get(id(code_obj))
        if known is not None and known[0] is code_obj:
            py_db = holder.global_dbg
            if py_db is not None and known[1].pydb_mtime == py_db.mtime:
                return known[1]
        if frame_or_depth.__class__ is int:
            frame_or_depth += 1  # the caller's frame is one further up from here
        found = func_code_info(code_obj, frame_or_depth)
        if found is not None:
            by_id[id(code_obj)] = (code_obj, found)
        return found

    # Both are module globals that pydevd's callbacks look up at each call.
    module._internal_line_event = _internal_line_event
    module._get_func_code_info = _get_func_code_info
    module._tui_debugger_faster = "on"


def _proc_net_address(host, port):
    """How /proc/net/tcp{,6} spells an address: each 32-bit word in host order."""
    import socket
    import struct

    if ":" in host:
        raw = socket.inet_pton(socket.AF_INET6, host.split("%")[0])
        words = struct.unpack("=4I", raw)
        return "".join("%08X" % w for w in words) + ":%04X" % port, "tcp6"
    raw = socket.inet_pton(socket.AF_INET, host)
    return "%08X" % struct.unpack("=I", raw)[0] + ":%04X" % port, "tcp"


def _same_user(conn):
    """Whether the peer of an accepted loopback TCP connection is our uid."""
    if not sys.platform.startswith("linux"):
        return True
    try:
        peer_host, peer_port = conn.getpeername()[:2]
        local_host, local_port = conn.getsockname()[:2]
        peer, table = _proc_net_address(peer_host, peer_port)
        local, _ = _proc_net_address(local_host, local_port)
    except Exception:
        return True  # not a TCP/IP socket: nothing to check here
    try:
        with open("/proc/net/" + table) as entries:
            for line in entries:
                fields = line.split()
                if len(fields) > 7 and fields[1] == peer and fields[2] == local:
                    return int(fields[7]) == os.getuid()
    except OSError:
        return False
    return False


def _hide_token():
    """The launcher starts the debuggee with --adapter-access-token on its
    command line; move it to the environment."""
    import subprocess

    original_init = subprocess.Popen.__init__

    def __init__(self, args, *rest, **kwargs):
        try:
            if (isinstance(args, list) and "--adapter-access-token" in args
                    and _from_debugger(2) and kwargs.get("env") is not None):
                at = args.index("--adapter-access-token")
                token = args[at + 1]
                args = args[:at] + args[at + 2:]
                env = dict(kwargs["env"])
                extra = env.get("DEBUGPY_EXTRA_ARGV", "")
                env["DEBUGPY_EXTRA_ARGV"] = (extra + " --adapter-access-token " + token).strip()
                kwargs["env"] = env
        except Exception:
            pass
        original_init(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = __init__


#: where a Python child of the debuggee finds pydevd's tokens (its environment)
_CHILD_TOKENS = {"--access-token": "TUI_DEBUGGER_PYDEVD_ACCESS_TOKEN",
                 "--client-access-token": "TUI_DEBUGGER_PYDEVD_CLIENT_TOKEN"}


def _child_tokens_off_argv():
    """pydevd starts a Python child of the debuggee (subprocess, exec) as
    `pydevd.py ... --client-access-token T --file PROG` or `python -c "...
    settrace(..., client_access_token='T')"`: on a command line every user
    reads with `ps`. Here they move to the child's environment (readable by
    its owner only): pydevd's patch_args is wrapped as it is imported, and a
    child started so puts them back on its own sys.argv (not its command line)
    before pydevd reads them."""
    import re

    argv = sys.argv
    if argv and os.path.basename(argv[0]) in ("pydevd.py", "pydevd.pyc"):
        for flag, key in _CHILD_TOKENS.items():
            value = os.environ.get(key)
            if value and flag not in argv:
                argv[1:1] = [flag, value]

    # settrace(access_token='T', ...) and its __setup_holder__={'access-token': 'T'}
    in_code = re.compile(r"(\b(?:client_)?access_token=|'(?:client-)?access-token': )('[^'\\]*')")
    keys = {"access_token=": _CHILD_TOKENS["--access-token"],
            "client_access_token=": _CHILD_TOKENS["--client-access-token"],
            "'access-token': ": _CHILD_TOKENS["--access-token"],
            "'client-access-token': ": _CHILD_TOKENS["--client-access-token"]}

    def in_code_to_env(match):
        name, literal = match.group(1), match.group(2)
        os.environ[keys[name]] = literal[1:-1]
        return "%s__import__('os').environ.get(%r)" % (name, keys[name])

    def without_tokens(args):
        out = []
        at = 0
        while at < len(args):
            word = args[at]
            text = word.decode("utf-8", "surrogateescape") if isinstance(word, bytes) else word
            if isinstance(text, str) and text in _CHILD_TOKENS and at + 1 < len(args):
                value = args[at + 1]
                if isinstance(value, bytes):
                    value = value.decode("utf-8", "surrogateescape")
                os.environ[_CHILD_TOKENS[text]] = value
                at += 2
                continue
            if isinstance(text, str) and ("access_token=" in text or "access-token'" in text):
                text = in_code.sub(in_code_to_env, text)
                word = text.encode("utf-8", "surrogateescape") if isinstance(word, bytes) else text
            out.append(word)
            at += 1
        return out

    def wrap(module):
        original = module.patch_args
        _tokens_into_given_environments()

        def patch_args(args, is_exec=False):
            patched = original(args, is_exec)
            try:
                if isinstance(patched, (list, tuple)) and patched is not args:
                    return without_tokens(list(patched))
            except Exception:
                pass
            return patched

        module.patch_args = patch_args

    name = "_pydev_bundle.pydev_monkey"
    if name in sys.modules:
        wrap(sys.modules[name])
        return

    class WrapOnImport(_AfterImport):
        NAME = name

        def then(self, module):
            wrap(module)

    sys.meta_path.insert(0, WrapOnImport())


def _pydevd_tokens():
    """The tokens a Python child of the debuggee needs, by the environment keys
    it reads them from: pydevd's own setup once it has one, else what a move
    off the command line (_child_tokens_off_argv) put in our environment."""
    setup = getattr(getattr(sys.modules.get("pydevd"), "SetupHolder", None), "setup", None)
    found = {}
    for flag, key in _CHILD_TOKENS.items():
        value = (setup.get(flag[2:]) if isinstance(setup, dict) else None) or os.environ.get(key)
        if value:
            found[key] = str(value)
    return found


def _tokens_into_given_environments():
    """A child started with an environment of its own (`env={**os.environ,
    ...}`, made before pydevd's patch moved the tokens into ours, as Django's
    autoreloader does) gets them too, or it runs without its debugger."""
    import subprocess

    original = subprocess.Popen._execute_child
    if getattr(original, "_tui_debugger_tokens", False):
        return

    def _execute_child(self, *args, **kwargs):
        # (args, executable, preexec_fn, close_fds, pass_fds, cwd, env, ...)
        try:
            env = kwargs.get("env") if "env" in kwargs else (args[6] if len(args) > 6 else None)
            if env is not None:
                tokens = {k: v for k, v in _pydevd_tokens().items() if k not in env}
                if tokens:
                    env = {**env, **tokens}
                    if "env" in kwargs:
                        kwargs["env"] = env
                    else:
                        args = args[:6] + (env,) + args[7:]
        except Exception:
            pass
        return original(self, *args, **kwargs)

    _execute_child._tui_debugger_tokens = True
    subprocess.Popen._execute_child = _execute_child


class _AfterImport:
    """A finder, first on sys.meta_path, that waits for module NAME's import,
    runs `then` on the module once it ran, and leaves sys.meta_path."""

    NAME = ""

    def then(self, module):
        raise NotImplementedError

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.NAME:
            return None
        import importlib.machinery

        self.leave()
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run_module = loader.exec_module

        def exec_module(module):
            run_module(module)
            try:
                self.then(module)
            except Exception:
                pass

        try:
            loader.exec_module = exec_module
        except Exception:
            pass
        return spec

    def leave(self):
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass


class _QuietEnvironmentDescription(_AfterImport):
    """Spares debugpy's adapter, launcher and program a description of their
    environment that nobody reads.

    Each of them calls `debugpy.common.log.describe_environment` as it starts
    (the program twice), which builds its text before `info()` looks whether
    any log records "info": the text lists every installed package, reading
    each one's METADATA four times. With debugpy's logging off (its default,
    and ours) nothing is written, yet in a virtualenv of 98 packages each call
    took 0.4-0.65 s on a 2-core machine under load: three of them on the way
    to a launch's first stop. This finder, first on sys.meta_path, waits for
    that module's import, then makes the call build the text only when a log
    records "info" (DEBUGPY_LOG_DIR, --log-stderr: the text is written as
    before), and leaves sys.meta_path. TUI_DEBUGGER_PYDEVD_SPEEDUPS=0 leaves
    debugpy as it is."""

    NAME = "debugpy.common.log"

    def then(self, module):
        _quiet_describe(module)


def _quiet_describe(log):
    describe = getattr(log, "describe_environment", None)
    if describe is None or not hasattr(log, "_levels"):
        return  # another debugpy: left as it is

    def describe_environment(header):
        if "info" in log._levels:
            describe(header)

    describe_environment.__doc__ = describe.__doc__
    describe_environment.__wrapped__ = describe
    log.describe_environment = describe_environment


def _install_quiet_describe():
    if os.environ.get("TUI_DEBUGGER_PYDEVD_SPEEDUPS") == "0":
        return
    module = sys.modules.get(_QuietEnvironmentDescription.NAME)
    if module is not None:
        _quiet_describe(module)
    else:
        sys.meta_path.insert(0, _QuietEnvironmentDescription())


def _debugpy_own_process():
    """Whether this process is debugpy's adapter (`-m debugpy.adapter`) or its
    launcher (the `debugpy/launcher` directory run as a script), not the
    program it debugs."""
    args = iter(list(getattr(sys, "orig_argv", None) or [])[1:])
    for arg in args:
        if arg in ("-X", "-W"):
            next(args, None)  # the option's value
        elif arg == "-m":
            return next(args, None) == "debugpy.adapter"
        elif not arg.startswith("-"):
            script = os.path.normpath(arg)
            return script.endswith(os.sep + os.path.join("debugpy", "launcher"))
        elif arg == "-c":
            return False
    return False


def _lean_debugpy_process():
    """Spares debugpy's adapter and launcher two costs of importing
    `debugpy.common.log` that buy nothing with its logging off: the import of
    `importlib.metadata` (for the description of the environment that
    _QuietEnvironmentDescription no longer builds; 36 ms idle), made lazy,
    run at its first use; and `uname -p`, a process the platform module
    starts to name the processor for the log's header (10 ms idle), which
    its stderr log evaluates even when it writes nothing: the processor is
    left unnamed. Both processes are on the way to every launch's first
    stop (the launcher each time); the program is never touched (its code
    may ask the platform module, and import what it likes)."""
    if os.environ.get("TUI_DEBUGGER_PYDEVD_SPEEDUPS") == "0" or not _debugpy_own_process():
        return
    import importlib
    import importlib.util

    if "importlib.metadata" not in sys.modules:
        spec = importlib.util.find_spec("importlib.metadata")
        if spec is not None and spec.loader is not None:
            spec.loader = importlib.util.LazyLoader(spec.loader)
            module = importlib.util.module_from_spec(spec)
            sys.modules["importlib.metadata"] = module
            spec.loader.exec_module(module)
            importlib.metadata = module  # as an import sets it on its package
    import platform

    uname = platform.uname()
    if "processor" not in getattr(uname, "__dict__", {"processor": None}):
        uname.__dict__["processor"] = ""


def _chain():
    """Run the sitecustomize this file shadows, under the same module name."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.path[:] = rest
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


try:
    _install()
except Exception:
    pass
try:
    _hide_token()
except Exception:
    pass
try:
    _child_tokens_off_argv()
except Exception:
    pass
try:
    _install_quiet_describe()
except Exception:
    pass
try:
    _lean_debugpy_process()
except Exception:
    pass


def _stdin_from_file():
    """The program's stdin, when the user chose a file for it (TUI_DEBUGGER_STDIN)."""
    path = os.environ.pop("TUI_DEBUGGER_STDIN", None)
    if path:
        fd = os.open(path, os.O_RDONLY)
        os.dup2(fd, 0)
        os.close(fd)


try:
    _stdin_from_file()
except Exception:
    pass
_chain()
