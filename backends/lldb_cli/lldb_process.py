"""The lldb process of an LldbCliBackend: starting `lldb --no-lldbinit` with
its Python helper, the interrupt FIFO, the command channel and helper calls
through it, the checks made before a command, and the program's output.

How lldb is driven (synchronous mode, the FIFO, the output pipes) is told in
backend.py's docstring.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ..adapters import find_lldb
from ..errors import BackendDied, CommandFailed, DependencyMissing, InvalidInput, Timeout
from ..models import OutputEvent
from ..process import spawn
from ..program_pipes import ProgramPipes
from .host import LldbHost
from .protocol import PROMPT, LldbChannel, lldb_quote, parse_json, sanitize

HELPER_PATH = Path(__file__).with_name("tui_debugger_lldb.py")
HELPER = HELPER_PATH.stem
RUNNING = "The program is running; pause it or wait for it to stop."
NOT_STARTED = "No program is being debugged; launch or attach first."


def _encode(value: Any) -> str:
    """A helper argument that survives any quoting: base64 of JSON."""
    return repr(base64.b64encode(json.dumps(value).encode("utf-8")).decode("ascii"))


class LldbProcessMixin:
    """Starting lldb, and every command sent to it."""

    async def _start(self: LldbHost, cwd: str) -> None:
        if self._channel is not None:
            raise InvalidInput("This backend already debugs a program; start a new session.")
        argv = self._lldb_argv or ([find_lldb()] if find_lldb() else None)
        if not argv:
            raise DependencyMissing(
                "lldb was not found. Install it: sudo apt-get install lldb-19 (Linux) or "
                "xcode-select --install (macOS); or set TUI_DEBUGGER_LLDB_PATH.",
            )
        self._workdir = tempfile.mkdtemp(prefix="tdbg-lldb-")
        os.chmod(self._workdir, stat.S_IRWXU)
        fifo = os.path.join(self._workdir, "interrupt")
        os.mkfifo(fifo, 0o600)
        # The program's stdout and stderr: two pipes read as they are written, so
        # the two streams keep their order (program_pipes.py).
        self._pipes = ProgramPipes(
            lambda category, text: self.emit(OutputEvent(category=category, text=text)))
        self._pipes.open()
        stdout_path, stderr_path = self._pipes.paths["stdout"], self._pipes.paths["stderr"]
        self._child = await spawn(
            [*argv, "--no-lldbinit"], cwd=cwd, stderr=subprocess.STDOUT, what="lldb",
            install_hint="Install lldb (sudo apt-get install lldb-19), or pass --adapter lldb-dap.",
        )
        self.child_pids.append(self._child.pid)
        self._channel = LldbChannel(self._child, self._on_log, self._on_lldb_exit,
                                    self._markers)
        startup = [
            f"settings set prompt {PROMPT}",
            "settings set auto-confirm true",
            "script lldb.debugger.SetAsync(False)",
            "settings set target.input-path /dev/null",
            f"settings set target.output-path {lldb_quote(stdout_path)}",
            f"settings set target.error-path {lldb_quote(stderr_path)}",
            f"command script import {lldb_quote(str(HELPER_PATH))}",
            f"script {HELPER}.setup({fifo!r}, {self._markers.nonce!r})",
        ]
        try:
            output = await self._channel.run(startup, self.startup_timeout)
        except Timeout:
            raise Timeout(
                f"lldb did not start within {self.startup_timeout:g}s ({' '.join(argv)}). "
                "Run it by hand to see why.",
            ) from None
        except BackendDied:
            raise BackendDied(
                f"lldb ({' '.join(argv)}) exited during start-up. Run it by hand to see why."
            ) from None
        try:
            parse_json(output, self._markers)
        except (CommandFailed, ValueError):
            raise DependencyMissing(
                "This lldb cannot run its Python helper (lldb built without Python?). "
                f"It said: {sanitize(output)[-400:]}. Use --adapter lldb-dap instead.",
            ) from None
        self._interrupt_fd = await self._open_interrupt(fifo)

    async def _open_interrupt(self: LldbHost, fifo: str) -> int | None:
        """The write end of the interrupt FIFO; opening fails until the thread in
        lldb opened its read end."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5.0
        while loop.time() < deadline:
            try:
                return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                await asyncio.sleep(0.02)
        return None

    def _send_interrupt(self: LldbHost) -> None:
        if self._interrupt_fd is not None:
            with contextlib.suppress(OSError):
                os.write(self._interrupt_fd, b"i")
                return
        # Without the helper thread, a SIGSTOP does the same: lldb reports it as a stop.
        if self.debuggee_pid:
            with contextlib.suppress(OSError):
                os.kill(self.debuggee_pid, 19)

    def _require_channel(self: LldbHost) -> LldbChannel:
        if self._channel is None:
            raise InvalidInput(NOT_STARTED)
        if not self._channel.alive:
            raise BackendDied("lldb is no longer running; start the session again.")
        return self._channel

    def _require_stopped(self: LldbHost) -> None:
        # The same codes and words as the DAP backends, so that front ends need
        # not know which backend answered.
        if self._channel is None:
            raise InvalidInput(NOT_STARTED)
        if self._state == "running":
            raise InvalidInput(RUNNING)
        if self._state in ("exited", "detached", "dead") or not self._channel.alive:
            raise InvalidInput("The program has ended; start it again to debug it.")
        if self._state != "stopped":
            raise InvalidInput("The program has not started yet; wait for it to stop.")

    async def _run(self: LldbHost, command: str, timeout: float) -> str:
        return await self._require_channel().run([command], timeout)

    async def _helper(self: LldbHost, function: str, *args: Any) -> dict[str, Any]:
        call = f"script {HELPER}.{function}({', '.join(str(a) for a in args)})"
        answer = parse_json(await self._require_channel().run([call], self.command_timeout),
                            self._markers)
        if "error" in answer:
            raise CommandFailed(str(answer["error"]))
        return answer

    async def _helper_locked(self: LldbHost, function: str, *args: Any) -> dict[str, Any]:
        """A helper call by a caller that already holds the channel's lock."""
        channel = self._require_channel()
        call = f"script {HELPER}.{function}({', '.join(str(a) for a in args)})"
        answer = parse_json(await channel.wait(channel.send([call]), self.command_timeout, [call]),
                            self._markers)
        if "error" in answer:
            raise CommandFailed(str(answer["error"]))
        return answer

    # ================================================================ program output

    def _flush_output(self: LldbHost) -> None:
        """What the program wrote, before a stop or its end is reported."""
        if self._pipes is not None:
            self._pipes.drain()

    def _on_log(self: LldbHost, payload: dict[str, Any]) -> None:
        text = payload.get("text")
        if not isinstance(text, str):
            return
        if text:
            self._flush_output()
            self.emit(OutputEvent(category="console", text=text))
