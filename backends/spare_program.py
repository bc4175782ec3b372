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

A cold host has no last launch of its own: a launch's host writes what it
started to the user's runtime directory (`recollection`, `write_memory`), and
the next cold host for a Python program in the same directory starts a spare
from it before its own imports (`recall`). Only our own words are written:
the interpreter and its options, debugpy's directory, the directory, and the
variables the launch set or unset of the host's environment when each is one
of ours or Python's (REMEMBERED); a launch that set any other (a project's
variables may be secrets) is not remembered. The spare's environment is the
new host's, with those changes: `take` still decides whether it is the
program.
"""

from __future__ import annotations

import contextlib
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

#: the variables a launch may set in the host's environment and still be
#: remembered (debugpy_adapter.launch_arguments, debugpy_launcher._program)
REMEMBERED = frozenset({"PYTHONPATH", "PYTHONUNBUFFERED", "PYTHONIOENCODING", "GEVENT_SUPPORT",
                        "TUI_DEBUGGER_STDIN", "TUI_DEBUGGER_PYDEVD_WAKEUPS"})
#: the directories remembered, the most recent last
MEMORY_ENTRIES = 8
MEMORY_FILE = "last-programs.data"  # not *.json: those are the sessions

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



def recollection(base: dict[str, str] | None = None, ignore: frozenset[str] = frozenset()
                 ) -> dict[str, object] | None:
    """What the last launch started, as the words `recall` takes, relative to
    `base` (the host's environment); None if there was none, or if it set a
    variable that is not ours to write down (REMEMBERED). `ignore`: more
    variables `take` does not compare (the watchdog's tag)."""
    if _last is None:
        return None
    prefix, env, cwd = _last
    base = dict(os.environ) if base is None else base
    ignored = SHELL_VOLATILE | PER_LAUNCH | ignore
    changed = {k: v for k, v in env.items() if k not in ignored and base.get(k) != v}
    unset = sorted(k for k in base if k not in env and k not in ignored)
    if any(k not in REMEMBERED for k in (*changed, *unset)):
        return None
    return {"prefix": prefix, "cwd": os.path.realpath(cwd), "set": changed, "unset": unset}


def _debugpy_dir() -> str | None:
    """The directory of the debugpy beside us, found without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("debugpy")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.realpath(list(spec.submodule_search_locations)[0])


def recall(memory: object, cwd: str) -> bool:
    """`memory` (one of `recollection`'s) as the last launch, if it is for
    `cwd` and names the debugpy beside us and an interpreter that exists;
    then `start` starts a spare for it."""
    global _last
    debugpy_dir = _debugpy_dir()
    if not isinstance(memory, dict) or debugpy_dir is None:
        return False
    prefix, m_cwd = memory.get("prefix"), memory.get("cwd")
    changed, unset = memory.get("set"), memory.get("unset")
    if not (isinstance(prefix, list) and len(prefix) >= 2 and all(isinstance(a, str) for a in prefix)
            and isinstance(changed, dict) and isinstance(unset, list)
            and all(isinstance(k, str) and k in REMEMBERED and isinstance(v, str)
                    for k, v in changed.items())
            and all(isinstance(k, str) and k in REMEMBERED for k in unset)):
        return False
    if (m_cwd != os.path.realpath(cwd) or os.path.realpath(prefix[-1]) != debugpy_dir
            or not os.path.isfile(prefix[0]) or not os.access(prefix[0], os.X_OK)):
        return False
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(changed)
    _last = (list(prefix), env, cwd)
    return True


def read_memory(path: str, cwd: str) -> object:
    """The entry of `path` (a file of `write_memory`'s) for `cwd`, or None:
    read only when it is a regular file of this user's that nobody else may
    write, opened without following a link."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        found = os.fstat(fd)
        if (not stat.S_ISREG(found.st_mode) or found.st_uid != os.getuid()
                or found.st_mode & 0o022 or found.st_size > 1 << 20):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            entries = json.loads(f.read())
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if not isinstance(entries, list):
        return None
    real = os.path.realpath(cwd)
    for entry in reversed(entries):
        if isinstance(entry, dict) and entry.get("cwd") == real:
            return entry
    return None


def last_directory() -> str | None:
    """The directory of the last launch, if there was one."""
    return os.path.realpath(_last[2]) if _last is not None else None


def write_memory(path: str, cwd: str, memory: dict[str, object] | None) -> None:
    """`memory` as the newest entry of `path` for `cwd`, or, None, none for
    it (MEMORY_ENTRIES kept); written whole under another name, then renamed."""
    real = os.path.realpath(cwd)
    entries: list[object] = []
    old: object = None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            old = json.loads(f.read(1 << 20))
        if isinstance(old, list):
            entries = [e for e in old if isinstance(e, dict) and e.get("cwd") != real]
    except (OSError, ValueError):
        pass
    if memory is None and not entries:
        with contextlib.suppress(OSError):
            os.unlink(path)
        return
    entries = [*entries, *([memory] if memory else [])][-MEMORY_ENTRIES:]
    if entries == old:
        return  # the same launch as the last time: nothing to write
    folder, name = os.path.split(path)
    temp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(entries, f)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
