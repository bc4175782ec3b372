"""The person's commands: run one at a time in the order of the keys that made
them (docs/architecture.md, "Keys act in the order typed"), greyed out where
they do not apply (`check_action`), and the dialogs that ask a command's
arguments first (a command's form, a breakpoint's, a value's, the exception
filters).

A mixin of `DebuggerApp` (tui/app.py), which owns the attributes it uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import time
from typing import Any

from textual import work

from backends.errors import DebuggerError

from ..commands import registry
from .format import display_path
from .messages import EditBreakpoint, EditValue, Ordered, RunCommand, SendInput, ToggleBreakpoint, in_flight, next_order
from .widgets.output_pane import OutputPane

#: The TUI learns of the stop from the session's events, so it does not wait for it.
RESUMING = {"continue", "next", "step", "finish", "stepi", "nexti"}
#: Steps, whose stop usually follows within milliseconds: the stack and the
#: locals are asked for as soon as the step is under way (PaneData._ask_for_stop_view).
STEPS = RESUMING - {"continue"}
#: Seconds a command waits for the message of an earlier key that never arrives
#: (its pane went away meanwhile) before it runs anyway.
ORDER_GIVE_UP = 1.0


class OrderedCommands:
    """Registry commands on the person's behalf, in the order typed."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run_command" and parameters:
            if parameters[0] == "continue" and self.state == "terminated" and \
                    self.link is not None:
                return True  # F5 after the end runs the program again
            states = registry.get(str(parameters[0])).applies_in
            if states is not None:
                return True if self.state in states else None
        if action in ("run_to_cursor", "frame_offset", "jump_to_cursor"):
            return True if self.state == "stopped" else None
        return True

    def action_run_command(self, command_id: str) -> None:
        if command_id == "continue" and self.state == "terminated":
            command_id = "restart"
        self.invoke_command(command_id)

    def invoke_command(self, command_id: str, args: dict[str, Any] | None = None,
                       order: int | None = None) -> None:
        """Run a registry command; one that needs arguments asks for them first."""
        command = registry.get(command_id)
        if args is None and command_id == "exception_breakpoints":
            self.action_exception_breakpoints()  # a checklist of the debugger's filters
            return
        from .widgets.command_form import CommandForm, needs_form  # on demand, as the dialogs

        if args is None and needs_form(command):
            initial: dict[str, Any] = {}
            fields = command.args.model_fields
            if self.source.file is not None and "file" in fields and "line" in fields:
                initial = {"file": display_path(self.source.file.path, self.cwd),
                           "line": self.source.cursor_line}

            def done(values: dict[str, Any] | None) -> None:
                if values is not None:
                    self._run(command_id, values)

            self.push_screen(CommandForm(command, initial), done)
            return
        self._run(command_id, args or {}, order)

    def _run(self, command_id: str, args: dict[str, Any], order: int | None = None) -> None:
        """Queue a command of the person's; `order` is its message's (see Ordered),
        else it is made now, by the key being handled."""
        if command_id in RESUMING and "wait_ms" not in args:
            args = {**args, "wait_ms": 0}
        elif command_id == "until" and args.get("jump") and "wait_ms" not in args:
            args = {**args, "wait_ms": 0}  # a jump is a step: its stop comes as an event
        elif command_id == "until" and "wait_ms" not in args:
            # The one-shot breakpoint lives until the call returns: wait for the stop.
            args = {**args, "wait_ms": 600_000}
        heapq.heappush(self._queued, (order or next_order(), command_id, args))
        self._queue_changed.set()

    def _arrived(self, message: Ordered) -> None:
        """A command's message reached the app: the commands after it may run."""
        in_flight.pop(message.order, None)
        self._queue_changed.set()

    async def _run_in_order(self) -> None:
        """Run the person's commands one at a time, in the order of their keys.
        Keys typed ahead (F9 then F5 in one read) must act as typed: a breakpoint
        is set before the continue that should reach it. A command waits for the
        answer of the one before; `until` only until the program runs, since it
        answers at the stop (and pause must get through meanwhile)."""
        while True:
            self._queue_changed.clear()
            if not self._queued:
                await self._queue_changed.wait()
                continue
            order = self._queued[0][0]
            now = time.monotonic()
            earlier = [made for o, made in in_flight.items() if o < order]
            if any(now - made < ORDER_GIVE_UP for made in earlier):
                # A message of an earlier key is still bubbling up to the app.
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._queue_changed.wait(), ORDER_GIVE_UP)
                continue
            for stale in [o for o in in_flight if o < order]:
                in_flight.pop(stale, None)
            _, command_id, args = heapq.heappop(self._queued)
            self._resumed.clear()
            call = asyncio.ensure_future(self._call(command_id, args))
            if command_id != "until" or args.get("jump"):
                await call
                continue
            resumed = asyncio.ensure_future(self._resumed.wait())
            try:
                await asyncio.wait({call, resumed}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                resumed.cancel()

    async def _call(self, command_id: str, args: dict[str, Any]) -> Any:
        if self.link is None:
            self.notify("Not connected to a session yet.", severity="warning")
            return None
        stops_before = self._stops_seen
        try:
            result = await self.link.call(command_id, args, cwd=self.cwd)
        except DebuggerError as exc:
            self.notify(exc.message, title=command_id, severity="error")
            return None
        if command_id in STEPS and self._stops_seen == stops_before:
            self._ask_for_stop_view()
        return result

    def on_run_command(self, message: RunCommand) -> None:
        message.stop()
        self._arrived(message)
        self.invoke_command(message.command_id, message.args, order=message.order)

    def on_toggle_breakpoint(self, message: ToggleBreakpoint) -> None:
        message.stop()
        self._arrived(message)
        for bp in self.breakpoints:
            if bp.spec.path == message.path and message.line in (bp.line, bp.spec.line):
                self._run("breakpoint_remove", {"breakpoint_id": bp.id}, message.order)
                return
        self._run("breakpoint_add", {"file": message.path, "line": message.line}, message.order)

    def on_edit_breakpoint(self, message: EditBreakpoint) -> None:
        message.stop()
        if message.breakpoint_id is not None:
            bp = next((b for b in self.breakpoints if b.id == message.breakpoint_id), None)
        else:
            bp = next((b for b in self.breakpoints if b.spec.path == message.path
                       and message.line in (b.line, b.spec.line)), None)
        if bp is None and message.path is None:
            return
        if bp is not None:
            initial = {"enabled": bp.spec.enabled, "condition": bp.spec.condition,
                       "hit_condition": bp.spec.hit_condition, "log_message": bp.spec.log_message}
            where = bp.spec.function or \
                f"{display_path(bp.spec.path, self.cwd)}:{bp.line or bp.spec.line}"
        else:
            initial = {}
            where = f"{display_path(message.path, self.cwd)}:{message.line}"

        def done(values: dict[str, Any] | None) -> None:
            if values is None:
                return
            if bp is None:
                args = {k: v for k, v in values.items() if v != ""}
                self._run("breakpoint_add", {"file": message.path, "line": message.line, **args})
            elif values.get("__remove__"):
                self._run("breakpoint_remove", {"breakpoint_id": bp.id})
            elif values:
                self._run("breakpoint_update", {"breakpoint_id": bp.id, **values})

        from .widgets.breakpoint_dialog import BreakpointDialog

        self.push_screen(BreakpointDialog(where, initial, existing=bp is not None), done)

    def on_send_input(self, message: SendInput) -> None:
        message.stop()
        if message.text:
            self.query_one(OutputPane).echo_input(message.text)
        self._run("send_input", {"text": message.text, "eof": message.eof})

    def on_edit_value(self, message: EditValue) -> None:
        message.stop()
        if self.state != "stopped":
            return

        def done(value: str | None) -> None:
            if value is not None and value != message.value:
                self._run("set_variable", {"path": message.path, "value": value,
                                           "frame_index": self.selected_frame})

        from .widgets.value_dialog import ValueDialog

        self.push_screen(ValueDialog(message.path, message.value), done)

    def action_exception_breakpoints(self) -> None:
        self._choose_exceptions()

    @work(group="commands")
    async def _choose_exceptions(self) -> None:
        listed = await self._call("exception_breakpoints", {})
        if listed is None:
            return
        if not listed.filters:
            self.notify(listed.message, title="exception breakpoints")
            return

        def done(filters: list[str] | None) -> None:
            if filters is not None:
                self._run("exception_breakpoints", {"filters": filters})

        from .widgets.exception_dialog import ExceptionDialog

        self.push_screen(ExceptionDialog(listed.filters), done)
