"""debugpy: its adapter profile and backend (the registry's "debugpy").

How debugpy's adapter is started (the host may have started it already,
backends/early_adapter.py), how a launch or attach is worded for it, and our
sitecustomize in its processes (TCP_NODELAY, the program's stdin, pydevd's
wake-ups: _nodelay/sitecustomize.py). Everything else is the generic
DapBackend.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib.util
import os
import re
import sys
import time
from typing import Any

# NODELAY_DIR: holds the sitecustomize that sets TCP_NODELAY on debugpy's sockets
from ..early_adapter import NODELAY_DIR, debugpy_adapter_argv, with_nodelay
from ..errors import DebuggerError, InvalidInput
from ..models import STDIN_PIPE, AttachRequest, LaunchRequest
from .backend import DapBackend
from .client import DapClient
from .profile import AdapterProfile, stdin_path
from .python_watch import PythonWatches

#: the debuggee's stdin file, read by _nodelay/sitecustomize.py
STDIN_ENV = "TUI_DEBUGGER_STDIN"


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
        # `python -m debugpy --listen HOST:PORT` runs an adapter of its own on
        # that port: speak DAP to it directly.
        listening = await self.listening_adapter(request)
        if listening is not None:
            return listening
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


#: how long a pause waits for its stop before it is asked again, and how often
PAUSE_AGAIN_S = 0.5
PAUSE_TRIES = 6
#: how long a pause waits for the threads a continue let go to say they run
WAKE_WAIT_S = 2.0


class DebugpyBackend(PythonWatches, DapBackend):
    name = "debugpy"
    profile_class = DebugpyProfile

    def _apply_capabilities(self, body) -> None:
        super()._apply_capabilities(body)
        # debugpy has none; ours are kept in the program (python_watch.py)
        self.capabilities.data_breakpoints = True
        self.capabilities.data_breakpoint_events = True

    def __init__(self, emit, *, nodelay: bool | None = None, **options: Any) -> None:
        super().__init__(emit, **options)
        if nodelay is not None and isinstance(self.profile, DebugpyProfile):
            self.profile.nodelay = nodelay

    async def pause(self, thread_id: int | None) -> None:
        await self._woken()
        generation = self._stop_generation
        await super().pause(thread_id)
        if self._state == "running":
            asyncio.get_running_loop().create_task(self._pause_again(thread_id, generation))

    async def _woken(self) -> None:
        """Wait until the threads the last continue or step let go have left
        their stop. pydevd marks them running at once, but each leaves its wait
        loop only when it next wakes; a pause that comes first marks it
        suspended again, so it never left, and no stop is ever told of it (seen
        in CI: a pause right after a continue, answered, and no stop in 15 s).
        pydevd tells each thread's wake as a `continued` of that thread."""
        deadline = time.monotonic() + WAKE_WAIT_S
        while self._unwoken and self._state == "running" and time.monotonic() < deadline:
            await asyncio.sleep(0.005)

    async def _pause_again(self, thread_id: int | None, generation: int) -> None:
        """A pause lost on its way (answered, and no stop) is asked again while
        no stop came, the thread chosen alike."""
        for _ in range(PAUSE_TRIES):
            await asyncio.sleep(PAUSE_AGAIN_S)
            if self._stop_generation != generation or self._state != "running":
                return
            try:
                await super().pause(thread_id)  # the same request, the thread chosen alike
            except (DebuggerError, InvalidInput):
                return

    def breakpoint_message(self, text: str) -> str:
        # debugpy's advice is a launch.json edit; ours is a launch option.
        if "excluded by filters" in text and "justMyCode" in text:
            return ("In library code, which this session skips (justMyCode): start the "
                    "program again with --no-just-my-code (MCP: justMyCode false; launch.json: "
                    "\"justMyCode\": false) to stop and step there.")
        return text


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
