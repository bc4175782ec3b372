"""The host process of a new session, started and handed its spec, with no
event loop. `run` and `start` start their host first thing (start_early), so
that its start-up overlaps theirs; what they import before it puts it off,
and the first stop with it: with asyncio imported first (as host.py does,
to wait for the host) the host started 65-110 ms after the client's first
line on an idle machine, now 28-31 ms. So this module imports only what
spawning a process needs; host.py waits for the host to be ready
(PendingHost)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .. import paths


#: SIGTERM/SIGHUP received while `run` starts, before its app handles them
#: itself (leave_on_end_signals); the app reads the same list at mount.
end_signals: list[int] = []


def _record_end_signal(signum: int, _frame: Any) -> None:
    end_signals.append(signum)


def leave_on_end_signals() -> None:
    """From here until the app handles them (at mount), SIGTERM and SIGHUP are
    noted in `end_signals`, and `run` leaves at the next point where leaving
    is safe (commandline._run_tui: before its host starts, after the TUI's
    import), ending the host it started. The session's host starts before the
    TUI imports Textual and is often up before the app handles signals, so a
    `kill` may well come in between. The handler raises nothing: an exception
    thrown from it into an import can land inside a C extension's own
    initialisation (pydantic-core's, which then panics: exit code 1)."""
    import signal

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is not _record_end_signal:
            signal.signal(sig, _record_end_signal)


def default_end_signals() -> None:
    """SIGTERM and SIGHUP back to their default, where leave_on_end_signals
    left them (the app, once it runs, has handlers of its own)."""
    import signal

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is _record_end_signal:
            signal.signal(sig, signal.SIG_DFL)


def end_signal_exit_code(signum: int) -> int:
    """What `run` exits with when it leaves on `signum` before its app runs:
    a SIGTERM quits as `q` does (0), a SIGHUP as the app's own hang-up."""
    import signal

    return 0 if signum == signal.SIGTERM else 128 + signum


def daemon_argv(spare: bool = False, debugpy: bool = False) -> list[str]:
    """`-P`: the daemon starts in the caller's directory, and `-m` would put that
    directory first on sys.path, so an `argparse.py` or `signal.py` lying there
    would run inside the daemon. `debugpy`: it starts debugpy's adapter first
    thing (backends/early_adapter.py)."""
    return [sys.executable, "-P", "-m", "tui_debugger.host.daemon", *(["--spare"] if spare else []),
            *(["--debugpy"] if debugpy else [])]


def _spawn(cwd: str, spare: bool = False, debugpy: bool = False
           ) -> tuple[subprocess.Popen[bytes], Path]:
    """A daemon process, waiting for its spec on stdin, and its log."""
    log = paths.runtime_dir() / f"daemon-starting-{os.getpid()}-{int(time.time() * 1000)}.log"
    # Appending, so that the clean-up can cut a log that grew too large under its writer.
    with open(log, "ab") as log_file:
        proc = subprocess.Popen(
            daemon_argv(spare, debugpy), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_file,
            start_new_session=True, cwd=cwd,
        )
    # Named after the daemon, so the clean-up can tell whose log is still written.
    named = paths.runtime_dir() / f"daemon-{proc.pid}.log"
    with contextlib.suppress(OSError):
        os.replace(log, named)
        log = named
    paths.clean_daemon_logs()
    return proc, log


def _send_spec(proc: subprocess.Popen[bytes], spec: dict[str, Any]) -> None:
    """The spec (the program's environment included) goes through the daemon's
    stdin: on its command line every local user would read it with `ps`."""
    assert proc.stdin is not None
    with contextlib.suppress(OSError):  # a daemon that died meanwhile: ready() says so
        proc.stdin.write(json.dumps(spec).encode())
    with contextlib.suppress(OSError):
        proc.stdin.close()


def end_process(proc: subprocess.Popen[bytes]) -> None:
    """End a host that never got ready: SIGTERM (it ends what it started), then
    SIGKILL if it has not gone within 5 s. Blocking: PendingHost.abandon runs it
    in a thread, the quick `start` (cli/quick.py) as it is."""
    try:
        proc.terminate()
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=2)
    except OSError:
        pass


def not_started_text(name: str, timeout: float, log: Path | str) -> str:
    """What a starter says of a host that did not answer within `timeout`."""
    return f"The session {name} did not start within {timeout:.0f} s. Log: {log}"


def exited_text(proc: subprocess.Popen[bytes], log: Path | str) -> str:
    """What a starter says of a host that exited before it was ready: its
    exit code and the end of its log (reaped first, so the code is known)."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    tail = ""
    with contextlib.suppress(OSError):
        with open(log, errors="replace") as f:
            tail = f.read()[-2000:]
    code = f" (code {proc.returncode})" if proc.returncode is not None else ""
    return (f"The session host exited before it was ready{code}. "
            f"{tail.strip()[-800:]}")


class SpareHost:
    """A host process started before anyone needs it: it imports what a host
    runs (the commands, every backend), then waits on its stdin for the spec of
    the session it is to host. An MCP server keeps one, so a debug_launch does
    not wait for a Python process to start and import (2.5-3 s on a loaded
    2-core machine, about 0.5 s idle; docs/performance.md)."""

    def __init__(self, cwd: str | None = None, *, preload: bool = True,
                 debugpy: bool = False) -> None:
        """`preload`: import every backend while waiting (a long-lived starter's
        spare); without, only what every host imports (the start of a command
        about to send its spec). `debugpy`: start debugpy's adapter first (a
        command about to launch a Python program)."""
        self.proc, self.log = _spawn(cwd or os.getcwd(), spare=preload, debugpy=debugpy)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def hand_over(self, spec: dict[str, Any]) -> None:
        _send_spec(self.proc, spec)

    def discard(self) -> None:
        """Not needed after all: it ends at once (it has started nothing)."""
        with contextlib.suppress(OSError):
            self.proc.terminate()
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        with contextlib.suppress(OSError):
            os.unlink(self.log)  # it hosted nothing: its log says nothing to keep


#: A host started first thing by `run`/`start` (start_early), before their
#: command line is even parsed; the next PendingHost of this process takes it.
_early: SpareHost | None = None


def take_early() -> SpareHost | None:
    """The host start_early started, for the next session this process
    starts; None once taken or when there was none."""
    global _early
    early, _early = _early, None
    return early


def start_early(argv: list[str] | None = None) -> None:
    """Start the host of the session this process is about to start, so that
    its start-up (a Python process importing the hub, the commands, pydantic)
    overlaps this one's (the registry, the parse, Textual's import). When the
    command line (`argv`, not parsed yet) names a Python program, the host
    starts debugpy's adapter before its own imports."""
    global _early
    from backends.early_adapter import wants_debugpy

    _early = take_warm()
    if _early is not None:
        return
    with contextlib.suppress(Exception):  # then the launch starts one as before
        _early = SpareHost(preload=False, debugpy=wants_debugpy(argv or []))


def take_warm(cwd: str | None = None) -> Any:
    """The user's warm host, if one fits a session started from `cwd`
    (tui_debugger/warm.py): a SpareHost to its taker; else None."""
    from .. import warm

    try:
        return warm.take(cwd)
    except Exception:  # whatever went wrong, a cold start still works
        return None


def discard_early() -> None:
    """The early host, if nothing took it (the command failed, or was --help)."""
    early = take_early()
    if early is not None:
        early.discard()
