"""debugpy's adapter started before its session asks for it.

`run` and `start` start their session's host first thing (tui_debugger/host/start.py,
start_early), before they parse their command line; when `start`'s command line
names a `.py` file and no other adapter, the host is told so and, first thing,
before it imports the hub, the commands and pydantic, starts debugpy's adapter
(`start`), so that the adapter's own start-up (a Python process importing
debugpy) overlaps the host's. When the debugpy backend then starts its adapter, `process.spawn`
takes this one instead (`take`) if, and only if, it would have started the
very same command, in the same directory, with the same environment;
otherwise, or if nothing takes it by the time the launch is over (`discard`),
it is ended at once. Light on purpose: no asyncio, no pydantic.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from typing import Any, Callable, Sequence

#: holds the sitecustomize that sets TCP_NODELAY on debugpy's sockets
NODELAY_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dap", "_nodelay")


def with_nodelay(pythonpath: str | None) -> str:
    """PYTHONPATH with the TCP_NODELAY sitecustomize in front of whatever was there."""
    parts = [p for p in (pythonpath or "").split(os.pathsep) if p and p != NODELAY_DIR]
    return os.pathsep.join([NODELAY_DIR, *parts])


def debugpy_adapter_argv() -> list[str]:
    # -P: the adapter runs in the program's directory; -m would import from it.
    return [sys.executable, "-P", "-m", "debugpy.adapter"]


def debugpy_adapter_env() -> dict[str, str]:
    """The environment DebugpyProfile gives its adapter (with TCP_NODELAY)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = with_nodelay(env.get("PYTHONPATH"))
    return env


#: what --adapter may say and still mean debugpy
_DEBUGPY_NAMES = ("debugpy", "python", "py")


def wants_debugpy(argv: Sequence[str]) -> bool:
    """Whether a `run`/`start` command line, not parsed yet, looks like a launch
    debugpy will run: a `.py` file on it, no other adapter asked for. Only a
    guess about what is worth starting early: `take` checks the real command."""
    adapter = os.environ.get("TUI_DEBUGGER_ADAPTER") or None
    for i, word in enumerate(argv):
        if word == "--adapter" and i + 1 < len(argv):
            adapter = argv[i + 1]
        elif word.startswith("--adapter="):
            adapter = word.split("=", 1)[1]
        elif word in ("--pid", "--attach", "-p") or word.startswith(("--pid=", "--attach=")):
            return False
    if adapter is not None and adapter not in _DEBUGPY_NAMES:
        return False
    return any(word.endswith(".py") and not word.startswith("-") for word in argv[1:])


#: Set anew by the shell for each command, or by the terminal for each window,
#: and telling debugpy's adapter nothing (the program's environment is the
#: host's, not the adapter's): an adapter started with other values of these
#: is still the one the launch would start (a warm host's, tui_debugger/warm.py,
#: started for the command before, which adopts the new command's values).
#: TMUX names the tmux session too: each `tmux new` has its own.
SHELL_VOLATILE = frozenset({"_", "PWD", "OLDPWD", "SHLVL", "COLUMNS", "LINES", "TMUX", "TMUX_PANE",
                            "WINDOWID", "STY", "WINDOW", "TERM_SESSION_ID", "ITERM_SESSION_ID",
                            "KITTY_WINDOW_ID", "WEZTERM_PANE", "ALACRITTY_WINDOW_ID",
                            "SSH_TTY", "GPG_TTY"})


def _same_env(a: dict[str, str], b: dict[str, str]) -> bool:
    return ({k: v for k, v in a.items() if k not in SHELL_VOLATILE}
            == {k: v for k, v in b.items() if k not in SHELL_VOLATILE})


_spare: tuple[list[str], dict[str, str], str, subprocess.Popen[bytes]] | None = None


def start(cwd: str, preexec: Callable[[], None] | None = None) -> None:
    """Start debugpy's adapter in `cwd` as the debugpy backend would (pipes on
    its stdin, stdout and stderr, a process group of its own), to be taken by
    the launch. Failing to start is no error: the launch starts its own."""
    global _spare
    discard()
    argv, env = debugpy_adapter_argv(), debugpy_adapter_env()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, preexec_fn=preexec)
    except OSError:
        return
    _spare = (argv, env, os.path.realpath(cwd), proc)


def pending() -> bool:
    return _spare is not None


def take(argv: Sequence[str], cwd: str | None, env: dict[str, str] | None
         ) -> subprocess.Popen[bytes] | None:
    """The adapter started early, if it is running and is exactly what
    `argv` in `cwd` with `env` would start. Another command is not for it (it
    stays); the same command in another directory or environment ends it."""
    global _spare
    if _spare is None or _spare[0] != [str(a) for a in argv]:
        return None
    spare, _spare = _spare, None
    _, s_env, s_cwd, proc = spare
    same = (_same_env(s_env, dict(os.environ) if env is None else env)
            and s_cwd == os.path.realpath(cwd or os.getcwd()))
    if same and proc.poll() is None:
        return proc
    print("debugpy's adapter started early was not used: the launch wants it in another "
          "directory or environment", file=sys.stderr)
    end_process(proc)
    return None


def discard() -> None:
    """Nothing took it: end it now."""
    global _spare
    spare, _spare = _spare, None
    if spare is not None:
        end_process(spare[3])


def end_process(proc: subprocess.Popen[bytes]) -> None:
    """End a process started early that nothing took (its group), and close its pipes."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(timeout=5)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
