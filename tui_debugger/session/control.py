"""Run control: continue, the steps, goto and pause, each answered within a
bound; and waiting for a stop (settle, wait_for_stop), so no call races a
stop on its way."""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import TYPE_CHECKING, Iterator

from backends.base import Backend
from backends.errors import DebuggerError, InvalidInput

from .. import events
from ..models import Origin, SessionState, StopInfo


if TYPE_CHECKING:  # what RunControl uses of Session (needs.py)
    from .needs import RunControlNeeds as _Needs
else:
    _Needs = object


class RunControl(_Needs):
    """Part of Session (see session/__init__.py): resuming, pausing, waiting."""

    @property
    def stop_pending(self) -> bool:
        """A stop is on its way: the program is starting, or it runs after a
        stop on entry, a step or a pause was asked for, or a stop event arrived
        and is being read."""
        if self.state == SessionState.starting:
            return True
        if self.state != SessionState.running:
            return False
        return self._stop_expected or bool(self._stop_task and not self._stop_task.done())

    async def settle(self, timeout: float | None = None) -> None:
        """Wait (bounded) for a pending stop, so a call that arrives just before
        the stop it depends on does not race it (a step right after a launch
        with stopOnEntry). Returns at once when no stop is pending."""
        if not self.stop_pending:
            return
        if timeout is None:
            from ..config import settings

            timeout = max(settings().step_wait_ms, 1000) / 1000
        await self.wait_for_state(lambda: not self.stop_pending, timeout)

    def undebugged_exec(self) -> str | None:
        """A Python program that exec'd into a program that is not Python: its
        debugger went with its old image, so it runs on undebugged until it ends
        (then the session ends too) and no stop can come. Said in words, or None."""
        from backends import adapters

        pid = self.backend.debuggee_pid if self.backend is not None else None
        if not pid or not self.adapter or not adapters.profile(self.adapter).chooses_python:
            return None
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            return None
        name = os.path.basename(exe)
        if name.startswith(("python", "pypy")) or exe.endswith(" (deleted)"):
            return None
        return (f"the program exec'd into {exe}, which is not Python and cannot be debugged "
                "here. It ends the session when it exits; `stop` (debug_terminate) ends it now.")

    @property
    def resumed_by(self) -> Origin | None:
        """Who resumed the program last (tui, cli, mcp)."""
        return self._resumed_by

    async def wait_for_stop(self, timeout: float | None, since_generation: int | None = None) -> bool:
        """Wait until the program is stopped (after resume `since_generation`) or ended."""
        gen = self._run_generation if since_generation is None else since_generation

        def done() -> bool:
            if self.state == SessionState.terminated:
                return True
            return self.state == SessionState.stopped and self._run_generation >= gen and self.stop is not None

        return await self.wait_for_state(done, timeout)

    @contextlib.contextmanager
    def answering_stop(self) -> Iterator[None]:
        """Around a call's wait for the stop it answers with (a run command,
        `await`): a stop read meanwhile reads its locals at once (_wants_stop_view)."""
        self._stop_waiters += 1
        try:
            yield
        finally:
            self._stop_waiters -= 1

    async def resume(self, how: str, origin: Origin, thread_id: int | None = None,
                     target: tuple[str, int] | None = None,
                     answer_timeout: float | None = None) -> int:
        """Resume with continue / next / step_in / step_out, or goto `target`
        (path, line: the next statement moved there). Returns the run generation
        to pass to wait_for_stop.

        `answer_timeout` bounds the wait for the adapter's answer: past it the
        program is taken as running (`resume_unanswered` says which request is
        unanswered) and the answer, or its failure, is handled when it comes."""
        await self.settle()
        backend = self._live_backend(how)
        self._refuse_post_mortem(how)
        self._require_state({SessionState.stopped}, how if how != "continue" else "continue")
        tid = thread_id or self.selected_thread_id
        if how != "continue" and tid is None:
            raise InvalidInput("No thread is selected; pass a thread id (see `threads`).")
        if how == "continue" and self._held and thread_id is None:
            return self._show_next_held(origin)
        self._run_generation += 1
        generation = self._run_generation
        self._resumed_by = origin
        self._invalidate_caches()
        previous_stop = self.stop
        # A step out answers what the function it leaves returned (_handle_stop).
        self._stepping_out_of = (previous_stop.function or "?") if (
            how == "step_out" and previous_stop is not None) else None
        self.stop = None
        self._stop_expected = how != "continue"
        self._last_how = how
        if how == "continue" or not backend.steps_keep_others_held:
            # Everything runs: what was held goes on past its hit (it was listed).
            self._held.clear()
            self._thread_stops.clear()
        elif tid is not None:
            self._thread_stops.pop(tid, None)
        # The request's task first: it runs before the tasks these events wake
        # (the socket's writers), so the adapter starts on the step ~0.5 ms sooner.
        request = asyncio.get_running_loop().create_task(
            self._send_resume(backend, how, tid, previous_stop, origin, target))
        self.publish(events.Continued(thread_id=tid, how=how, origin=origin))
        self.set_state(SessionState.running, origin)
        request.add_done_callback(lambda task: task.cancelled() or task.exception())
        self.resume_unanswered = how
        done, _ = await asyncio.wait({request}, timeout=answer_timeout)
        if request in done:
            request.result()  # a refusal raises here, with the stop put back
        return generation

    async def _send_resume(self, backend: Backend, how: str, tid: int | None,
                           previous_stop: StopInfo | None, origin: Origin,
                           target: tuple[str, int] | None = None) -> None:
        try:
            if how == "continue":
                await backend.continue_(tid)
            elif how == "next":
                await backend.step_over(tid)  # type: ignore[arg-type]
            elif how == "step_in":
                await backend.step_in(tid)  # type: ignore[arg-type]
            elif how == "step_out":
                await backend.step_out(tid)  # type: ignore[arg-type]
            elif how in ("stepi", "nexti"):
                # (a backend without instruction steps refuses by name; the stop is put back)
                await backend.step_instruction(tid, over=how == "nexti")  # type: ignore[arg-type]
            elif how == "goto" and target is not None:
                await backend.goto(tid, *target)  # type: ignore[arg-type]
            else:
                raise InvalidInput(f"Unknown run command {how!r}.")
        except DebuggerError:
            self._stop_expected = False
            if how == "continue" and backend.running():
                # The shown stop was over already: the adapter's `continued` for
                # it is on its way to us (debugpy wakes a thread up to 0.2 s after
                # a continue let it go). The program runs, as asked.
                self.record_activity("session", "continue", "the program was already running")
                return
            # The request failed: the program did not move; keep the stop readable.
            if self.state == SessionState.running and self.backend is not None:
                self.stop = previous_stop
                self.set_state(SessionState.stopped, origin)
            raise
        finally:
            self.resume_unanswered = None

    def _show_next_held(self, origin: Origin) -> int:
        """Continue while other threads are held at a breakpoint: nothing runs;
        the next held thread's hit becomes the stop (gdb's all-stop way)."""
        event = self._held.popleft()
        self._run_generation += 1
        self._resumed_by = origin
        self.stop = None
        self._stop_expected = True
        self.publish(events.Continued(thread_id=event.thread_id, how="continue", origin=origin))
        self.set_state(SessionState.running, origin)
        self._stop_task_thread = event.thread_id
        self._stop_task = asyncio.get_running_loop().create_task(self._handle_stop(event))
        return self._run_generation

    async def pause(self, origin: Origin, thread_id: int | None = None,
                    answer_timeout: float | None = None) -> None:
        # A stop already on its way (the entry stop) is the pause asked for.
        await self.settle()
        backend = self._live_backend("pause")
        self._refuse_post_mortem("pause")
        if self.state == SessionState.stopped:
            return
        self._require_state({SessionState.running}, "pause")
        self._resumed_by = origin
        self._stop_expected = True
        self._pause_requested = True
        request = asyncio.get_running_loop().create_task(backend.pause(thread_id))
        request.add_done_callback(lambda task: task.cancelled() or task.exception())
        # Bounded like a continue: an adapter stuck on an earlier request answers late.
        done, _ = await asyncio.wait({request}, timeout=answer_timeout)
        if request not in done:
            return
        try:
            request.result()
        except BaseException:
            self._stop_expected = self._pause_requested = False
            raise

    @property
    def run_generation(self) -> int:
        return self._run_generation
