"""The session's fan-out: every subscriber and listener hears each event
(events.py); and the three things that always go with telling them: a state
change (set_state, the one way the state changes), output (add_output, the
one way it enters) and a run's end (_end_of_run, the one place it is told).
The activity log and the joined clients live here too, since they exist to
be told."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Callable

from .. import events
from ..models import ActivityEntry, ClientInfo, Origin, SessionState
from ..output import OutputLine
from .subscription import Subscription


if TYPE_CHECKING:  # what FanOut uses of Session (needs.py)
    from .needs import FanOutNeeds as _Needs
else:
    _Needs = object


class FanOut(_Needs):
    """Part of Session (see session/__init__.py): subscribers, listeners, the
    activity log, the clients, and the changes that are always told."""

    def subscribe(self) -> Subscription:
        sub = Subscription(self._subscribers)
        self._subscribers.add(sub)
        return sub

    def publish(self, event: events.Event) -> None:
        """Tell every subscriber and listener; the event's `seq` is set here."""
        self._event_seq += 1
        event.seq = self._event_seq
        for sub in list(self._subscribers):
            sub.push(event)
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):  # a listener's failure is its own
                listener(event)

    def add_listener(self, callback) -> None:
        """Call `callback(event)` synchronously for every event, e.g. to save the
        breakpoints as they change (persist.py). It must be quick and not block."""
        self._listeners.append(callback)

    def remove_listener(self, callback) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(callback)

    def record_activity(self, origin: Origin, command: str, summary: str = "", ok: bool = True,
                        client: str | None = None) -> None:
        self._last_activity = time.monotonic()
        self._activity_seq += 1
        entry = ActivityEntry(origin=origin, command=command, summary=summary, ok=ok,
                              client=client, seq=self._activity_seq)
        self.activity.append(entry)
        self.publish(events.Activity(entry=entry, origin=origin))

    def others_since_last_call(self, client: str, limit: int = 5) -> list[ActivityEntry]:
        """What other clients did since `client`'s previous call (at most the
        last `limit`), and mark it seen: each move is told once."""
        seen = self._seen_by.get(client)
        if seen is None:
            seen = self._seen_at_join(client)
        self._seen_by[client] = self._activity_seq
        # Newest first, only as far back as what is new: each call is a step of
        # the agent's round, and the log holds up to 500 entries.
        picked: list[ActivityEntry] = []
        for entry in reversed(self.activity):
            if entry.seq <= seen or len(picked) == limit:
                break
            if entry.client != client and entry.origin != "session":
                picked.append(entry)
        picked.reverse()
        return picked

    def _seen_at_join(self, client: str) -> int:
        # A client's first call tells it only what happened since it connected.
        info = self.clients.get(client)
        if info is None:
            return self._activity_seq
        return max((e.seq for e in self.activity if e.at < info.connected_at), default=0)

    @property
    def idle_seconds(self) -> float:
        return time.monotonic() - self._last_activity

    def add_client(self, client: ClientInfo) -> None:
        self.clients[client.id] = client
        self.publish(events.Clients(clients=list(self.clients.values())))

    def remove_client(self, client_id: str) -> None:
        if self.clients.pop(client_id, None) is not None:
            self.publish(events.Clients(clients=list(self.clients.values())))

    def set_state(self, state: SessionState, origin: Origin = "session") -> None:
        """The one way the state changes: set it, wake whoever waits on it
        (wait_for_state), and tell every subscriber."""
        self.state = state
        woken, self._state_changed = self._state_changed, asyncio.Event()
        woken.set()
        self.publish(events.State(state=state, origin=origin))

    def add_output(self, category: str, text: str, origin: Origin = "session") -> int:
        """The one way output enters the session: kept in the buffer (read by
        cursor) and told to every subscriber. Returns its cursor."""
        seq = self.output.append(category, text)
        self.publish(events.Output(line=OutputLine(seq=seq, category=category, text=text),
                                   origin=origin))
        return seq

    def _end_of_run(self, reason: str | None, origin: Origin = "session") -> None:
        """The one place a run ends, whoever ended it (the program, the
        debugger's death, a failed start, terminate or detach): the state, then
        the news with the exit code."""
        self.set_state(SessionState.terminated, origin)
        self.publish(events.Terminated(reason=reason, exit_code=self.exit_code, origin=origin))

    async def wait_for_state(
        self, predicate: Callable[[], bool], timeout: float | None
    ) -> bool:
        async def _wait() -> None:
            while not predicate():
                await self._state_changed.wait()

        try:
            await asyncio.wait_for(_wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False
