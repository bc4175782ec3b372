"""An LldbCliBackend's start and end: launch, attach (pid, process name,
gdb-remote server), open a core; disconnect (kill or detach) and dispose; the
launched program's pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil

from ..base import Configure
from ..errors import CommandFailed, DebuggerError, InvalidInput
from ..models import AttachRequest, ExitedEvent, LaunchRequest
from ..process import kill_tree, pid_alive
from .host import LldbHost
from .lldb_process import _encode
from .protocol import lldb_quote, lldb_text, sanitize

EXIT_STATUS_RE = re.compile(r"exited with status = (-?\d+)")


class LifecycleMixin:
    #: Backend's; declared again because this mixin sets it and comes before
    #: Backend in LldbCliBackend's bases (else a type checker reads it as int,
    #: and the class no longer is the LldbHost its mixins ask for)
    debuggee_pid: int | None

    async def launch(self: LldbHost, request: LaunchRequest, configure: Configure) -> None:
        cwd = request.cwd or os.getcwd()
        program = os.path.abspath(os.path.join(cwd, request.program))
        if not os.path.isfile(program):
            raise InvalidInput(f"No program at {program}; check the path, and build it first.")
        if not os.access(program, os.X_OK):
            raise InvalidInput(f"{program} is not executable; build it, or chmod +x it.")
        if not os.path.isdir(cwd):
            raise InvalidInput(f"The working directory {cwd} does not exist.")
        if request.stdin is not None:
            from ..dap.profile import stdin_path

            lldb_text(stdin_path(request), "stdin file name")
        if request.core_file:
            return await self._open_core(program, os.path.join(cwd, request.core_file),
                                         cwd, configure)
        try:
            # The program inherits lldb's working directory (lldb-server's, in fact),
            # which avoids quoting a path into `process launch -w`.
            await self._start(cwd)
            await self._create_target(program)
            await self._helper(
                "configure_launch", _encode({"args": request.args, "env": request.env})
            )
            self._stop_on_entry = request.stop_on_entry
            if request.stdin is not None:
                from ..dap.profile import stdin_path

                await self._channel.run(
                    [f"settings set target.input-path "
                     f"{lldb_quote(stdin_path(request), 'stdin file name')}"],
                    self.command_timeout)
            await configure()
            command = "process launch" + (" --stop-at-entry" if request.stop_on_entry else "")
            await self._begin_run(command, announce=False)
            self._pid_task = asyncio.create_task(self._find_launched_pid(program))
        except BaseException:
            await self.dispose()
            raise

    async def _open_core(
        self: LldbHost, program: str, core: str, cwd: str, configure: Configure
    ) -> None:
        """Post-mortem: the program as it was when the core was written."""
        core = os.path.abspath(core)
        if not os.path.isfile(core):
            raise InvalidInput(f"There is no core file at {core}. Check the path.")
        self._attached = True  # nothing of ours runs: never kill a pid it names
        self.post_mortem = True
        try:
            await self._start(cwd)
            await self._create_target(program, core=core)
            info = await self._helper("stop_info")
            if info.get("state") != "stopped":
                raise CommandFailed(f"lldb opened {core} but found no stopped threads in it.")
            self._stop_id = info.get("stop_id")
            self._state = "stopped"
            self._first_stop = False
            self._remember_threads(info)
            await configure()
            self._report_stopped(info)
        except BaseException:
            await self.dispose()
            raise

    async def attach(self: LldbHost, request: AttachRequest, configure: Configure) -> None:
        if request.pid is None and not request.wait_for and request.port is None:
            raise InvalidInput(
                "lldb attaches to a process id, waits for a process name, or connects to "
                "a gdb-remote server; pass a PID, wait_for, or HOST:PORT."
            )
        wait_timeout = float(request.extra.get("timeout", 60.0))
        # What reaches lldb's stdin as text, checked before lldb starts (the rest
        # travels as base64 JSON to the helper, which uses the SB API).
        if request.wait_for:
            lldb_text(request.wait_for, "process name to wait for")
        for remote, local in request.path_map.items():
            lldb_text(remote, "path map key")
            lldb_text(local, "path map value")
        self._attached = True
        try:
            await self._start(os.getcwd())
            if request.program:
                await self._create_target(os.path.abspath(request.program),
                                          path_map=request.path_map)
            elif request.path_map:
                for remote, local in request.path_map.items():
                    await self._run("settings append target.source-map "
                                    f"{lldb_quote(remote, 'path map key')} "
                                    f"{lldb_quote(local, 'path map value')}",
                                    self.command_timeout)
            if request.pid is None and request.port is not None:
                host = request.host or "127.0.0.1"
                if not re.fullmatch(r"[A-Za-z0-9.:\[\]_-]+", host):
                    raise InvalidInput(f"{host!r} is not a host name or address.")
                command = f"gdb-remote {host}:{int(request.port)}"
                self._remote = f"{host}:{int(request.port)}"
                timeout = wait_timeout if "timeout" in request.extra else self.command_timeout
            elif request.pid is not None:
                command = f"process attach --pid {int(request.pid)}"
                timeout = self.command_timeout
            else:
                command = ("process attach --name "
                           f"{lldb_quote(request.wait_for or '', 'process name to wait for')}"
                           " --waitfor")
                timeout = wait_timeout
            output = await self._run(command, timeout)
            info = await self._helper("stop_info")
            if info.get("state") != "stopped":
                said = sanitize(output).removeprefix("error: ") or "no reason given"
                if request.pid is None and request.port is not None:
                    raise CommandFailed(
                        f"lldb could not connect to the gdb-remote server at "
                        f"{request.host or '127.0.0.1'}:{request.port}: {said}. Check that "
                        "`lldb-server gdbserver *:PORT -- PROGRAM` listens "
                        "there and that this host can reach it.",
                        lldb_output=sanitize(output),
                    )
                raise CommandFailed(
                    f"lldb could not attach: {said}. "
                    "Check the pid, and that ptrace is allowed "
                    "(/proc/sys/kernel/yama/ptrace_scope must be 0, or run as root).",
                    lldb_output=sanitize(output),
                )
            self.debuggee_pid = int(info["pid"])
            self._stop_id = info.get("stop_id")
            self._state = "stopped"
            self._first_stop = False
            self._remember_threads(info)
            await configure()
            self._note_breakpoints(info)
            remote = request.pid is None and request.port is not None
            if request.extra.get("stopOnEntry", remote):
                # A gdb-remote server holds its program before the first instruction;
                # it stays there (as with gdb's `target remote`) so that breakpoints
                # can be set before it runs.
                self._report_stopped(info, reason_override="entry")
            else:
                await self._begin_run("process continue", announce=False)
        except BaseException:
            await self.dispose()
            raise

    async def _create_target(self: LldbHost, program: str, core: str | None = None,
                             path_map: dict[str, str] | None = None) -> None:
        try:
            await self._helper("create_target", _encode(
                {"program": program, "core": core, "path_map": path_map or {}}))
        except CommandFailed as exc:
            if core and "core file" in exc.message:
                raise InvalidInput(exc.message + " Is it a core of this program?",
                                   program=program, core=core) from None
            raise InvalidInput(
                f"lldb cannot debug {program}: {exc.message.removeprefix('error: ')}. "
                "Give a compiled program (built with -g for source lines).",
                program=program,
            ) from None

    async def disconnect(self: LldbHost, terminate: bool) -> None:
        if self._channel is None or not self._channel.alive:
            return
        try:
            if self._state == "running":
                await self._interrupt_quietly()
            if self.post_mortem:
                self._state = "detached"
            if self._state == "stopped":
                if terminate:
                    output = await self._run("process kill", self.command_timeout)
                    self._flush_output()
                    self._state = "exited"
                    # lldb forgets the process once killed; its last words hold the status.
                    status = EXIT_STATUS_RE.search(output)
                    self.emit(ExitedEvent(exit_code=int(status.group(1)) if status else None))
                else:
                    await self._run("process detach", self.command_timeout)
                    self._state = "detached"
            self._emit_terminated("detached" if not terminate else "terminated")
            with contextlib.suppress(DebuggerError):
                self._channel.send(["quit"])
            if self._child is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._child.proc.wait(), 3.0)
        except DebuggerError:
            # The caller ends with dispose(), which ends lldb and everything under it.
            pass

    async def dispose(self: LldbHost) -> None:
        self._disposing = True
        try:
            for task in (self._run_task, self._tail_task, self._pid_task, self._pause_task):
                if task is not None and not task.done():
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task
            if self._interrupt_fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._interrupt_fd)
                self._interrupt_fd = None
            if self._child is not None:
                with contextlib.suppress(Exception):
                    await kill_tree(self._child.pid)
                with contextlib.suppress(Exception):
                    await self._child.kill_group()
            if self.debuggee_pid and not self._attached and pid_alive(self.debuggee_pid):
                with contextlib.suppress(Exception):
                    await kill_tree(self.debuggee_pid)
            if self._channel is not None:
                with contextlib.suppress(Exception):
                    await self._channel.close()
            if self._pipes is not None:
                self._pipes.close()
                self._pipes = None
            if self._workdir:
                shutil.rmtree(self._workdir, ignore_errors=True)
                self._workdir = None
        except Exception:  # noqa: BLE001 - dispose never raises
            pass

    def _note_pid(self: LldbHost, pid: int) -> None:
        self.debuggee_pid = pid
        if not self._attached and pid not in self.child_pids:
            self.child_pids.append(pid)

    async def _find_launched_pid(self: LldbHost, program: str) -> None:
        """The pid of a launched program before its first stop (lldb reports it
        only then); Linux /proc only, best effort."""
        from ..process import descendants

        real = os.path.realpath(program)
        for _ in range(100):
            if self.debuggee_pid or self._child is None:
                return
            for pid in descendants(self._child.pid):
                with contextlib.suppress(OSError):
                    if os.path.realpath(f"/proc/{pid}/exe") == real:
                        self._note_pid(pid)
                        return
            await asyncio.sleep(0.05)
