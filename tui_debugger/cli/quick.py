"""The quick client of a live session: the standard library only.

An agent that drives the CLI starts one process per command, so a command's
own start-up is paid on every call. A session command (`next`, `status`,
`print`, `await` ...) therefore imports nothing here but the standard library's
socket and json: it finds the session (as client/router.py's resolve_live
does), hands its whole command line to the session's host, which parses, runs
and renders it with the registry and models it has already imported
(cli/parse.py, run_on_host), and prints the answer. Anything else, and anything
unusual on the way (no session or several, settings not yet checked, a host of
an older version, help), answers None: the door (main.py) then takes the whole
command line (full.py), which reports it as it always did. The quick path only
ever gives up before the command has run; which lines try it is route.py's.
"""

from __future__ import annotations

import _socket  # socket.py's own import (selectors, enum) costs more than the call
import json
import os
import sys

from .. import __version__
from .route import ENV_FULL

# No `typing` either: annotations stay strings (from __future__ import annotations).

_ENV_SESSION = "TUI_DEBUGGER_SESSION"  # paths.ENV_SESSION
_SETTINGS_STAMP = "settings-checked"  # in the runtime directory; not a .json


# ============================================================================ settings


def _settings_key() -> str:
    """What the settings a command checks depend on: the config file (path,
    time, size) and the TUI_DEBUGGER_ environment. A checksum of it: the
    environment may hold an adapter's arguments."""
    import zlib

    path = os.environ.get("TUI_DEBUGGER_CONFIG")
    if path:
        path = os.path.expanduser(path)
    elif sys.platform.startswith("linux"):
        # platformdirs' answer on Linux, without its import (typing and more).
        xdg = os.environ.get("XDG_CONFIG_HOME", "")
        root = xdg if xdg.strip() else os.path.expanduser("~/.config")
        path = os.path.join(root, "tui-debugger", "config.toml")
    else:
        from platformdirs import user_config_dir

        path = os.path.join(user_config_dir("tui-debugger", appauthor=False), "config.toml")
    try:
        st = os.stat(path)
        stamp = f"{st.st_mtime_ns}:{st.st_size}"
    except OSError:
        stamp = "-"
    env = sorted((k, v) for k, v in os.environ.items()
                 if k.startswith("TUI_DEBUGGER_") and k not in (_ENV_SESSION, ENV_FULL))
    text = json.dumps([__version__, path, stamp, env])
    return f"{zlib.crc32(text.encode()):08x}:{len(text)}"


def _settings_fresh(base: str) -> bool:
    """The whole command line has checked the settings as they are now."""
    try:
        with open(os.path.join(base, _SETTINGS_STAMP)) as f:
            return f.read() == _settings_key()
    except OSError:
        return False


def remember_settings_checked() -> None:
    """Called once the whole command line has checked the settings: the quick
    path skips that check (pydantic's import) while nothing it depends on changed."""
    import contextlib

    from .. import paths

    with contextlib.suppress(Exception):
        stamp = paths.runtime_dir() / _SETTINGS_STAMP
        key = _settings_key()
        with contextlib.suppress(OSError):
            if stamp.read_text() == key:
                return
        tmp = stamp.with_name(f".{_SETTINGS_STAMP}.{os.getpid()}")
        try:
            tmp.write_text(key)
            tmp.replace(stamp)
        except OSError:  # a full disk: no stamp, and no half-written file left
            with contextlib.suppress(OSError):
                tmp.unlink()


# ============================================================================ finding the session


def _runtime_dir() -> str | None:
    """paths.runtime_dir, read only: None when it is missing or anything about it
    is not as it must be (the whole command line then says what)."""
    import stat

    base = os.environ.get("TUI_DEBUGGER_RUNTIME_DIR")
    if not base:
        xdg = os.environ.get("XDG_RUNTIME_DIR")
        if xdg and os.path.isdir(xdg) and os.access(xdg, os.W_OK):
            base = os.path.join(xdg, "tui-debugger")
        else:
            base = os.path.join(_temp_dir(), f"tui-debugger-{os.getuid()}")
    try:
        st = os.lstat(base)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return base


def _temp_dir() -> str:
    """tempfile.gettempdir's choice (the first writable of $TMPDIR, $TEMP, $TMP,
    /tmp, /var/tmp, /usr/tmp), without importing tempfile (random, hashlib...)."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(name)
        if value and os.path.isdir(value) and os.access(value, os.W_OK | os.X_OK):
            return os.path.abspath(value)
    for value in ("/tmp", "/var/tmp", "/usr/tmp"):
        if os.path.isdir(value) and os.access(value, os.W_OK | os.X_OK):
            return value
    return os.getcwd()


def _session_named(argv: list[str]) -> str | None:
    """--session NAME as the command line gives it (the host's parse checks it
    read the same)."""
    for i, word in enumerate(argv):
        if word == "--":
            break
        if word == "--session" and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith("--session="):
            return word.partition("=")[2]
    return None


def _project_of(directory: str) -> str:
    """paths.project_of."""
    start = os.path.realpath(directory)
    candidate = start
    while True:
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return start
        candidate = parent


def _metadata(base: str, name: str) -> dict[str, Any] | None:
    try:
        with open(os.path.join(base, f"{name}.json")) as f:
            info = json.load(f)
    except (OSError, ValueError, RecursionError):
        return None
    return info if isinstance(info, dict) and info.get("kind") == "tui-debugger-session" else None


def _alive(info: dict[str, Any]) -> bool:
    from backends.procinfo import pid_alive

    try:
        pid = int(info.get("pid", 0))
    except (TypeError, ValueError):
        return False
    return pid > 0 and pid_alive(pid)


#: wire.MAX_REQUEST: a longer line the host refuses; the whole command line
#: says so in its own words.
_MAX_REQUEST = 1024 * 1024


class _TooLong(Exception):
    pass


class _Link:
    """A blocking connection to a session's socket, speaking wire.py's lines."""

    def __init__(self, name: str, path: str):
        self.name = name
        self.sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        self.host_pid: int | None = None
        self._buffer = bytearray()
        self.sock.settimeout(5.0)
        try:
            self.sock.connect(path)
        except OSError:
            self.sock.close()
            raise

    def _readline(self) -> bytes:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end + 1])
                del self._buffer[:end + 1]
                return line
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                return b""
            self._buffer += chunk

    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":"), default=str).encode() + b"\n"
        if len(data) > _MAX_REQUEST:
            raise _TooLong()
        self.sock.sendall(data)

    def receive(self, kind: str) -> dict[str, Any] | None:
        while True:
            line = self._readline()
            if not line:
                return None
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("type") == kind:
                return message

    def hello(self) -> bool:
        """Whether the host runs command lines (a host of an older version does not)."""
        self.send({"type": "hello", "origin": "cli", "client": "cli", "subscribe": False,
                   "register": False})
        welcome = self.receive("welcome")
        if welcome is None or not welcome.get("cli"):
            return False
        self.host_pid = welcome.get("pid")
        return True

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def _link(base: str, name: str) -> _Link | None:
    info = _metadata(base, name)
    if info is not None and not _alive(info):
        return None
    # A damaged file (info None) with a live host: its socket still answers
    # (and the host writes the file again on the connection).
    try:
        link = _Link(name, os.path.join(base, f"{name}.sock"))
    except OSError:
        return None
    try:
        if link.hello():
            return link
    except OSError:
        pass
    link.close()
    return None


def _find(base: str, named: str | None, cwd: str) -> _Link | None:
    """The session the whole command line would reach (router.resolve_live),
    connected, when that is plain: the one named, else the one live session of
    this project. None otherwise."""
    if named is None:
        named = os.environ.get(_ENV_SESSION, "").strip() or None
    if named is not None:
        import re

        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,40}$", named):  # paths.NAME_RE
            return None
        return _link(base, named)
    project = _project_of(cwd)
    candidates = []
    try:
        entries = [e.name[:-5] for e in os.scandir(base) if e.name.endswith(".json")]
    except OSError:
        return None
    for name in entries:
        info = _metadata(base, name)
        if info is not None and info.get("project") == project and not info.get("parent"):
            candidates.append(name)
    found: list[_Link] = []
    for name in candidates:
        link = _link(base, name)
        if link is not None:
            found.append(link)
    if len(found) == 1:
        return found[0]
    for link in found:
        link.close()
    return None


def _several_live(base: str) -> bool:
    """paths.several_live."""
    try:
        return sum(1 for e in os.scandir(base) if e.name.endswith(".json")
                   and e.name not in ("warm.json", "screen.json")) > 1  # paths.NOT_SESSIONS
    except OSError:
        return False


def _columns() -> int:
    """shutil.get_terminal_size().columns, which argparse wraps its usage to."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


# ============================================================================ the command


def run_command(argv: list[str]) -> int | None:
    """The exit code of the command run by the session's host, or None: take
    the whole command line (nothing has run)."""
    base = _runtime_dir()
    if base is None or not _settings_fresh(base):
        return None
    named = _session_named(argv)
    cwd = os.getcwd()
    link = _find(base, named, cwd)
    if link is None:
        return None
    as_json = "--json" in argv
    try:
        try:
            link.send({"type": "cli", "id": 1, "argv": argv, "cwd": cwd, "session": named,
                       "columns": _columns()})
            link.sock.settimeout(None)  # `await --timeout`, a long step: as long as it takes
        except (OSError, _TooLong):
            return None
        try:
            message = link.receive("result")
        except OSError:
            message = None
        if message is None:
            return _lost(link.name, as_json)
        answer = message.get("cli")
        if not isinstance(answer, dict) or answer.get("fallback"):
            return None  # not run: the host refused the line itself
        return _print_answer(answer, link, base)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return reader_left()
    finally:
        link.close()


#: how long `start` waits for its session (host.PendingHost.ready's default)
START_TIMEOUT_S = 90.0


def start(argv: list[str]) -> int | None:
    """`tui-debugger start ...`: the host start_early started parses, runs and
    renders the whole command line (cliparse.start_on_host), with the parser
    and the models it imports anyway, and this process prints its answer.
    The command line's own import (the registry, the models, pydantic: ~0.3 s
    of CPU) no longer competes with the host's, the adapter's and the
    program's start-up for the cores. None: take the whole command line
    (nothing has run; the early host is still there for it)."""
    base = _runtime_dir()
    if base is None or not _settings_fresh(base):
        return None
    from ..host import early as early_host

    early = early_host.take_early()
    if early is None:
        return None
    if not early.alive():
        early.discard()  # the whole command line starts another
        return None
    as_json = "--json" in argv  # for the errors of this process's own
    early.hand_over({"command": "launch", "cli": argv, "cwd": os.getcwd(), "origin": "cli",
                     "columns": _columns()})
    proc = early.proc
    try:
        line = _first_line(proc, START_TIMEOUT_S)
    except KeyboardInterrupt:
        early_host.end_process(proc)
        return 130
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
    if line is None:
        early_host.end_process(proc)
        return _error("timeout", early_host.not_started_text("daemon", START_TIMEOUT_S, early.log),
                      as_json)
    answer = None
    if line:
        try:
            answer = json.loads(line).get("cli")
        except (ValueError, AttributeError):
            answer = None
    if not isinstance(answer, dict):
        return _error("command_failed", early_host.exited_text(proc, early.log), as_json)
    if answer.get("rc"):
        _reap(proc)  # it exits after reporting; else it goes on serving its session
    sys.stdout.write(answer.get("stdout") or "")
    sys.stdout.flush()
    sys.stderr.write(answer.get("stderr") or "")
    return int(answer.get("rc", 1))


def _first_line(proc: Any, timeout: float) -> bytes | None:
    """The host's first line on its stdout (b"" once it exited without one);
    None after `timeout` seconds."""
    import select
    import time

    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            return b""
        data += chunk
    return data.split(b"\n", 1)[0]


def _reap(proc: Any) -> None:
    import subprocess

    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def reader_left() -> int:
    """`tui-debugger output | head`: the reader left; that is not an error.
    Whatever is printed after goes nowhere (the whole command line's too)."""
    try:
        sys.stdout = open(os.devnull, "w")
    except OSError:
        pass
    return 0


def _error(code: str, message: str, as_json: bool) -> int:
    """commandline.emit_error's printout."""
    if as_json:
        print(json.dumps({"error": {"code": code, "message": message}}, indent=2))
    print(f"error: {message}", file=sys.stderr)
    return 1


def _lost(name: str, as_json: bool) -> int:
    """client.RemoteSession._died, as commandline.emit_error prints it."""
    return _error("command_failed", f"Lost the connection to session {name!r}: its host "
                  "process exited. See `tui-debugger sessions`, or start a new one with "
                  "`tui-debugger start PROGRAM`.", as_json)


def _warm_now(base: str, pid: int) -> bool:
    """The host `pid` has ended its session and waits warm for the next one
    (its warm.json: tui_debugger/warm.py), rather than exiting."""
    try:
        with open(os.path.join(base, "warm.json")) as f:  # warm.META_NAME
            return json.load(f).get("pid") == pid
    except (OSError, ValueError, AttributeError):
        return False


def _print_answer(answer: dict[str, Any], link: _Link, base: str) -> int:
    rc = int(answer.get("rc", 1))
    if "stdout" in answer or "stderr" in answer:
        sys.stdout.write(answer.get("stdout") or "")
        sys.stdout.flush()
        sys.stderr.write(answer.get("stderr") or "")
        return rc
    if answer.get("wait_exit") and link.host_pid and link.host_pid != os.getpid():
        # A headless host exits right after answering; return once it has, so the
        # next command never finds a session that is about to vanish.
        import time

        from backends.procinfo import pid_alive

        link.close()
        deadline = time.monotonic() + 5
        while (pid_alive(link.host_pid) and not _warm_now(base, link.host_pid)
               and time.monotonic() < deadline):
            time.sleep(0.02)
    session = (answer.get("acted") or link.name) if _several_live(base) else None
    if "json" in answer:
        data = answer["json"]
        if session is not None and isinstance(data, dict):
            data.setdefault("session", session)
        print(json.dumps(data, indent=2))
    else:
        text = answer.get("text")
        if text:
            # An answer from one process of a program of several names it, once.
            labelled = session is not None and not (answer.get("acted") and session in text)
            print(f"[session {session}] {text}" if labelled else text)
    return rc
