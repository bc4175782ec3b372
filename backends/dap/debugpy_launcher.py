"""debugpy's launcher, played by the host itself.

To start a program, debugpy's adapter asks its client (runInTerminal) to run
`PYTHON .../debugpy/launcher ADDRESS -- PROGRAM ARGS`: one more Python process
that imports part of debugpy, connects back to the adapter, is sent the launch
configuration, starts the program (`PYTHON -X frozen_modules=off .../debugpy
--connect ...`), reports its pid (`process`) and, when it ends, its exit code
(`exited`, then `terminated`), and kills it when told to (`terminate`, or the
adapter going away). That process cost every launch 60-100 ms before the
program even started (docs/performance.md).

The host speaks that side of the protocol here instead, and starts the program
itself, exactly as the launcher would (debugpy/launcher/handlers.py and
debuggee.py, the debugpy this package pins): the command line, the
environment, the exit code. The adapter's access token goes to the program's
environment, not its command line, as our sitecustomize does in the real
launcher. A command it does not recognise (another debugpy's launcher, `sudo`)
runs as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import itertools
import os
import signal
import struct
from typing import Any, Awaitable, Callable

from ..errors import CommandFailed
from ..process import ChildProcess, signal_group
from .framing import Decoder, FramingError, encode


Message = dict[str, Any]
#: starts the program: (argv, cwd, env) -> the process (process.spawn, with the
#: input and output the runInTerminal process gets)
Spawner = Callable[..., Awaitable[ChildProcess]]  # (argv, cwd, env, words before debugpy's)

#: how long the adapter may take to send the launch configuration
CONFIG_TIMEOUT_S = 30.0


def _debugpy_dir() -> str | None:
    spec = importlib.util.find_spec("debugpy")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.realpath(list(spec.submodule_search_locations)[0])


class LauncherCommand:
    """A runInTerminal command that runs debugpy's launcher: where the adapter
    waits for it, and the program's part of the command line."""

    def __init__(self, debugpy_dir: str, host: str, port: int, args: list[str]) -> None:
        self.debugpy_dir = debugpy_dir
        self.host = host
        self.port = port
        self.args = args

    @classmethod
    def parse(cls, argv: list[str]) -> "LauncherCommand | None":
        """`PYTHON... <this debugpy>/launcher [HOST:]PORT -- ARGS`, else None."""
        debugpy_dir = _debugpy_dir()
        if debugpy_dir is None or not argv or argv[0] in ("sudo", "doas"):
            return None
        launcher = os.path.join(debugpy_dir, "launcher")
        for at, word in enumerate(argv[1:], 1):
            if os.path.realpath(word) != launcher:
                continue
            if len(argv) < at + 3 or argv[at + 2] != "--":
                return None
            host, _, port = argv[at + 1].rpartition(":")
            if not port.isdigit():
                return None
            return cls(debugpy_dir, host.strip("[]") or "127.0.0.1", int(port), argv[at + 3:])
        return None


class HostLauncher:
    """One launch: the connection to the adapter and the program it started."""

    def __init__(self, command: LauncherCommand) -> None:
        self.command = command
        self.child: ChildProcess | None = None
        self._seq = itertools.count(1)
        self._writer: asyncio.StreamWriter | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._decoder = Decoder()
        #: messages decoded but not taken yet
        self._inbox: list[Message] = []

    async def start(self, cwd: str | None, env: dict[str, str], spawn: Spawner) -> ChildProcess:
        """Connect to the adapter, take its launch configuration, start the
        program, and tell the adapter its pid. Raises CommandFailed (the
        program could not start; the adapter is told too)."""
        command = self.command
        reader, writer = await asyncio.open_connection(command.host, command.port)
        self._writer = writer
        try:
            request = await asyncio.wait_for(self._next_request(reader), CONFIG_TIMEOUT_S)
        except (asyncio.TimeoutError, ConnectionError, EOFError, FramingError) as exc:
            writer.close()
            raise CommandFailed(f"debugpy's adapter sent no launch configuration: {exc!r}")
        arguments = request.get("arguments") or {}
        try:
            argv, program_env = self._program(arguments, env)
            child = await spawn(argv, cwd, program_env, self._debugpy_words(arguments))
        except Exception as exc:
            message = getattr(exc, "message", None) or str(exc)
            self._send({"type": "response", "request_seq": request.get("seq"), "success": False,
                        "command": request.get("command"), "message": message})
            with contextlib.suppress(Exception):
                await writer.drain()
            writer.close()
            raise
        self.child = child
        self._send({"type": "response", "request_seq": request.get("seq"), "success": True,
                    "command": request.get("command"), "body": {}})
        self._send({"type": "event", "event": "process", "body": {
            "startMethod": "launch", "isLocalProcess": True, "systemProcessId": child.pid,
            "name": arguments.get("processName") or argv[0],
            "pointerSize": struct.calcsize("P") * 8}})
        self._spawn_task(self._serve(reader))
        self._spawn_task(self._report_exit(child))
        return child

    def _debugpy_words(self, arguments: Message) -> int | None:
        """How many words of the program's command line come before debugpy's
        own (the interpreter, its options, debugpy's directory): a spare
        process started with them can be the program (spare_program)."""
        if arguments.get("noDebug", False):
            return None
        return len(arguments.get("python") or []) + 3  # -X frozen_modules=off DIR

    def _program(self, arguments: Message, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        """The program's command line and environment, as the launcher makes them
        (debugpy/launcher/handlers.py: launch_request)."""
        command = self.command
        argv = [str(a) for a in arguments.get("python") or []]
        if not argv:
            raise CommandFailed("debugpy's launch configuration named no Python.")
        program_env = dict(env)
        for key, value in (arguments.get("env") or {}).items():
            if value is None:
                program_env.pop(key, None)
            else:
                program_env[key] = str(value)
        if not arguments.get("noDebug", False):
            # `-X frozen_modules=off`: debugpy's launcher adds it under Python 3.11
            # or later; earlier ones take an -X option they do not know silently.
            argv += ["-X", "frozen_modules=off", command.debugpy_dir,
                     "--connect", f"{command.host}:{arguments.get('port')}"]
            if not arguments.get("subProcess", True):
                argv += ["--configure-subProcess", "False"]
            argv += ["--configure-qt", str(arguments.get("qt") or "none")]
            token = arguments.get("adapterAccessToken")
            if token:
                # Off the command line, where every local user reads it with `ps`.
                extra = program_env.get("DEBUGPY_EXTRA_ARGV", "")
                program_env["DEBUGPY_EXTRA_ARGV"] = f"{extra} --adapter-access-token {token}".strip()
            argv += [str(a) for a in arguments.get("debugpyArgs") or []]
        argv += command.args
        if arguments.get("gevent"):
            program_env["GEVENT_SUPPORT"] = "True"
        redirect = arguments.get("redirectOutput")
        if redirect is None:
            redirect = arguments.get("console") == "internalConsole"
        if redirect:
            program_env["PYTHONUNBUFFERED"] = "1"
            program_env["PYTHONIOENCODING"] = "utf-8"
        return argv, program_env

    async def _next_request(self, reader: asyncio.StreamReader) -> Message:
        """The next request the adapter sends (it sends no other messages here)."""
        while True:
            while self._inbox:
                message = self._inbox.pop(0)
                if message.get("type") == "request":
                    return message
            chunk = await reader.read(65536)
            if not chunk:
                raise EOFError("the adapter closed the connection")
            self._inbox.extend(self._decoder.feed(chunk))

    async def _serve(self, reader: asyncio.StreamReader) -> None:
        """The adapter's later requests: `terminate` kills the program, as the
        launcher does; the adapter gone, the program goes too."""
        try:
            while True:
                request = await self._next_request(reader)
                if request.get("command") == "terminate":
                    self._send({"type": "response", "request_seq": request.get("seq"),
                                "success": True, "command": "terminate", "body": {}})
                    self._kill()
                else:
                    self._send({"type": "response", "request_seq": request.get("seq"),
                                "success": False, "command": request.get("command"),
                                "message": f"Unknown request {request.get('command')!r}"})
        except (ConnectionError, EOFError, FramingError, asyncio.IncompleteReadError):
            self._kill()

    async def _report_exit(self, child: ChildProcess) -> None:
        code = await child.proc.wait()
        if code < 0:
            code &= 0xFF  # as the launcher reports a signal
        self._send({"type": "event", "event": "exited", "body": {"exitCode": code}})
        self._send({"type": "event", "event": "terminated"})
        writer = self._writer
        if writer is not None:
            with contextlib.suppress(Exception):
                await writer.drain()
            writer.close()

    def _kill(self) -> None:
        if self.child is not None and self.child.alive:
            signal_group(self.child.pid, signal.SIGKILL)

    def _send(self, message: Message) -> None:
        writer = self._writer
        if writer is None or writer.is_closing():
            return
        with contextlib.suppress(Exception):
            writer.write(encode({"seq": next(self._seq), **message}))

    def _spawn_task(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
