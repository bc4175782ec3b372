"""The DAP backend's launch and attach: the adapter process, the start-up
order DAP requires, written once in `_start_session`:

    initialize -> launch|attach sent -> 'initialized' event -> configure()
    -> configurationDone -> launch|attach response

the adapter's capabilities, what runs below it, and the end (disconnect,
dispose, an adapter that went away).

A mixin of DapBackend (backend.py), typed through DapHost (host.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from ..base import Configure
from ..errors import BackendDied, CommandFailed, DebuggerError, InvalidInput, NotSupported, Timeout
from ..models import (
    AttachRequest,
    Capabilities,
    ExceptionFilter,
    LaunchRequest,
    OutputEvent,
    TerminatedEvent,
)
from ..process import kill_tree
from .client import Message

if TYPE_CHECKING:
    from .host import DapHost as _Host
else:
    _Host = object  # the protocol types the mixin for a checker only

log = logging.getLogger("backends.dap")


class LaunchingMixin(_Host):
    """Starting the adapter and its session, and ending them."""

    # ------------------------------------------------ the start

    async def launch(self, request: LaunchRequest, configure: Configure) -> None:
        self._require_idle()
        if request.core_file and not self.profile.core_files:
            raise NotSupported(
                f"The {self.profile.name} adapter cannot open core dumps; use lldb-dap or "
                "lldb-cli (C, C++, Rust, Swift) or dlv (Go).", adapter=self.profile.name)
        self._launched = True
        arguments = self.profile.launch_arguments(request)
        await self._start_session("launch", request, arguments, configure, request.program)

    async def attach(self, request: AttachRequest, configure: Configure) -> None:
        self._require_idle()
        if request.pid is None and request.port is not None and not self.profile.attach_remote:
            raise NotSupported(
                f"The {self.profile.name} adapter cannot attach to HOST:PORT; remote servers "
                "are reached with lldb-dap or lldb-cli (gdb-remote), dlv, debugpy or node.",
                adapter=self.profile.name)
        self._launched = False
        if request.pid is None and request.port is not None:
            self._remote_target = f"{request.host or '127.0.0.1'}:{request.port}"
        if request.pid is not None:
            self.debuggee_pid = request.pid
        arguments = self.profile.attach_arguments(request)
        if request.pid is not None:
            target = f"process {request.pid}"
        elif request.wait_for:
            target = f"the next process named {request.wait_for!r}"
        else:
            target = f"{request.host}:{request.port}"
        await self._start_session("attach", request, arguments, configure, target)

    async def _start_session(
        self,
        kind: str,
        request: LaunchRequest | AttachRequest,
        arguments: dict[str, Any],
        configure: Configure,
        target: str,
    ) -> None:
        """The one place that orders DAP's start-up handshake."""
        self._state = "starting"
        loop = asyncio.get_running_loop()
        self._consumer = asyncio.ensure_future(self._consume_events())
        try:
            client = await self.profile.start_adapter(request)
            self.client = client
            if isinstance(request, LaunchRequest):
                client.terminal_stdin = request.stdin
            if client.process is not None:
                self.child_pids.append(client.process.pid)
            initialized: asyncio.Future[None] = loop.create_future()
            client.on(
                "initialized",
                lambda _m: initialized.done() or initialized.set_result(None),
            )
            client.on_any(self._on_event)
            client.on_close(self._on_adapter_closed)
            if self.profile.follows_children:
                client.on_request("startDebugging", self._start_debugging)

            body = await client.request(
                "initialize", self.profile.initialize_arguments(),
                timeout=self.profile.request_timeout,
            )
            self._apply_capabilities(body)

            failed: asyncio.Future[str] = loop.create_future()
            failure = self.profile.start_failure(kind, arguments)
            unwatch = None
            if failure is not None:
                def watch(message: Message) -> None:
                    reason = failure(message)
                    if reason and not failed.done():
                        failed.set_result(reason)

                unwatch = client.on("output", watch)
            started = client.send_request(kind, arguments, timeout=self.profile.start_timeout)
            try:
                await self._wait_initialized(initialized, started, kind, target, failed)
            finally:
                if unwatch is not None:
                    unwatch()

            self._state = "configuring"
            await configure()
            if not self._exception_filters_sent and self.capabilities.exception_filters:
                await self.set_exception_filters(
                    [f.id for f in self.capabilities.exception_filters if f.default]
                )
            if self.adapter_capabilities.get("supportsConfigurationDoneRequest"):
                await client.request("configurationDone")
            try:
                await started
            except CommandFailed as exc:
                raise CommandFailed(
                    f"The {self.profile.name} adapter could not {kind} {target}: {exc.message}",
                    **exc.details,
                ) from exc
            if self._state == "configuring":
                self._state = "running"
            self._note_adapter_children()
        except BaseException:
            await self.dispose()
            raise

    def _note_adapter_children(self) -> None:
        """Remember what runs below the adapter (the program, a launcher): an
        adapter that dies (dlv, SIGKILLed) leaves them running untraced, and by
        then they are no longer below it."""
        from ..process import descendants, start_time

        if not self._launched or self.client is None or self.client.process is None:
            return
        for pid in descendants(self.client.process.pid):
            stamp = start_time(pid)
            if stamp is not None and (pid, stamp) not in self._adapter_children:
                self._adapter_children.append((pid, stamp))

    async def _end_orphans(self) -> None:
        from ..process import start_time

        if self.debuggee_pid is not None:
            await kill_tree(self.debuggee_pid, grace=0.3)
        for pid, stamp in self._adapter_children:
            if start_time(pid) == stamp:  # the same process, not a reused pid
                await kill_tree(pid, grace=0.3)

    async def _wait_initialized(
        self,
        initialized: asyncio.Future[None],
        started: asyncio.Future[Message],
        kind: str,
        target: str,
        failed: asyncio.Future[str],
    ) -> None:
        waiting: set[asyncio.Future[Any]] = {initialized, started, failed}
        deadline = asyncio.get_running_loop().time() + self.profile.start_timeout
        while not initialized.done():
            remaining = deadline - asyncio.get_running_loop().time()
            done, _ = await asyncio.wait(
                waiting, timeout=max(remaining, 0), return_when=asyncio.FIRST_COMPLETED
            )
            if not done:
                raise Timeout(
                    f"The {self.profile.name} adapter did not get ready to {kind} {target} "
                    f"within {self.profile.start_timeout:g} s.",
                    adapter=self.profile.name,
                )
            if failed in done:
                # The request stays unanswered until the adapter is ended (dispose).
                started.add_done_callback(lambda f: f.cancelled() or f.exception())
                raise CommandFailed(
                    f"The {self.profile.name} adapter could not {kind} {target}: {failed.result()}",
                    adapter=self.profile.name)
            if started in done:
                waiting.discard(started)
                exc = started.exception()
                if isinstance(exc, CommandFailed):
                    raise CommandFailed(
                        f"The {self.profile.name} adapter could not {kind} {target}: "
                        f"{exc.message}",
                        **exc.details,
                    ) from exc
                if exc is not None:
                    raise exc
            if self.client is not None and not self.client.alive:
                raise self.client._death or BackendDied(
                    f"The {self.profile.name} adapter went away during start-up."
                )

    def _apply_capabilities(self, body: Message) -> None:
        self.adapter_capabilities = dict(body)
        profile = self.profile
        filters = []
        for raw in body.get("exceptionBreakpointFilters") or []:
            filter_id = str(raw.get("filter", ""))
            if not filter_id:
                continue
            default = bool(raw.get("default", False))
            if profile.default_exception_filters is not None:
                default = filter_id in profile.default_exception_filters
            filters.append(
                ExceptionFilter(id=filter_id, label=str(raw.get("label") or filter_id),
                                default=default)
            )
        self.capabilities = Capabilities(
            conditional_breakpoints=bool(body.get("supportsConditionalBreakpoints")),
            hit_conditional_breakpoints=bool(body.get("supportsHitConditionalBreakpoints")),
            log_points=bool(body.get("supportsLogPoints")),
            function_breakpoints=bool(body.get("supportsFunctionBreakpoints")),
            pause=True,
            terminate=True,
            restart=False,
            step_back=bool(body.get("supportsStepBack")),
            set_variable=bool(body.get("supportsSetVariable")),
            raw_commands=profile.repl_is_command_language,
            disassemble=bool(body.get("supportsDisassembleRequest")),
            read_memory=bool(body.get("supportsReadMemoryRequest")),
            attach_pid=profile.attach_pid,
            attach_wait_for=profile.attach_wait_for,
            attach_remote=profile.attach_remote,
            instruction_step=bool(body.get("supportsSteppingGranularity")),
            data_breakpoints=bool(body.get("supportsDataBreakpoints")),
            core_files=profile.core_files,
            program_input=profile.program_input,
            completions=bool(body.get("supportsCompletionsRequest")),
            goto=bool(body.get("supportsGotoTargetsRequest")),
            exception_filters=filters,
        )

    # ------------------------------------------------ the end

    async def disconnect(self, terminate: bool) -> None:
        client = self.client
        if client is None or not client.alive:
            return
        arguments = {"restart": False, "terminateDebuggee": terminate}
        if not terminate and self.adapter_capabilities.get("supportSuspendDebuggee"):
            arguments["suspendDebuggee"] = False
        wait = 5.0 if terminate else self.profile.detach_answer_timeout
        if self._resume_unanswered:
            # An adapter that has not answered a continue answers nothing after it
            # (debugpy handles a client's requests one at a time): end it now.
            wait = 0.5
        with contextlib.suppress(DebuggerError):
            await client.request("disconnect", arguments, timeout=wait)
        if terminate:
            # Let the adapter's own exited/terminated through before ours.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._adapter_terminated.wait(), 2.0)
        self._state = "ended"
        self._events.put_nowait(
            TerminatedEvent(reason="terminated" if terminate else "detached")
        )
        await self._drain_events(1.0)

    async def dispose(self) -> None:
        if self._disposed:
            return
        self._disposed = True
        try:
            self._state = "ended"
            if self._launched and self.debuggee_pid is not None:
                with contextlib.suppress(Exception):
                    await kill_tree(self.debuggee_pid, grace=0.3)
            if self.client is not None:
                with contextlib.suppress(Exception):
                    await self.client.close()
            if self._consumer is not None and not self._consumer.done():
                self._consumer.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(self._consumer, 1.0)
        except BaseException as exc:  # dispose never raises, not even on cancel
            log.warning("disposing the %s backend: %r", self.profile.name, exc)

    # ------------------------------------------------ the adapter's own requests and output

    def slow_first_stop_hint(self, program_python: str | None) -> str | None:
        return self.profile.slow_first_stop_hint(program_python)

    def _on_adapter_closed(self, error: BackendDied) -> None:
        self._state = "ended"
        if not self._disposed:
            reason = error.message
            if self._remote_target and self.client is not None and self.client.process is None:
                reason = (f"The connection to the {self.profile.name} server at "
                          f"{self._remote_target} was lost: it went away, or the network did. "
                          "Start it again and attach anew.")
            self._events.put_nowait(TerminatedEvent(reason=reason, adapter_died=True))
            # A program with no debugger left is ended now, not when the host goes.
            if self._launched:
                with contextlib.suppress(RuntimeError):
                    self._orphan_killer = asyncio.get_running_loop().create_task(
                        self._end_orphans())

    async def _start_debugging(self, arguments: Message) -> Message:
        """A child process waits for a session of its own: the session makes one
        (ChildProcessEvent); the adapter only needs to hear that we will."""
        from .client import ReverseRequestRefused
        from ..models import ChildProcessEvent

        configuration = dict(arguments.get("configuration") or {})
        request = self.profile.child_attach(configuration)
        if request is None:
            raise ReverseRequestRefused("This child process cannot be followed.")
        pid = configuration.get("subProcessId")
        self._events.put_nowait(ChildProcessEvent(
            pid=pid if isinstance(pid, int) else None,
            name=str(configuration.get("name") or ""), attach=request))
        return {}

    def _terminal_output(self, category: str, text: str) -> None:
        self._events.put_nowait(OutputEvent(category=category, text=text))

    async def send_input(self, text: str, eof: bool = False) -> None:
        if self.client is None or not self.capabilities.program_input:
            await super().send_input(text, eof)
        if not await self.client.write_input(text.encode("utf-8"), eof):
            raise InvalidInput("The program's input is closed: it was launched without an "
                               "input to type into, or end of input was already sent.")
