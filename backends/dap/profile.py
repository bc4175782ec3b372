"""How to start and speak to one debug adapter: `AdapterProfile`, the hooks a
profile per adapter overrides (how to start it, how to word launch and attach
arguments, its quirks), and the file a launched program reads as its stdin.
The defaults are plain DAP; the backend that drives the adapter is DapBackend
(backend.py)."""

from __future__ import annotations

import os
from typing import Any, Callable, Protocol

from ..errors import InvalidInput
from ..models import STDIN_PIPE, AttachRequest, LaunchRequest
from .client import DapClient, Message


class ProfileHost(Protocol):
    """What a profile needs of the backend it serves."""

    #: Backend.steps_keep_others_held (a launch configuration may say so)
    steps_keep_others_held: bool

    def _terminal_output(self, category: str, text: str) -> None:
        """Output of a program the adapter had us start (runInTerminal)."""


class AdapterProfile:
    """How to start and speak to one debug adapter. Subclass it per adapter and
    override the hooks; the defaults are plain DAP."""

    #: adapter name as users type it
    name = "dap"
    #: `adapterID` sent in initialize
    adapter_id = "dap"
    install_hint = ""
    #: let the adapter ask us to start the debuggee (runInTerminal reverse request)
    run_in_terminal = False
    #: evaluate in the 'repl' context runs the debugger's own commands (lldb-dap)
    repl_is_command_language = False
    #: where a completion's `start` counts from (the spec: columnsStartAt1, so 1)
    completion_start_base = 1
    attach_pid = False
    attach_wait_for = False
    #: attach HOST:PORT reaches a remote server (gdb-remote, dlv, debugpy)
    attach_remote = False
    #: launch with a core dump (LaunchRequest.core_file)
    core_files = False
    #: LaunchRequest.stdin works: the debuggee is started through runInTerminal
    #: (by us), so its input is ours to give
    program_input = False
    #: exception filter ids on by default; None keeps the adapter's own defaults
    default_exception_filters: tuple[str, ...] | None = None
    request_timeout = 30.0
    #: how long a detach waits for the adapter's answer before it goes on anyway
    detach_answer_timeout = 5.0
    #: launch/attach answer only after configurationDone and the program start
    start_timeout = 60.0
    #: send the requests a stopped thread answers (`_INSPECTION`) one at a time
    inspect_one_at_a_time = False
    #: the name prefix of the local that holds a step out's return value, where
    #: the adapter lists it among the caller's locals (debugpy's "(return) f")
    return_value_prefix: str | None = None
    #: child processes come as `startDebugging` reverse requests (debugpy's subProcess)
    follows_children = False
    #: attach HOST:PORT finds the program stopped where the server holds it (gdb-remote, dlv)
    remote_attach_stops = False
    #: Backend.stop_ids_carry_over, for this adapter
    stop_ids_carry_over = False

    def slow_first_stop_hint(self, program_python: str | None) -> str | None:
        """Backend.slow_first_stop_hint, for this adapter."""
        return None

    def start_failure(self, kind: str, arguments: dict[str, Any]
                      ) -> Callable[[Message], str | None] | None:
        """For an adapter that says a launch or attach failed only in its output,
        leaving the request unanswered until its timeout: a function given each
        `output` event during start-up that answers why the start failed (then
        the start fails at once with it), else None. None: no such adapter."""
        return None

    def child_attach(self, arguments: dict[str, Any]) -> "AttachRequest | None":
        """The attach request for a child announced by `startDebugging`."""
        return None
    #: threads stop one at a time, each with its own stopped event, and a continue
    #: lets every stopped thread go (debugpy without stopAllThreadsOnSuspend)
    per_thread_stops = False

    def __init__(self, backend: ProfileHost) -> None:
        self.backend = backend

    async def listening_adapter(self, request: LaunchRequest | AttachRequest) -> DapClient | None:
        """Attaching to HOST:PORT where an adapter of the debugger's own listens
        (`python -m debugpy --listen`, `dlv dap --listen`): a client speaking
        DAP to it; None for any other request."""
        if isinstance(request, AttachRequest) and request.pid is None and request.port:
            return await DapClient.connect_tcp(
                request.host or "127.0.0.1", request.port, name=self.name,
                connect_timeout=10.0, default_timeout=self.request_timeout,
                run_in_terminal=self.run_in_terminal,
                output_sink=self.backend._terminal_output,
            )
        return None

    async def start_adapter(self, request: LaunchRequest | AttachRequest) -> DapClient:
        """Start the adapter and return a connected client. Default: stdio."""
        return await DapClient.start_stdio(
            self.adapter_argv(),
            name=self.name,
            env=self.adapter_env(),
            install_hint=self.install_hint,
            default_timeout=self.request_timeout,
            run_in_terminal=self.run_in_terminal,
            output_sink=self.backend._terminal_output,
        )

    def adapter_argv(self) -> list[str]:
        raise NotImplementedError(f"{type(self).__name__} must say how to start its adapter")

    def adapter_env(self) -> dict[str, str] | None:
        return None

    def initialize_arguments(self) -> dict[str, Any]:
        return {
            "clientID": "tui-debugger",
            "clientName": "tui-debugger",
            "adapterID": self.adapter_id,
            "locale": "en-us",
            "pathFormat": "path",
            "linesStartAt1": True,
            "columnsStartAt1": True,
            "supportsVariableType": True,
            "supportsVariablePaging": True,
            "supportsRunInTerminalRequest": self.run_in_terminal,
            "supportsMemoryReferences": True,
            "supportsProgressReporting": False,
            "supportsInvalidatedEvent": False,
            "supportsStartDebuggingRequest": self.follows_children,
        }

    def launch_arguments(self, request: LaunchRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "program": os.path.abspath(request.program),
            "args": list(request.args),
            "cwd": request.cwd or os.getcwd(),
            "stopOnEntry": request.stop_on_entry,
        }
        if request.env:
            arguments["env"] = dict(request.env)
        arguments.update(request.extra)
        return arguments

    def attach_arguments(self, request: AttachRequest) -> dict[str, Any]:
        if request.pid is None:
            raise InvalidInput(f"The {self.name} adapter attaches by process id; pass a PID.")
        return {"pid": request.pid, **request.extra}

    def frame_name(self, name: str) -> str:
        return name

    def exception_text(self, info: Message, stopped: Message) -> str | None:
        """The line that says what was thrown, from an exceptionInfo body."""
        exception_id = str(info.get("exceptionId") or "").strip()
        description = str(info.get("description") or "").strip()
        if exception_id and description and not description.startswith(exception_id):
            return f"{exception_id}: {description}"
        return description or exception_id or stopped.get("text") or None


def stdin_path(request: LaunchRequest) -> str:
    """The file the program reads as stdin: the one the user chose, or the null
    device (end of file at once)."""
    if request.stdin is None or request.stdin == STDIN_PIPE:
        # No input, or a pipe this adapter cannot give (Backend.send_input says so).
        return os.devnull
    path = os.path.abspath(os.path.join(request.cwd or os.getcwd(), request.stdin))
    if not os.path.exists(path) or os.path.isdir(path):
        raise InvalidInput(f"There is no file {path} to give the program as its stdin.")
    return path
