"""Starting a host process for a new session: every session lives in a daemon
(daemon.py) that serves it on its socket, whoever asked for it (`tui-debugger
start`, the TUI's run and attach, an MCP server's debug_launch). The daemon
runs the launch or attach command, writes one JSON line with the result to
the pipe read here, and keeps serving; the caller then joins the session like
any other client.

A host that is not ready yet belongs to whoever started it: cancelling the
start (the TUI's attach dialog closed while it waits for an app) ends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from backends.errors import DebuggerError, ErrorCode

from . import paths


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


def no_first_stop_wait(command: str, args: dict[str, Any]) -> dict[str, Any]:
    """The TUI paints a launch's first stop from its event: its launch need not
    wait for the stop (as an agent's does)."""
    if command != "launch" or "wait_ms" in args or "waitMs" in args:
        return args
    return {**args, "wait_ms": 0}


def daemon_argv(spare: bool = False, debugpy: bool = False) -> list[str]:
    """`-P`: the daemon starts in the caller's directory, and `-m` would put that
    directory first on sys.path, so an `argparse.py` or `signal.py` lying there
    would run inside the daemon. `debugpy`: it starts debugpy's adapter first
    thing (backends/early_adapter.py)."""
    return [sys.executable, "-P", "-m", "tui_debugger.daemon", *(["--spare"] if spare else []),
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


def start_early(argv: list[str] | None = None) -> None:
    """Start the host of the session this process is about to start, so that
    its start-up (a Python process importing the hub, the commands, pydantic)
    overlaps this one's (the registry, the parse, Textual's import). When the
    command line (`argv`, not parsed yet) names a Python program, the host
    starts debugpy's adapter before its own imports."""
    global _early
    from backends.early_adapter import wants_debugpy

    with contextlib.suppress(Exception):  # then the launch starts one as before
        _early = SpareHost(preload=False, debugpy=wants_debugpy(argv or []))


def discard_early() -> None:
    """The early host, if nothing took it (the command failed, or was --help)."""
    global _early
    early, _early = _early, None
    if early is not None:
        early.discard()


class PendingHost:
    """A host process started for a new session and not known to be ready yet.
    Starting it early (before the TUI has even imported Textual) lets its own
    start-up overlap the caller's; a `spare` host that is already up is used
    instead of a new one."""

    def __init__(self, command: str, args: dict[str, Any], *, cwd: str | None = None,
                 origin: str = "cli", spare: SpareHost | None = None, owned: bool = False,
                 view: dict[str, Any] | None = None) -> None:
        cwd = cwd or os.getcwd()
        spec: dict[str, Any] = {"command": command, "args": args, "cwd": cwd, "origin": origin}
        if view:
            spec["view"] = view  # registry.View on the wire: the launch answers its caller
        if owned:
            # A starter that owns its session (a TUI, an MCP server), killed
            # outright (-9), says no goodbye: the host ends the session once no
            # client is left. A `start` from the shell is meant to outlive it.
            spec["owner"] = os.getpid()
        name = args.get("session_name") or args.get("sessionName")
        if name is not None:
            # Refused here, before a daemon starts or a log is written.
            paths.validate_name(str(name))
        self.name_hint = name or "daemon"
        global _early
        if spare is None and _early is not None:
            spare, _early = _early, None
        if spare is not None and spare.alive():
            self.proc, self.log = spare.proc, spare.log
            spare.hand_over(spec)
        else:
            self.proc, self.log = _spawn(cwd)
            _send_spec(self.proc, spec)

    async def ready(self, timeout: float = 90.0) -> dict[str, Any]:
        """The command's result by alias once the session is up (or the command's
        own error). The result's `_log` names the daemon's log."""
        proc, log = self.proc, self.log
        assert proc.stdout is not None
        try:
            # A thread blocked in readline returns when the daemon writes its line
            # or exits (then the pipe closes), whichever comes first.
            line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), timeout)
        except asyncio.TimeoutError:
            await self.abandon()
            raise DebuggerError(
                f"The session {self.name_hint} did not start within {timeout:.0f} s. Log: {log}",
                ErrorCode.timeout,
            ) from None
        except BaseException:
            await self.abandon()
            raise
        finally:
            proc.stdout.close()
        if not line:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
            tail = ""
            with contextlib.suppress(OSError):
                tail = log.read_text()[-2000:]
            raise DebuggerError(
                f"The session host exited before it was ready (code {proc.returncode}). "
                f"{tail.strip()[-800:]}",
                ErrorCode.command_failed,
            )
        message = json.loads(line)
        if not message.get("ok"):
            err = message.get("error", {})
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)  # it exits after reporting; reap it
            try:
                code = ErrorCode(err.get("code", "internal_error"))
            except ValueError:
                code = ErrorCode.internal_error
            raise DebuggerError(err.get("message", "start failed"), code,
                                **(err.get("details") or {}))
        # Whoever started it waits for its end, whenever that comes, so a
        # long-lived starter (an MCP server, a TUI) collects no zombies.
        threading.Thread(target=proc.wait, name=f"host-{proc.pid}", daemon=True).start()
        result = message["result"]
        result["_log"] = str(log)
        return result

    async def abandon(self) -> None:
        """A host that never got ready: SIGTERM (it ends what it started), then
        SIGKILL if it does not go."""
        proc = self.proc
        with contextlib.suppress(OSError):
            proc.send_signal(signal.SIGTERM)
        for _ in range(100):
            if proc.poll() is not None:
                return
            await asyncio.sleep(0.05)
        with contextlib.suppress(OSError):
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=2)


async def start_host(command: str, args: dict[str, Any], *, cwd: str | None = None,
                     origin: str = "cli", timeout: float = 90.0,
                     spare: SpareHost | None = None, owned: bool = False,
                     view: dict[str, Any] | None = None) -> dict[str, Any]:
    """Start a daemon (or hand the `spare` one its spec) hosting a new session
    with `command` (launch, attach or attach_sim); answer its result once the
    session is up. `owned`: the session ends with the caller (PendingHost)."""
    return await PendingHost(command, args, cwd=cwd, origin=origin, spare=spare, owned=owned,
                             view=view).ready(timeout)
