"""Ctrl+A (and the palette): start a session from inside the TUI. Four tabs,
one per way to start: attach to a process (PID or HOST:PORT), attach to an
app in an iOS simulator, attach to a paused Ray task, or launch a program. The dialog only builds the
command's arguments and posts StartSession; the app runs the command and tells
the dialog whether it worked, so a mistake can be corrected in place."""

from __future__ import annotations

import re
import shlex
from typing import Any

from pydantic import ValidationError
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static, TabbedContent, TabPane

from backends.errors import DebuggerError, InvalidInput

from ...commands import registry
from ..messages import StartSession
from .text_input import TextInput

TABS = {"process": "attach-process", "simulator": "attach-sim", "ray": "attach-ray",
        "launch": "attach-launch"}
UDID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")


def process_request(target: str, adapter: str = "") -> tuple[str, dict[str, Any]]:
    """`attach` arguments from what the person typed: a PID, or HOST:PORT (:PORT
    means this machine), as `tui-debugger attach` takes them."""
    target = target.strip()
    args: dict[str, Any] = {}
    if target.isdigit():
        args["pid"] = int(target)
    elif ":" in target:
        host, _, port = target.rpartition(":")
        if not port.isdigit():
            raise InvalidInput(f"Expected a PID or HOST:PORT, got {target!r}.")
        args["host"], args["port"] = host.strip("[]") or "127.0.0.1", int(port)
    elif target:
        raise InvalidInput(f"Expected a PID or HOST:PORT, got {target!r}.")
    else:
        raise InvalidInput("Give the process id, or the HOST:PORT of a listening debug adapter "
                           "(debugpy --listen, node --inspect).")
    if adapter.strip():
        args["adapter"] = adapter.strip()
    return "attach", args


def simulator_request(device: str, app: str, wait_for: bool) -> tuple[str, dict[str, Any]]:
    """`attach_sim` arguments: the simulator by UDID or name, the app by bundle id
    or PID. Either may be left empty to use the ones remembered from the last attach."""
    args: dict[str, Any] = {}
    device, app = device.strip(), app.strip()
    if device:
        args["simulator_id" if UDID.fullmatch(device) else "simulator_name"] = device
    if app.isdigit():
        args["pid"] = int(app)
    elif app:
        args["bundle_id"] = app
    if wait_for:
        if "pid" in args:
            raise InvalidInput("Waiting for the app needs its bundle id, not a PID.")
        args["wait_for"] = True
    return "attach_sim", args


def ray_request(dashboard: str, worker: str) -> tuple[str, dict[str, Any]]:
    """`attach` with `ray`: a task or actor of a Ray cluster that waits at
    breakpoint() or post mortem; the worker's pid picks one, else the first."""
    args: dict[str, Any] = {"ray": dashboard.strip()}
    worker = worker.strip()
    if worker:
        if not worker.isdigit():
            raise InvalidInput(f"The worker is given by its pid (a number), not {worker!r}; "
                               "`tui-debugger ray` lists them.")
        args["pid"] = int(worker)
    return "attach", args


def launch_request(program: str, arguments: str, stop_on_entry: bool) -> tuple[str, dict[str, Any]]:
    program = program.strip()
    if not program:
        raise InvalidInput("Give the program to debug: a .py or .js file, or a native or Go binary.")
    try:
        argv = shlex.split(arguments)
    except ValueError as exc:
        raise InvalidInput(f"The arguments do not parse ({exc}); quote them as in a shell.") from None
    args: dict[str, Any] = {"program": program}
    if argv:
        args["args"] = argv
    if stop_on_entry:
        args["stop_on_entry"] = True
    return "launch", args


class AttachDialog(ModalScreen[bool | None]):
    """Dismissed with True once the app has switched to the new session, None on cancel."""

    BINDINGS = [Binding("escape", "cancel", "cancel", show=False)]

    def __init__(self, tab: str = "process", note: str = "") -> None:
        super().__init__()
        self.initial_tab = TABS.get(tab, TABS["process"])
        self.note = note
        self.busy = False

    def compose(self) -> ComposeResult:
        with Vertical(id="attach-body"):
            yield Static("Attach to a program, or launch one", id="attach-title")
            if self.note:
                yield Static(self.note, id="attach-note")
            with TabbedContent(id="attach-tabs", initial=self.initial_tab):
                with TabPane("Process", id=TABS["process"]):
                    yield self._label("PID or HOST:PORT", "a process, or where an adapter listens")
                    yield TextInput(placeholder="4242 or 127.0.0.1:5678", id="attach-target", compact=True)
                    yield self._label("adapter", "empty: chosen from the process or the port")
                    yield TextInput(placeholder="debugpy, lldb-dap, lldb-cli, dlv, node", id="attach-adapter",
                                compact=True)
                with TabPane("iOS simulator", id=TABS["simulator"]):
                    yield self._label("simulator", "name or UDID; empty: the last one used")
                    yield TextInput(placeholder="iPhone 15", id="sim-device", compact=True)
                    yield self._label("app", "bundle id or PID; empty: the last one used")
                    yield TextInput(placeholder="com.example.App", id="sim-app", compact=True)
                    yield Checkbox("wait for the app to launch", id="sim-wait-for", compact=True)
                with TabPane("Ray", id=TABS["ray"]):
                    yield self._label("dashboard", "empty: $RAY_ADDRESS, else 127.0.0.1:8265")
                    yield TextInput(placeholder="http://127.0.0.1:8265", id="ray-dashboard", compact=True)
                    yield self._label("worker pid", "empty: the first paused task "
                                      "(`tui-debugger ray` lists them)")
                    yield TextInput(placeholder="4242", id="ray-worker", compact=True)
                with TabPane("Launch", id=TABS["launch"]):
                    yield self._label("program", "a .py or .js file, a native or Go binary")
                    yield TextInput(placeholder="app.py", id="launch-program", compact=True)
                    yield self._label("arguments", "as in a shell")
                    yield TextInput(id="launch-args", compact=True)
                    yield Checkbox("stop on entry", id="launch-stop-on-entry", compact=True)
            yield Static("", id="attach-error")
            with Horizontal(id="attach-buttons"):
                yield Button("Start", variant="primary", id="attach-ok", compact=True)
                yield Button("Cancel", id="attach-cancel", compact=True)

    @staticmethod
    def _label(name: str, hint: str) -> Label:
        return Label(Text.assemble((name, "bold"), "  ", (hint, "dim")), classes="form-label")

    def on_mount(self) -> None:
        if not getattr(self.app, "CURSOR_BLINK", True):
            for box in self.query(Input):
                box.cursor_blink = False
        self._focus_first_field()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        event.stop()
        self.query_one("#attach-error", Static).update("")
        self._focus_first_field()

    def _focus_first_field(self) -> None:
        tab = self.query_one("#attach-tabs", TabbedContent).active
        boxes = self.query_one(f"#{tab}", TabPane).query(Input)
        if boxes:
            boxes.first().focus()

    @property
    def active_tab(self) -> str:
        active = self.query_one("#attach-tabs", TabbedContent).active
        return next(name for name, pane in TABS.items() if pane == active)

    def request(self) -> tuple[str, dict[str, Any]]:
        """The command and arguments the active tab asks for; InvalidInput when
        the fields do not make one."""
        value = lambda selector: self.query_one(selector, Input).value  # noqa: E731
        tab = self.active_tab
        if tab == "process":
            command_id, args = process_request(value("#attach-target"), value("#attach-adapter"))
        elif tab == "ray":
            command_id, args = ray_request(value("#ray-dashboard"), value("#ray-worker"))
        elif tab == "simulator":
            command_id, args = simulator_request(value("#sim-device"), value("#sim-app"),
                                                 self.query_one("#sim-wait-for", Checkbox).value)
        else:
            command_id, args = launch_request(value("#launch-program"), value("#launch-args"),
                                              self.query_one("#launch-stop-on-entry", Checkbox).value)
        try:
            registry.get(command_id).args.model_validate(args)
        except ValidationError as exc:
            raise InvalidInput("; ".join(e["msg"].removeprefix("Value error, ")
                                         for e in exc.errors()) + ".") from None
        return command_id, args

    def _submit(self) -> None:
        if self.busy:
            return
        try:
            command_id, args = self.request()
        except DebuggerError as exc:
            self.failed(exc.message)
            return
        self.busy = True
        waiting = command_id == "attach_sim" and args.get("wait_for")
        self.query_one("#attach-error", Static).update(
            "waiting for the app to launch… (Cancel stops waiting)" if waiting else "starting…")
        self.query_one("#attach-ok", Button).disabled = True
        self.app.post_message(StartSession(command_id, args))

    def failed(self, message: str) -> None:
        """The app could not start the session: say why and let the person retry."""
        self.busy = False
        self.query_one("#attach-ok", Button).disabled = False
        self.query_one("#attach-error", Static).update(Text(message, style="bold"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "attach-ok":
            self._submit()
        elif event.button.id == "attach-cancel":
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
