"""delve: its adapter profile and backend (the registry's "dlv"). `dlv dap`
listens on TCP; delve's differences from plain DAP are smoothed in
DelveBackend. Everything else is the generic DapBackend.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from typing import Any

from ..errors import BackendDied, DebuggerError, DependencyMissing, InvalidInput, Timeout
from ..models import AttachRequest, LaunchRequest
from ..process import spawn
from .backend import DapBackend
from .client import DapClient
from .profile import AdapterProfile, stdin_path


class DelveProfile(AdapterProfile):
    """`dlv dap` listens on TCP and prints the address it chose; we connect to it."""

    name = "dlv"
    adapter_id = "go"
    attach_pid = True
    attach_remote = True
    # A headless dlv server holds its program stopped until a continue.
    remote_attach_stops = True
    core_files = True
    listen_timeout = 10.0

    def adapter_argv(self) -> list[str]:
        from ..adapters import find_dlv

        path = find_dlv()
        if not path:
            raise DependencyMissing(
                "dlv was not found. Install delve: sudo apt-get install delve, or "
                "go install github.com/go-delve/delve/cmd/dlv@latest",
                adapter=self.name,
            )
        # only our own uid may connect (delve checks the peer in /proc/net/tcp)
        return [path, "dap", "--listen", "127.0.0.1:0", "--only-same-user=true"]

    async def start_adapter(self, request: LaunchRequest | AttachRequest) -> DapClient:
        # `dlv --headless --listen HOST:PORT` (or `dlv dap --listen`) is the adapter.
        listening = await self.listening_adapter(request)
        if listening is not None:
            return listening
        # The program inherits dlv's stdin: the user's file, else end of file
        # (an open pipe would hold a read forever).
        stdin_file = None
        if isinstance(request, LaunchRequest):
            stdin_file = open(stdin_path(request), "rb")  # noqa: SIM115 - closed below
        try:
            process = await spawn(self.adapter_argv(), what="dlv adapter",
                                  stdin=stdin_file.fileno() if stdin_file else subprocess.DEVNULL,
                                  install_hint="Install delve: sudo apt-get install delve")
        finally:
            if stdin_file is not None:
                stdin_file.close()
        assert process.proc.stdout is not None
        try:
            line = await asyncio.wait_for(process.proc.stdout.readline(), self.listen_timeout)
        except asyncio.TimeoutError:
            await process.kill_group()
            raise Timeout(f"dlv did not say where it listens within {self.listen_timeout:g} s.")
        found = re.search(rb"listening at:?\s*\[?([0-9a-fA-F.:]+?)\]?:(\d+)", line)
        if not found:
            stderr = b""
            if process.proc.stderr is not None:
                try:
                    stderr = await asyncio.wait_for(process.proc.stderr.read(4096), 0.5)
                except asyncio.TimeoutError:
                    pass
            await process.kill_group()
            said = (line + stderr).decode(errors="replace").strip()
            if not said:
                code = process.proc.returncode
                said = (f"it exited with code {code} and printed nothing" if code is not None
                        else "it printed nothing")
            raise BackendDied(
                f"dlv did not start its DAP server: {said}. Check that {self.adapter_argv()[0]} "
                "is delve (`dlv version`)."
            )
        host, port = found.group(1).decode(), int(found.group(2))
        return await DapClient.connect_tcp(
            host, port, name=self.name, process=process,
            default_timeout=self.request_timeout,
            run_in_terminal=self.run_in_terminal,
            output_sink=self.backend._terminal_output,
            # The program writes to dlv's stdout and stderr (dlv 1.20 has no
            # outputMode); its stderr, panics included, was read only for dlv's own
            # error reports.
            program_stderr=True,
        )

    def launch_arguments(self, request: LaunchRequest) -> dict[str, Any]:
        program = os.path.abspath(request.program)
        if not os.path.exists(program):
            raise InvalidInput(f"There is no program at {program}. Check the path.")
        if request.core_file:
            core = os.path.abspath(os.path.join(request.cwd or os.getcwd(), request.core_file))
            if not os.path.isfile(core):
                raise InvalidInput(f"There is no core file at {core}. Check the path.")
            return {"mode": "core", "program": program, "coreFilePath": core,
                    "cwd": request.cwd or os.getcwd(), **request.extra}
        # A built binary runs as is; a directory or .go file is built by dlv.
        mode = "exec" if os.path.isfile(program) and not program.endswith(".go") else "debug"
        return {"mode": mode, **super().launch_arguments(request)}

    def attach_arguments(self, request: AttachRequest) -> dict[str, Any]:
        arguments: dict[str, Any]
        if request.pid is not None:
            arguments = {"mode": "local", "processId": request.pid}
        elif request.port is not None:
            # Held where the headless server stopped it, so breakpoints come first.
            arguments = {"mode": "remote", "stopOnEntry": True}
        else:
            raise InvalidInput("Attach with dlv needs the PID of a running Go program, or "
                               "HOST:PORT of `dlv --headless --listen HOST:PORT`.")
        if request.path_map:
            # delve's direction: from the path here to the path the program knows
            arguments["substitutePath"] = [
                {"from": local, "to": remote} for remote, local in request.path_map.items()
            ]
        return {**arguments, **request.extra}


class DelveBackend(DapBackend):
    """delve's DAP server, with what it does differently (measured with dlv 1.20):

    - when the program ends it sends `terminated` and no `exited`; the exit
      status is printed only once the client disconnects. So on that first
      `terminated` we disconnect, and report the status as an ExitedEvent
      before the TerminatedEvent;
    - it sends `terminated` twice (the generic backend reports one);
    - a `continue` answered after the program ended must not read as running;
    - globals are shown (showGlobalVariables) so Go has a Globals scope as C does.
    - goroutines that sit on a breakpoint when it stops, beside the one it
      reports, are stepped past it on the next continue and never reported: at
      each stop we read where the goroutines running on a thread are, and report
      those on a plain breakpoint as held hits (docs/backends.md).
    Goroutines are its threads; the program's stdout is dlv's own stdout, which
    the DAP client forwards as output.
    """

    name = "dlv"
    profile_class = DelveProfile
    exit_status_pattern = re.compile(r"Process \d+ has exited with status (-?\d+)")

    def __init__(self, emit, **options: Any) -> None:
        super().__init__(emit, **options)
        self._disconnect_sent = False
        #: each breakpoint's addresses, as read at the stops delve reported there
        self._breakpoint_pcs: dict[int | str, set[str]] = {}

    async def launch(self, request: LaunchRequest, configure) -> None:
        self.post_mortem = bool(request.core_file)
        extra = {"showGlobalVariables": True, **request.extra}
        await super().launch(request.model_copy(update={"extra": extra}), configure)

    async def disconnect(self, terminate: bool) -> None:
        self._disconnect_sent = True
        await super().disconnect(terminate)

    async def _translate(self, message):
        from ..errors import DebuggerError
        from ..models import ExitedEvent, OutputEvent, TerminatedEvent

        event = message.get("event")
        body = message.get("body") or {}
        if event == "terminated" and not self._disconnect_sent:
            # The program ended by itself. Disconnecting makes dlv print the exit
            # status; that output is translated below, in stream order, after any
            # program output still on its way.
            self._disconnect_sent = True
            try:
                await self._request("disconnect", {"terminateDebuggee": True}, timeout=3.0)
            except DebuggerError:
                return TerminatedEvent(reason="the program ended")
            return None
        if event == "output":
            found = self.exit_status_pattern.search(str(body.get("output") or ""))
            if found:
                self._publish(OutputEvent(category="console", text=str(body["output"])))
                return ExitedEvent(exit_code=int(found.group(1)))
        translated = await super()._translate(message)
        if event == "stopped" and any(self._plain_breakpoints.values()) and translated is not None:
            # Read before the stop is told, so the held hits are beside it
            # before anyone can continue.
            held = await self._goroutines_on_breakpoints(translated)
            if held:
                self._publish(translated)
                for hit in held:
                    self._publish(hit)
                return None
        return translated

    async def _goroutines_on_breakpoints(self, stop) -> list:
        """The other goroutines sitting on a plain breakpoint at this stop, as
        breakpoint stops of their own. delve reports one goroutine's stop and, on
        the next continue, steps every thread whose PC is at a breakpoint past it
        (pkg/proc/native `resume`, `FindBreakpoint` with the PC itself or the PC
        after the trap): those hits would never be told. Only a goroutine running
        on a thread can sit there (`threads` names it "(Thread N)"), so one
        `stackTrace` level each for at most a few goroutines, not every one. A
        goroutine held here is stepped past by that continue, so delve never
        reports the same hit again; a goroutine still on the line but past the
        breakpoint's address (stepped over, now mid-line) is not held. The
        address is the one delve stopped at for that breakpoint; for a
        breakpoint it has not reported yet, the line alone decides."""
        from ..models import StoppedEvent

        try:
            listed = (await self._request("threads")).get("threads") or []
        except DebuggerError:
            return []
        if stop.thread_id is not None and stop.hit_breakpoint_ids:
            top = await self._top_frame(stop.thread_id)
            if top is not None and top.instruction_pointer:
                for bp_id in stop.hit_breakpoint_ids:
                    self._breakpoint_pcs.setdefault(bp_id, set()).add(top.instruction_pointer)
        on_threads = [t["id"] for t in listed if isinstance(t.get("id"), int)
                      and t["id"] != stop.thread_id and "(Thread " in str(t.get("name") or "")]
        tops = await asyncio.gather(*(self._top_frame(g) for g in on_threads))
        held = []
        for goroutine, top in zip(on_threads, tops):
            if top is None or top.location is None or not top.location.path:
                continue
            lines = self._plain_breakpoints.get(os.path.abspath(top.location.path)) or {}
            bp_id = lines.get(top.location.line)
            if bp_id is None:
                continue
            known = self._breakpoint_pcs.get(bp_id)
            if known and top.instruction_pointer not in known:
                continue  # on the line, past the breakpoint: not a hit
            held.append(StoppedEvent(reason="breakpoint", thread_id=goroutine,
                                     all_threads_stopped=True, hit_breakpoint_ids=[bp_id]))
        return held

    async def _top_frame(self, thread_id: int):
        try:
            frames, _ = await self.stack_trace(thread_id, 0, 1)
        except DebuggerError:
            return None
        return frames[0] if frames else None

    def _publish(self, event) -> None:
        from ..models import ContinuedEvent

        if isinstance(event, ContinuedEvent) and self._state == "ended":
            return  # the answer to a continue that the program's end overtook
        super()._publish(event)
