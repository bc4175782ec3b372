"""A Debug Adapter Protocol client over an asyncio stream pair.

Requests are matched to responses by `seq`, each with its own timeout. Events
go to handlers registered by name. Reverse requests (adapter -> client) are
answered here: `runInTerminal` by starting the command ourselves in a process
group of its own, anything else refused with success=false so the adapter can
fall back or fail with its own message. When the stream ends, every pending
request fails at once with BackendDied naming the adapter and quoting its last
stderr lines.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import inspect
import itertools
import logging
import os
import re
import socket
import subprocess
from collections import deque
from typing import Any, Awaitable, Callable, Sequence

from ..errors import BackendDied, CommandFailed, DebuggerError, Timeout
from ..process import ChildProcess, kill_tree, spawn
from .framing import Decoder, FramingError, encode

log = logging.getLogger("backends.dap")

Message = dict[str, Any]
EventHandler = Callable[[Message], Any]
RequestHandler = Callable[[Message], Awaitable[Any]]
OutputSink = Callable[[str, str], None]  # (category, text)
CloseHandler = Callable[[BackendDied], Any]

DEFAULT_TIMEOUT = 30.0
STDERR_LINES = 40


class ReverseRequestRefused(Exception):
    """Raised by a reverse-request handler to answer success=false with this text."""


class DapClient:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        name: str = "debug",
        process: ChildProcess | None = None,
        default_timeout: float = DEFAULT_TIMEOUT,
        run_in_terminal: bool = True,
        output_sink: OutputSink | None = None,
        program_stderr: bool = False,
    ) -> None:
        self.name = name
        #: the adapter's stderr is also its program's (dlv's program inherits it):
        #: forward it to output_sink as "stderr"
        self.program_stderr = program_stderr
        self.process = process
        self.default_timeout = default_timeout
        #: what the runInTerminal targets and a TCP adapter's own stdout print
        self.output_sink = output_sink
        self.stderr_lines: deque[str] = deque(maxlen=STDERR_LINES)
        #: processes started for runInTerminal; ended with the client
        self.terminal_processes: list[ChildProcess] = []
        #: what the runInTerminal process reads as its input: None (nothing: end of
        #: input), "pipe" (write_input), or a file's path
        self.terminal_stdin: str | None = None
        #: environment the runInTerminal process gets on top of ours, under what
        #: the adapter asks for (debugpy: its launcher's sitecustomize)
        self.terminal_env: dict[str, str] = {}
        #: a runInTerminal that runs debugpy's launcher is served here instead
        #: (debugpy_launcher.py): one Python process fewer before the program
        self.stand_in_for_debugpy_launcher = False
        self._launchers: list[Any] = []

        self._reader = reader
        self._writer = writer
        self._decoder = Decoder()
        self._seq = itertools.count(1)
        self._pending: dict[int, tuple[str, asyncio.Future[Message]]] = {}
        self._event_handlers: dict[str, list[EventHandler]] = {}
        self._any_handlers: list[EventHandler] = []
        self._close_handlers: list[CloseHandler] = []
        self._request_handlers: dict[str, RequestHandler] = {
            "runInTerminal": self._run_in_terminal,
            "startDebugging": self._refuse_start_debugging,
        }
        self._run_in_terminal_allowed = run_in_terminal
        self._tasks: set[asyncio.Task[Any]] = set()
        self._death: BackendDied | None = None
        self._closing = False
        self.closed = asyncio.Event()

        self._stderr_task = None
        if process is not None and process.proc.stderr is not None:
            self._stderr_task = self._spawn_task(self._pump_stderr(process.proc.stderr))
        self._read_task = self._spawn_task(self._read_loop())

    # ----------------------------------------------------------------- transports

    @classmethod
    async def start_stdio(
        cls,
        argv: Sequence[str],
        *,
        name: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        install_hint: str = "",
        **options: Any,
    ) -> "DapClient":
        """Spawn an adapter that speaks DAP on its stdin/stdout."""
        process = await spawn(
            argv, cwd=cwd, env=env, what=f"{name} adapter", install_hint=install_hint
        )
        assert process.proc.stdout is not None and process.proc.stdin is not None
        return cls(process.proc.stdout, process.proc.stdin, name=name, process=process, **options)

    @classmethod
    async def connect_tcp(
        cls,
        host: str,
        port: int,
        *,
        name: str,
        connect_timeout: float = 10.0,
        process: ChildProcess | None = None,
        **options: Any,
    ) -> "DapClient":
        """Connect to an adapter listening on host:port, retrying until
        `connect_timeout` because a freshly started adapter takes a moment to listen."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + connect_timeout
        last_error: Exception | None = None
        while True:
            if process is not None and not process.alive:
                raise BackendDied(
                    f"The {name} adapter exited before it accepted a connection on "
                    f"{host}:{port}.{_stderr_hint_of(process)}",
                    adapter=name,
                )
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise Timeout(
                    f"Could not connect to the {name} adapter at {host}:{port} within "
                    f"{connect_timeout:g} s ({last_error}). Check that it is listening there.",
                    adapter=name, host=host, port=port,
                )
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(host, port, limit=2**24), remaining
                )
                break
            except (OSError, asyncio.TimeoutError) as exc:
                last_error = exc
                await asyncio.sleep(min(0.05, max(remaining, 0)))
        sock = writer.get_extra_info("socket")
        if sock is not None:
            # Without it every small request waits out the peer's delayed ACK (~40 ms).
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client = cls(reader, writer, name=name, process=process, **options)
        if process is not None and process.proc.stdout is not None:
            client._spawn_task(client._pump_output(process.proc.stdout, "stdout"))
        return client

    # ----------------------------------------------------------------- registration

    def on(self, event: str, handler: EventHandler) -> Callable[[], None]:
        """Call `handler(body_message)` for every event named `event`; returns an
        unsubscribe function. A handler may be a coroutine function."""
        self._event_handlers.setdefault(event, []).append(handler)
        return lambda: _discard(self._event_handlers.get(event, []), handler)

    def on_any(self, handler: EventHandler) -> Callable[[], None]:
        self._any_handlers.append(handler)
        return lambda: _discard(self._any_handlers, handler)

    def on_close(self, handler: CloseHandler) -> None:
        """Called once, with the BackendDied that failed the pending requests."""
        self._close_handlers.append(handler)

    def on_request(self, command: str, handler: RequestHandler) -> None:
        """Answer the reverse request `command`; the handler returns the response
        body or raises ReverseRequestRefused."""
        self._request_handlers[command] = handler

    # ----------------------------------------------------------------- requests

    @property
    def alive(self) -> bool:
        return self._death is None and not self._closing

    def send_request(
        self, command: str, arguments: dict[str, Any] | None = None, timeout: float | None = None
    ) -> asyncio.Future[Message]:
        """Send now; the future resolves to the response body (a dict, maybe
        empty) or fails with CommandFailed, Timeout or BackendDied."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Message] = loop.create_future()
        if self._death is not None:
            future.set_exception(self._death)
            return future
        seq = next(self._seq)
        message: Message = {"seq": seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        try:
            self._writer.write(encode(message))
        except (OSError, RuntimeError) as exc:
            future.set_exception(self._died_error(f"could not be written to ({exc})"))
            return future
        self._pending[seq] = (command, future)
        limit = self.default_timeout if timeout is None else timeout
        if limit > 0:
            handle = loop.call_later(limit, self._expire, seq, command, limit)
            future.add_done_callback(lambda _f: handle.cancel())
        return future

    async def request(
        self, command: str, arguments: dict[str, Any] | None = None, timeout: float | None = None
    ) -> Message:
        future = self.send_request(command, arguments, timeout)
        with contextlib.suppress(OSError, RuntimeError, ConnectionError):
            await self._writer.drain()
        return await future

    def _expire(self, seq: int, command: str, limit: float) -> None:
        entry = self._pending.pop(seq, None)
        if entry and not entry[1].done():
            entry[1].set_exception(
                Timeout(
                    f"The {self.name} adapter did not answer '{command}' within {limit:g} s. "
                    "The program may be busy; pause it, or stop the session and start again.",
                    command=command, adapter=self.name,
                )
            )

    # ----------------------------------------------------------------- reading

    async def _read_loop(self) -> None:
        reason = "closed its output"
        try:
            while True:
                chunk = await self._reader.read(65536)
                if not chunk:
                    break
                while True:
                    try:
                        messages = self._decoder.feed(chunk)
                    except FramingError as exc:
                        log.warning("%s adapter sent a bad frame: %s", self.name, exc)
                        for message in exc.messages:
                            self._dispatch(message)
                        chunk = b""
                        continue
                    for message in messages:
                        self._dispatch(message)
                    break
        except asyncio.CancelledError:
            reason = "connection was closed"
        except (OSError, ConnectionError) as exc:
            reason = f"connection failed ({exc})"
        await self._stream_ended(reason)

    def _dispatch(self, message: Message) -> None:
        kind = message.get("type")
        if kind == "response":
            entry = self._pending.pop(message.get("request_seq", -1), None)
            if entry is None:
                return  # answered after its timeout
            command, future = entry
            if future.done():
                return
            if message.get("success", False):
                body = message.get("body")
                future.set_result(body if isinstance(body, dict) else {})
            else:
                future.set_exception(self._failure(command, message))
        elif kind == "event":
            name = message.get("event", "")
            for handler in [*self._event_handlers.get(name, ()), *self._any_handlers]:
                self._call(handler, message)
        elif kind == "request":
            self._spawn_task(self._answer_reverse_request(message))
        else:
            log.warning("%s adapter sent a message of unknown type: %r", self.name, kind)

    def _failure(self, command: str, message: Message) -> CommandFailed:
        body = message.get("body") or {}
        error = body.get("error") if isinstance(body, dict) else None
        text = ""
        if isinstance(error, dict) and error.get("format"):
            variables = error.get("variables") or {}
            text = re.sub(
                r"\{(\w+)\}", lambda m: str(variables.get(m.group(1), m.group(0))), error["format"]
            )
        text = text or message.get("message") or f"The {self.name} adapter refused '{command}'."
        return CommandFailed(
            text, command=command, adapter=self.name, short=message.get("message")
        )

    def _call(self, handler: EventHandler, message: Message) -> None:
        try:
            result = handler(message)
            if inspect.isawaitable(result):
                self._spawn_task(_logged(result, self.name))
        except Exception:
            log.exception("%s adapter: event handler failed", self.name)

    # ----------------------------------------------------------------- reverse requests

    async def _answer_reverse_request(self, request: Message) -> None:
        command = request.get("command", "")
        handler = self._request_handlers.get(command)
        response: Message = {
            "type": "response",
            "request_seq": request.get("seq", 0),
            "command": command,
            "success": False,
        }
        if handler is None:
            response["message"] = f"This client does not handle the '{command}' request."
        else:
            try:
                body = await handler(request.get("arguments") or {})
                response["success"] = True
                if body is not None:
                    response["body"] = body
            except ReverseRequestRefused as exc:
                response["message"] = str(exc)
            except DebuggerError as exc:
                response["message"] = exc.message
            except Exception as exc:  # the adapter must get an answer whatever happened
                log.exception("%s adapter: reverse request %s failed", self.name, command)
                response["message"] = f"{command} failed: {exc}"
        if self._death is None:
            response["seq"] = next(self._seq)
            with contextlib.suppress(OSError, RuntimeError):
                self._writer.write(encode(response))

    async def _run_in_terminal(self, arguments: Message) -> Message:
        if not self._run_in_terminal_allowed:
            raise ReverseRequestRefused(
                "This client does not run programs in a terminal; use console "
                "'internalConsole' in the launch configuration."
            )
        argv = [str(a) for a in arguments.get("args") or []]
        if not argv:
            raise ReverseRequestRefused("runInTerminal came with no command to run.")
        env = {**os.environ, **self.terminal_env}
        for key, value in (arguments.get("env") or {}).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = str(value)
        cwd = arguments.get("cwd") or None
        if cwd and not os.path.isdir(cwd):
            raise ReverseRequestRefused(f"runInTerminal: the directory {cwd!r} does not exist.")
        # Arguments are an argv list even when the adapter says a shell may
        # interpret them: no shell ever sees them.
        source = self.terminal_stdin
        stdin_file = None
        if source not in (None, "pipe"):
            try:
                stdin_file = open(source, "rb")
            except OSError as exc:
                raise ReverseRequestRefused(f"Cannot read the program's input {source}: {exc}.")
        stdin = subprocess.PIPE if source == "pipe" else (stdin_file or subprocess.DEVNULL)
        launcher = None
        if self.stand_in_for_debugpy_launcher:
            from .debugpy_launcher import HostLauncher, LauncherCommand

            command = LauncherCommand.parse(argv)
            launcher = HostLauncher(command) if command is not None else None
        try:
            if launcher is not None:
                self._launchers.append(launcher)
                child = await launcher.start(
                    cwd, env, lambda program, where, environment, words=None: spawn(
                        program, cwd=where, env=environment, stdin=stdin, what="program",
                        spare_prefix=words))
            else:
                child = await spawn(argv, cwd=cwd, env=env, stdin=stdin,
                                    what="program (runInTerminal)")
        except (OSError, DebuggerError) as exc:
            # debugpy does not read this answer: it waits a minute for the launcher
            # to connect. The launch it is part of fails now instead.
            message = getattr(exc, "message", None) or str(exc)
            for command, future in list(self._pending.values()):
                if command == "launch" and not future.done():
                    future.set_exception(CommandFailed(
                        f"The adapter could not launch the program: {message}"))
            raise ReverseRequestRefused(f"Cannot start {argv[0]}: {message}") from exc
        finally:
            if stdin_file is not None:
                stdin_file.close()
        self.terminal_processes.append(child)
        if child.proc.stdout is not None:
            self._spawn_task(self._pump_output(child.proc.stdout, "stdout"))
        if child.proc.stderr is not None:
            self._spawn_task(self._pump_output(child.proc.stderr, "stderr"))
        return {"processId": child.pid}

    async def write_input(self, data: bytes, eof: bool = False) -> bool:
        """Write to the input of the program started for runInTerminal; False when
        there is no open input to write to."""
        stream = next((c.proc.stdin for c in self.terminal_processes if c.proc.stdin), None)
        if stream is None or stream.is_closing():
            return False
        try:
            if data:
                stream.write(data)
                await stream.drain()
            if eof:
                stream.close()
        except (ConnectionError, RuntimeError):
            return False
        return True

    async def _refuse_start_debugging(self, arguments: Message) -> Message:
        raise ReverseRequestRefused(
            "This client runs one debug session at a time and cannot start a child "
            "session (startDebugging)."
        )

    # ----------------------------------------------------------------- side streams

    async def _pump_stderr(self, stream: asyncio.StreamReader) -> None:
        # Read in chunks, not lines: a program's 1 MiB line must not end the pump.
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        partial = ""
        with contextlib.suppress(Exception):
            while True:
                data = await stream.read(65536)
                if not data:
                    break
                chunk = decoder.decode(data)
                if self.program_stderr and self.output_sink is not None and chunk:
                    self.output_sink("stderr", chunk)
                lines = (partial + chunk).split("\n")
                partial = lines.pop()[-4096:]
                for line in lines:
                    text = line.rstrip()[:4096]
                    if text:
                        self.stderr_lines.append(text)
                        log.debug("%s adapter stderr: %s", self.name, text)

    async def _pump_output(self, stream: asyncio.StreamReader, category: str) -> None:
        with contextlib.suppress(Exception):
            while True:
                data = await stream.read(65536)
                if not data:
                    break
                if self.output_sink is not None:
                    self.output_sink(category, data.decode("utf-8", "replace"))

    # ----------------------------------------------------------------- ending

    def stderr_tail(self, lines: int = 8) -> list[str]:
        return list(self.stderr_lines)[-lines:]

    def _died_error(self, what: str) -> BackendDied:
        detail = ""
        if self.process is not None and self.process.proc.returncode is not None:
            detail = f" (exit code {self.process.proc.returncode})"
        tail = self.stderr_tail()
        stderr = (" Last stderr lines:\n  " + "\n  ".join(tail)) if tail else ""
        return BackendDied(
            f"The {self.name} adapter {what}{detail}. Start the session again; if it "
            f"keeps happening, run `tui-debugger doctor`.{stderr}",
            adapter=self.name, stderr=tail,
        )

    def signal_behind(self, reported: int) -> int | None:
        """The program's own status (-N, a signal) behind the exit code the
        adapter reported for it: debugpy's launcher (played by the host) can
        only send a number, so a death by SIGTERM arrives as 241 (256 - 15),
        which reads as an exit code. None: no such death."""
        for launcher in self._launchers:
            child = launcher.child
            code = child.proc.returncode if child is not None else None
            if code is not None and code < 0 and code & 0xFF == reported & 0xFF:
                return code
        return None

    async def _stream_ended(self, reason: str) -> None:
        if self._death is not None:
            return
        if self.process is not None and not self._closing:
            # The exit code and the last stderr lines make the error worth reading.
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(self.process.proc.wait(), 1.0)
            if self._stderr_task is not None:
                with contextlib.suppress(asyncio.TimeoutError, Exception):
                    await asyncio.wait_for(asyncio.shield(self._stderr_task), 0.5)
        if self._closing:
            error = BackendDied(
                f"The connection to the {self.name} adapter was closed.", adapter=self.name
            )
        else:
            exited = self.process is not None and self.process.proc.returncode is not None
            error = self._died_error("exited" if exited else reason)
        self._death = error
        pending, self._pending = self._pending, {}
        for _command, future in pending.values():
            if not future.done():
                future.set_exception(error)
                future.exception()  # nobody may be awaiting it; do not warn
        self.closed.set()
        for handler in self._close_handlers:
            try:
                result = handler(error)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("%s adapter: close handler failed", self.name)

    async def wait_closed(self, timeout: float) -> bool:
        """Wait for the adapter to end the stream (after a disconnect)."""
        try:
            await asyncio.wait_for(self.closed.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    async def close(self, grace: float = 1.0) -> None:
        """Close the stream and end the adapter and any runInTerminal process.
        Never raises."""
        self._closing = True
        with contextlib.suppress(Exception):
            self._writer.close()
        if self.process is not None:
            with contextlib.suppress(Exception):
                await kill_tree(self.process.pid, grace=0.2)
            with contextlib.suppress(Exception):
                await self.process.kill_group(grace)
        for child in self.terminal_processes:
            with contextlib.suppress(Exception):
                await kill_tree(child.pid, grace=0.2)
            with contextlib.suppress(Exception):
                await child.kill_group(grace)
        for launcher in self._launchers:
            await launcher.close()
        if not self._read_task.done():
            self._read_task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(self._read_task, grace)
        if self._death is None:
            await self._stream_ended("connection was closed")
        for task in list(self._tasks):
            if not task.done():
                task.cancel()
        if self._tasks:
            with contextlib.suppress(BaseException):
                await asyncio.wait(list(self._tasks), timeout=grace)

    def _spawn_task(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


def _discard(items: list[Any], item: Any) -> None:
    with contextlib.suppress(ValueError):
        items.remove(item)


async def _logged(awaitable: Awaitable[Any], name: str) -> None:
    try:
        await awaitable
    except Exception:
        log.exception("%s adapter: event handler failed", name)


def _stderr_hint_of(process: ChildProcess) -> str:
    code = process.proc.returncode
    return f" Exit code {code}." if code is not None else ""
