"""What a running process or a listening port is, read from /proc without
touching it: which program a process runs and which debugger attaches to it.
Linux only; elsewhere the answers fall back to lldb-dap (pid) and debugpy (port).
"""

from __future__ import annotations

import os
import sys

from .adapters import is_go_binary
from .errors import InvalidInput


def process_program(pid: int) -> str | None:
    """What a process runs: its script (python app.py) or executable."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    words = [a.decode(errors="replace") for a in argv if a]
    script = next((w for w in words[1:] if not w.startswith("-") and "." in os.path.basename(w)), None)
    return script or (words[0] if words else None)


def process_name(pid: int) -> str:
    """A session name for a process: its script or executable's name."""
    program = process_program(pid)
    return os.path.basename(program) if program else f"pid{pid}"


def adapter_for_pid(pid: int) -> str:
    """The adapter that attaches to a process, by its executable."""
    try:
        exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        if not os.path.exists(f"/proc/{pid}") and sys.platform.startswith("linux"):
            raise InvalidInput(f"No process {pid}. Check the pid (ps -e).") from None
        return "lldb-dap"
    if exe.startswith("python"):
        return "debugpy"
    if exe in ("node", "nodejs"):
        return "node"
    try:
        if is_go_binary(f"/proc/{pid}/exe"):
            return "dlv"
    except OSError:
        pass
    return "lldb-dap"


def listener_pid(port: int) -> int | None:
    """The local process listening on `port`, from /proc (Linux), without
    connecting: a probe connection would take a debug server's one client slot."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f, None)
                for row in f:
                    cols = row.split()
                    if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(cols[9])
        except OSError:
            continue
    if not inodes:
        return None
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{entry}/fd"):
                link = os.readlink(f"/proc/{entry}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(entry)
        except OSError:
            continue
    return None


def adapter_for_port(host: str, port: int) -> str:
    """Which debugger listens there: by the listening process when it is local
    (node's inspector, dlv, lldb-server or gdbserver, or a Python program under
    debugpy). A remote one cannot be told from here: pass --adapter."""
    if host in ("127.0.0.1", "localhost", "::1", "0.0.0.0"):
        pid = listener_pid(port)
        if pid is not None:
            try:
                exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
            except OSError:
                exe = ""
            if exe in ("node", "nodejs"):
                return "node"
            if exe == "dlv":
                return "dlv"
            if exe.startswith(("lldb-server", "gdbserver")):
                return "lldb-dap"  # a gdb-remote server
    return "debugpy"
