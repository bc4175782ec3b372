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


def death_by(exit_code: int | None, stopped_at_signal: int | None) -> int | None:
    """The exit status to report (-N for a death by signal N), from what a
    native debugger said: LLDB stops at a signal first, and gives the death by
    it that follows as an exit status of the signal's number (or 128 + N)."""
    if (exit_code is not None and stopped_at_signal
            and exit_code in (stopped_at_signal, 128 + stopped_at_signal)):
        return -stopped_at_signal
    return exit_code


def signal_number(name: str | None) -> int | None:
    """A signal's number by its name ("SIGTERM", "signal SIGTERM"), or None."""
    import re
    import signal

    match = re.search(r"\bSIG([A-Z]+[0-9]*)\b", name or "")
    if match is None:
        return None
    try:
        return int(signal.Signals["SIG" + match.group(1)])
    except KeyError:
        return None
