"""Reading the stopped program: frames, scopes and variables (cached until
the next resume, shared while on their way), evaluation, completion, changed
values, and the machine level (addresses, disassembly, memory)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from backends.errors import DebuggerError, InvalidInput, NotSupported
from backends.models import Completion, EvalResult, Frame, Instruction, Scope, Variable

from .. import events
from ..models import Origin, SessionState
from .guards import guarded


if TYPE_CHECKING:  # what Inspection uses of Session (needs.py)
    from .needs import InspectionNeeds as _Needs
else:
    _Needs = object


class Inspection(_Needs):
    """Part of Session (see session/__init__.py): what a stop lets one read."""

    def note_value(self, path: str, value: str, frame: str | None = None) -> bool:
        """Records a value shown at this stop; True when an earlier stop showed it
        with another value in the same frame (the 'changed' highlight). `frame`
        names the function: after a step out, the caller's `len` is compared with
        the caller's last `len`, not with the callee's."""
        if self._values_generation != self._run_generation:
            if self._values_generation is not None:
                self._values_before.update(self._values_now)
                if len(self._values_before) > 20_000:  # a long session's history
                    self._values_before = dict(self._values_now)
            self._values_now = {}
            self._values_generation = self._run_generation
        key = f"{frame}\0{path}" if frame else path
        self._values_now[key] = value
        return key in self._values_before and self._values_before[key] != value

    async def _frames_for(self, thread_id: int) -> tuple[list[Frame], int | None]:
        cached = self._frames.get(thread_id)
        if cached is not None:
            return cached
        self._backend_now()
        frames, total = await self.backend.stack_trace(thread_id, 0, self.stack_levels)
        self._frames[thread_id] = (frames, total)
        return frames, total

    @guarded(SessionState.stopped, doing="read the stack")
    async def stack(self, thread_id: int | None = None, max_frames: int = 20) -> tuple[list[Frame], int | None]:
        tid = thread_id or self.selected_thread_id
        if tid is None:
            raise InvalidInput("No thread is selected; pass a thread id (see `threads`).")
        if max_frames <= self.stack_levels:
            frames, total = await self._frames_for(tid)
            return frames[:max_frames], total
        return await self._backend_now().stack_trace(tid, 0, max_frames)

    async def frame(self, index: int | None = None, thread_id: int | None = None) -> Frame:
        frames, total = await self.stack(thread_id, max(self.stack_levels, (index or 0) + 1))
        idx = self.selected_frame_index if index is None else index
        if idx < 0 or idx >= len(frames):
            raise InvalidInput(
                f"No frame {idx}: the stack has {len(frames)} frame(s) (0 is the innermost). "
                "See `backtrace`."
            )
        return frames[idx]

    async def select_frame(self, index: int, origin: Origin, thread_id: int | None = None) -> Frame:
        if thread_id is not None:
            self.selected_thread_id = thread_id
        frame = await self.frame(index)
        self.selected_frame_index = index
        self.publish(events.Selection(thread_id=self.selected_thread_id, frame_index=index,
                                      placed=True, location=frame.location, function=frame.name,
                                      origin=origin))
        return frame

    @guarded(SessionState.stopped, doing="select a thread", live=False)
    async def select_thread(self, thread_id: int, origin: Origin) -> None:
        threads = await self.threads()
        if not any(t.id == thread_id for t in threads):
            ids = ", ".join(str(t.id) for t in threads)
            raise InvalidInput(f"No thread {thread_id}. Threads: {ids}.")
        self.selected_thread_id = thread_id
        self.selected_frame_index = 0
        # The thread's top frame goes with the event, so every front end's source pane
        # moves to where that thread is, not only its stack and variables.
        selection = events.Selection(thread_id=thread_id, frame_index=0, origin=origin)
        try:
            frames, _ = await self._frames_for(thread_id)
        except DebuggerError:
            frames = []
        if frames:
            top = first_with_source(frames) or frames[0]
            self.selected_frame_index = selection.frame_index = top.index
            selection.placed, selection.location, selection.function = True, top.location, top.name
        self.publish(selection)

    async def scopes(self, frame_index: int | None = None) -> list[Scope]:
        frame = await self.frame(frame_index)
        return await shared(self._scopes, frame.id, lambda: self._read_scopes(frame.id))

    async def _read_scopes(self, frame_id: int) -> list[Scope]:
        self._backend_now()
        scopes = await self.backend.scopes(frame_id)
        refs = {s.ref for s in scopes}
        mine = self._scopes.get(frame_id)
        others = [f.result() for key, f in self._scopes.items()
                  if key != frame_id and f.done() and not f.cancelled() and f.exception() is None]
        if any(s.ref in refs for other in others for s in other):
            # The adapter hands out the same references for every frame's scopes
            # (lldb-dap): what was read through them for another frame is gone.
            self._scopes.clear()
            self._variables.clear()
            if mine is not None:
                self._scopes[frame_id] = mine
        return scopes

    @guarded(SessionState.stopped, doing="read variables")
    async def variables(self, ref: int, start: int = 0, count: int = 0) -> list[Variable]:
        backend = self._backend_now()
        if start == 0 and count == 0:
            found = await shared(self._variables, ref, lambda: backend.variables(ref))
        else:
            found = await backend.variables(ref, start, count)
        if self._last_how not in STEPS:
            # debugpy keeps a step's "(return) f = v" among the locals until the next
            # step: after a continue it is an old call's value, not this stop's.
            found = [v for v in found if not v.name.startswith(RETURN_VALUE_PREFIX)]
        return found

    def _wants_stop_view(self) -> bool:
        """A TUI shows every stop's locals, and a call waiting for the stop (a
        step's answer, `await`) answers with them: read them while the stop is on
        its way (an agent's step: the scopes request went out 1.4 ms sooner).
        For a waiting call, only where they are asked for ahead (and so pay):
        with those reads at every stop, one loaded run of delve's 100-goroutine
        barrier told one hit twice; not shown to be their doing, but a stop of
        many held threads stays as it was."""
        if any(c.origin in ("tui", "web") for c in self.clients.values()):
            return True
        # Where the reads go out together with the stack (asked ahead); elsewhere
        # a stop with many threads held (delve, lldb-dap) reads only when asked.
        return self._stop_waiters > 0 and self.backend is not None \
            and self.backend.stop_ids_carry_over

    async def _prefetch_stop_view(self, generation: int) -> None:
        """The selected frame's scopes and its first scope's variables, into the
        stop's cache, so the TUI's request for them (a round trip later) finds
        them read or on their way."""
        with contextlib.suppress(DebuggerError):
            if self._run_generation != generation or self.state != SessionState.stopped:
                return
            scopes = await self.scopes()
            if not scopes or self._run_generation != generation:
                return
            scope = locals_scope(scopes)
            if scope is not None:
                await self.variables(scope.ref)

    async def evaluate(self, expression: str, frame_index: int | None = None, context: str = "repl") -> EvalResult:
        await self.settle()
        backend = self._live_backend("evaluate")
        frame_id = None
        if self.state == SessionState.stopped:
            frame_id = (await self.frame(frame_index)).id
        else:
            # While it runs, an answer would come from whatever thread the
            # adapter picks (pydevd's own), racing the program: say it runs.
            self._require_state({SessionState.stopped}, "evaluate")
        result = await backend.evaluate(expression, frame_id, context)
        # Evaluation can change program state; children fetched before are stale.
        self._variables.clear()
        return result

    @guarded(SessionState.stopped, doing="complete")
    async def completions(self, text: str, column: int,
                          frame_index: int | None = None) -> tuple[bool, list[Completion]]:
        """What the debugger proposes to complete `text` at `column` in a frame, and
        whether it proposes at all (False: complete from the frame's names)."""
        backend = self._backend_now()
        if not backend.capabilities.completions:
            return False, []
        frame_id = (await self.frame(frame_index)).id
        return True, await backend.completions(text, column, frame_id)

    @guarded(SessionState.stopped, doing="change a variable", settle=False)
    async def set_variable(self, container_ref: int, name: str, value: str,
                           origin: Origin) -> Variable:
        """Change a value in the stopped program; every front end re-reads its variables."""
        variable = await self._backend_now().set_variable(container_ref, name, value)
        self._variables.clear()
        # Scopes go too: delve answers a scope's variables as read when the scope
        # was listed, so the changed value shows only through new scopes.
        self._scopes.clear()
        self.publish(events.Values(name=name, value=variable.value, origin=origin))
        return variable

    @guarded(SessionState.running, SessionState.stopped, doing="give the program input",
             settle=False)
    async def send_input(self, text: str, eof: bool, origin: Origin) -> None:
        """Give the program (launched with stdin 'pipe') a line of input."""
        await self._backend_now().send_input(text, eof)

    async def raw_command(self, command: str, timeout: float) -> str:
        backend = self._live_backend("run a debugger command")
        return await backend.raw_command(command, timeout)

    @guarded(SessionState.stopped, doing="read an address")
    async def resolve_address(self, expression: str, frame_index: int | None = None) -> str:
        """A function's start, a pointer's value, or an array's or object's own address."""
        backend = self._backend_now()
        frame_id = (await self.frame(frame_index)).id
        try:
            return await backend.resolve_address(expression, frame_id)
        except NotSupported:
            raise
        except DebuggerError as first:
            # An array or a struct has no value that is an address; its own place is.
            try:
                return await backend.resolve_address(f"&({expression})", frame_id)
            except DebuggerError:
                raise first from None

    async def disassemble(self, target: str | None, count: int, frame_index: int | None = None
                          ) -> tuple[list[Instruction], str | None]:
        """Instructions of `target` (a function or an address), or around the
        frame's pc; and that pc, when the listing is around it."""
        await self.settle()
        backend = self._live_backend("disassemble")
        if not backend.capabilities.disassemble:
            raise backend.not_supported("disassemble")
        self._require_state({SessionState.stopped}, "disassemble")
        if target:
            address = await self.resolve_address(target, frame_index)
            return await backend.disassemble(address, count, 0), None
        frame = await self.frame(frame_index)
        if not frame.instruction_pointer:
            raise InvalidInput(f"Frame {frame.index} ({frame.name}) has no instruction address; "
                               "pick another frame, or give a function or an address.")
        before = min(count // 3, 16)
        return (await backend.disassemble(frame.instruction_pointer, count, -before),
                frame.instruction_pointer)

    async def read_memory(self, target: str, count: int, frame_index: int | None = None
                          ) -> tuple[str, bytes]:
        backend = self._live_backend("read memory")
        if not backend.capabilities.read_memory:
            raise backend.not_supported("read_memory")
        self._require_state({SessionState.stopped}, "read memory")
        address = await self.resolve_address(target, frame_index)
        return address, await backend.read_memory(address, count)


#: Resumes after which a function's return value is this stop's news.
STEPS = frozenset({"next", "step_in", "step_out", "stepi", "nexti"})


#: How debugpy names a returned value among the locals: "(return) Item.value".
RETURN_VALUE_PREFIX = "(return) "


async def shared(cache: dict[int, "asyncio.Future[Any]"], key: int, read) -> Any:
    """One read per key while it lasts: later callers wait for the same one. A
    read that fails is forgotten (the next caller tries again); a caller that
    gives up does not cancel it for the others."""
    return await asyncio.shield(start_shared(cache, key, read))


def start_shared(cache: dict[int, "asyncio.Future[Any]"], key: int, read) -> "asyncio.Future[Any]":
    """`shared`'s read, started now (or the one on its way) without waiting for it."""
    future = cache.get(key)
    if future is None:
        future = asyncio.ensure_future(read())
        _cache(cache, key, future)
    return future


def locals_scope(scopes: list[Scope]) -> Scope | None:
    """The scope a stop shows first: the locals, or the first there is."""
    return next((s for s in scopes if s.kind.value == "locals"), scopes[0] if scopes else None)


class AskedAhead:
    """A stop's scopes and locals asked for by the ids the same thread's last
    stop read them by (Backend.stop_ids_carry_over), sent right behind the
    stack's request instead of a round trip and two after it. The scopes are
    used only when the stack shows the selected frame has that id, and the
    locals only when those scopes, answered at this stop, show its locals have
    that reference; otherwise they are dropped (a step into a call, or out of
    one: the old frame's scopes, or a refusal for a frame gone)."""

    def __init__(self, backend: Any, frame_id: int, ref: int) -> None:
        self.backend = backend
        self.frame_id, self.ref = frame_id, ref
        self.scopes: asyncio.Future[list[Scope]] = asyncio.ensure_future(backend.scopes(frame_id))
        self.variables: asyncio.Future[list[Variable]] = asyncio.ensure_future(
            backend.variables(ref))
        for future in (self.scopes, self.variables):
            future.add_done_callback(_seen)

    def adopt(self, scopes: dict[int, "asyncio.Future[Any]"],
              variables: dict[int, "asyncio.Future[Any]"]) -> None:
        """The stack showed the selected frame is `frame_id`: its scopes answer
        is this stop's (into the cache, unless a read is there already), and the
        reference's read in the cache at once is the locals asked for ahead once
        the scopes show them at `ref` (anyone asking for `ref` meanwhile waits
        for that, rather than reading again), else a read of its own."""
        if self.frame_id in scopes:
            return
        _cache(scopes, self.frame_id, self.scopes)
        if self.ref not in variables:
            _cache(variables, self.ref, asyncio.ensure_future(self._checked_locals()))

    async def _checked_locals(self) -> list[Variable]:
        scope = locals_scope(await self.scopes)
        if scope is not None and scope.ref == self.ref:
            return await self.variables
        return await self.backend.variables(self.ref)  # `ref` is something else at this stop


def _seen(done: "asyncio.Future[Any]") -> None:
    """An answer asked for ahead and not used may fail: nobody waits for it."""
    if not done.cancelled():
        done.exception()


def _cache(cache: dict[int, "asyncio.Future[Any]"], key: int, future: "asyncio.Future[Any]") -> None:
    """start_shared's entry for a read already on its way."""
    cache[key] = future

    def forget_failure(done: "asyncio.Future[Any]") -> None:
        if (done.cancelled() or done.exception() is not None) and cache.get(key) is done:
            del cache[key]

    future.add_done_callback(forget_failure)


def first_with_source(frames: list[Frame]) -> Frame | None:
    for frame in frames:
        if frame.location and frame.location.path and frame.location.line:
            return frame
    return None
