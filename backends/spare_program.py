"""A Python program's process started before its launch, debugpy and pydevd
already imported (dap/_nodelay/spare_debuggee.py).

Between two sessions a warm host (tui_debugger/host/warm_stay.py) starts one
for the interpreter, debugpy and environment its last program ran with
(`remember`, at each launch; `start`, when it goes warm). The next launch's
program is that process (`take`, in process.spawn) if, and only if, it is
what the launch would start: the same interpreter and options before
debugpy's command line, the same directory (Python makes a relative
PYTHONPATH entry absolute against it), the same environment but for what
the shell sets anew for each command (early_adapter.SHELL_VOLATILE) and the
launch's own
access token (DEBUGPY_EXTRA_ARGV, read when debugpy parses its command
line), output on pipes, input on a pipe or none. Anything else starts cold,
and the spare is ended. What it takes off the way to the first stop: the
program's Python start-up and debugpy's and pydevd's imports (~0.15-0.2 s
idle; docs/performance.md).

The spare is the host's child as any program of its is (a session of its
own, ended with the host: PR_SET_PDEATHSIG, the watchdog's tag in its
environment), and is ended when a launch does not take it (`discard`). Light
on purpose, as early_adapter: no asyncio, no pydantic.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Callable, Sequence

from .early_adapter import NODELAY_DIR, SHELL_VOLATILE, end_process

SCRIPT = os.path.join(NODELAY_DIR, "spare_debuggee.py")
#: set for one launch only, and read only once debugpy parses its command line
PER_LAUNCH = frozenset({"DEBUGPY_EXTRA_ARGV"})
#: TUI_DEBUGGER_SPARE_PROGRAM=0: never start one
ENV_SWITCH = "TUI_DEBUGGER_SPARE_PROGRAM"

#: what the last launch started: (argv before debugpy's command line, env, cwd)
_last: tuple[list[str], dict[str, str], str] | None = None
#: the spare: (argv prefix, env, the directory it started in, process)
_spare: tuple[list[str], dict[str, str], str, subprocess.Popen[bytes]] | None = None


def _comparable(env: dict[str, str], also: frozenset[str]) -> dict[str, str]:
    """What of an environment the spare must have had from its start."""
    return {k: v for k, v in env.items()
            if k not in SHELL_VOLATILE and k not in PER_LAUNCH and k not in also}


def remember(prefix: Sequence[str], cwd: str | None, env: dict[str, str] | None) -> None:
    """A launch's program started as `prefix` (interpreter, options, debugpy's
    directory) followed by debugpy's command line, in `env`."""
    global _last
    env = dict(os.environ) if env is None else dict(env)
    _last = ([str(a) for a in prefix], env, cwd or os.getcwd())


def start(preexec: Callable[[], None] | None = None) -> None:
    """Start a spare for what the last launch started, if there was one."""
    global _spare
    discard()
    if _last is None or os.environ.get(ENV_SWITCH) == "0" or not os.path.isfile(SCRIPT):
        return
    prefix, env, cwd = _last
    if not os.path.isdir(cwd):
        return
    env = {k: v for k, v in env.items() if k not in PER_LAUNCH}
    # Its Python's options as the launch gives them, then the script, then
    # debugpy's directory (the last word of the prefix) as its argument.
    argv = [*prefix[:-1], SCRIPT, prefix[-1]]
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True,
                                preexec_fn=preexec)
    except OSError:
        return
    _spare = (prefix, env, os.path.realpath(cwd), proc)


def pending() -> bool:
    return _spare is not None


def take(argv: Sequence[str], prefix_len: int, cwd: str | None, env: dict[str, str] | None,
         stdin: object, also_volatile: frozenset[str] = frozenset()
         ) -> subprocess.Popen[bytes] | None:
    """The spare, now running `argv` in `cwd` with `env`, if it is what they
    would start (see the module's docstring); else None, and it is ended.
    `also_volatile`: more variables it may have had otherwise (the host's
    watchdog tag: each session's watchdog has its own, which the program's
    children inherit from its os.environ, set at the take; the program itself
    is known to that watchdog by pid and dies with the host)."""
    global _spare
    if _spare is None:
        return None
    (prefix, s_env, s_cwd, proc), _spare = _spare, None
    argv = [str(a) for a in argv]
    env = dict(os.environ) if env is None else dict(env)
    cwd = cwd or os.getcwd()
    wanted = {subprocess.PIPE: "pipe", subprocess.DEVNULL: "devnull"}.get(stdin)  # type: ignore[call-overload]
    # The same directory too: Python makes a relative PYTHONPATH entry absolute
    # against the directory it starts in.
    fits = (argv[:prefix_len] == prefix and os.path.realpath(cwd) == s_cwd
            and _comparable(env, also_volatile) == _comparable(s_env, also_volatile)
            and wanted is not None and proc.poll() is None)
    if not fits:
        end_process(proc)
        return None
    message = json.dumps({"argv": argv[prefix_len:], "cwd": cwd, "env": env,
                          "stdin": wanted}).encode("utf-8")
    try:
        assert proc.stdin is not None
        proc.stdin.write(b"%d\n" % len(message) + message)
        proc.stdin.flush()
    except (OSError, ValueError):
        end_process(proc)
        return None
    return proc


def discard() -> None:
    """Nothing took it: end it now."""
    global _spare
    spare, _spare = _spare, None
    if spare is not None:
        end_process(spare[3])

