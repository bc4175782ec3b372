"""Facts about a process by its pid, with nothing but `os`: the CLI client asks
them on every command, before it has imported anything heavy."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def start_time(pid: int) -> int | None:
    """When `pid` started (clock ticks since boot), to tell it from a later
    process that reuses its number; None when it is gone (or not Linux)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # A zombie has ended: only its parent has yet to read its exit status
        # (which a parent that blocks SIGCHLD may never do).
        return None if fields[0] in ("Z", "X") else int(fields[19])
    except (OSError, ValueError, IndexError):
        return None
