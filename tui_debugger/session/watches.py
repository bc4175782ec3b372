"""Watchpoints (data breakpoints): set while stopped, read back at each stop
to say what changed from what."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from backends.errors import DebuggerError, InvalidInput
from backends.models import DataBreakpointSpec, WatchChangeEvent, WatchesCopiedEvent

from .. import events
from ..models import Origin, SessionState, Watch, WatchChange


#: changes kept per watch (its history: what a log-only watch is for)
HISTORY_CAP = 50


if TYPE_CHECKING:  # what Watchpoints uses of Session (needs.py)
    from .needs import WatchpointsNeeds as _Needs
else:
    _Needs = object


class Watchpoints(_Needs):
    """Part of Session (see session/__init__.py): watchpoints."""

    async def add_watch(self, expression: str, access: str, origin: Origin,
                        frame_index: int | None = None, condition: str | None = None,
                        hit_count: int | None = None, log_only: bool = False) -> Watch:
        await self.settle()
        backend = self._live_backend("set a watchpoint")
        self._refuse_post_mortem("set a watchpoint")
        if not backend.capabilities.data_breakpoints:
            raise backend.not_supported("data_breakpoints")
        self._require_state({SessionState.stopped}, "set a watchpoint")
        if not expression.strip():
            raise InvalidInput("Give the expression to watch, e.g. `watch counter`.")
        told = backend.capabilities.data_breakpoint_events
        if (condition or hit_count or log_only) and not told:
            raise InvalidInput("Conditions, hit counts and log-only watches are for Python "
                               "(debugpy) sessions; here, watch without them.")
        if hit_count is not None and hit_count < 1:
            raise InvalidInput("The hit count is the change to stop at from: 1 or more.")
        frame = await self.frame(frame_index)
        watch = Watch(id=self._next_watch_id, expression=expression.strip(),
                      access=access, set_by=origin, condition=condition or None,  # type: ignore[arg-type]
                      hit_count=hit_count, log_only=log_only)
        states = await backend.set_data_breakpoints(
            self._watch_specs() + [DataBreakpointSpec(
                expression=watch.expression, access=watch.access, frame_id=frame.id,
                key=watch.id, condition=watch.condition, hit_count=watch.hit_count,
                log_only=watch.log_only)])
        new = states[-1]
        if not new.verified:
            # Nothing changes: the adapter keeps the watchpoints it had.
            with contextlib.suppress(DebuggerError):
                await backend.set_data_breakpoints(self._watch_specs())
            raise InvalidInput(
                f"Cannot watch {watch.expression}: {new.message or 'the debugger refused it'}. "
                + ("Watch a name, an attribute (obj.attr) or an item (obj[key]) that exists "
                   "in the selected frame." if told else
                   "Watch a variable, a field or *pointer that lives in memory.")
            )
        self._next_watch_id += 1
        watch.verified, watch.address, watch.size = True, new.address, new.size
        watch.type, watch.kind = new.type, new.kind
        watch.value = new.value if told else \
            await self._watch_value(watch, frame.id, watch.expression)
        self.watches[watch.id] = watch
        self._publish_watches(origin)
        return watch

    async def remove_watches(self, ids: list[int] | None, origin: Origin) -> list[Watch]:
        self._refuse_running_watch_change()
        if ids is None:
            removed = list(self.watches.values())
        else:
            unknown = [i for i in ids if i not in self.watches]
            if unknown:
                have = ", ".join(str(i) for i in self.watches) or "none"
                raise InvalidInput(f"No watchpoint {unknown[0]}. Watchpoints: {have}.")
            removed = [self.watches[i] for i in ids]
        for watch in removed:
            self.watches.pop(watch.id, None)
        if self.backend is not None and self.state == SessionState.stopped:
            await self.backend.set_data_breakpoints(self._watch_specs())
        self._publish_watches(origin)
        return removed

    def _refuse_running_watch_change(self) -> None:
        if self.state == SessionState.running:
            raise InvalidInput("Watchpoints change only while the program is stopped; pause it "
                               "first (`pause`, debug_pause).")

    def _watch_specs(self) -> list[DataBreakpointSpec]:
        return [DataBreakpointSpec(expression=w.expression, access=w.access, address=w.address,
                                   size=w.size, key=w.id) for w in self.watches.values()]

    def _publish_watches(self, origin: Origin = "session") -> None:
        # Copies: the event is sent after this returns, and hits change meanwhile.
        self.publish(events.Watches(watches=[w.model_copy() for w in self.watches.values()],
                                    origin=origin))

    async def _watch_value(self, watch: Watch, frame_id: int | None,
                           expression: str | None = None) -> str | None:
        """The watched value now: by its expression where it was set, else read back
        through its address and type, else its bytes."""
        self._backend_now()
        attempts = []
        if expression:
            attempts.append(expression)
        if watch.address and watch.type:
            attempts.append(f"*({watch.type} *){watch.address}")
        for text in attempts:
            with contextlib.suppress(DebuggerError):
                return (await self.backend.evaluate(text, frame_id, "watch")).value
        if watch.address and watch.size:
            with contextlib.suppress(DebuggerError):
                data = await self.backend.read_memory(watch.address, watch.size)
                return "bytes " + data.hex(" ")
        return None

    def _end_program_watches(self) -> None:
        """At a restart: the watches the program kept (Python's) ended with it."""
        gone = [w for w in self.watches.values() if w.kind is not None]
        self._told_watch_changes = []
        if not gone:
            return
        for watch in gone:
            self.watches.pop(watch.id, None)
        text = (f"Watch {', '.join(f'#{w.id} {w.expression}' for w in gone)} ended with the "
                "program; set it again where the program stops.")
        self.record_activity("session", "watch ended", text)
        self.publish(events.Notice(text=text, title="Watch"))
        self._publish_watches()

    def _on_watch_change(self, event: WatchChangeEvent) -> None:
        """The backend saw a watched value change (or a watch end), before the stop
        it causes: kept for that stop, and in the watch's history."""
        watch = self.watches.get(event.key)
        if watch is None:
            return
        if event.gone:
            self.watches.pop(watch.id, None)
            text = f"Watch #{watch.id} {watch.expression} ended: {event.gone}."
            self.record_activity("session", "watch ended", text)
            self.publish(events.Notice(text=text, title="Watch"))
            self._publish_watches()
            return
        change = WatchChange(watch_id=watch.id, expression=watch.expression, old=event.old,
                             new=event.new, at=event.location.short() if event.location else None,
                             function=event.function, thread_id=event.thread_id,
                             stopped=event.stopped, note=event.note)
        watch.value, watch.hits = event.new, max(watch.hits + 1, event.hit)
        watch.history = [*watch.history[-(HISTORY_CAP - 1):], change]
        self._told_watch_changes.append(change)
        if watch.copied_from_pid is not None and self.watch_relay is not None:
            with contextlib.suppress(Exception):  # the other session's, never this stop's
                self.watch_relay(watch, change)
        if not event.stopped:
            self._publish_watches()

    def add_relayed_change(self, watch_id: int, expression: str, change: WatchChange) -> bool:
        """A change of a copy of this session's watch `watch_id`, made in another
        process (a forked child): in the watch's history, naming that process."""
        watch = self.watches.get(watch_id)
        if watch is None or watch.expression != expression:
            return False
        watch.history = [*watch.history[-(HISTORY_CAP - 1):], change]
        self._publish_watches()
        return True

    def _on_watches_copied(self, event: WatchesCopiedEvent) -> None:
        """This process was forked from one with watches: it holds copies, which
        stop it and are listed, kept and removed here as its own."""
        copies = []
        for copied in event.watches:
            if copied.key in self.watches:
                continue
            watch = Watch(id=copied.key, expression=copied.expression, verified=True,
                          set_by="session", condition=copied.condition,
                          hit_count=copied.hit_count, log_only=copied.log_only,
                          kind=copied.kind, value=copied.value, hits=copied.hits,
                          copied_from_pid=copied.origin_pid)
            self.watches[watch.id] = watch
            copies.append(watch)
        if not copies:
            return
        self._next_watch_id = max(self._next_watch_id, *(w.id + 1 for w in copies))
        text = ("Forked with the watches of pid "
                f"{copies[0].copied_from_pid}: "
                + ", ".join(f"#{w.id} {w.expression}" for w in copies)
                + " watch this process too.")
        self.record_activity("session", "watches copied", text)
        self._publish_watches()

    async def _watch_changes(self, frame_id: int | None,
                             thread_id: int | None = None) -> list[WatchChange]:
        if self.backend is not None and self.backend.capabilities.data_breakpoint_events:
            # Told by the backend as they happened: the changes of this thread since
            # its last stop, and the log-only records (any thread) since the last stop.
            mine = [c for c in self._told_watch_changes
                    if c.thread_id in (None, thread_id) or not c.stopped]
            # Another thread's change waits for that thread's own stop.
            self._told_watch_changes = [c for c in self._told_watch_changes if c not in mine]
            # The change the program stopped for first: the stop is told by it.
            return sorted(mine, key=lambda c: not c.stopped)
        changes = []
        for watch in self.watches.values():
            new = await self._watch_value(watch, frame_id)
            if new != watch.value:
                changes.append(WatchChange(watch_id=watch.id, expression=watch.expression,
                                           old=watch.value, new=new))
                watch.value = new
                watch.hits += 1
        return changes
