"""The generic DAP backend: one Backend over any debug adapter.

What differs between adapters (how to start one, how to word launch and attach
arguments, quirks) lives in an `AdapterProfile` (profile.py); everything else
is here, including the start-up order DAP requires, written once in
`_start_session`:

    initialize -> launch|attach sent -> 'initialized' event -> configure()
    -> configurationDone -> launch|attach response

Events are translated on one consumer task, in the order the adapter sent
them, so a stop whose exception text needs an extra request cannot overtake
the output or continue that came before or after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from ..base import Backend, Configure, EventSink
from ..errors import (
    BackendDied,
    CommandFailed,
    DebuggerError,
    InvalidInput,
    NotSupported,
    Timeout,
)
from ..models import (
    AttachRequest,
    BackendEvent,
    Capabilities,
    ContinuedEvent,
    ExceptionFilter,
    ExitedEvent,
    LaunchRequest,
    OutputEvent,
    StoppedEvent,
    TerminatedEvent,
)
from ..process import kill_tree
from .breakpoints import BreakpointsMixin
from .client import DapClient, Message
from .profile import AdapterProfile
from .stops import DOUBT_S, PLACE_UNREAD, PLACE_WAIT_S, TRACEBACK_LINES, StopsMixin
from .values import ValuesMixin, user_error

__all__ = ["AdapterProfile", "DapBackend", "RUNNING_MESSAGE", "DOUBT_S", "PLACE_WAIT_S",
           "PLACE_UNREAD", "TRACEBACK_LINES", "user_error"]

log = logging.getLogger("backends.dap")

RUNNING_MESSAGE = "The program is running; pause it or wait for it to stop."


class DapBackend(BreakpointsMixin, StopsMixin, ValuesMixin, Backend):
    """A Backend over a DAP adapter. Subclasses name their profile."""

    name = "dap"
    profile_class: type[AdapterProfile] = AdapterProfile

    def __init__(self, emit: EventSink, *, profile: AdapterProfile | None = None) -> None:
        super().__init__(emit)
        self.profile = profile or self.profile_class(self)
        self.follows_children = self.profile.follows_children
        self.remote_attach_stops = self.profile.remote_attach_stops
        self.client: DapClient | None = None
        self._inspection_lock = asyncio.Lock()
        #: the initialize response, as the adapter sent it
        self.adapter_capabilities: dict[str, Any] = {}
        self._state = "idle"  # idle, starting, configuring, running, stopped, ended
        self._launched = False
        self._adapter_children: list[tuple[int, int]] = []
        self._orphan_killer: asyncio.Task[None] | None = None
        self._stop_generation = 0
        self._last_stopped_thread: int | None = None
        # Which threads are stopped, for adapters that stop threads one at a time
        # (debugpy without stopAllThreadsOnSuspend): a late `continued` of one
        # thread must not make the program look running while another is stopped.
        self._stopped_threads: set[int] = set()
        self._all_threads_stopped = False
        #: a continue or step has been sent and not answered (see disconnect)
        self._resume_unanswered = 0
        self._continue_unanswered = 0
        self._stopped_when_continued: set[int] = set()
        self._continue_answered_at = 0.0
        # Stops read while a continue was on its way (see _doubtful_stop)
        self._doubtful: dict[int, Message] = {}
        #: path -> {line: backend id} of breakpoints without condition or log message
        self._plain_breakpoints: dict[str, dict[int, int | str]] = {}
        # All-stop over per-thread stops: the others are paused once per stop
        self._others_paused = False
        self._pause_asked = False  # someone asked for a pause (not our all-stop)
        self._exception_filters_sent = False
        self._disposed = False
        self._terminated_emitted = False
        self._running_reported = False
        self._frame_ips: dict[int, str] = {}
        #: a step was asked for and has not stopped yet / stopped for another reason
        self._stepping = False
        self._step_interrupted = False
        self._adapter_terminated = asyncio.Event()
        #: HOST:PORT of a remote server this backend attached to
        self._remote_target: str | None = None
        self._events: asyncio.Queue[Message | BackendEvent | None] = asyncio.Queue()
        self._consumer: asyncio.Task[None] | None = None

    # ================================================================ start / end

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

    # ================================================================ events

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

    async def _consume_events(self) -> None:
        while True:
            item = await self._events.get()
            try:
                if item is None:
                    return
                event = item if not isinstance(item, dict) else await self._translate(item)
                if event is not None:
                    self._publish(event)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("%s backend: translating an event failed", self.profile.name)
            finally:
                self._events.task_done()

    def _publish(self, event: BackendEvent) -> None:
        if isinstance(event, TerminatedEvent):
            if self._terminated_emitted:
                return
            self._terminated_emitted = True
        elif isinstance(event, ContinuedEvent):
            if self._running_reported:
                return  # our own continue and the adapter's say the same thing
            self._running_reported = True
        elif isinstance(event, StoppedEvent):
            self._running_reported = False
        try:
            self.emit(event)
        except Exception:
            log.exception("%s backend: event sink failed", self.profile.name)

    async def _drain_events(self, timeout: float) -> None:
        if self._consumer is None or self._consumer.done():
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._events.join(), timeout)

    async def _translate(self, message: Message) -> BackendEvent | None:
        """The session's event for a DAP event, by the event's name (nvim-dap's
        `event_<name>`); None: nothing the session needs to hear."""
        handler = getattr(self, f"event_{message.get('event')}", None)
        if handler is None:
            return None
        return await handler(message.get("body") or {})

    async def event_output(self, body: Message) -> BackendEvent | None:
        category = str(body.get("category") or "console")
        output = body.get("output")
        if category == "telemetry" or not output:
            return None
        return OutputEvent(category=category, text=str(output))

    async def event_exited(self, body: Message) -> BackendEvent | None:
        code = body.get("exitCode")
        return ExitedEvent(exit_code=code if isinstance(code, int) else None)

    async def event_terminated(self, body: Message) -> BackendEvent | None:
        return TerminatedEvent(reason="the program ended")

    # ================================================================ inspection

    async def send_input(self, text: str, eof: bool = False) -> None:
        if self.client is None or not self.capabilities.program_input:
            await super().send_input(text, eof)
        if not await self.client.write_input(text.encode("utf-8"), eof):
            raise InvalidInput("The program's input is closed: it was launched without an "
                               "input to type into, or end of input was already sent.")

    @property
    def stop_ids_carry_over(self) -> bool:  # type: ignore[override]
        """Backend.stop_ids_carry_over: the adapter's, where a stop's reads may go
        out together (not one at a time: the launch may lift that, debugpy)."""
        return self.profile.stop_ids_carry_over and not self.profile.inspect_one_at_a_time

    # ================================================================ helpers

    def _client(self) -> DapClient:
        if self.client is None:
            raise InvalidInput("No program is being debugged; launch or attach first.")
        return self.client

    async def _request(
        self, command: str, arguments: dict[str, Any] | None = None, timeout: float | None = None
    ) -> Message:
        client = self._client()
        try:
            if self.profile.inspect_one_at_a_time and command in _INSPECTION:
                async with self._inspection_lock:
                    return await client.request(command, arguments, timeout=timeout)
            return await client.request(command, arguments, timeout=timeout)
        except CommandFailed as exc:
            if self._state == "running" and command in _NEEDS_STOP:
                raise InvalidInput(RUNNING_MESSAGE) from exc
            raise

    def _require_idle(self) -> None:
        if self._state != "idle" or self._disposed:
            raise InvalidInput(
                f"This {self.profile.name} backend already ran a session; create a new one."
            )

    def _require_session(self) -> None:
        if self._state in ("idle", "starting") and self.client is None:
            raise InvalidInput("No program is being debugged; launch or attach first.")
        if self._state == "ended" or self._disposed:
            raise InvalidInput("The program has ended; start it again to debug it.")

    def _require_stopped(self, action: str | None = None) -> None:
        self._require_session()
        if self._state == "stopped":
            return
        if action is not None and self._state == "running":
            raise InvalidInput(
                f"The program is already running; pause it before you {action}."
            )
        if self._state == "running":
            raise InvalidInput(RUNNING_MESSAGE)
        raise InvalidInput("The program has not started yet; wait for it to stop.")


#: requests the adapter answers from the stopped thread (see inspect_one_at_a_time)
_INSPECTION = {"stackTrace", "scopes", "variables", "evaluate", "setVariable", "setExpression",
               "completions", "exceptionInfo"}
_NEEDS_STOP = {"stackTrace", "scopes", "variables", "evaluate", "next", "stepIn", "stepOut",
               "continue", "disassemble", "readMemory", "dataBreakpointInfo"}
