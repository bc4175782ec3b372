"""Run control for an LldbCliBackend: continue, steps, pause and raw commands,
and following each run to its end: the stop, exit or detach it came to,
reported as events.

lldb runs in synchronous mode: a command that runs the program holds the
command channel (and its lock) until the program stops, so `_begin_run` writes
it and returns, and `_follow_run` waits for it in a task and reports.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Awaitable, Callable, TypeVar

from ..errors import DebuggerError, InvalidInput, Timeout
from ..models import ContinuedEvent, ExitedEvent, OutputEvent, StoppedEvent, TerminatedEvent, Thread
from ..procinfo import death_by, signal_number
from .host import LldbHost
from .lldb_process import RUNNING
from .protocol import sanitize

T = TypeVar("T")
LEFT_IN_EXPRESSION = ('The process has been left at the point where it was interrupted, use '
                      '"thread return -x" to return to the state before expression evaluation.')
UNWOUND = "The process has been returned to the state before expression evaluation."


class RunControlMixin:
    async def continue_(self: LldbHost, thread_id: int | None) -> None:
        self._require_stopped()
        await self._begin_run("process continue")

    async def step_over(self: LldbHost, thread_id: int) -> None:
        await self._step("thread step-over", thread_id)

    async def step_in(self: LldbHost, thread_id: int) -> None:
        await self._step("thread step-in", thread_id)

    async def step_out(self: LldbHost, thread_id: int) -> None:
        await self._step("thread step-out", thread_id)

    async def step_instruction(self: LldbHost, thread_id: int, over: bool) -> None:
        await self._step("thread step-inst-over" if over else "thread step-inst", thread_id)

    async def _step(self: LldbHost, command: str, thread_id: int) -> None:
        self._require_stopped()
        await self._begin_run(command, thread_id=thread_id)

    async def pause(self: LldbHost, thread_id: int | None) -> None:
        if self._state != "running":
            return
        self._pause_requested = True
        self._send_interrupt()
        if self._pause_task is None or self._pause_task.done():
            self._pause_task = asyncio.create_task(self._keep_interrupting())

    async def _keep_interrupting(self: LldbHost) -> None:
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await self._await_stop(10.0)

    # ================================================================ raw commands

    async def raw_command(self: LldbHost, command: str, timeout: float) -> str:
        """Any lldb command, as lldb prints it. A command that runs the program
        (continue, next, ...) is followed like continue_(): when it outlasts
        `timeout` the program is reported running and the stop arrives later."""
        channel = self._require_channel()
        if "\n" in command or "\r" in command:
            raise InvalidInput("Give one lldb command per call, on a single line.")
        if self._state == "running":
            raise InvalidInput(RUNNING + " lldb reads commands only while the program is stopped.")
        try:
            await asyncio.wait_for(channel.lock.acquire(), timeout)
        except asyncio.TimeoutError:
            raise Timeout(f"lldb stayed busy for {timeout:g}s; try again.") from None
        released = False
        expression = command.split(None, 1)[0] in ("expression", "dwim-print")
        if expression:
            # As the helper evaluates (run_expression): a fork in the expression must
            # not be taken for a crash and unwound, which wedges the program; and
            # the thread runs alone, since LLDB's halt to resume the other threads
            # (after 250 ms) can meet the expression's crash and resume the thread
            # with its signal, killing the program. An option the caller gives
            # after ours wins.
            first, _, rest = command.partition(" ")
            command = f"{first} --unwind-on-error false --all-threads false {rest}"
        try:
            future = channel.send([command])
            try:
                output = await asyncio.wait_for(asyncio.shield(future), timeout)
            except asyncio.TimeoutError:
                # The command holds lldb until it finishes; often it is running the
                # program (continue), so follow it as a run.
                self._state = "running"
                self.emit(ContinuedEvent())
                self._run_done.clear()
                self._run_task = asyncio.create_task(self._follow_run(future, None))
                released = True
                raise Timeout(
                    f"lldb is still busy with {command!r} after {timeout:g}s; the program "
                    "is probably running. Pause it (pause) or wait for the stop (await).",
                ) from None
            if expression and LEFT_IN_EXPRESSION in output:
                if (await self._helper_locked("unwind_expression")).get("unwound"):
                    output = output.replace(LEFT_IN_EXPRESSION, UNWOUND)
            info = await self._helper_locked("stop_info")
        finally:
            if not released:
                channel.lock.release()
        self._after_raw(info)
        return sanitize(output)

    # ================================================================ runs and stops

    async def _begin_run(
        self: LldbHost, command: str, thread_id: int | None = None, announce: bool = True
    ) -> None:
        """Write a command that runs the program and return; `_follow_run` waits
        for lldb to finish it (the program stopped or exited) and reports that."""
        channel = self._require_channel()
        try:
            await asyncio.wait_for(channel.lock.acquire(), self.command_timeout)
        except asyncio.TimeoutError:
            raise Timeout("lldb stayed busy with an earlier command; try again.") from None
        try:
            if thread_id is not None:
                await self._helper_locked("select_thread", int(thread_id))
            future = channel.send([command])
        except BaseException:
            channel.lock.release()
            raise
        self._state = "running"
        self._pause_requested = False
        self._run_done.clear()
        if announce:
            self.emit(ContinuedEvent(thread_id=thread_id))
        self._run_task = asyncio.create_task(self._follow_run(future, command))

    async def _follow_run(self: LldbHost, future: asyncio.Future[str], command: str | None) -> None:
        """Holds the channel's lock (taken by the caller) until the run ends."""
        channel = self._channel
        assert channel is not None
        info: dict[str, Any] | None = None
        output = ""
        try:
            try:
                output = await future
                info = await self._helper_locked("stop_info")
            finally:
                channel.lock.release()
        except asyncio.CancelledError:
            self._run_done.set()
            raise
        except (DebuggerError, ValueError) as exc:
            message = exc.message if isinstance(exc, DebuggerError) else str(exc)
            self._flush_output()
            self.emit(OutputEvent(category="important", text=f"lldb: {message}\n"))
            if channel.alive:
                # lldb is there but its answer was unreadable: say stopped, so that
                # the person or agent can look (raw commands still work).
                self._state = "stopped"
                self.emit(StoppedEvent(reason="unknown", description=message))
            else:
                self._state = "dead"
                self._emit_terminated("lldb exited")
            self._run_done.set()
            return
        self._flush_output()
        self._report(info, output)
        self._run_done.set()

    def _report(self: LldbHost, info: dict[str, Any], output: str) -> None:
        self._note_breakpoints(info)
        state = info.get("state")
        if info.get("pid"):
            self._note_pid(int(info["pid"]))
        if state == "stopped":
            self._state = "stopped"
            self._stop_id = info.get("stop_id")
            self._last_stop_signal = next(
                (signal_number(t["signal"]) for t in info.get("threads") or []
                 if t.get("reason") and t.get("signal") not in (None, "SIGSTOP")), None)
            self._remember_threads(info)
            if self._quiet_interrupt and not self._real_stop(info):
                self._quiet_stopped = True
                return
            entry = self._first_stop and self._stop_on_entry
            self._report_stopped(info, reason_override="entry" if entry else None)
        elif state == "exited":
            self._state = "exited"
            # "exit code 15" after a stop at SIGTERM was a death by it
            self.emit(ExitedEvent(exit_code=death_by(info.get("exit_code"),
                                                     self._last_stop_signal)))
            self._emit_terminated("the program ended")
        elif state == "lost":
            self._state = "exited"
            text = (f"lldb lost the connection to the gdb-remote server at {self._remote}: "
                    "it went away, or the network did. Start it again and attach anew.")
            self.emit(OutputEvent(category="important", text=text + "\n"))
            self._emit_terminated(text)
        elif state == "running":
            # lldb gave the prompt back while the program runs: only possible if
            # something switched lldb to asynchronous mode.
            self._state = "running"
        else:
            self._state = "detached" if state == "detached" else "exited"
            text = sanitize(output)
            if text:
                self.emit(OutputEvent(category="important", text=text + "\n"))
            self._emit_terminated(state or "ended")
        self._first_stop = False

    def _real_stop(self: LldbHost, info: dict[str, Any]) -> bool:
        """Whether a stop has a cause other than our own interrupt (a breakpoint
        hit at the same moment must still be reported)."""
        for thread in info.get("threads", []):
            reason = thread.get("reason")
            # "step" here is lldb's own single-step past a breakpoint (stop reason
            # "trace"), caught by our interrupt: nobody asked for a step while it ran.
            if reason and reason not in ("step", "pause") and thread.get("signal") != "SIGSTOP":
                return True
        return False

    def _report_stopped(
        self: LldbHost, info: dict[str, Any], reason_override: str | None = None
    ) -> None:
        threads = info.get("threads") or []
        chosen = None
        with_reason = [t for t in threads if t.get("reason")]
        for thread in with_reason:
            if thread["id"] == info.get("selected"):
                chosen = thread
        if chosen is None and with_reason:
            # A breakpoint on another thread says more than our interrupt does.
            real = [t for t in with_reason if t.get("signal") != "SIGSTOP"]
            chosen = (real or with_reason)[0]
        if chosen is None and threads:
            chosen = next((t for t in threads if t["id"] == info.get("selected")), threads[0])
        reason = (chosen or {}).get("reason") or "pause"
        text = (chosen or {}).get("text")
        if self._pause_requested and (
            (chosen or {}).get("signal") == "SIGSTOP" or reason in ("step", "pause")
        ):
            # An interrupt that lands while lldb single-steps internally (past a
            # breakpoint, through the dynamic loader) stops with reason "trace".
            reason, text = "pause", None
        if reason_override:
            reason, text = reason_override, None
        self._pause_requested = False
        self.emit(StoppedEvent(
            reason=reason,
            thread_id=(chosen or {}).get("id"),
            description=(chosen or {}).get("description") or None,
            text=text,
            all_threads_stopped=True,
            hit_breakpoint_ids=list((chosen or {}).get("hit") or []),
        ))

    def _after_raw(self: LldbHost, info: dict[str, Any]) -> None:
        """A raw command may have run, stopped, killed or detached the program."""
        state = info.get("state")
        previous = self._state
        if state == "stopped" and previous == "stopped" and info.get("stop_id") == self._stop_id:
            self._note_breakpoints(info)
            return
        if state in ("none", None) and previous in ("idle", "exited", "detached"):
            return
        if state == "stopped" or previous == "stopped":
            self.emit(ContinuedEvent())
        self._flush_output()
        self._report(info, "")

    async def _interrupt_quietly(self: LldbHost, timeout: float = 10.0) -> None:
        """Stop a running program without telling the front ends (to set a
        breakpoint, or to detach); `_quiet_stopped` says whether to resume."""
        self._quiet_interrupt = True
        self._quiet_stopped = False
        try:
            self._send_interrupt()
            try:
                await self._await_stop(timeout)
            except asyncio.TimeoutError:
                raise Timeout(
                    f"The program did not stop within {timeout:g}s of an interrupt; "
                    "it may be in an uninterruptible system call. Try again, or stop the session.",
                ) from None
        finally:
            self._quiet_interrupt = False

    async def _await_stop(self: LldbHost, timeout: float) -> None:
        """Wait for the run to end, repeating the interrupt: lldb ignores one that
        arrives before it has resumed the program (right after a continue)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        interval = 0.2
        while not self._run_done.is_set():
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise asyncio.TimeoutError
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._run_done.wait(), min(remaining, interval))
            if not self._run_done.is_set():
                self._send_interrupt()
                interval = min(interval * 2, 1.0)

    async def _while_stopped(self: LldbHost, work: Callable[[], Awaitable[T]]) -> T:
        """Run `work` with the program stopped. lldb takes breakpoints only then,
        where a DAP adapter takes them any time: so stop it quietly, and resume."""
        if self._state != "running":
            self._require_channel()
            return await work()
        await self._interrupt_quietly()
        resume = self._quiet_stopped
        self._quiet_stopped = False
        try:
            return await work()
        finally:
            if resume and self._state == "stopped":
                await self._begin_run("process continue", announce=False)

    def _remember_threads(self: LldbHost, info: dict[str, Any]) -> None:
        self._threads_seen = [
            Thread(id=t["id"], name=t["name"], stopped=True) for t in info.get("threads", [])
        ]

    def _emit_terminated(self: LldbHost, reason: str) -> None:
        if not self._terminated:
            self._terminated = True
            died = reason == "lldb exited"
            self.emit(TerminatedEvent(reason=reason, adapter_died=died))
            if died and not self._attached and self.debuggee_pid:
                # The program has no debugger left: end it now.
                from ..process import kill_tree

                with contextlib.suppress(RuntimeError):
                    self._orphan_killer = asyncio.get_running_loop().create_task(
                        kill_tree(self.debuggee_pid, grace=0.3))

    def _on_lldb_exit(self: LldbHost) -> None:
        if self._state in ("exited", "detached") or self._disposing:
            return
        if self._run_task is None or self._run_task.done():
            # Not inside a run: nobody else will say that lldb went away.
            self._state = "dead"
            self._flush_output()
            self._emit_terminated("lldb exited")
