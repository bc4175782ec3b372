"""A session's life: a node command launched (its inspector found on its
stderr, its child processes followed) or an inspector attached to (a host and
port, a pid signalled, a child announced), its output, and its end.

Start-up order (written here once):

    spawn node --inspect-brk=127.0.0.1:0   (or attach: /json/list -> websocket)
    Runtime.enable, Debugger.enable, NodeRuntime.notifyWhenWaitingForDisconnect
    Debugger.setPauseOnExceptions          (the filters chosen so far)
    await configure()                       (the session sets its breakpoints)
    Runtime.runIfWaitingForDebugger         -> "Break on start" pause

The "Break on start" pause is the backend's own: it resumes at once unless the
user asked to stop on entry, so the first stop a user sees is one they asked
for. Breakpoints set in configure() are set by URL before the main module is
compiled, so V8 binds them as it parses and they hit in program order.

When the program ends Node prints "Waiting for the debugger to disconnect..."
and waits; NodeRuntime.waitingForDisconnect (or that stderr line) makes the
backend close the socket, collect the exit code, and report exited then
terminated.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import re
import signal
import subprocess
from typing import Any, Protocol

from ..adapters import find_node
from ..base import Configure
from ..errors import CommandFailed, DebuggerError, DependencyMissing, InvalidInput, Timeout
from ..models import (
    AttachRequest,
    BackendEvent,
    ChildProcessEvent,
    ExitedEvent,
    STDIN_PIPE,
    LaunchRequest,
    OutputEvent,
    TerminatedEvent,
)
from ..process import ChildProcess, spawn
from .breakpoints import _Breakpoint
from .children import _ChildAnnouncements
from .connection import CdpConnection, discover_websocket_url
from .scripts import GeneratedFileIndex
from .values import console_text

INSPECTOR_START_TIMEOUT = 10.0
EXIT_WAIT = 5.0
NODE_INSTALL_HINT = "Install Node.js: sudo apt-get install nodejs (or from nodejs.org)."

#: The inspector's websocket URL (its path is a random id) goes to stderr only,
#: not to http://host:port/json/list, where any local user could read it and
#: connect: whoever holds the URL runs code in the program.
PUBLISH_UID = "--inspect-publish-uid=stderr"

#: Lines Node's inspector writes to stderr about itself, not the program's output.
_INSPECTOR_CHATTER = (
    "Debugger listening on ",
    "For help, see: https://nodejs.org/en/docs/inspector",
    "Debugger attached.",
    "Waiting for the debugger to disconnect...",
    "Debugger ending on ",
)
_WAITING_FOR_DISCONNECT = "Waiting for the debugger to disconnect..."
_LISTENING = re.compile(r"Debugger listening on (ws://\S+)")


class LaunchingHost(Protocol):
    """What LaunchingMixin needs of the backend it is mixed into."""

    # the node process, the inspector and the tasks that serve them
    _child: ChildProcess | None
    _conn: CdpConnection | None
    _worker: asyncio.Task[None] | None
    _pumps: list[asyncio.Task[None]]
    _children: _ChildAnnouncements | None
    child_pids: list[int]
    debuggee_pid: int | None
    follows_children: bool
    stderr_tail: collections.deque[str]
    # how it was started
    _attached: bool
    _followed: bool
    _inspector_at: str | None
    _path_map: list[tuple[str, str]]
    _generated: GeneratedFileIndex
    _stop_on_entry: bool
    _hold_if_unarmed: bool
    _pause_on_exceptions: str
    _bps_by_path: dict[str, list[_Breakpoint]]
    _paused: dict[str, Any] | None
    # how it ends
    _finish_task: asyncio.Task[None] | None
    _finished: bool
    _end_reason: str | None
    _disposed: bool

    def emit(self, event: BackendEvent) -> None: ...
    def _require_conn(self) -> CdpConnection: ...
    def _on_event(self, method: str, params: dict[str, Any]) -> None: ...
    async def _event_loop(self) -> None: ...
    def _clear_pause(self) -> None: ...

    # its own, called from one another
    @staticmethod
    def launch_argv(request: LaunchRequest, node: str) -> list[str]: ...
    def add_source_root(self, directory: str) -> None: ...
    async def launch_command(self, argv: list[str], *, cwd: str | None,
                             env: dict[str, str] | None, configure: Configure,
                             port_hint: int | None = None, stop_on_entry: bool | None = None,
                             stdin: str | None = None, follow_children: bool = True) -> None: ...
    async def _await_inspector_url(self, port_hint: int | None) -> str: ...
    async def _attach_followed_child(self, request: AttachRequest,
                                     configure: Configure) -> None: ...
    def _on_child_announced(self, info: dict[str, Any]) -> None: ...
    async def _poll_inspector(self, host: str, port: int, seconds: float) -> str: ...
    async def _connect(self, ws_url: str) -> None: ...
    async def _start(self, configure: Configure) -> None: ...
    async def _kill_child(self) -> None: ...
    async def _finish(self, reason: str) -> None: ...
    def _schedule_finish(self, reason: str) -> None: ...
    async def _await_finish(self) -> None: ...
    async def _pump(self, stream: asyncio.StreamReader | None, category: str) -> None: ...


class LaunchingMixin:
    """Launch, attach, output and end of CdpBackend (backend.py)."""

    # ================================================================= start

    async def launch(self: LaunchingHost, request: LaunchRequest, configure: Configure) -> None:
        node = request.extra.get("runtimeExecutable") or find_node()
        if not node:
            raise DependencyMissing(f"node was not found on PATH. {NODE_INSTALL_HINT}")
        argv = self.launch_argv(request, str(node))
        env = dict(os.environ)
        env.update({k: str(v) for k, v in request.env.items()})
        cwd = request.cwd or os.getcwd()
        self._stop_on_entry = request.stop_on_entry
        for out_dir in request.extra.get("outDirs") or []:
            self.add_source_root(os.path.join(cwd, str(out_dir)))
        stdin = request.stdin
        if stdin is not None and stdin != STDIN_PIPE:
            from ..dap.profile import stdin_path

            stdin = stdin_path(request)
        await self.launch_command(
            argv, cwd=cwd, env=env, configure=configure, stdin=stdin,
            follow_children=request.extra.get("autoAttachChildProcesses", True) is not False)

    async def send_input(self: LaunchingHost, text: str, eof: bool = False) -> None:
        stream = self._child.proc.stdin if self._child is not None else None
        if stream is None or stream.is_closing():
            raise InvalidInput("The program's input is closed: it was launched without an "
                               "input to type into, or end of input was already sent.")
        try:
            if text:
                stream.write(text.encode("utf-8"))
                await stream.drain()
            if eof:
                stream.close()
        except (ConnectionError, RuntimeError) as exc:
            raise InvalidInput(f"The program's input is closed ({exc}).") from exc

    def add_source_root(self: LaunchingHost, directory: str) -> None:
        """A directory to search for compiled JavaScript whose source maps name
        the files breakpoints are set in (the program's directory and the
        working directory are searched already)."""
        self._generated.add_root(directory)

    @staticmethod
    def launch_argv(request: LaunchRequest, node: str) -> list[str]:
        """argv for a launch: `node --inspect-brk=127.0.0.1:0 [runtimeArgs] program
        args`, or the user's own node command with its inspect flag made a
        --inspect-brk one (so breakpoints can be set before the first line)."""
        program = request.program
        if not program:
            raise InvalidInput("No program to launch. Pass a .js file or a node command.")
        runtime_args = [str(a) for a in request.extra.get("runtimeArgs") or []]
        if os.path.basename(program) in ("node", "nodejs", "node.exe"):
            args = list(request.args)
            if not any(a.startswith("--inspect") for a in args):
                args.insert(0, "--inspect-brk=127.0.0.1:0")
            args = [_as_inspect_brk(a) for a in args]
            if not any(a.startswith("--inspect-publish-uid") for a in args):
                args.insert(0, PUBLISH_UID)
            return [program, *runtime_args, *args]
        lower = program.lower()
        if lower.endswith((".ts", ".mts", ".cts", ".tsx")) and not runtime_args:
            raise InvalidInput(
                f"{program} is TypeScript, which this Node cannot run directly. Compile it "
                "with source maps (tsc --sourceMap) and launch the .js file: breakpoints set "
                "in the .ts file still bind. Or pass runtimeArgs such as ['-r', 'ts-node/register']."
            )
        return [node, "--inspect-brk=127.0.0.1:0", PUBLISH_UID, *runtime_args, program,
                *request.args]

    async def launch_command(
        self: LaunchingHost,
        argv: list[str],
        *,
        cwd: str | None,
        env: dict[str, str] | None,
        configure: Configure,
        port_hint: int | None = None,
        stop_on_entry: bool | None = None,
        stdin: str | None = None,
        follow_children: bool = True,
    ) -> None:
        """Start a node command that carries --inspect-brk, connect to its
        inspector and run the start-up sequence. `stdin`: a file the program
        reads as its standard input, STDIN_PIPE for Backend.send_input (default:
        end of file). `follow_children`: the program's child Node processes
        announce themselves (ChildProcessEvent), each to be attached by a
        session of its own."""
        if stop_on_entry is not None:
            self._stop_on_entry = stop_on_entry
        work_dir = cwd or os.getcwd()
        if follow_children:
            env = dict(os.environ if env is None else env)
            self._children = _ChildAnnouncements(self._on_child_announced)
            env.update(self._children.environment(env.get("NODE_OPTIONS")))
            self.follows_children = True
        script = _main_script(argv[1:])
        if script:
            self.add_source_root(os.path.dirname(os.path.join(work_dir, script)))
        self.add_source_root(work_dir)
        source = open(stdin, "rb") if stdin not in (None, STDIN_PIPE) else None
        try:
            self._child = await spawn(
                argv, cwd=cwd, env=env,
                stdin=source or (subprocess.PIPE if stdin == STDIN_PIPE else subprocess.DEVNULL),
                what="node", install_hint=NODE_INSTALL_HINT,
            )
        finally:
            if source is not None:
                source.close()
        self.child_pids.append(self._child.pid)
        self.debuggee_pid = self._child.pid
        ws_url = await self._await_inspector_url(port_hint)
        self._pumps = [
            asyncio.create_task(self._pump(self._child.proc.stdout, "stdout")),
            asyncio.create_task(self._pump(self._child.proc.stderr, "stderr")),
        ]
        await self._connect(ws_url)
        await self._start(configure)

    async def _await_inspector_url(self: LaunchingHost, port_hint: int | None) -> str:
        """Read stderr until Node says where its inspector listens."""
        assert self._child is not None and self._child.proc.stderr is not None
        stderr = self._child.proc.stderr
        loop = asyncio.get_running_loop()
        deadline = loop.time() + INSPECTOR_START_TIMEOUT
        seen: list[str] = []
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            try:
                raw = await asyncio.wait_for(stderr.readline(), remaining)
            except asyncio.TimeoutError:
                break
            if not raw:
                await _wait_quietly(self._child.proc.wait(), 2)
                code = self._child.proc.returncode
                text = "".join(seen).strip()
                raise CommandFailed(
                    f"node exited (code {code}) before its inspector started"
                    + (f": {text[-800:]}" if text else "")
                    + ". Check the command, and that the inspector port is free.",
                    exit_code=code, stderr=text,
                )
            line = raw.decode("utf-8", errors="replace")
            match = _LISTENING.search(line)
            if match:
                for earlier in seen:
                    self.emit(OutputEvent(category="stderr", text=earlier))
                return match.group(1)
            seen.append(line)
            if "Starting inspector on" in line and "failed" in line:
                # Node goes on running the program without an inspector.
                await self._kill_child()
                raise CommandFailed(
                    f"node could not start its inspector: {line.strip()}. Choose a free "
                    "port (--inspect-brk=0 picks one).",
                    stderr="".join(seen),
                )
        if port_hint:
            with contextlib.suppress(DebuggerError):
                return await discover_websocket_url("127.0.0.1", port_hint)
        await self._kill_child()
        raise Timeout(
            f"node did not open its inspector within {INSPECTOR_START_TIMEOUT:g} s. "
            "The command must run node with --inspect-brk.",
            stderr="".join(seen),
        )

    async def attach(self: LaunchingHost, request: AttachRequest, configure: Configure) -> None:
        """Attach to a listening inspector (host:port, local or remote), or to a
        local Node process by pid: SIGUSR1 makes Node open its inspector on
        127.0.0.1:9229 (or `port`)."""
        self._attached = True
        self._stop_on_entry = bool(request.extra.get("stopOnEntry", False))
        if request.extra.get("followedChild"):
            await self._attach_followed_child(request, configure)
            return
        # A program started with --inspect-brk and reached by HOST:PORT with no
        # breakpoint to stop at stays where it waits, as the gdb-remote and dlv
        # servers' programs do, so that breakpoints can be set first.
        self._hold_if_unarmed = (request.pid is None and request.port is not None
                                 and "stopOnEntry" not in request.extra)
        host = request.host or "127.0.0.1"
        port = request.port or 9229
        if request.pid is not None:
            self.debuggee_pid = request.pid
            try:
                os.kill(request.pid, signal.SIGUSR1)
            except ProcessLookupError:
                raise InvalidInput(f"No process with pid {request.pid}. Check the pid.") from None
            except PermissionError:
                raise CommandFailed(
                    f"Not allowed to signal pid {request.pid}; run as its user."
                ) from None
            ws_url = await self._poll_inspector(host, port, 5.0)
        elif request.host is None and request.port is None:
            raise InvalidInput("Attach needs a pid, or a host and port of a Node inspector.")
        else:
            ws_url = await discover_websocket_url(host, port)
            self._inspector_at = f"{host}:{port}"
        mapping = dict(request.path_map)
        if request.extra.get("remoteRoot") and request.extra.get("localRoot"):
            # launch.json's remoteRoot/localRoot, as VS Code's node debugger reads them
            mapping[str(request.extra["remoteRoot"])] = str(request.extra["localRoot"])
        self._path_map = sorted(((r.rstrip("/"), l.rstrip("/")) for r, l in mapping.items()),
                                key=lambda pair: -len(pair[0]))
        for root in request.extra.get("outDirs") or []:
            self._generated.add_root(str(root))
        self._generated.add_root(os.getcwd())
        await self._connect(ws_url)
        await self._start(configure)

    async def _attach_followed_child(self: LaunchingHost, request: AttachRequest,
                                     configure: Configure) -> None:
        """A child process of a launched program, waiting for us in
        follow_children.js: its inspector's URL came through the announcement
        (it is published on stderr only, never on http://…/json/list)."""
        self._followed = True
        # Its own children announce themselves to the root's session, whose
        # environment they inherit.
        self.follows_children = True
        pid = request.extra.get("processId")
        self.debuggee_pid = pid if isinstance(pid, int) else None
        self._inspector_at = f"{request.host}:{request.port}"
        self._generated.add_root(os.getcwd())
        await self._connect(str(request.extra["wsUrl"]))
        await self._start(configure)

    def _on_child_announced(self: LaunchingHost, info: dict[str, Any]) -> None:
        url, pid = info.get("url"), info.get("pid")
        match = re.match(r"ws://([\d.]+):(\d+)/", str(url or ""))
        if not match or not isinstance(pid, int):
            return
        ppid = info.get("ppid")
        argv = [str(a) for a in info.get("argv") or []][:20]
        program = " ".join(os.path.basename(a) if n == 0 else a for n, a in enumerate(argv))
        self.emit(ChildProcessEvent(
            pid=pid, parent_pid=ppid if isinstance(ppid, int) else None,
            name=program[:200],
            attach=AttachRequest(host=match.group(1), port=int(match.group(2)),
                                 program=program[:200] or None,
                                 extra={"followedChild": True, "wsUrl": url,
                                        "processId": pid, "stopOnEntry": False})))

    async def _poll_inspector(self: LaunchingHost, host: str, port: int, seconds: float) -> str:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while True:
            try:
                return await discover_websocket_url(host, port, timeout=1.0)
            except DebuggerError:
                if loop.time() > deadline:
                    raise CommandFailed(
                        f"The process did not open an inspector on {host}:{port} after "
                        "SIGUSR1. Is it a Node process? Was it started with another "
                        "--inspect-port? Pass that port."
                    ) from None
                await asyncio.sleep(0.1)

    async def _connect(self: LaunchingHost, ws_url: str) -> None:
        self._worker = asyncio.create_task(self._event_loop())
        self._conn = await CdpConnection.open(ws_url, self._on_event)

    async def _start(self: LaunchingHost, configure: Configure) -> None:
        conn = self._require_conn()
        await conn.request("Runtime.enable")
        await conn.request("Debugger.enable", {"maxScriptsCacheSize": 10_000_000})
        with contextlib.suppress(DebuggerError):  # Node only; absent in other targets
            await conn.request("NodeRuntime.notifyWhenWaitingForDisconnect", {"enabled": True})
        await conn.request("Debugger.setPauseOnExceptions", {"state": self._pause_on_exceptions})
        await configure()
        if self._hold_if_unarmed and not any(self._bps_by_path.values()):
            self._stop_on_entry = True
        await conn.request("Runtime.runIfWaitingForDebugger")

    # ================================================================= end

    async def disconnect(self: LaunchingHost, terminate: bool) -> None:
        if self._finished or self._finish_task is not None:
            await self._await_finish()
            return
        if terminate and self._child is not None:
            self._end_reason = "terminated"
            await self._kill_child()
            self._schedule_finish("terminated")
            await self._await_finish()
            return
        if terminate and self.debuggee_pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self.debuggee_pid, signal.SIGTERM)
        # Detach: let the program run on unhindered. Closing the session makes
        # V8 drop this session's breakpoints and resume.
        if self._conn is not None and not self._conn.is_closed:
            with contextlib.suppress(DebuggerError):
                await self._conn.request("Debugger.setPauseOnExceptions", {"state": "none"}, 2)
            if self._paused is not None:
                with contextlib.suppress(DebuggerError):
                    await self._conn.request("Debugger.resume", timeout=2)
        self._finished = True
        if self._conn is not None:
            await self._conn.close()
        self.emit(TerminatedEvent(reason="detached" if not terminate else "terminated"))

    async def dispose(self: LaunchingHost) -> None:
        self._disposed = True
        if self._children is not None:
            self._children.close()
        try:
            if self._conn is not None:
                await self._conn.close()
        except Exception:  # noqa: BLE001 - dispose never raises
            pass
        try:
            await self._kill_child()
        except Exception:  # noqa: BLE001
            pass
        for task in [self._worker, self._finish_task, *self._pumps]:
            if task is not None and not task.done() and task is not asyncio.current_task():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(task, 1)

    async def _kill_child(self: LaunchingHost) -> None:
        if self._child is not None and self._child.alive:
            await self._child.kill_group(grace=0.5)

    async def _finish(self: LaunchingHost, reason: str) -> None:
        """The program ended (or the inspector went away): close the socket,
        reap node, flush its output, then report exited and terminated once."""
        if self._finished:
            return
        self._finished = True
        if self._children is not None:
            self._children.close()
        if self._conn is not None:
            await self._conn.close()
        exit_code: int | None = None
        if self._child is not None:
            try:
                await asyncio.wait_for(self._child.proc.wait(), EXIT_WAIT)
            except asyncio.TimeoutError:
                await self._kill_child()
            exit_code = self._child.proc.returncode
            for pump in self._pumps:
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(pump), 2)
        self._clear_pause()
        if self._child is not None or reason == "exited":
            self.emit(ExitedEvent(exit_code=exit_code))
        self.emit(TerminatedEvent(reason=reason))

    def _schedule_finish(self: LaunchingHost, reason: str) -> None:
        if self._finish_task is None and not self._finished and not self._disposed:
            self._finish_task = asyncio.get_running_loop().create_task(
                self._finish(self._end_reason or reason)
            )

    async def _await_finish(self: LaunchingHost) -> None:
        if self._finish_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._finish_task), EXIT_WAIT + 5)

    def _on_waiting_for_disconnect(self: LaunchingHost, params: dict[str, Any]) -> None:
        self._schedule_finish("exited")

    def _on_closed(self: LaunchingHost, params: dict[str, Any]) -> None:
        if self._child is not None:
            self._schedule_finish("exited")
        elif self._inspector_at:
            self._schedule_finish(
                f"The Node inspector at {self._inspector_at} closed the connection: the "
                "program ended, or it or the network went away.")
        else:
            self._schedule_finish("inspector closed")

    # ================================================================= output

    async def _pump(self: LaunchingHost, stream: asyncio.StreamReader | None,
                    category: str) -> None:
        if stream is None:
            return
        while True:
            try:
                raw = await stream.readline()
            except (ValueError, asyncio.LimitOverrunError):
                raw = await stream.read(65536)
            if not raw:
                return
            text = raw.decode("utf-8", errors="replace")
            if category == "stderr":
                stripped = text.strip()
                if stripped.startswith(_INSPECTOR_CHATTER):
                    if stripped == _WAITING_FOR_DISCONNECT:
                        self._schedule_finish("exited")
                    continue
                self.stderr_tail.append(text)
            self.emit(OutputEvent(category=category, text=text))

    def _on_console(self: LaunchingHost, params: dict[str, Any]) -> None:
        # A launched program's console already reaches its stdout and stderr,
        # which are captured; events would repeat it, and arrive later. So does a
        # followed child's, through its parent's (or into it, when piped).
        if self._child is not None or self._followed:
            return
        kind = params.get("type", "log")
        category = "stderr" if kind in ("error", "warning", "assert", "trace") else "stdout"
        self.emit(OutputEvent(category=category, text=console_text(params.get("args") or []) + "\n"))

    def _on_exception_thrown(self: LaunchingHost, params: dict[str, Any]) -> None:
        if self._child is not None or self._followed:
            return
        details = params.get("exceptionDetails") or {}
        exception = details.get("exception") or {}
        text = exception.get("description") or details.get("text") or "Uncaught exception"
        self.emit(OutputEvent(category="stderr", text=text + "\n"))


def _as_inspect_brk(arg: str) -> str:
    """--inspect[=addr] and --inspect-wait become --inspect-brk, which waits for
    the debugger and stops before the first line."""
    for flag in ("--inspect-wait", "--inspect"):
        if arg == flag:
            return "--inspect-brk"
        if arg.startswith(flag + "="):
            return "--inspect-brk=" + arg[len(flag) + 1:]
    return arg


_OPTIONS_WITH_VALUE = {"-r", "--require", "--import", "--loader", "--experimental-loader",
                       "--inspect-port", "--title", "--conditions", "-C", "--env-file"}


def _main_script(args: list[str]) -> str | None:
    """The script a node argv runs: the first argument that is not an option."""
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in ("-e", "--eval", "-p", "--print"):
            return None
        if arg in _OPTIONS_WITH_VALUE:
            skip = True
            continue
        if arg.startswith("-"):
            continue
        return arg
    return None


async def _wait_quietly(awaitable: Any, seconds: float) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(awaitable, seconds)
