"""Adapter profiles and the backend classes the registry names
(backends.adapters: debugpy, lldb-dap, dlv).

A profile says how to start its adapter and how to word launch and attach
arguments; everything else is the generic DapBackend.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import importlib.util
import json
import logging
import os
import re
import subprocess
import sys
from typing import Any

# NODELAY_DIR: holds the sitecustomize that sets TCP_NODELAY on debugpy's sockets
from ..early_adapter import NODELAY_DIR, debugpy_adapter_argv, with_nodelay  # noqa: F401
from ..errors import BackendDied, DebuggerError, DependencyMissing, InvalidInput, Timeout
from ..models import (STDIN_PIPE, AttachRequest, ContinuedEvent, EvalResult, LaunchRequest,
                      OutputEvent, Variable)
from ..process import spawn
from .backend import DapBackend
from .client import DapClient
from .profile import AdapterProfile, stdin_path

log = logging.getLogger("backends.dap")

#: the debuggee's stdin file, read by _nodelay/sitecustomize.py
STDIN_ENV = "TUI_DEBUGGER_STDIN"


# =============================================================================== debugpy


#: sha256 of the pydevd.py (debugpy 1.8.22's) whose stopped thread our
#: sitecustomize wakes for every queued request (`_prompt_wakeups`): with it,
#: the program is handed the digest and a stop's reads go out together; with
#: any other pydevd they go one at a time, as pydevd needs.
PYDEVD_WAKEUPS_SHA256 = "d1809d00fab0b71a6de98bef69f277669e4b274c277668931b56c238f2da1282"
WAKEUPS_ENV = "TUI_DEBUGGER_PYDEVD_WAKEUPS"


def pydevd_wakeups() -> str | None:
    """PYDEVD_WAKEUPS_SHA256 when this debugpy's pydevd is that one (and the
    speed-ups are on), else None."""
    if os.environ.get("TUI_DEBUGGER_PYDEVD_SPEEDUPS") == "0":
        return None
    return PYDEVD_WAKEUPS_SHA256 if _pydevd_sha256() == PYDEVD_WAKEUPS_SHA256 else None


@functools.cache
def _pydevd_sha256() -> str | None:
    """The sha256 of the pydevd.py of the debugpy we run, read once (~1 ms)."""
    try:
        spec = importlib.util.find_spec("debugpy")
        path = os.path.join(os.path.dirname(spec.origin or ""), "_vendored", "pydevd", "pydevd.py")
        with open(path, "rb") as source:
            return hashlib.sha256(source.read()).hexdigest()
    except (OSError, ImportError, AttributeError, ValueError):
        return None


#: Each thread stops at its own breakpoint and says so; a step moves one thread.
#: In its default mode (stop every thread at each stop, one notification) pydevd
#: answers `continue` only once a held thread has left its wait loop, which it
#: polls every 0.2 s; a breakpoint hit by another thread in that window holds
#: them all again, the answer never comes, and debugpy's adapter, which handles
#: a client's requests one at a time, answers nothing more (debugpy issue 2048).
#: The same mode lets a held thread reach a breakpoint line without a stop
#: (pydevd skips breakpoints of a thread marked suspended), so its hit is lost.
#: See docs/backends.md and docs/architecture.md ("Threads at a breakpoint").
THREAD_OPTIONS = {"stopAllThreadsOnSuspend": False, "steppingResumesAllThreads": False}


#: the injector's lines worth quoting when debugpy's attach to a PID fails
#: (gdb's and the system's own words, not its command or traceback)
_INJECTION_WORDS = re.compile(
    r"ptrace|not permitted|couldn't|cannot|can't|no symbol|not found|no such process|denied"
    r"|unable|failed to", re.IGNORECASE)
_INJECTION_NOISE = ("Running:", "Traceback", "File ", "subprocess.", "raise ", "return ",
                    "E+", "Stack where", "log.", "cli.main", "run()", "^")


def injection_failure(output: str) -> str:
    """Why debugpy's injection into a process failed, from its injector's output
    (gdb's words), and what to do instead."""
    said: list[str] = []
    for raw in output.splitlines():
        line = raw.strip()
        if not line or line.startswith(_INJECTION_NOISE) or "check_call" in line \
                or "Code injection into PID" in line:
            continue
        if _INJECTION_WORDS.search(line) and line[:200] not in said:
            said.append(line[:200])
    words = "; ".join(said[:3]) or "its injector exited with an error"
    if re.search(r"ptrace|not permitted", output, re.IGNORECASE):
        hint = ("The process cannot be traced: another debugger or tracer may hold it (a "
                "process has one at a time), or this user may not trace it (debug it as its "
                "own user, or allow it: `echo 0 | sudo tee /proc/sys/kernel/yama/ptrace_scope`); "
                "or ")
    elif re.search(r"gdb: (command )?not found", output):
        hint = "Install gdb (Debian/Ubuntu: `apt-get install gdb`); or "
    else:
        hint = ""
    return (f"debugpy's injection with gdb failed ({words}). {hint}"
            f"{'s' if hint else 'S'}tart the program with `python -m debugpy --listen "
            "127.0.0.1:5678 PROGRAM` and attach to 127.0.0.1:5678, which needs no gdb.")


class DebugpyProfile(AdapterProfile):
    name = "debugpy"
    adapter_id = "debugpy"
    install_hint = f"Install it: {sys.executable} -m pip install debugpy"
    attach_pid = True
    attach_remote = True
    # Uncaught exceptions stop the program unless the session says otherwise.
    default_exception_filters = ("uncaught",)
    # A program given an input runs through runInTerminal, started by us.
    run_in_terminal = True
    program_input = True
    # pydevd counts a completion's start from 0 whatever columnsStartAt1 says.
    completion_start_base = 0
    # showReturnValue: a step out's value is the caller's local "(return) f"
    return_value_prefix = "(return) "

    #: set TCP_NODELAY inside debugpy's processes (see docs/backends/dap.md)
    nodelay = True
    # pydevd answers these from the stopped thread, which takes one queued command
    # per wake-up and clears its wake-up event after waking: a second request that
    # arrives while it wakes waits out its 0.2 s poll (docs/backends/dap.md).
    inspect_one_at_a_time = True
    per_thread_stops = True  # THREAD_OPTIONS
    # For a launched program debugpy answers a detach only once the program has
    # ended (or after its own 5 s grace, when it ends it): do not wait for that.
    detach_answer_timeout = 0.5

    follows_children = True
    # pydevd names a frame by id(frame) and a scope by its frame's id: a loop
    # stepped through keeps both (traced: frame 2, locals 3 at every step)
    stop_ids_carry_over = True

    def slow_first_stop_hint(self, program_python: str | None) -> str | None:
        found = re.match(r"Python (\d+)\.(\d+)", program_python or "")
        version = (int(found.group(1)), int(found.group(2))) if found else sys.version_info[:2]
        named = f"Python {version[0]}.{version[1]}"
        traced = ("the code holding a breakpoint" if version >= (3, 12) else "all code")
        text = (f"Still starting: on {named} debugpy traces every line of {traced}, so a "
                "breakpoint late in a long module takes long to reach (100,000 lines: "
                "22 s on 3.11).")
        if version != tuple(sys.version_info[:2]):
            text += (f" debugpy was installed for Python {sys.version_info[0]}."
                     f"{sys.version_info[1]}: on {named} its tracer runs without its compiled "
                     "speed-ups, and each line event of a big module costs in proportion to "
                     "its size (the same module: about 4 minutes on 3.12); a breakpoint "
                     "inside a function is reached sooner.")
        return text

    def __init__(self, backend: DapBackend, *, nodelay: bool | None = None) -> None:
        super().__init__(backend)
        if nodelay is not None:
            self.nodelay = nodelay

    def child_attach(self, arguments: dict[str, Any]) -> AttachRequest | None:
        """debugpy's startDebugging configuration: attach to its adapter's client
        port ("connect") with the subprocess's id, the rest as the parent had it."""
        connect = arguments.get("connect") or {}
        if not isinstance(arguments.get("subProcessId"), int) or not connect.get("port"):
            return None
        extra = {k: v for k, v in arguments.items() if k not in ("connect", "host", "port")}
        extra["request"] = "attach"
        return AttachRequest(host=str(connect.get("host") or "127.0.0.1"),
                             port=int(connect["port"]), extra=extra)

    def adapter_argv(self) -> list[str]:
        # the command the host may have started already (backends/early_adapter.py)
        return debugpy_adapter_argv()

    # At a userUnhandled stop pydevd appends its own notes to the frame's name and
    # the exception's id: "test_add (Current frame)", "AssertionError       (note:
    # full exception trace is shown but execution is paused at: test_add)".
    _NOTE = re.compile(r"\s+\((?:Current frame|note: full exception trace[^)]*)\)$")

    def frame_name(self, name: str) -> str:
        return self._NOTE.sub("", name)

    def exception_text(self, info, stopped):
        info = {**info, "exceptionId": self._NOTE.sub("", str(info.get("exceptionId") or ""))}
        return super().exception_text(info, stopped)

    async def start_adapter(self, request: LaunchRequest | AttachRequest) -> DapClient:
        if isinstance(request, AttachRequest) and request.pid is None and request.port:
            # `python -m debugpy --listen HOST:PORT` runs an adapter of its own on
            # that port: speak DAP to it directly.
            return await DapClient.connect_tcp(
                request.host or "127.0.0.1", request.port, name=self.name,
                connect_timeout=10.0, default_timeout=self.request_timeout,
                run_in_terminal=self.run_in_terminal,
                output_sink=self.backend._terminal_output,
            )
        client = await super().start_adapter(request)
        # The host plays debugpy's launcher (debugpy_launcher.py).
        client.stand_in_for_debugpy_launcher = True
        if self.nodelay:
            # A launcher we start for runInTerminal (a command the host does not
            # play itself) starts the program with the adapter's access token on
            # its command line; our sitecustomize in the launcher moves it to the
            # program's environment, as it does when the adapter starts it.
            client.terminal_env["PYTHONPATH"] = with_nodelay(os.environ.get("PYTHONPATH"))
        return client

    def adapter_env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.nodelay:
            env["PYTHONPATH"] = with_nodelay(env.get("PYTHONPATH"))
        return env

    def launch_arguments(self, request: LaunchRequest) -> dict[str, Any]:
        extra = dict(request.extra)
        program = os.path.abspath(request.program)
        if "module" not in extra and "code" not in extra and not os.path.isfile(program):
            raise InvalidInput(
                f"There is no Python file at {program}. Check the path, or pass a module "
                "with launchConfig {\"module\": \"name\"}.",
                program=program,
            )
        env = {**request.env, **(extra.pop("env", None) or {})}
        if request.stdin is not None and request.stdin != STDIN_PIPE:
            # debugpy cannot redirect stdin; our sitecustomize, loaded first in
            # the program, opens this file as fd 0 (the default is end of file).
            env[STDIN_ENV] = stdin_path(request)
            env["PYTHONPATH"] = with_nodelay(env.get("PYTHONPATH", os.environ.get("PYTHONPATH")))
        if self.nodelay:
            base = env.get("PYTHONPATH", os.environ.get("PYTHONPATH"))
            env["PYTHONPATH"] = with_nodelay(base)
            if (digest := pydevd_wakeups()) is not None:
                # Its stopped thread wakes for every queued request: a stop's
                # stack, scopes and locals may be asked for together.
                env[WAKEUPS_ENV] = digest
                self.inspect_one_at_a_time = False
        arguments: dict[str, Any] = {
            "type": "python",
            "request": "launch",
            "name": os.path.basename(program),
            "program": program,
            "args": list(request.args),
            "cwd": request.cwd or os.getcwd(),
            "env": env,
            # the user's interpreter, chosen by the session (backends/python_env.py)
            "python": list(extra.pop("python", None) or [sys.executable]),
            "console": "internalConsole",
            "redirectOutput": True,
            "justMyCode": True,
            "stopOnEntry": request.stop_on_entry,
            # Child Pythons (multiprocessing, subprocess, os.fork) come back as
            # startDebugging: each gets a session of its own (docs/architecture.md).
            "subProcess": True,
            "showReturnValue": True,
            # sys.exit(n) is how a program means to end, not a crash to stop at.
            "breakOnSystemExit": [],
            "variablePresentation": VARIABLE_PRESENTATION,
            **THREAD_OPTIONS,
        }
        if "module" in extra or "code" in extra:
            arguments.pop("program")
        if "console" not in extra:
            # We start the program (runInTerminal), so its output comes through
            # pipes we read in 64 KiB chunks rather than as one DAP output event
            # per write (2,000,000 printed lines: 42 s through events, against
            # 4.6 s for the program alone), and its input is ours to give.
            arguments["console"] = "integratedTerminal"
            arguments["redirectOutput"] = False
            # Its output is a pipe, not a terminal: unbuffered, so what it printed
            # before a stop (or a prompt before it reads) shows at once.
            arguments["env"] = {"PYTHONUNBUFFERED": "1", **arguments["env"]}
        if "justMyCode" not in extra and extra.get("module") != "pytest" and _is_library_code(
                extra.get("module"), program, arguments["python"][0], arguments["cwd"]):
            # With justMyCode the library's own lines never stop: `-m json.tool` or a
            # copy of the stdlib's calendar.py would run to its end without a word.
            arguments["justMyCode"] = False
        # Our sitecustomize wraps subprocess.Popen.__init__ in the program's
        # process: an error a library's Popen raises (a missing `hg` probed by a
        # plugin) passes through that frame, which justMyCode would take for
        # the user's code and stop at as user-unhandled. It is library code.
        rules = [{"path": NODELAY_DIR, "include": False}]
        if isinstance(extra.get("rules"), list):
            rules = [*extra.pop("rules"), *rules]
        arguments["rules"] = rules
        arguments.update(extra)
        self._note_thread_mode(arguments)
        return arguments

    def _note_thread_mode(self, arguments: dict[str, Any]) -> None:
        """A launch configuration may ask for debugpy's own all-stop mode back."""
        self.per_thread_stops = arguments.get("stopAllThreadsOnSuspend") is False
        self.backend.steps_keep_others_held = arguments.get("steppingResumesAllThreads") is False

    def start_failure(self, kind: str, arguments: dict[str, Any]):
        """An attach to a PID whose injection failed: debugpy's adapter says so
        in its output ("Attach to PID failed.", then the injector's output, within
        about a second) and leaves the attach unanswered for 60 s."""
        pid = arguments.get("processId")
        if kind != "attach" or pid is None:
            return None
        told = False

        def watch(message: dict[str, Any]) -> str | None:
            nonlocal told
            body = message.get("body") or {}
            if body.get("category") != "stderr":
                return None
            text = str(body.get("output") or "")
            if not told:
                told = text.startswith("Attach to PID failed.")
                return None
            return injection_failure(text)

        return watch

    def attach_arguments(self, request: AttachRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "type": "python", "request": "attach", "justMyCode": True, "subProcess": False,
            "variablePresentation": VARIABLE_PRESENTATION,
            **THREAD_OPTIONS,
        }
        if request.pid is not None:
            arguments["processId"] = request.pid
        elif request.port is None:
            raise InvalidInput(
                "Attach to a Python process needs a PID, or HOST:PORT of a program "
                "started with `python -m debugpy --listen HOST:PORT`."
            )
        if request.path_map:
            arguments["pathMappings"] = [
                {"remoteRoot": remote, "localRoot": local}
                for remote, local in request.path_map.items()
            ]
        arguments.update(request.extra)
        self._note_thread_mode(arguments)
        return arguments


class DebugpyBackend(DapBackend):
    name = "debugpy"
    profile_class = DebugpyProfile

    def __init__(self, emit, *, nodelay: bool | None = None, **options: Any) -> None:
        super().__init__(emit, **options)
        if nodelay is not None and isinstance(self.profile, DebugpyProfile):
            self.profile.nodelay = nodelay

    def breakpoint_message(self, text: str) -> str:
        # debugpy's advice is a launch.json edit; ours is a launch option.
        if "excluded by filters" in text and "justMyCode" in text:
            return ("In library code, which this session skips (justMyCode): start the "
                    "program again with --no-just-my-code (MCP: justMyCode false; launch.json: "
                    "\"justMyCode\": false) to stop and step there.")
        return text


# =============================================================================== lldb-dap


class LldbDapProfile(AdapterProfile):
    """lldb-dap (formerly lldb-vscode) over stdio. Its repl runs LLDB commands."""

    name = "lldb-dap"
    adapter_id = "lldb-dap"
    # A gdb-remote server (lldb-server gdbserver) holds its program stopped.
    remote_attach_stops = True
    repl_is_command_language = True
    attach_pid = True
    attach_wait_for = True
    attach_remote = True
    core_files = True
    #: an adapter command chosen by the caller (Xcode's, from `xcrun --find lldb-dap`)
    explicit_argv: list[str] | None = None
    #: the FIFOs the launched program writes its stdout and stderr to (program_pipes.py)
    output_paths: dict[str, str] | None = None

    def adapter_argv(self) -> list[str]:
        from ..adapters import _native_hint, find_lldb_dap

        if self.explicit_argv:
            return list(self.explicit_argv)
        path = find_lldb_dap()
        if not path:
            raise DependencyMissing(
                "lldb-dap was not found. " + _native_hint("lldb-19  (provides lldb-dap-19)"),
                adapter=self.name,
            )
        return [path]

    def launch_arguments(self, request: LaunchRequest) -> dict[str, Any]:
        program = os.path.abspath(request.program)
        if not os.path.isfile(program):
            raise InvalidInput(f"There is no program at {program}. Check the path.")
        arguments: dict[str, Any] = {
            "program": program,
            "args": list(request.args),
            "cwd": request.cwd or os.getcwd(),
            "stopOnEntry": request.stop_on_entry,
        }
        if request.env:
            # lldb-dap 19 takes "NAME=VALUE" strings; later versions take either form.
            arguments["env"] = [f"{k}={v}" for k, v in request.env.items()]
        arguments.update(request.extra)
        # Its program otherwise reads a pty nobody writes: a read waits forever.
        from ..lldb_cli.protocol import lldb_quote

        stdin = stdin_path(request)
        own = [f"settings set target.input-path {lldb_quote(stdin)}"]
        if self.output_paths:
            own += [f"settings set target.output-path {lldb_quote(self.output_paths['stdout'])}",
                    f"settings set target.error-path {lldb_quote(self.output_paths['stderr'])}"]
        arguments["preRunCommands"] = [*own, *(arguments.get("preRunCommands") or [])]
        return arguments

    def attach_arguments(self, request: AttachRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {}
        if request.program:
            arguments["program"] = os.path.abspath(request.program)
        if request.pid is not None:
            arguments["pid"] = request.pid
        elif request.wait_for:
            arguments["program"] = request.program or request.wait_for
            arguments["waitFor"] = True
        elif request.port is not None:
            arguments["gdb-remote-port"] = request.port
            arguments["gdb-remote-hostname"] = request.host or "127.0.0.1"
            # The server holds its program before the first instruction: keep it
            # there (as gdb's `target remote` does) so breakpoints can be set first.
            arguments["stopOnEntry"] = True
        else:
            raise InvalidInput("Attach with lldb-dap needs a PID, a process name to wait for, "
                               "or HOST:PORT of a gdb-remote server.")
        if request.path_map:
            arguments["sourceMap"] = [[remote, local] for remote, local in request.path_map.items()]
        arguments.update(request.extra)
        return arguments

    def core_arguments(self, request: LaunchRequest) -> dict[str, Any]:
        program = os.path.abspath(os.path.join(request.cwd or os.getcwd(), request.program))
        core = os.path.abspath(os.path.join(request.cwd or os.getcwd(), request.core_file or ""))
        for what, path in (("program", program), ("core file", core)):
            if not os.path.isfile(path):
                raise InvalidInput(f"There is no {what} at {path}. Check the path.")
        # lldb-dap opens a core through its attach request.
        return {"program": program, "coreFile": core, **request.extra}


LEFT_IN_EXPRESSION = ('The process has been left at the point where it was interrupted, use '
                      '"thread return -x" to return to the state before expression evaluation.')
UNWOUND = "The process has been returned to the state before expression evaluation."
#: how long an unwound expression waits for lldb-dap to tell its stop (_unwind):
#: it comes 10-30 ms after the answer on an idle machine, and the wait ends
#: then; 1 s was outlasted in a run of three test files at once
EXPRESSION_STOP_WAIT_S = 5.0
#: LLDB's first line for an expression stopped inside (a signal, a breakpoint),
#: which is what says it was left there: the second (LEFT_IN_EXPRESSION) did not
#: always reach the repl's answer (1 run in ~5 of the forking-expression fault
#: test, lldb-dap 19), and a crash left in place then killed the program at the
#: next continue
INTERRUPTED = re.compile(r"Execution was interrupted, reason: ")
#: what lldb-dap reads as a variable path without running code: `a`, `a.b`, `a->b[2]`
VARIABLE_PATH = re.compile(r"[A-Za-z_]\w*(?:(?:\.|->)[A-Za-z_]\w*|\[\d+\])*")
#: the persistent result an `expression` command made: `(int) $3 = 0`
RESULT_NAME = re.compile(r"^\(.*?\) (\$\d+) = ", re.M)


class LldbDapBackend(DapBackend):
    """lldb-dap, with lldb 19's quirks smoothed so that it reads like the lldb-cli
    backend (docs/backends/native.md):

    - the stop at entry and the stop after a pause both come as reason
      "exception" with "signal SIGSTOP": reported as "entry" and "pause";
    - `waitFor` needs a program path: a bare process name waits through
      `process attach --waitfor` instead;
    - there is no readMemory request (and lldb-dap 19 dies on one): memory is
      read with `memory read` in the repl;
    - lldb-dap 19 often crashes while it exits, after `terminated`, and sends
      its crash report as stderr output: dropped.
    """

    name = "lldb-dap"
    profile_class = LldbDapProfile
    memory_read_limit = 1 << 20
    #: lldb-dap 19 ignores DAP's instruction granularity (it steps a line):
    #: its repl's own instruction steps do it
    step_instruction_commands = {False: "thread step-inst", True: "thread step-inst-over"}

    def __init__(self, emit, *, adapter_argv: list[str] | None = None, **options: Any) -> None:
        super().__init__(emit, **options)
        if adapter_argv:
            self.profile.explicit_argv = list(adapter_argv)
        self._entry_stop_pending = False
        self._pause_requested = False
        #: HOST:PORT of a gdb-remote server, when attached to one; and whether it went away
        self._remote: str | None = None
        self._remote_lost = False
        #: the threads told stopped at a gdb-remote program's entry, until it first
        #: runs: None once it has (see _on_event)
        self._entry_threads: set[Any] | None = None
        #: signals an unwound expression left as the thread's stop reason, kept from
        #: the program until it has run again (_resumed)
        self._held_signals: set[str] = set()
        #: an expression that may run code is being evaluated, or was interrupted
        #: and its own stop has not been read yet: a stop read then is the
        #: expression's, not the program's (_note_stopped, _run_expression)
        self._expression_stop_due = False
        self._expression_stop_read = asyncio.Event()
        self._pipes = None  # the launched program's stdout and stderr (ProgramPipes)

    async def launch(self, request: LaunchRequest, configure) -> None:
        if request.core_file:
            self._require_idle()
            self._launched = False
            self.post_mortem = True
            arguments = self.profile.core_arguments(request)
            await self._start_session("attach", request, arguments, configure,
                                      f"the core file {arguments['coreFile']}")
            return
        self._entry_stop_pending = request.stop_on_entry
        if self._pipes is None and "stdio" not in request.extra:
            # Its output as written: two pipes, not lldb-dap's pty (program_pipes.py).
            from ..program_pipes import ProgramPipes

            self._pipes = ProgramPipes(self._program_output)
            self._pipes.open()
            self.profile.output_paths = self._pipes.paths
        await super().launch(request, configure)

    def _program_output(self, category: str, text: str) -> None:
        # Straight to the session, not behind the adapter's queued messages: what
        # the program wrote before a stop is told before the stop.
        self._publish(OutputEvent(category=category, text=text))

    async def dispose(self) -> None:
        await super().dispose()
        if self._pipes is not None:
            self._pipes.close()

    async def attach(self, request: AttachRequest, configure) -> None:
        import shutil

        if request.pid is None and request.wait_for and not request.program:
            found = request.wait_for if os.sep in request.wait_for else shutil.which(
                request.wait_for)
            if found:
                request = request.model_copy(update={"program": os.path.abspath(found)})
            else:
                quoted = '"' + request.wait_for.replace("\\", "\\\\").replace('"', '\\"') + '"'
                request = request.model_copy(update={"extra": {
                    "program": None, "waitFor": False,
                    "attachCommands": [f"process attach --name {quoted} --waitfor"],
                    **request.extra,
                }})
        # A gdb-remote server's program is held at its entry: that first stop says so.
        self._entry_stop_pending = request.pid is None and request.port is not None
        if self._entry_stop_pending:
            self._remote = f"{request.host or '127.0.0.1'}:{request.port}"
            self._entry_threads = set()
        await super().attach(request, configure)

    def _note_stopped(self, body) -> bool | None:
        """lldb-dap 19 may tell a gdb-remote program's entry stop twice: its
        configurationDone tells it (stopOnEntry), and the connect's own stop, which
        its event thread skips only while configurationDone has not come, is told
        again when that thread reads it late (with both cores loaded, 4 attaches
        in 13: two identical SIGSTOP stops of one thread). Read as a new stop, the
        repeat replaced the entry stop with an "exception" one: it is kept from
        the session here, on the reader, before it counts as a stop. The program
        cannot stop anew before it runs, and lldb-dap tells `continued` when it
        does."""
        if self._expression_stop_due:
            # The interrupted expression's own stop, told by lldb-dap's event
            # thread around or after the evaluate's answer. The expression is
            # unwound (_unwind) and the program is where it was: no new stop.
            # Told to the session, it was read after the next continue had gone
            # out and taken for that continue's stop (ticks stayed 1 in CI).
            log.debug("lldb-dap told an interrupted expression's stop: not the program's")
            self._expression_stop_due = False
            self._expression_stop_read.set()
            return False
        if self._entry_threads is not None:
            thread = body.get("threadId")
            if thread in self._entry_threads:
                log.debug("lldb-dap told the entry stop of thread %s again: dropped", thread)
                return False
            self._entry_threads.add(thread)
        return DapBackend._note_stopped(self, body)

    def _note_continued(self, body) -> bool | None:
        self._entry_threads = None  # it ran: a stop from now on is a new one
        # lldb-dap's event thread tells in order: an expression's stop not told
        # before the program ran again never will be
        self._expression_stop_due = False
        self._resumed()  # (a continue or step typed in the repl tells only this)
        return DapBackend._note_continued(self, body)

    _NOTES = {**DapBackend._NOTES, "stopped": _note_stopped, "continued": _note_continued}

    async def _resume(self, command: str, arguments: dict[str, Any], thread_id: int) -> None:
        await super()._resume(command, arguments, thread_id)
        # Answered, it was resumed: a stop from now on is a new one, whether or
        # not a `continued` came before it.
        self._entry_threads = None
        self._resumed()

    def _lost_text(self) -> str:
        return (f"lldb lost the connection to the gdb-remote server at {self._remote}: it went "
                "away, or the network did. Start it again and attach anew.")

    async def pause(self, thread_id: int | None) -> None:
        self._pause_requested = True
        await super().pause(thread_id)

    def _apply_capabilities(self, body) -> None:
        super()._apply_capabilities(body)
        self.capabilities.read_memory = True
        self.capabilities.instruction_step = True

    async def step_instruction(self, thread_id: int, over: bool) -> None:
        self._require_stopped(action="step")
        frames, _ = await self.stack_trace(thread_id, 0, 1)
        if not frames:
            raise InvalidInput(f"Thread {thread_id} has no frames to step in.")
        generation = self._stop_generation
        # With a frame, lldb-dap's repl selects that frame's thread first.
        await self._evaluate(self.step_instruction_commands[over], frames[0].id, "repl",
                             self.profile.request_timeout)
        self._resumed()
        if self._stop_generation == generation and self._state == "stopped":
            self._state = "running"
            self._events.put_nowait(ContinuedEvent(thread_id=thread_id))

    async def disassemble(self, address: str, count: int = 32, offset: int = 0):
        """lldb-dap 19 decodes a negative instructionOffset from a guessed byte
        offset, mid-instruction: start at the enclosing function instead."""
        if offset >= 0:
            return await super().disassemble(address, count, offset)
        self._require_stopped()
        start = None
        with contextlib.suppress(DebuggerError):
            lookup = await self.raw_command(f"image lookup -a {address}",
                                            self.profile.request_timeout)
            found = re.search(r"Summary: \S+?`\S+(?: \+ (\d+))?", lookup)
            if found:
                start = int(address, 16) - int(found.group(1) or 0)
        if start is None:
            return await super().disassemble(address, count, 0)
        pc = int(address, 16)
        listing = await super().disassemble(hex(start), pc - start + count + 1, 0)
        index = next((i for i, ins in enumerate(listing) if int(ins.address, 16) >= pc),
                     len(listing))
        first = max(0, index + offset)
        return listing[first:first + count]

    async def _data_breakpoint_info(self, spec):
        # lldb-dap 19 reads `name` as an address when it is evaluated in a frame:
        # watch what the expression names, at its address, for its size.
        if spec.address and spec.size:
            # lldb-dap's own dataId form: hex address without 0x, a slash, the size
            return {"dataId": f"{int(spec.address, 16):X}/{int(spec.size)}",
                    "accessTypes": ["read", "write", "readWrite"]}
        if spec.frame_id is None:
            raise InvalidInput("A watchpoint on lldb-dap needs a frame to read the expression in.")
        info = await self._request(
            "dataBreakpointInfo", {"name": f"&({spec.expression})", "frameId": spec.frame_id})
        if info.get("dataId"):
            with contextlib.suppress(DebuggerError):
                value = await self._evaluate(spec.expression, spec.frame_id, "watch",
                                             self.profile.request_timeout)
                info = {**info, "type": value.type}
        elif "undeclared identifier" in str(info.get("description") or "") or \
                "error:" in str(info.get("description") or ""):
            info = {**info, "description": str(info["description"]).strip().splitlines()[0]}
        return info

    async def _translate(self, message):
        from ..models import ExitedEvent, OutputEvent, StoppedEvent, TerminatedEvent

        if self._pipes is not None and message.get("event") in ("stopped", "exited",
                                                                "terminated"):
            self._pipes.drain()  # what it wrote before it stopped or ended comes first
        event = await super()._translate(message)
        if isinstance(event, OutputEvent) and event.category in ("console", "stdout"):
            # (what lldb's Python prints comes as the adapter's stdout)
            event = _without_lldb_chatter(event)
            if event is None:
                return None
        if self._remote and isinstance(event, ExitedEvent) and event.exit_code == -1:
            # lldb's own words for a gdb-remote connection that dropped: status -1
            self._remote_lost = True
            self._publish(OutputEvent(category="important", text=self._lost_text() + "\n"))
        if self._remote_lost and isinstance(event, TerminatedEvent):
            event = event.model_copy(update={"reason": self._lost_text()})
        if isinstance(event, StoppedEvent) and (event.description or "").startswith(
                "watchpoint"):
            event = event.model_copy(update={"reason": "data breakpoint"})
        if self._held_signals and isinstance(event, ExitedEvent):
            self._release_held_signals()
        if isinstance(event, StoppedEvent):
            sigstop = event.reason == "exception" and (event.description or "").startswith(
                "signal SIGSTOP")
            if self._entry_stop_pending:
                event = event.model_copy(update={"reason": "entry", "text": None})
            elif self._pause_requested and (sigstop or event.reason == "step"):
                # a pause that lands while lldb single-steps internally says "trace"
                event = event.model_copy(update={"reason": "pause", "text": None})
            self._entry_stop_pending = False
            self._pause_requested = False
        elif (isinstance(event, OutputEvent) and event.category == "stderr"
              and self._adapter_terminated.is_set()):
            return None
        return event

    # ------------------------------------------------ expressions that fork
    # LLDB 19 takes a fork or vfork inside an expression (`(int)system("true")`)
    # for a crash and unwinds it, leaving the vfork child held and the program
    # blocked in the kernel: the next continue never returned (llvm-project#78515).
    # lldb-dap's evaluate always unwinds on error, so an expression that may run
    # code goes through `expression --unwind-on-error false` and its result `$N`
    # is read back as a value; a real crash is unwound here, and its signal kept
    # from the program on the next run (restored once it ran: _resumed), as LLDB
    # does when it unwinds. The same as the lldb-cli backend's helper
    # (run_expression).

    async def _evaluate_expression(self, expression: str, frame_id: int | None, context: str,
                                   timeout: float):
        from ..errors import CommandFailed
        from .values import user_error

        text = expression.strip()
        if (context == "hover" or frame_id is None or VARIABLE_PATH.fullmatch(text)
                or "`" in text or not text.isprintable()):
            # No code runs, or text that must not reach a command line (a line
            # break would end it; a backtick is substituted): lldb-dap's own evaluate.
            return await self._evaluate(expression, frame_id, context, timeout)
        async def evaluated() -> str:
            said = (await self._evaluate(
                f"`expression --unwind-on-error false --apply-fixits false -- {text}",
                frame_id, "repl", timeout)).value
            # lldb-dap echoes the command first: "(lldb) expression ..."
            return "\n".join(line for line in said.splitlines() if not line.startswith("(lldb) "))

        said = await self._run_expression(evaluated, frame_id, timeout)
        result = RESULT_NAME.search(said)
        if result is None:
            error = re.search(r"^error:.*", said, re.M | re.S)
            if error:
                raise CommandFailed(user_error(error.group(0).strip()), expression=expression)
            return EvalResult(value=said.strip())  # no value (void): the text
        return await self._evaluate(result.group(1), frame_id, "watch", timeout)

    async def raw_command(self, command: str, timeout: float) -> str:
        words = command.lstrip("`").split(None, 1)
        expression = bool(words) and words[0] in ("expression", "dwim-print")
        if not expression:
            return await super().raw_command(command, timeout)
        command = f"{words[0]} --unwind-on-error false {words[1] if len(words) > 1 else ''}"
        return await self._run_expression(
            lambda: super(LldbDapBackend, self).raw_command(command, timeout), None, timeout)

    async def _run_expression(self, run, frame_id: int | None, timeout: float) -> str:
        """What `run()` answers for an expression that may run code; one that was
        interrupted is unwound first. A stop told meanwhile, or after an
        interrupted one until its stop is read, is the expression's
        (_note_stopped); one that finished or failed tells none."""
        self._expression_stop_due = True
        self._expression_stop_read.clear()
        try:
            said = await run()
        except BaseException:
            self._expression_stop_due = False
            raise
        if not INTERRUPTED.search(said):
            self._expression_stop_due = False
            return said
        await self._unwind(said, frame_id, timeout)
        return said.replace(LEFT_IN_EXPRESSION, UNWOUND)

    async def _unwind(self, said: str, frame_id: int | None, timeout: float) -> None:
        await self._evaluate("`thread return -x", frame_id, "repl", timeout)
        # The interrupted expression's own stop is told by lldb-dap's event
        # thread after the answer (10-30 ms idle; over 1 s under load). It is
        # never the program's (_note_stopped); waiting for it here, briefly,
        # lets the answer come after it, as the stop came before the answer.
        if self._expression_stop_due:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._expression_stop_read.wait(), EXPRESSION_STOP_WAIT_S)
        signal = re.search(r"reason: signal (SIG[A-Z0-9]+)", said)
        if signal and signal.group(1) not in self._held_signals:
            await self._evaluate(f"`process handle {signal.group(1)} --pass false",
                                 frame_id, "repl", timeout)
            self._held_signals.add(signal.group(1))

    def _resumed(self) -> None:
        """The program ran (not an expression: lldb-dap hears nothing of those):
        lldb chose each thread's signal to deliver as it resumed it, so a held
        signal has been kept from the program and its handling can be restored.
        Not at the next stop: an interrupted expression's own stop is told after
        the answer, by lldb-dap's event thread, and read late (under load, after
        the hold) it released the signal before the continue, which then gave the
        program its SIGSEGV. A `continued` comes from that same thread, after any
        such stop; requests are handled in order, so a restore sent once a resume
        is answered lands after it."""
        if self._held_signals:
            self._release_held_signals()

    def _release_held_signals(self) -> None:
        held, self._held_signals = self._held_signals, set()
        for name in held:
            task = asyncio.get_running_loop().create_task(self._evaluate(
                f"`process handle {name} --pass true", None, "repl",
                self.profile.request_timeout))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def return_value(self, thread_id: int) -> Variable | None:
        """lldb-dap 19 lists no return value: lldb's own answer, through its repl
        (the thread's stop return value, described as lldb-cli describes it)."""
        self._require_stopped()
        script = (
            "script import json; t = lldb.debugger.GetSelectedTarget().GetProcess()"
            f".GetThreadByID({int(thread_id)}); v = t.GetStopReturnValue(); "
            "print('@@TDBG' + '-RV ' + json.dumps([v.GetValue(), v.GetSummary(), "
            "v.GetDisplayTypeName()] if v.IsValid() else None))"
        )
        text = await self.raw_command(script, self.profile.request_timeout)
        found = re.search(r"@@TDBG-RV (.*)", text)
        if not found:
            return None
        answer = json.loads(found.group(1))
        if not answer:
            return None
        plain, summary, type_name = answer
        value = " ".join(part for part in (plain, summary) if part) or type_name or ""
        return Variable(name="(Return Value)", value=value, type=type_name or None)

    async def read_memory(self, address: str, count: int) -> bytes:
        from ..errors import CommandFailed

        if self.adapter_capabilities.get("supportsReadMemoryRequest"):
            return await super().read_memory(address, count)
        try:
            start = int(str(address), 0)
        except ValueError:
            raise InvalidInput(f"{address!r} is not an address; give one like 0x7ffc1000.") from None
        if not 0 < count <= self.memory_read_limit:
            raise InvalidInput(f"Read between 1 and {self.memory_read_limit} bytes.")
        self._require_stopped()
        text = await self.raw_command(
            f"memory read --force --format x --size 1 --count {count} {start:#x}",
            self.profile.request_timeout,
        )
        data = bytearray()
        for line in text.splitlines():
            head, colon, rest = line.partition(":")
            if colon and head.strip().lower().startswith("0x"):
                data.extend(int(token, 16) for token in rest.split() if token.startswith("0x"))
        if not data:
            raise CommandFailed(f"lldb could not read memory at {start:#x}: {text.strip()}")
        return bytes(data[:count])


#: lldb-dap's console lines about its own doings, not the program's: the echo of
#: the settings we send before the launch, the exit status (an exited event says
#: it, and the session's status), and our own return-value query's answer
_LLDB_CHATTER = re.compile(
    r"Running preRunCommands:\n|\(lldb\) settings set target\.(?:input|output|error)-path .*\n"
    r"|Process \d+ exited with status = .*\n?|@@TDBG-RV .*\n?")


def _without_lldb_chatter(event):
    text = _LLDB_CHATTER.sub("", event.text)
    if text == event.text:
        return event
    return event.model_copy(update={"text": text}) if text.strip() else None


# =============================================================================== delve


class DelveProfile(AdapterProfile):
    """`dlv dap` listens on TCP and prints the address it chose; we connect to it."""

    name = "dlv"
    adapter_id = "go"
    attach_pid = True
    attach_remote = True
    # A headless dlv server holds its program stopped until a continue.
    remote_attach_stops = True
    core_files = True
    listen_timeout = 10.0

    def adapter_argv(self) -> list[str]:
        from ..adapters import find_dlv

        path = find_dlv()
        if not path:
            raise DependencyMissing(
                "dlv was not found. Install delve: sudo apt-get install delve, or "
                "go install github.com/go-delve/delve/cmd/dlv@latest",
                adapter=self.name,
            )
        # only our own uid may connect (delve checks the peer in /proc/net/tcp)
        return [path, "dap", "--listen", "127.0.0.1:0", "--only-same-user=true"]

    async def start_adapter(self, request: LaunchRequest | AttachRequest) -> DapClient:
        if isinstance(request, AttachRequest) and request.pid is None and request.port:
            # `dlv --headless --listen HOST:PORT` (or `dlv dap --listen`) is the adapter.
            return await DapClient.connect_tcp(
                request.host or "127.0.0.1", request.port, name=self.name,
                connect_timeout=10.0, default_timeout=self.request_timeout,
                run_in_terminal=self.run_in_terminal,
                output_sink=self.backend._terminal_output,
            )
        # The program inherits dlv's stdin: the user's file, else end of file
        # (an open pipe would hold a read forever).
        stdin_file = None
        if isinstance(request, LaunchRequest):
            stdin_file = open(stdin_path(request), "rb")  # noqa: SIM115 - closed below
        try:
            process = await spawn(self.adapter_argv(), what="dlv adapter",
                                  stdin=stdin_file.fileno() if stdin_file else subprocess.DEVNULL,
                                  install_hint="Install delve: sudo apt-get install delve")
        finally:
            if stdin_file is not None:
                stdin_file.close()
        assert process.proc.stdout is not None
        try:
            line = await asyncio.wait_for(process.proc.stdout.readline(), self.listen_timeout)
        except asyncio.TimeoutError:
            await process.kill_group()
            raise Timeout(f"dlv did not say where it listens within {self.listen_timeout:g} s.")
        found = re.search(rb"listening at:?\s*\[?([0-9a-fA-F.:]+?)\]?:(\d+)", line)
        if not found:
            stderr = b""
            if process.proc.stderr is not None:
                try:
                    stderr = await asyncio.wait_for(process.proc.stderr.read(4096), 0.5)
                except asyncio.TimeoutError:
                    pass
            await process.kill_group()
            said = (line + stderr).decode(errors="replace").strip()
            if not said:
                code = process.proc.returncode
                said = (f"it exited with code {code} and printed nothing" if code is not None
                        else "it printed nothing")
            raise BackendDied(
                f"dlv did not start its DAP server: {said}. Check that {self.adapter_argv()[0]} "
                "is delve (`dlv version`)."
            )
        host, port = found.group(1).decode(), int(found.group(2))
        return await DapClient.connect_tcp(
            host, port, name=self.name, process=process,
            default_timeout=self.request_timeout,
            run_in_terminal=self.run_in_terminal,
            output_sink=self.backend._terminal_output,
            # The program writes to dlv's stdout and stderr (dlv 1.20 has no
            # outputMode); its stderr, panics included, was read only for dlv's own
            # error reports.
            program_stderr=True,
        )

    def launch_arguments(self, request: LaunchRequest) -> dict[str, Any]:
        program = os.path.abspath(request.program)
        if not os.path.exists(program):
            raise InvalidInput(f"There is no program at {program}. Check the path.")
        if request.core_file:
            core = os.path.abspath(os.path.join(request.cwd or os.getcwd(), request.core_file))
            if not os.path.isfile(core):
                raise InvalidInput(f"There is no core file at {core}. Check the path.")
            return {"mode": "core", "program": program, "coreFilePath": core,
                    "cwd": request.cwd or os.getcwd(), **request.extra}
        arguments: dict[str, Any] = {
            # A built binary runs as is; a directory or .go file is built by dlv.
            "mode": "exec" if os.path.isfile(program) and not program.endswith(".go") else "debug",
            "program": program,
            "args": list(request.args),
            "cwd": request.cwd or os.getcwd(),
            "stopOnEntry": request.stop_on_entry,
        }
        if request.env:
            arguments["env"] = dict(request.env)
        arguments.update(request.extra)
        return arguments

    def attach_arguments(self, request: AttachRequest) -> dict[str, Any]:
        arguments: dict[str, Any]
        if request.pid is not None:
            arguments = {"mode": "local", "processId": request.pid}
        elif request.port is not None:
            # Held where the headless server stopped it, so breakpoints come first.
            arguments = {"mode": "remote", "stopOnEntry": True}
        else:
            raise InvalidInput("Attach with dlv needs the PID of a running Go program, or "
                               "HOST:PORT of `dlv --headless --listen HOST:PORT`.")
        if request.path_map:
            # delve's direction: from the path here to the path the program knows
            arguments["substitutePath"] = [
                {"from": local, "to": remote} for remote, local in request.path_map.items()
            ]
        return {**arguments, **request.extra}


class DelveBackend(DapBackend):
    """delve's DAP server, with what it does differently (measured with dlv 1.20):

    - when the program ends it sends `terminated` and no `exited`; the exit
      status is printed only once the client disconnects. So on that first
      `terminated` we disconnect, and report the status as an ExitedEvent
      before the TerminatedEvent;
    - it sends `terminated` twice (the generic backend reports one);
    - a `continue` answered after the program ended must not read as running;
    - globals are shown (showGlobalVariables) so Go has a Globals scope as C does.
    - goroutines that sit on a breakpoint when it stops, beside the one it
      reports, are stepped past it on the next continue and never reported: at
      each stop we read where the goroutines running on a thread are, and report
      those on a plain breakpoint as held hits (docs/backends.md).
    Goroutines are its threads; the program's stdout is dlv's own stdout, which
    the DAP client forwards as output.
    """

    name = "dlv"
    profile_class = DelveProfile
    exit_status_pattern = re.compile(r"Process \d+ has exited with status (-?\d+)")

    def __init__(self, emit, **options: Any) -> None:
        super().__init__(emit, **options)
        self._disconnect_sent = False
        #: each breakpoint's addresses, as read at the stops delve reported there
        self._breakpoint_pcs: dict[int | str, set[str]] = {}

    async def launch(self, request: LaunchRequest, configure) -> None:
        self.post_mortem = bool(request.core_file)
        extra = {"showGlobalVariables": True, **request.extra}
        await super().launch(request.model_copy(update={"extra": extra}), configure)

    async def disconnect(self, terminate: bool) -> None:
        self._disconnect_sent = True
        await super().disconnect(terminate)

    async def _translate(self, message):
        from ..errors import DebuggerError
        from ..models import ExitedEvent, OutputEvent, TerminatedEvent

        event = message.get("event")
        body = message.get("body") or {}
        if event == "terminated" and not self._disconnect_sent:
            # The program ended by itself. Disconnecting makes dlv print the exit
            # status; that output is translated below, in stream order, after any
            # program output still on its way.
            self._disconnect_sent = True
            try:
                await self._request("disconnect", {"terminateDebuggee": True}, timeout=3.0)
            except DebuggerError:
                return TerminatedEvent(reason="the program ended")
            return None
        if event == "output":
            found = self.exit_status_pattern.search(str(body.get("output") or ""))
            if found:
                self._publish(OutputEvent(category="console", text=str(body["output"])))
                return ExitedEvent(exit_code=int(found.group(1)))
        translated = await super()._translate(message)
        if event == "stopped" and any(self._plain_breakpoints.values()) and translated is not None:
            # Read before the stop is told, so the held hits are beside it
            # before anyone can continue.
            held = await self._goroutines_on_breakpoints(translated)
            if held:
                self._publish(translated)
                for hit in held:
                    self._publish(hit)
                return None
        return translated

    async def _goroutines_on_breakpoints(self, stop) -> list:
        """The other goroutines sitting on a plain breakpoint at this stop, as
        breakpoint stops of their own. delve reports one goroutine's stop and, on
        the next continue, steps every thread whose PC is at a breakpoint past it
        (pkg/proc/native `resume`, `FindBreakpoint` with the PC itself or the PC
        after the trap): those hits would never be told. Only a goroutine running
        on a thread can sit there (`threads` names it "(Thread N)"), so one
        `stackTrace` level each for at most a few goroutines, not every one. A
        goroutine held here is stepped past by that continue, so delve never
        reports the same hit again; a goroutine still on the line but past the
        breakpoint's address (stepped over, now mid-line) is not held. The
        address is the one delve stopped at for that breakpoint; for a
        breakpoint it has not reported yet, the line alone decides."""
        from ..models import StoppedEvent

        try:
            listed = (await self._request("threads")).get("threads") or []
        except DebuggerError:
            return []
        if stop.thread_id is not None and stop.hit_breakpoint_ids:
            top = await self._top_frame(stop.thread_id)
            if top is not None and top.instruction_pointer:
                for bp_id in stop.hit_breakpoint_ids:
                    self._breakpoint_pcs.setdefault(bp_id, set()).add(top.instruction_pointer)
        on_threads = [t["id"] for t in listed if isinstance(t.get("id"), int)
                      and t["id"] != stop.thread_id and "(Thread " in str(t.get("name") or "")]
        tops = await asyncio.gather(*(self._top_frame(g) for g in on_threads))
        held = []
        for goroutine, top in zip(on_threads, tops):
            if top is None or top.location is None or not top.location.path:
                continue
            lines = self._plain_breakpoints.get(os.path.abspath(top.location.path)) or {}
            bp_id = lines.get(top.location.line)
            if bp_id is None:
                continue
            known = self._breakpoint_pcs.get(bp_id)
            if known and top.instruction_pointer not in known:
                continue  # on the line, past the breakpoint: not a hit
            held.append(StoppedEvent(reason="breakpoint", thread_id=goroutine,
                                     all_threads_stopped=True, hit_breakpoint_ids=[bp_id]))
        return held

    async def _top_frame(self, thread_id: int):
        try:
            frames, _ = await self.stack_trace(thread_id, 0, 1)
        except DebuggerError:
            return None
        return frames[0] if frames else None

    def _publish(self, event) -> None:
        from ..models import ContinuedEvent

        if isinstance(event, ContinuedEvent) and self._state == "ended":
            return  # the answer to a continue that the program's end overtook
        super()._publish(event)


#: debugpy folds function- and class-valued locals into "function variables" /
#: "class variables" groups: `compare = operator.le`, the variable that held a
#: bug, was in no stop answer, no `locals`, and `set` could not reach it. They
#: are the frame's names like any other, so they are shown inline; only the
#: dunder names (__builtins__, __loader__...) stay grouped.
VARIABLE_PRESENTATION = {"function": "inline", "class": "inline", "protected": "inline",
                         "special": "group"}


def _is_library_code(module: str | None, program: str, python: str, cwd: str) -> bool:
    """Whether what runs is the standard library's or an installed package's code,
    in the interpreter that runs it. pytest never is: its tests are the user's code,
    and with justMyCode a failing test stops where it failed (userUnhandled)."""
    from ..python_env import module_origin, probe

    try:
        interpreter = probe(python, "the program's Python")
    except DebuggerError:
        return False
    target = program
    if module:
        target = module_origin(python, module, cwd) or ""
        if not target:
            return False
    target = os.path.realpath(target)
    return any(target.startswith(d + os.sep) for d in interpreter.library_dirs)
