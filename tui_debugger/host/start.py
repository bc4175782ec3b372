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
import subprocess
import threading
from typing import Any

from backends.errors import DebuggerError, ErrorCode
from backends.procinfo import start_time

from .. import paths
from .early import (SpareHost, _send_spec, _spawn, end_process, exited_text, not_started_text,
                    take_early, take_warm)


def no_first_stop_wait(command: str, args: dict[str, Any]) -> dict[str, Any]:
    """The TUI paints a launch's first stop from its event: its launch need not
    wait for the stop (as an agent's does)."""
    if command != "launch" or "wait_ms" in args or "waitMs" in args:
        return args
    return {**args, "wait_ms": 0}


class PendingHost:
    """A host process started for a new session and not known to be ready yet.
    Starting it early (before the TUI has even imported Textual) lets its own
    start-up overlap the caller's; a `spare` host that is already up is used
    instead of a new one."""

    def __init__(self, command: str, args: dict[str, Any], *, cwd: str | None = None,
                 origin: str = "cli", spare: SpareHost | None = None, owned: bool = False,
                 view: dict[str, Any] | None = None, announce: bool = False) -> None:
        cwd = cwd or os.getcwd()
        spec: dict[str, Any] = {"command": command, "args": args, "cwd": cwd, "origin": origin,
                                "client": origin if origin == "cli" else f"{origin}-{os.getpid()}"}
        if view:
            spec["view"] = view  # registry.View on the wire: the launch answers its caller
        if announce:
            spec["announce"] = True  # its name comes first (serving), its result after
        #: a line serving() read that is ready()'s
        self._held: bytes | None = None
        if owned:
            # A starter that owns its session (a TUI, an MCP server), killed
            # outright (-9), says no goodbye: the host ends the session once no
            # client is left. A `start` from the shell is meant to outlive it.
            spec["owner"] = os.getpid()
            spec["owner_started"] = start_time(os.getpid())
        name = args.get("session_name") or args.get("sessionName")
        if name is not None:
            # Refused here, before a daemon starts or a log is written.
            paths.validate_name(str(name))
        self.name_hint = name or "daemon"
        if spare is None:
            spare = take_early()
        if spare is None:
            spare = take_warm(cwd)
        if spare is not None and spare.alive():
            self.proc, self.log = spare.proc, spare.log
            spare.hand_over(spec)
        else:
            self.proc, self.log = _spawn(cwd)
            _send_spec(self.proc, spec)

    async def _next_line(self, timeout: float) -> bytes:
        """The host's next line to us (b"" once it exited); abandons the host
        when none comes in time or the wait is cancelled."""
        proc = self.proc
        assert proc.stdout is not None
        try:
            # A thread blocked in readline returns when the daemon writes its line
            # or exits (then the pipe closes), whichever comes first.
            return await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), timeout)
        except asyncio.TimeoutError:
            await self.abandon()
            raise DebuggerError(not_started_text(self.name_hint, timeout, self.log),
                                ErrorCode.timeout) from None
        except BaseException:
            await self.abandon()
            raise

    async def serving(self, timeout: float = 90.0) -> str | None:
        """With `announce`: the session's name as soon as the host serves it,
        while its start command goes on (a client may join it now and see the
        rest as events); None when the host's next line is its result already
        (it failed before, or an older host), which ready() then reads."""
        line = await self._next_line(timeout)
        name = _serving(line)
        if name is None:
            self._held = line
        return name

    async def ready(self, timeout: float = 90.0) -> dict[str, Any]:
        """The command's result by alias once the session is up (or the command's
        own error). The result's `_log` names the daemon's log."""
        proc, log = self.proc, self.log
        assert proc.stdout is not None
        try:
            line, self._held = self._held, None
            if line is None:
                line = await self._next_line(timeout)
            while _serving(line) is not None:  # serving() was not asked
                line = await self._next_line(timeout)
        finally:
            proc.stdout.close()
        if not line:
            raise DebuggerError(exited_text(proc, log), ErrorCode.command_failed)
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
        SIGKILL if it does not go (early.end_process)."""
        await asyncio.to_thread(end_process, self.proc)


def _serving(line: bytes) -> str | None:
    """The name in a host's `serving` line (wire.HostServing), else None."""
    if not line.startswith(b'{"serving"'):
        return None
    try:
        name = json.loads(line).get("serving")
    except (ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None


async def start_host(command: str, args: dict[str, Any], *, cwd: str | None = None,
                     origin: str = "cli", timeout: float = 90.0,
                     spare: SpareHost | None = None, owned: bool = False,
                     view: dict[str, Any] | None = None) -> dict[str, Any]:
    """Start a daemon (or hand the `spare` one its spec) hosting a new session
    with `command` (launch, attach or attach_sim); answer its result once the
    session is up. `owned`: the session ends with the caller (PendingHost)."""
    return await PendingHost(command, args, cwd=cwd, origin=origin, spare=spare, owned=owned,
                             view=view).ready(timeout)
