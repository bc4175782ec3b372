"""When a session call may run: the state guard decorator (`guarded`, as
debugpy's `_only_allowed_while`) and the refusals it and the other calls
give, each saying what to do next."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from backends.base import Backend
from backends.errors import InvalidInput, ResourceBusy

from ..models import SessionState

if TYPE_CHECKING:  # what Guards uses of Session (needs.py)
    from .needs import Guarded, GuardsNeeds as _Needs
else:
    _Needs = object

RESTARTING = ("the session is restarting; wait for the new program (`await`, debug_wait), "
              "then try again.")


def guarded(*states: SessionState, doing: str, settle: bool = True, live: bool = True):
    """A state guard, as debugpy's `_only_allowed_while`: before the method runs,
    wait (bounded) for a stop on its way (`settle`), check that a program is
    being debugged (`live`) and that the state is one of `states`; otherwise
    refuse in words that say what to do next (Session._require_state)."""
    allowed = set(states)

    def wrap(method):
        @functools.wraps(method)
        async def guarded_method(self: Guarded, *args: Any, **kwargs: Any) -> Any:
            if settle:
                await self.settle()
            if live:
                self._live_backend(doing)
            self._require_state(allowed, doing)
            return await method(self, *args, **kwargs)

        return guarded_method

    return wrap


class Guards(_Needs):
    """Part of Session (see session/__init__.py): the checks before a call."""

    def _require_state(self, allowed: set[SessionState], what: str) -> None:
        if self.state in allowed:
            return
        if self.state == SessionState.terminated:
            if self.adapter_died:
                raise InvalidInput(
                    f"Cannot {what}: the debugger ({self.adapter}) died "
                    f"({self.adapter_died.strip()[:200]}) and the program was ended with it. "
                    "Start a new session with `tui-debugger start PROGRAM` (MCP: debug_launch).")
            raise InvalidInput(
                f"Cannot {what}: the session has ended"
                + (f" (exit code {self.exit_code})" if self.exit_code is not None else "")
                + ". Start a new one with `tui-debugger start PROGRAM` (MCP: debug_launch)."
            )
        if self.state == SessionState.running and SessionState.stopped in allowed:
            raise InvalidInput(
                f"Cannot {what} while the program is running. Pause it (`pause`, "
                "debug_pause) or wait for a stop (`await`, debug_wait)."
            )
        if self.state in (SessionState.idle, SessionState.starting):
            raise InvalidInput(f"Cannot {what}: the program has not started yet. Wait a moment and retry.")
        if self.state == SessionState.stopped:
            raise InvalidInput(f"Cannot {what}: the program is already stopped.")
        raise InvalidInput(f"Cannot {what} in state {self.state.value}.")

    def _live_backend(self, what: str) -> Backend:
        if self.backend is None and self._restarting:
            raise ResourceBusy(f"Cannot {what}: {RESTARTING}")
        if self.backend is None or self.state in (SessionState.terminated, SessionState.idle):
            self._require_state({SessionState.running, SessionState.stopped}, what)
        return self._backend_now()

    def _backend_now(self) -> Backend:
        """The backend, or a typed error while a restart replaces it (a call that
        began before the restart may still be on its way)."""
        if self.backend is None:
            if self._restarting:
                raise ResourceBusy(RESTARTING[0].upper() + RESTARTING[1:])
            raise InvalidInput("No program is being debugged; launch or attach first.")
        return self.backend

    def _refuse_post_mortem(self, what: str) -> None:
        if self.backend is not None and self.backend.post_mortem:
            raise InvalidInput(
                f"Cannot {what.replace('_', ' ')}: this session is a core dump, a program that "
                "has already died. Read its stack, threads, locals, memory and disassembly; "
                "to run it, start the program itself (`tui-debugger start PROGRAM`)."
            )
