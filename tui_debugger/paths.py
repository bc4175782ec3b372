"""Where live sessions are found: one socket and one metadata file per session in
a per-user runtime directory (mode 0700; sockets 0600)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import time
from collections import namedtuple
from pathlib import Path

from backends.errors import DebuggerError, ErrorCode, InvalidInput
from backends.procinfo import pid_alive

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,40}$")


#: In every session's metadata file: what makes a `.json` of the runtime
#: directory recognisably ours. Nothing without it is ever removed.
META_KIND = "tui-debugger-session"


def runtime_dir() -> Path:
    """The per-user directory of sessions, 0700. Refused, with what to do, when
    it is a symbolic link (another user's `/tmp/tui-debugger-UID` pointing into
    a project), not a directory, another user's, or open to others; a
    directory that is not private is not made so (it may be a project's)."""
    import stat

    override = os.environ.get("TUI_DEBUGGER_RUNTIME_DIR")
    if override:
        base = Path(override)
    else:
        xdg = os.environ.get("XDG_RUNTIME_DIR")
        if xdg and os.path.isdir(xdg) and os.access(xdg, os.W_OK):
            base = Path(xdg) / "tui-debugger"
        else:
            import tempfile

            base = Path(tempfile.gettempdir()) / f"tui-debugger-{os.getuid()}"
    fix = ("set TUI_DEBUGGER_RUNTIME_DIR to a directory of your own (mode 0700), or "
           "remove it if it is yours")
    created = False
    try:
        base.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        base.mkdir(mode=0o700)
        created = True
    except FileExistsError:
        pass
    except OSError as exc:
        raise InvalidInput(f"Cannot create the runtime directory {base}: {exc.strerror}; "
                           f"{fix}.") from None
    try:
        st = os.lstat(base)
    except OSError as exc:
        raise InvalidInput(f"Cannot read the runtime directory {base}: {exc.strerror}; "
                           f"{fix}.") from None
    if stat.S_ISLNK(st.st_mode):
        raise InvalidInput(f"The runtime directory {base} is a symbolic link (to "
                           f"{os.readlink(base)!r}), which this program does not follow: "
                           f"another user may have placed it; {fix}.")
    if not stat.S_ISDIR(st.st_mode):
        raise InvalidInput(f"The runtime directory {base} exists and is not a directory "
                           f"(another user may have created it); {fix}.")
    if st.st_uid != os.getuid():
        raise InvalidInput(
            f"The runtime directory {base} belongs to another user; set TUI_DEBUGGER_RUNTIME_DIR "
            "to a directory of your own."
        )
    if st.st_mode & 0o077:
        if not created:
            raise InvalidInput(
                f"The runtime directory {base} is open to other users (mode "
                f"{stat.S_IMODE(st.st_mode):04o}); it must be private (0700). Sessions are not "
                f"kept in a shared directory, and this one is not changed: {fix}.")
        os.chmod(base, 0o700)  # ours, just made, widened by nothing but a umask quirk
    return base


def socket_path(name: str) -> Path:
    return runtime_dir() / f"{name}.sock"


def file_identity(path: Path) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the file at `path`, None if there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def still_made(path: Path, made: tuple[int, int] | None) -> bool:
    """Whether the socket file made as `made` (file_identity) is still at
    `path`, where its clients look. It is gone when the runtime directory was
    removed (a logout removes XDG_RUNTIME_DIR, a cleaner old files in /tmp, a
    test or a benchmark its temporary one), and another file stands there when
    another server claimed the path since. A transient error ends nothing."""
    if made is None:
        return False
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # not known to be gone
    return (found.st_dev, found.st_ino) == made


def meta_path(name: str) -> Path:
    return runtime_dir() / f"{name}.json"


def log_path(name: str) -> Path:
    return runtime_dir() / f"{name}.log"


def validate_name(name: str) -> str:
    if not NAME_RE.match(name):
        raise InvalidInput(
            f"Invalid session name {name!r}: use letters, digits, '.', '_' or '-' "
            "(at most 41 characters, starting with a letter or digit)."
        )
    return name


#: Pins every client command of a shell (or an agent's configuration) to one
#: session, as --session does.
ENV_SESSION = "TUI_DEBUGGER_SESSION"


def pinned_session() -> str | None:
    """The session TUI_DEBUGGER_SESSION names, if it is set."""
    name = os.environ.get(ENV_SESSION, "").strip()
    return validate_name(name) if name else None


def project_of(directory: str | os.PathLike[str] | None = None) -> str:
    """The project a directory belongs to: its git top level (the nearest
    directory above it holding `.git`, a directory or a worktree's file), else
    the directory itself. Sessions belong to the project they were started
    from, and a client without --session reaches only its own project's."""
    start = Path(os.path.realpath(directory or os.getcwd()))
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return str(candidate)
    return str(start)


class LiveSession(namedtuple("LiveSession", (
        "name", "pid", "socket", "created_at", "program", "adapter", "state", "program_pid",
        "parent", "project", "started_by"), defaults=(None,) * 5)):
    """A session found live: name, host pid, socket (Path), created_at,
    program, adapter, and optionally state, program_pid, parent (the
    session of the parent process, for a child process's session), project
    (where it was started from, project_of), started_by (tui / cli / mcp).
    A namedtuple, not a dataclass: `dataclasses` imports `inspect`, 13 ms
    of the start of `run` before it can start its host (early_host)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name, "pid": self.pid, "socket": str(self.socket),
            "created_at": self.created_at, "program": self.program, "adapter": self.adapter,
            "state": self.state, "program_pid": self.program_pid, "parent": self.parent,
            "project": self.project, "started_by": self.started_by,
        }


def write_meta(name: str, info: dict[str, object]) -> None:
    """The session's metadata, replaced whole; on failure (a full disk) nothing
    is left half-written and the error says what to do."""
    path = meta_path(name)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(json.dumps({**info, "kind": META_KIND}))
        tmp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise DebuggerError(
            f"Cannot write the session's file {path}: {exc.strerror or exc}. Free space "
            "there, or set TUI_DEBUGGER_RUNTIME_DIR to another directory.",
            ErrorCode.command_failed) from None


def _ours(info: object) -> bool:
    return isinstance(info, dict) and info.get("kind") == META_KIND


def remove_files(name: str, host_pid: int | None = None) -> None:
    """A session's socket and metadata, and only if they are ours: a socket,
    and a metadata file that says it is one of ours. With `host_pid` (a host
    ending its own session), only a metadata file that host wrote, and no
    socket (its server removed its own, SessionServer.close): the files there
    now may be a newer session's of the same name."""
    import stat

    sock, meta = socket_path(name), meta_path(name)
    if host_pid is None:
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(os.lstat(sock).st_mode):
                sock.unlink()
    try:
        info = json.loads(meta.read_text()) if not os.path.islink(meta) else None
        if _ours(info) and (host_pid is None or info.get("pid") == host_pid):
            meta.unlink()
    except (OSError, ValueError):
        pass


def socket_answers(path: Path, timeout: float = 0.5) -> bool:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        sock.close()


#: Names in the runtime directory that are not sessions': the warm host's and
#: the warm screen's sockets and descriptions (warm.py, warm_screen.py). No
#: session takes them (unique_name), and the session listing never probes them.
NOT_SESSIONS = frozenset({"warm", "screen"})


def live_sessions(clean_stale: bool = True) -> list[LiveSession]:
    """Sessions whose host process is alive and whose socket answers, newest last.
    Files of dead hosts are removed (a dead daemon's stale socket)."""
    out: list[LiveSession] = []
    base = runtime_dir()
    for meta in base.glob("*.json"):
        name = meta.stem
        try:
            info = json.loads(meta.read_text())
        except (OSError, ValueError, RecursionError):
            continue
        if not _ours(info):
            continue  # not a session's file (a project's package.json): never touched
        sock = base / f"{name}.sock"
        try:
            pid = int(info.get("pid", 0))
        except (TypeError, ValueError):
            continue
        alive = pid > 0 and pid_alive(pid) and sock.exists() and socket_answers(sock)
        if not alive:
            if clean_stale and not (pid > 0 and pid_alive(pid)):
                remove_files(name)
            continue
        out.append(
            LiveSession(name, pid, sock, float(info.get("created_at", 0)),
                        info.get("program"), info.get("adapter"), info.get("state"),
                        info.get("program_pid"), info.get("parent"), info.get("project"),
                        info.get("started_by"))
        )
    listed = {s.name for s in out}
    for sock in base.glob("*.sock"):
        if sock.stem not in listed and sock.stem not in NOT_SESSIONS:
            found = _healed(sock)
            if found is not None:
                out.append(found)
    out.sort(key=lambda s: s.created_at)
    return out


#: How long a reader waits for a host to write its damaged <name>.json again.
HEAL_WAIT_S = 1.0


def _healed(sock: Path) -> LiveSession | None:
    """A live session whose <name>.json is damaged (truncated, garbage, gone)
    while its socket answers: connecting makes its host write the file again
    (SessionServer), which is then read. A socket that does not answer, or a
    file that stays unreadable, is no session (and nothing is removed)."""
    import stat

    try:
        if not stat.S_ISSOCK(os.lstat(sock).st_mode):
            return None
    except OSError:
        return None
    meta = sock.with_suffix(".json")
    if _read_ours(meta) is not None or not socket_answers(sock):
        return None  # an intact file (listed above, or a dead host's) or no host
    deadline = time.monotonic() + HEAL_WAIT_S
    while True:
        info = _read_ours(meta)
        if info is not None:
            try:
                pid = int(info.get("pid", 0))
            except (TypeError, ValueError):
                return None
            if not (pid > 0 and pid_alive(pid)):
                return None
            return LiveSession(sock.stem, pid, sock, float(info.get("created_at", 0)),
                               info.get("program"), info.get("adapter"), info.get("state"),
                               info.get("program_pid"), info.get("parent"), info.get("project"),
                               info.get("started_by"))
        if time.monotonic() > deadline:
            return None
        time.sleep(0.02)


def _read_ours(meta: Path) -> dict | None:
    try:
        info = json.loads(meta.read_text())
    except (OSError, ValueError, RecursionError):
        return None
    return info if _ours(info) else None


#: (the environment that named it, the runtime directory): several_live's
_listed_dir: tuple[tuple[str | None, str | None], Path] | None = None
#: several_live's last count: (the directory's st_mtime_ns then, the answer).
_listed: tuple[int, bool] | None = None
#: A listing is kept only when made this long after the directory last
#: changed: a change within the same clock tick as the one before leaves the
#: mtime as it was, so a listing made in that tick may miss it.
_SETTLED_NS = 100_000_000


def several_live() -> bool:
    """Whether more than one session is (probably) live for this user: two
    metadata files. A listing, with no socket probed, so every call can ask.
    The directory is made and checked (runtime_dir) once per process here:
    its names are only counted, nothing in it is opened, and the check (two
    mkdir and an lstat) cost 0.05-0.18 ms, twice per agent round. The count
    is listed again only when the directory's mtime moved (one stat instead
    of a listing: 0.07 ms a call in the MCP server's profile)."""
    global _listed_dir, _listed
    key = (os.environ.get("TUI_DEBUGGER_RUNTIME_DIR"), os.environ.get("XDG_RUNTIME_DIR"))
    try:
        if _listed_dir is None or _listed_dir[0] != key:
            _listed_dir, _listed = (key, runtime_dir()), None
        changed = os.stat(_listed_dir[1]).st_mtime_ns
        if _listed is not None and _listed[0] == changed:
            return _listed[1]
        several = sum(1 for entry in os.scandir(_listed_dir[1])
                      if entry.name.endswith(".json")
                      and entry.name[:-5] not in NOT_SESSIONS) > 1
        _listed = (changed, several) if time.time_ns() - changed > _SETTLED_NS else None
        return several
    except OSError:
        return False


def unique_name(base: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]", "-", base).strip("-.") or "session"
    base = base[:30]
    if not base[0].isalnum():
        base = "s" + base
    existing = taken | NOT_SESSIONS | {s.name for s in live_sessions()}
    if base not in existing and not meta_path(base).exists():
        return base
    i = 2
    while f"{base}-{i}" in existing or meta_path(f"{base}-{i}").exists():
        i += 1
    return f"{base}-{i}"


#: Source files larger than this are not read (shown) whole.
MAX_SOURCE_BYTES = 16 * 1024 * 1024


def source_problem(path: str) -> str | None:
    """Why `path` cannot be read as a source file (a device such as /dev/zero, a
    FIFO, a directory, or a file too large to read whole), or None."""
    import stat

    try:
        st = os.stat(path)
    except OSError as exc:
        return f"cannot read it ({exc.strerror})"
    if not stat.S_ISREG(st.st_mode):
        kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO"
                if stat.S_ISFIFO(st.st_mode) else "a device or special file")
        return f"it is {kind}, not a source file"
    if st.st_size > MAX_SOURCE_BYTES:
        return f"it is {st.st_size:,} bytes, over the {MAX_SOURCE_BYTES:,} read for a source"
    return None


def is_binary(path: str) -> bool:
    """Whether a file holds binary data: a NUL byte in its first 8 KB (git's
    rule). No source text has one; an executable, an image, a .pyc do."""
    try:
        with open(path, "rb") as f:
            return b"\0" in f.read(8192)
    except OSError:
        return False


def clean_daemon_logs(keep: int = 10, max_bytes: int = 10 * 1024 * 1024) -> None:
    """Daemon logs do not pile up: of the daemons that ended, the newest `keep`
    logs stay (for a look after a failure) and the rest go; a live daemon's log
    over `max_bytes` is cut back to empty (it is opened for appending)."""
    ended: list[tuple[float, Path]] = []
    try:
        logs = list(runtime_dir().glob("daemon-*.log"))
    except (OSError, InvalidInput):
        return
    for log in logs:
        found = re.fullmatch(r"daemon-(\d+)\.log", log.name)
        try:
            st = log.stat()
        except OSError:
            continue
        if found and pid_alive(int(found.group(1))):
            if st.st_size > max_bytes:
                with contextlib.suppress(OSError):
                    os.truncate(log, 0)
            continue
        if log.name.startswith("daemon-starting-") and time.time() - st.st_mtime < 300:
            continue  # another start is writing it right now
        ended.append((st.st_mtime, log))
    ended.sort(reverse=True)
    for _, log in ended[keep:]:
        with contextlib.suppress(OSError):
            log.unlink()

