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
import os
import time
from typing import Any, Callable

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
    Thread,
    ThreadEvent,
)
from ..process import kill_tree
from .client import DapClient, Message
from .profile import AdapterProfile
from .breakpoints import BreakpointsMixin
from .values import ValuesMixin, _location, user_error

__all__ = ["AdapterProfile", "DapBackend", "RUNNING_MESSAGE", "DOUBT_S", "PLACE_WAIT_S",
           "PLACE_UNREAD", "TRACEBACK_LINES", "user_error"]

log = logging.getLogger("backends.dap")

RUNNING_MESSAGE = "The program is running; pause it or wait for it to stop."
#: how long after a continue's answer a thread it let go may still say it stopped
#: (pydevd's stopped threads poll for the go-ahead every 0.2 s)
DOUBT_S = 0.35
#: how long the place of a thread told stopped is waited for (_plain_breakpoint_at):
#: a stopped thread's stack comes in milliseconds; one let go, never
PLACE_WAIT_S = 1.0
#: _plain_breakpoint_at's answer when the thread's place could not be read
PLACE_UNREAD = "place unread"


#: An exception's traceback is kept to its innermost lines (a stop's answer stays short).
TRACEBACK_LINES = 40


class DapBackend(BreakpointsMixin, ValuesMixin, Backend):
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

    def _on_event(self, message: Message, released: bool = False) -> None:
        """Runs on the reader, in stream order: keep the run state exact here,
        translate later on the consumer."""
        event = message.get("event")
        body = message.get("body") or {}
        if event == "stopped" and self._doubtful_stop(message, release=released):
            return
        if (event == "continued" and body.get("threadId") in self._doubtful
                and not body.get("allThreadsContinued", True)):
            # The continue let it go: not a stop to show, but a hit to tell of.
            stopped = self._doubtful.pop(body["threadId"])
            stopped = {**stopped, "body": {**(stopped.get("body") or {}), "letGo": True}}
            self._events.put_nowait(stopped)
            return
        note = self._NOTES.get(str(event))
        if note is not None and note(self, body) is False:
            return  # noted only: not an event for the session
        self._events.put_nowait(message)

    # What each DAP event changes in the run state, as it is read (_on_event).
    # A note that answers False keeps the event from the session.

    def _note_stopped(self, body: Message) -> None:
        self._stop_generation += 1
        self._state = "stopped"
        self._pause_asked = False
        if self.profile.per_thread_stops and not self._others_paused:
            # All-stop, as a person expects: the other threads are paused
            # (their own `pause` stops follow and are shown beside this one).
            self._others_paused = True
            asyncio.get_running_loop().create_task(self._pause_others())
        if body.get("threadId") is not None:
            self._last_stopped_thread = body["threadId"]
            self._stopped_threads.add(body["threadId"])
        if body.get("allThreadsStopped", True):
            self._all_threads_stopped = True
        self._frame_ips.clear()
        if self._stepping and body.get("reason") not in ("step", "goto"):
            self._step_interrupted = True  # a breakpoint (say) came first
        self._stepping = False

    def _note_continued(self, body: Message) -> bool | None:
        if body.get("allThreadsContinued", True) or body.get("threadId") is None:
            self._stopped_threads.clear()
            self._all_threads_stopped = False
        else:
            self._stopped_threads.discard(body["threadId"])
            if self._all_threads_stopped or self._stopped_threads:
                return False  # one thread went on; the program is still stopped
        if self._state == "stopped":
            self._state = "running"
        return None

    def _note_exited(self, body: Message) -> None:
        self._state = "ended"

    def _note_terminated(self, body: Message) -> None:
        self._state = "ended"
        self._adapter_terminated.set()

    def _note_process(self, body: Message) -> None:
        pid = body.get("systemProcessId")
        if isinstance(pid, int):
            self.debuggee_pid = pid
            if self._launched and pid not in self.child_pids:
                self.child_pids.append(pid)
            self._note_adapter_children()

    _NOTES: dict[str, Callable[["DapBackend", Message], bool | None]] = {
        "stopped": _note_stopped, "continued": _note_continued, "exited": _note_exited,
        "terminated": _note_terminated, "process": _note_process,
    }

    def _doubtful_stop(self, message: Message, *, release: bool = False) -> bool:
        """A thread's stop read while a continue is on its way, or just after its
        answer, may name a thread the continue then let go: with per-thread stops
        the adapter resumes every stopped thread, and tells each one's `continued`
        only once that thread wakes (pydevd polls every 0.2 s). Such a stop waits
        until that `continued` drops it or DOUBT_S passes."""
        thread = (message.get("body") or {}).get("threadId")
        if release or not self.profile.per_thread_stops or not isinstance(thread, int):
            return False
        in_window = self._continue_unanswered or (
            time.monotonic() < self._continue_answered_at + DOUBT_S)
        # A thread whose stop we had before the continue went out can only be
        # stopping again: that stop is new (a loop's breakpoint, every round).
        if not in_window or thread in self._stopped_when_continued:
            return False
        body = message.get("body") or {}
        if body.get("reason") == "pause" and self._plain_breakpoints:
            # Where it paused, read while it may still be stopped: paused on a
            # breakpoint's line it is a hit, even if the continue then lets it go.
            message = {**message, "body": {**body, "heldAt": asyncio.get_running_loop().create_task(
                self._plain_breakpoint_at(thread))}}
        self._doubtful[thread] = message
        asyncio.get_running_loop().create_task(self._settle_doubt(thread, message))
        return True

    async def _pause_others(self) -> None:
        with contextlib.suppress(DebuggerError):
            # debugpy's adapter pauses every thread whatever the id; a thread
            # already stopped stays as it is.
            await self._request("pause", {"threadId": self._last_stopped_thread or 0})

    async def _settle_doubt(self, thread: int, message: Message) -> None:
        arrived = time.monotonic()
        while self._doubtful.get(thread) is message:
            settled = not self._continue_unanswered and (
                time.monotonic() >= self._continue_answered_at + DOUBT_S)
            if settled or time.monotonic() > arrived + 2 * DOUBT_S + 0.5:
                del self._doubtful[thread]
                body = message.get("body") or {}
                if body.get("reason") == "pause" and not self._pause_asked:
                    held_at = await self._held_at(body)
                    if held_at is None:
                        return  # our all-stop's pause, overtaken by the continue
                    if held_at == PLACE_UNREAD:
                        self._events.put_nowait(self._unread_pause(thread))
                        return
                self._on_event(message, released=True)
                return
            await asyncio.sleep(0.05)

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

    async def event_stopped(self, body: Message) -> BackendEvent | None:
        reason = str(body.get("reason") or "unknown")
        text = body.get("text")
        traceback = None
        if reason == "exception":
            found, traceback = await self._exception_info(body)
            text = found or text
        hit_ids = list(body.get("hitBreakpointIds") or [])
        if reason == "pause" and self._plain_breakpoints and body.get("threadId") is not None:
            held_at = await self._held_at(body)
            if held_at is None and not body.get("letGo"):
                held_at = await self._plain_breakpoint_at(body["threadId"])
            if held_at == PLACE_UNREAD:
                if body.get("letGo"):
                    return self._unread_pause(body["threadId"])
                held_at = None  # shown stopped: its place is read with its stop
            if held_at is not None:
                # Paused on a breakpoint's line before it ran it: pydevd skips
                # the breakpoints of a thread marked suspended, so this is a
                # hit it would have had, and is reported as one.
                reason, hit_ids = "breakpoint", [held_at]
        return StoppedEvent(
            reason=reason,
            thread_id=body.get("threadId"),
            description=body.get("description"),
            text=text,
            traceback=traceback,
            all_threads_stopped=bool(body.get("allThreadsStopped", True)),
            hit_breakpoint_ids=hit_ids,
            let_go=bool(body.get("letGo")),
        )

    @staticmethod
    def _unread_pause(thread_id: int) -> StoppedEvent:
        """A thread paused by the all-stop as a continue went out, and let go
        before its place was read (pydevd drops a suspended thread's frames once
        it sees the go-ahead): its hit, if it was on a breakpoint's line, went on."""
        return StoppedEvent(reason="pause", thread_id=thread_id, let_go=True, place_unread=True)

    async def event_continued(self, body: Message) -> BackendEvent | None:
        return ContinuedEvent(
            thread_id=body.get("threadId"),
            all_threads_continued=bool(body.get("allThreadsContinued", True)),
        )

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

    async def event_thread(self, body: Message) -> BackendEvent | None:
        reason = body.get("reason")
        if reason in ("started", "exited") and isinstance(body.get("threadId"), int):
            return ThreadEvent(thread_id=body["threadId"], reason=reason)
        return None

    @staticmethod
    async def _held_at(body: Message) -> int | str | None:
        """The breakpoint on whose line a doubtful pause stop was read, if any."""
        task = body.get("heldAt")
        if not isinstance(task, asyncio.Task):
            return None
        with contextlib.suppress(Exception):
            return await asyncio.wait_for(asyncio.shield(task), 10.0)
        return None

    async def _plain_breakpoint_at(self, thread_id: int) -> int | str | None:
        """The plain breakpoint on whose line a thread just told stopped sits.
        Asked whatever the program's state: a pause stop read as a continue went
        out names a thread that may already be let go (its hit lost unless its
        place is read now; pydevd answers from a suspended thread's frames until
        it sees the go-ahead, which it polls for every 0.2 s). One let go before
        the question is never answered: bounded (PLACE_WAIT_S)."""
        try:
            body = await self._request("stackTrace", {
                "threadId": thread_id, "startFrame": 0, "levels": 1}, timeout=PLACE_WAIT_S)
        except DebuggerError:
            return PLACE_UNREAD
        frames = body.get("stackFrames") or []
        place = _location(frames[0]) if frames else None
        if place is None or not place.path:
            return None
        lines = self._plain_breakpoints.get(os.path.abspath(place.path)) or {}
        return lines.get(place.line)

    async def _exception_info(self, stopped: Message) -> tuple[str | None, str | None]:
        """What was thrown (one line) and its traceback, when the adapter says."""
        thread_id = stopped.get("threadId")
        if not self.adapter_capabilities.get("supportsExceptionInfoRequest") or thread_id is None:
            return None, None
        try:
            info = await self._client().request(
                "exceptionInfo", {"threadId": thread_id}, timeout=5.0
            )
        except DebuggerError as exc:
            log.info("exceptionInfo failed: %s", exc)
            return None, None
        details = info.get("details") or {}
        trace = str(details.get("stackTrace") or "").rstrip() if isinstance(details, dict) else ""
        lines = trace.splitlines()
        if len(lines) > TRACEBACK_LINES:
            # A RecursionError's is thousands of lines; the innermost ones say where.
            trace = "\n".join([f"… {len(lines) - TRACEBACK_LINES} lines before", *lines[-TRACEBACK_LINES:]])
        return self.profile.exception_text(info, stopped), trace or None

    # ================================================================ run control

    def running(self) -> bool:
        return self._state == "running"

    async def continue_(self, thread_id: int | None) -> None:
        self._require_stopped(action="continue")
        thread = thread_id if thread_id is not None else await self._default_thread()
        await self._resume("continue", {"threadId": thread}, thread)

    async def step_over(self, thread_id: int) -> None:
        self._require_stopped(action="step")
        await self._resume("next", {"threadId": thread_id}, thread_id)

    async def step_in(self, thread_id: int) -> None:
        self._require_stopped(action="step")
        await self._resume("stepIn", {"threadId": thread_id}, thread_id)

    async def step_out(self, thread_id: int) -> None:
        self._require_stopped(action="step")
        await self._resume("stepOut", {"threadId": thread_id}, thread_id)

    async def pause(self, thread_id: int | None) -> None:
        self._require_session()
        if self._state == "stopped":
            return
        thread = thread_id if thread_id is not None else await self._default_thread()
        self._pause_asked = True
        await self._request("pause", {"threadId": thread})

    async def _resume(self, command: str, arguments: dict[str, Any], thread_id: int) -> None:
        if self._step_interrupted:
            self._step_interrupted = False
            if self.profile.repl_is_command_language:
                # LLDB keeps a step that a breakpoint interrupted and finishes it at a
                # later continue: F5 after a breakpoint hit during a step-out stopped
                # with "step" where the function returned. Drop it, as gdb does.
                with contextlib.suppress(DebuggerError):
                    await self._evaluate("`thread plan discard 1", None, "repl",
                                         self.profile.request_timeout)
        self._stepping = command in ("next", "stepIn", "stepOut")
        generation = self._stop_generation
        continuing = command == "continue"
        if continuing:
            self._stopped_when_continued = set(self._stopped_threads)
        self._resume_unanswered += 1
        self._continue_unanswered += continuing
        try:
            body = await self._request(command, arguments)
        finally:
            self._resume_unanswered -= 1
            if continuing:
                self._continue_unanswered -= 1
                self._continue_answered_at = time.monotonic()
        if self._stop_generation != generation or self._state == "ended":
            return  # it already stopped again, or ended; that was reported
        self._stopped_threads.clear()
        self._all_threads_stopped = False
        if continuing:
            self._others_paused = False
        if self._state == "stopped":
            self._state = "running"
        self._events.put_nowait(
            ContinuedEvent(
                thread_id=thread_id,
                all_threads_continued=bool(body.get("allThreadsContinued", True)),
            )
        )

    async def _default_thread(self) -> int:
        if self._last_stopped_thread is not None:
            return self._last_stopped_thread
        threads = await self.threads()
        if not threads:
            raise InvalidInput("The program has no threads yet; wait for it to start.")
        return threads[0].id

    # ================================================================ inspection

    async def threads(self) -> list[Thread]:
        self._require_session()
        body = await self._request("threads")
        threads = [
            Thread(id=t["id"], name=str(t.get("name") or ""))
            for t in body.get("threads") or []
            if isinstance(t.get("id"), int)
        ]
        for thread in threads:
            if self._state == "running":
                thread.stopped = False
            elif self._state == "stopped":
                thread.stopped = self._all_threads_stopped or thread.id in self._stopped_threads
        return threads

    async def send_input(self, text: str, eof: bool = False) -> None:
        if self.client is None or not self.capabilities.program_input:
            await super().send_input(text, eof)
        if not await self.client.write_input(text.encode("utf-8"), eof):
            raise InvalidInput("The program's input is closed: it was launched without an "
                               "input to type into, or end of input was already sent.")

    async def goto(self, thread_id: int, path: str, line: int) -> None:
        if not self.capabilities.goto:
            raise NotSupported(
                f"This {self.profile.name} cannot jump to a line: it offers no gotoTargets "
                "(debugpy and lldb-dap 21 or newer do). Run to the line instead (until)."
            )
        self._require_stopped(action="jump")
        body = await self._request("gotoTargets", {"source": {"path": path}, "line": line})
        targets = [t for t in body.get("targets") or [] if isinstance(t, dict) and "id" in t]
        if not targets:
            raise InvalidInput(
                f"{self.profile.name} cannot jump to {os.path.basename(path)}:{line}: no statement "
                "there it can move to (a blank line, a comment, or another function's code?)."
            )
        try:
            await self._resume("goto", {"threadId": thread_id, "targetId": targets[0]["id"]}, thread_id)
        except CommandFailed as exc:
            raise CommandFailed(f"Could not jump to {os.path.basename(path)}:{line}: "
                                f"{exc.message.strip()}", **exc.details) from exc

    async def step_instruction(self, thread_id: int, over: bool) -> None:
        if not self.capabilities.instruction_step:
            return await super().step_instruction(thread_id, over)
        self._require_stopped(action="step")
        await self._resume("next" if over else "stepIn",
                           {"threadId": thread_id, "granularity": "instruction"}, thread_id)

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
