"""The user's warm host: a session's host that, once its session ended, stays
for an idle time (`warm_idle_s`, 10 minutes by default) with its imports done
and debugpy's adapter started, to host the next session `run`, `start` or an
MCP `debug_launch` starts, instead of a new Python process that imports them
all again (docs/performance.md).

One per user (and runtime directory): the host that holds `warm.lock` serves
`warm.sock` (0600, in the 0700 runtime directory) and describes itself in
`warm.json` for `sessions` and `doctor`. A starter connects, checks that the
peer is a process of its own user (SO_PEERCRED), and asks to take it with
what a host must share with it: the Python executable, the package (its
directory and version), the working directory's project and the whole
environment (but for `VOLATILE`). The host checks the peer's uid and gid too,
and whether its own files changed since it imported them; a host that does
not fit says why and stays, one whose package changed ends. A host taken
gives up the lock and the socket at once (the next `run` starts cold, or
takes another), adopts the starter's environment, reads the spec from the
connection as a cold host reads its stdin, and answers on it as on its
stdout (daemon.py). When that session ends, it becomes the warm host again,
unless another host is one already.

Light on purpose (the starters' early path imports it): os, socket, json.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

from backends.early_adapter import SHELL_VOLATILE
from backends.procinfo import pid_alive

from . import __version__, paths

ENV_WARM = "TUI_DEBUGGER_WARM"
SOCKET_NAME = "warm.sock"
META_NAME = "warm.json"
LOCK_NAME = "warm.lock"
META_KIND = "tui-debugger-warm-host"


class Place(NamedTuple):
    """Where a warm process of the user waits: its socket, description and
    lock in the runtime directory, and the kind its description names."""
    socket: str
    meta: str
    lock: str
    kind: str


HOST = Place(SOCKET_NAME, META_NAME, LOCK_NAME, META_KIND)

#: What may differ between the starter's environment and the warm host's: set
#: anew by the shell for each command, telling nothing a program runs by.
VOLATILE = SHELL_VOLATILE

#: how long a starter waits for the warm host's answer before it starts cold
ANSWER_TIMEOUT_S = 2.0
_MAX_REQUEST = 4 * 1024 * 1024


def enabled(env: Any = None) -> bool:
    """TUI_DEBUGGER_WARM=0 (or false, no, off) turns it off for this process.
    The config file's `warm` key is read by the host, which then neither
    becomes warm nor lets itself be taken."""
    value = (os.environ if env is None else env).get(ENV_WARM, "")
    return value.strip().lower() not in ("0", "false", "no", "off")


def install_stamp() -> str:
    """The package as installed: its version, and its Python files' count and
    newest modification time (an edit, a reinstall, an upgrade change it)."""
    import backends

    newest, count = 0, 0
    for package in (os.path.dirname(os.path.abspath(__file__)),
                    os.path.dirname(os.path.abspath(backends.__file__))):
        for root, dirs, files in os.walk(package):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in files:
                if name.endswith(".py"):
                    with contextlib.suppress(OSError):
                        newest = max(newest, os.stat(os.path.join(root, name)).st_mtime_ns)
                        count += 1
    return f"{__version__}:{count}:{newest}"


def peer_credentials(sock: socket.socket) -> tuple[int, int, int]:
    """(pid, uid, gid) of the process at the other end of a Unix socket."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", raw)
    return pid, uid, gid


def peer_is_this_user(sock: socket.socket) -> bool:
    """The peer runs as this process's user (and group): anything else is
    never answered, whatever the socket's mode let through."""
    try:
        _, uid, gid = peer_credentials(sock)
    except OSError:
        return False
    return uid == os.getuid() and gid == os.getgid()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def fit_request(cwd: str) -> dict[str, Any]:
    """What a starter tells the warm host of itself, to be taken."""
    return {"op": "take", "python": sys.executable, "package": _package_dir(),
            "version": __version__, "cwd": os.path.realpath(cwd), "env": dict(os.environ),
            "umask": _umask()}


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def misfit(request: dict[str, Any], *, project: str, env: dict[str, str]) -> str | None:
    """Why a warm host of `project` whose starter's environment was `env`
    cannot host the session `request` asks for; None when it can."""
    if request.get("python") != sys.executable:
        return f"another Python ({request.get('python')}, the warm host runs {sys.executable})"
    if request.get("package") != _package_dir() or request.get("version") != __version__:
        return "another install of tui-debugger"
    cwd = request.get("cwd")
    if not isinstance(cwd, str) or paths.project_of(cwd) != project:
        return f"another project ({cwd}; the warm host's is {project})"
    theirs = request.get("env")
    if not isinstance(theirs, dict):
        return "no environment"
    keys = (set(theirs) | set(env)) - VOLATILE
    differ = sorted(k for k in keys if theirs.get(k) != env.get(k))
    if differ:
        return "another environment (" + ", ".join(differ[:5]) + (" ..." if len(differ) > 5 else "") + ")"
    if request.get("umask") != _umask():
        return "another umask"
    return None


# ============================================================================ a starter's side


def _socket_path(place: Place = HOST) -> Path | None:
    try:
        return paths.runtime_dir() / place.socket
    except Exception:  # no runtime directory: no warm host
        return None


def _connect(path: Path, timeout: float = ANSWER_TIMEOUT_S) -> socket.socket | None:
    """A connection to the warm host whose peer is this user's, else None."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    if not peer_is_this_user(sock):
        sock.close()
        return None
    return sock


def _read_line(sock: socket.socket, limit: int = 65536) -> bytes:
    """One line, read a byte-block at a time up to its newline and never past
    it: what follows on the connection is the next reader's."""
    data = b""
    while not data.endswith(b"\n") and len(data) < limit:
        chunk = sock.recv(1)
        if not chunk:
            break
        data += chunk
    return data


def _ask(message: dict[str, Any], timeout: float = ANSWER_TIMEOUT_S, place: Place = HOST
         ) -> tuple[socket.socket, dict[str, Any]] | None:
    path = _socket_path(place)
    if path is None or not os.path.exists(path):
        return None
    sock = _connect(path, timeout)
    if sock is None:
        return None
    try:
        sock.sendall(json.dumps(message).encode() + b"\n")
        answer = json.loads(_read_line(sock) or b"null")
    except (OSError, ValueError):
        sock.close()
        return None
    if not isinstance(answer, dict):
        sock.close()
        return None
    return sock, answer


class _SpecWriter:
    """The host's stdin, as early._send_spec writes it: closing ends the spec."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def write(self, data: bytes) -> int:
        self._sock.sendall(data)
        return len(data)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_WR)


class _AnswerReader:
    """The host's stdout: its serving and ready lines. Closing it lets the
    connection go."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._file = sock.makefile("rb")

    def readline(self) -> bytes:
        return self._file.readline()

    def fileno(self) -> int:
        return self._sock.fileno()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()
        with contextlib.suppress(OSError):
            self._sock.close()


class WarmProcess:
    """The warm host a starter took, seen as the subprocess.Popen of a host it
    started (what PendingHost and the quick `start` use of one). It is not
    this process's child: its end is known through a pidfd."""

    returncode = None  # not our child: its exit code is its own

    def __init__(self, sock: socket.socket, pid: int) -> None:
        self.pid = pid
        self.stdin = _SpecWriter(sock)
        self.stdout = _AnswerReader(sock)
        self._pidfd: int | None = None
        with contextlib.suppress(OSError, AttributeError):
            self._pidfd = os.pidfd_open(pid)
        self._gone = False

    def _wait_gone(self, timeout: float | None) -> bool:
        import select

        if self._gone:
            return True
        if self._pidfd is None:
            deadline = None if timeout is None else time.monotonic() + timeout
            while pid_alive(self.pid):
                if deadline is not None and time.monotonic() >= deadline:
                    return False
                time.sleep(0.05)
        elif not select.select([self._pidfd], [], [], timeout)[0]:
            return False
        self._gone = True
        if self._pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self._pidfd)
            self._pidfd = None
        return True

    def poll(self) -> int | None:
        return 0 if self._wait_gone(0) else None

    def wait(self, timeout: float | None = None) -> int:
        if not self._wait_gone(timeout):
            import subprocess

            raise subprocess.TimeoutExpired(["warm host", str(self.pid)], timeout or 0)
        return 0

    def _signal(self, signum: int) -> None:
        import signal

        if self._gone:
            return
        with contextlib.suppress(OSError):
            if self._pidfd is not None:
                signal.pidfd_send_signal(self._pidfd, signum)
            else:
                os.kill(self.pid, signum)

    def terminate(self) -> None:
        import signal

        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        import signal

        self._signal(signal.SIGKILL)


class WarmHost:
    """A warm host taken for the next session: what early.SpareHost is to
    PendingHost (`proc`, `log`, `alive`, `hand_over`, `discard`)."""

    warm = True

    def __init__(self, sock: socket.socket, pid: int, log: str) -> None:
        self.proc = WarmProcess(sock, pid)
        self.log = Path(log)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def hand_over(self, spec: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.write(json.dumps(spec).encode())
        self.proc.stdin.close()

    def discard(self) -> None:
        """Not needed after all: a spec-less end, and it waits warm again."""
        self.proc.stdin.close()
        self.proc.stdout.close()


def ask_to_take(request: dict[str, Any], place: Place = HOST
                ) -> tuple[socket.socket, dict[str, Any]] | None:
    """The connection to the warm process at `place` and its answer, once it
    said it is taken for `request` (a fit_request); None: none, or not taken."""
    asked = _ask(request, place=place)
    if asked is None:
        return None
    sock, answer = asked
    if not answer.get("ok"):
        sock.close()
        return None
    return sock, answer


def take(cwd: str | None = None) -> WarmHost | None:
    """The user's warm host for a session started from `cwd`, if there is one
    and it fits (same Python, install, project and environment); None: start
    a host cold."""
    if not enabled():
        return None
    taken = ask_to_take(fit_request(cwd or os.getcwd()))
    if taken is None:
        return None
    sock, answer = taken
    pid, _, _ = peer_credentials(sock)
    if pid <= 0:
        # A host in another PID namespace has no pid here: it could be neither
        # waited for nor signalled (a signal to pid 0 is our own group's). Let
        # it go without a spec (it waits warm again) and start cold.
        sock.close()
        return None
    sock.settimeout(None)
    return WarmHost(sock, pid, str(answer.get("log") or ""))


def stop(timeout: float = 10.0, place: Place = HOST) -> int | None:
    """End the warm host (or the warm screen, by its `place`); its pid once it
    is gone, None when there was none (or it did not answer)."""
    asked = _ask({"op": "stop"}, place=place)
    if asked is None:
        return None
    sock, answer = asked
    try:
        pid, _, _ = peer_credentials(sock)
    except OSError:
        pid = int(answer.get("pid") or 0)
    sock.close()
    if pid:
        wait_gone(pid, timeout)
    return pid or None


def wait_gone(pid: int, timeout: float) -> bool:
    """Whether `pid` has ended within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def status(place: Place = HOST) -> dict[str, Any] | None:
    """What `warm.json` says of the warm host (or the warm screen's
    description of it, by its `place`), if its process is alive."""
    try:
        meta = paths.runtime_dir() / place.meta
        info = json.loads(meta.read_text())
    except Exception:
        return None
    if not isinstance(info, dict) or info.get("kind") != place.kind:
        return None
    pid = info.get("pid")
    if not isinstance(pid, int) or not pid_alive(pid):
        return None
    return info


# ============================================================================ the host's side


class Ended(Exception):
    """The warm host was told to end (a signal, `warm stop`, its idle time)."""


class Listener:
    """The warm host's lock, socket and description, held while it waits."""

    def __init__(self, base: Path, lock_fd: int, sock: socket.socket, place: Place = HOST) -> None:
        self.base, self._lock_fd, self.sock, self.place = base, lock_fd, sock, place
        #: the socket file as bound (paths.file_identity)
        self._bound = paths.file_identity(base / place.socket)

    @classmethod
    def claim(cls, place: Place = HOST) -> Listener | None:
        """Become the user's warm host (or warm screen, by its `place`): None
        when another is one already."""
        import fcntl

        base = paths.runtime_dir()
        fd = os.open(base / place.lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        path = base / place.socket
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # a warm host that died; we hold the lock
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(str(path))
        except OSError:
            sock.close()
            os.close(fd)
            return None
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        sock.listen(8)
        return cls(base, fd, sock, place)

    def reachable(self) -> bool:
        """Its socket is still the one at its path (paths.still_made): one
        removed leaves a host nobody can take or stop, to wait out its idle
        time for nothing."""
        return paths.still_made(self.base / self.place.socket, self._bound)

    def describe(self, info: dict[str, Any]) -> None:
        meta = self.base / self.place.meta
        tmp = meta.with_name(f".{self.place.meta}.{os.getpid()}")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps({"kind": self.place.kind, **info}))
            os.chmod(tmp, 0o600)
            tmp.replace(meta)

    def release(self) -> None:
        """Give up the socket, the description and the lock (taken, or ending)."""
        for name in (self.place.socket, self.place.meta):
            with contextlib.suppress(OSError):
                os.unlink(self.base / name)
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(OSError):
            os.close(self._lock_fd)


def wait_for_taker(listener: Listener, *, idle_s: float, stamp: str, project: str,
                   env: dict[str, str], log: str, check_s: float = 2.0,
                   still_wanted: Any = None) -> tuple[socket.socket, dict[str, Any]]:
    """Serve `listener` until a starter that fits takes this host: its
    connection (the spec comes on it) and its request. Raises Ended on the
    idle time, `warm stop`, a change of the installed package, or when
    `still_wanted()` (the settings, read again) says no, or when its socket
    is gone from its path (Listener.reachable)."""
    import select

    deadline = time.monotonic() + idle_s
    next_check = time.monotonic() + check_s
    while True:
        now = time.monotonic()
        if now >= deadline:
            raise Ended("idle time over")
        if now >= next_check:
            next_check = now + check_s
            if install_stamp() != stamp:
                raise Ended("the installed package changed")
            if not listener.reachable():
                raise Ended("its socket is gone (its runtime directory removed?)")
        ready = select.select([listener.sock], [], [], max(0.0, min(deadline, next_check) - now))[0]
        if not ready:
            continue
        try:
            conn, _ = listener.sock.accept()
        except OSError:
            continue
        conn.settimeout(ANSWER_TIMEOUT_S)
        try:
            if not peer_is_this_user(conn):
                print("warm host: refused a connection from another user", file=sys.stderr)
                conn.close()
                continue
            line = _read_line(conn, _MAX_REQUEST)
            request = json.loads(line or b"null")
            if not isinstance(request, dict):
                raise ValueError("not an object")
        except (OSError, ValueError):
            conn.close()
            continue
        op = request.get("op")
        if op == "stop":
            _answer(conn, {"ok": True, "pid": os.getpid()})
            conn.close()
            raise Ended("warm stop")
        if op != "take":
            _answer(conn, {"ok": False, "why": f"unknown request {op!r}"})
            conn.close()
            continue
        why = misfit(request, project=project, env=env)
        if why is None and install_stamp() != stamp:
            _answer(conn, {"ok": False, "why": "the installed package changed"})
            conn.close()
            raise Ended("the installed package changed")
        if why is None and still_wanted is not None and not still_wanted():
            _answer(conn, {"ok": False, "why": "warm hosts are turned off"})
            conn.close()
            raise Ended("turned off")
        if why is not None:
            print(f"warm host: not taken: {why}", file=sys.stderr)
            _answer(conn, {"ok": False, "why": why})
            conn.close()
            continue
        listener.release()  # taken: the next starter finds none, or another
        _answer(conn, {"ok": True, "pid": os.getpid(), "log": log})
        conn.settimeout(None)
        return conn, request


def _answer(conn: socket.socket, message: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps(message).encode() + b"\n")
