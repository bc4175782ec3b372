"""Which Python runs a Python program: the user's, not tui-debugger's.

tui-debugger lives in a venv of its own; the program belongs to a project with
its own dependencies. As pdb runs in the project's environment and VS Code in
the selected interpreter, the program runs under the first of:

1. the interpreter asked for (`--python`, MCP `python`, launch.json
   `python`/`pythonPath`);
2. the active virtual environment (`$VIRTUAL_ENV`);
3. a `.venv` or `venv` found from the program's directory upward (as uv and
   pyright look for one);
4. `python3` on PATH (pyenv's shim: the interpreter it would run, asked once
   for the program's directory and environment, then run straight, as `pyenv
   exec` would with its bin directory first on PATH: the shim's bash costs
   ~80 ms on every start, on the way to the first stop);
5. tui-debugger's own interpreter.

debugpy runs its launcher and the program under that interpreter straight from
its own directory (`python .../debugpy/launcher`, then `python .../debugpy
--connect`), and takes itself back off sys.path before the program runs, so the
program's environment needs no debugpy. Its compiled speed-ups are built for
the interpreter it was installed for; other versions run its pure-Python
tracer (3.12 and later: `sys.monitoring`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace

from .errors import InvalidInput

#: the oldest Python debugpy 1.8 debugs
MIN_VERSION = (3, 8)

_PROBE = ("import json, sys, sysconfig; p = sysconfig.get_paths(); print(json.dumps({"
          "'version': '%d.%d.%d' % sys.version_info[:3], 'executable': sys.executable, 'prefix': sys.prefix, "
          "'libs': [p[k] for k in ('stdlib', 'platstdlib', 'purelib', 'platlib') if p.get(k)]}))")


@dataclass(frozen=True)
class Interpreter:
    path: str
    #: how it was chosen, in the user's words: "--python", "$VIRTUAL_ENV", ...
    source: str
    version: str = ""
    #: its standard library and site-packages (what counts as library code)
    library_dirs: tuple[str, ...] = ()
    prefix: str = ""
    #: a directory the program's PATH starts with, as the wrapper it was found
    #: through (pyenv's shim) would have put it there ("" for none)
    path_first: str = ""

    @property
    def is_ours(self) -> bool:
        """The environment tui-debugger itself runs in."""
        return bool(self.prefix) and os.path.realpath(self.prefix) == os.path.realpath(sys.prefix)

    def short(self) -> str:
        """For a status line: `py3.12 .venv`."""
        version = ".".join(self.version.split(".")[:2])
        where = os.path.basename(self.prefix) if self.prefix else self.source
        return f"py{version} {where}".strip()

    def describe(self) -> str:
        version = f"Python {self.version} " if self.version else ""
        return f"{version}{self.path} ({self.source})"


_cache: dict[tuple[str, float], Interpreter] = {}

#: the answers of earlier probes, kept across processes (in the state directory)
CACHE_FILE = "interpreters.json"
_CACHE_LIMIT = 64


def _cache_path() -> str:
    """TUI_DEBUGGER_STATE_DIR, else the platform's state directory (as
    simctl's defaults)."""
    base = os.environ.get("TUI_DEBUGGER_STATE_DIR")
    if not base:
        from platformdirs import user_state_dir

        base = user_state_dir("tui-debugger", appauthor=False)
    return os.path.join(base, CACHE_FILE)


def _identity(path: str) -> str | None:
    """What a probe's answer depends on: the interpreter's file (the link and
    what it points to) and, for a virtualenv's, its pyvenv.cfg. The probe runs
    with -I, so no environment variable changes it."""
    try:
        target, link = os.stat(path), os.lstat(path)
    except OSError:
        return None
    parts: list[object] = [os.path.abspath(path), os.path.realpath(path), target.st_dev,
                           target.st_ino, target.st_size, target.st_mtime_ns, link.st_ino,
                           link.st_mtime_ns]
    try:
        cfg = os.stat(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path))),
                                   "pyvenv.cfg"))
        parts += [cfg.st_ino, cfg.st_size, cfg.st_mtime_ns]
    except OSError:
        parts.append(None)
    return json.dumps(parts)


def _read_cache() -> dict[str, dict]:
    try:
        with open(_cache_path(), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _remember(identity: str, info: dict) -> None:
    """Kept only for the interpreter itself: a wrapper (pyenv's shim, a script
    that execs a Python) may answer differently in another directory or
    environment, so it is asked each time."""
    executable = str(info.get("executable") or "")
    identity_path = json.loads(identity)[0]
    if not executable or os.path.realpath(executable) != os.path.realpath(identity_path):
        return
    data = _read_cache()
    data.pop(identity, None)
    data[identity] = info
    while len(data) > _CACHE_LIMIT:
        data.pop(next(iter(data)))
    path = _cache_path()
    tmp = f"{path}.{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:  # a read-only or full disk: the next launch probes again
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def probe(path: str, source: str) -> Interpreter:
    """Run the interpreter once to learn its version and library paths; an
    interpreter that does not run, or is too old, is an error that says so.

    The answer is kept in the state directory for as long as the interpreter's
    file (and its venv's pyvenv.cfg) stays as it was: running it cost 60-160 ms
    on every launch, on the way to the first stop (docs/performance.md)."""
    try:
        stamp = os.stat(path).st_mtime
    except OSError:
        raise InvalidInput(f"There is no Python interpreter at {path} ({source}). "
                           "Check the path, or pass --python PATH.") from None
    cached = _cache.get((path, stamp))
    if cached is not None:
        return Interpreter(cached.path, source, cached.version, cached.library_dirs, cached.prefix)
    identity = _identity(path)
    info = _read_cache().get(identity) if identity else None
    if not isinstance(info, dict):
        try:
            done = subprocess.run([path, "-I", "-c", _PROBE], capture_output=True, text=True,
                                  timeout=20, stdin=subprocess.DEVNULL)
            info = json.loads(done.stdout)
        except (OSError, subprocess.SubprocessError, ValueError):
            info = None
        if not isinstance(info, dict):
            raise InvalidInput(f"{path} ({source}) does not run as a Python interpreter. "
                               "Check it, or pass --python PATH.")
        if identity:
            _remember(identity, info)
    version = str(info.get("version") or "")
    if tuple(int(p) for p in version.split(".")[:2]) < MIN_VERSION:
        raise InvalidInput(f"{path} is Python {version}; debugpy debugs Python "
                           f"{'.'.join(map(str, MIN_VERSION))} or newer. Pass --python PATH.")
    libs = tuple(sorted({os.path.realpath(d) for d in info.get("libs") or []}, key=len, reverse=True))
    found = Interpreter(path, source, version, libs, str(info.get("prefix") or ""))
    _cache[(path, stamp)] = found
    return found


def _venv_python(venv: str) -> str | None:
    for name in ("bin/python3", "bin/python", "Scripts/python.exe"):
        candidate = os.path.join(venv, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _venv_above(start: str) -> str | None:
    directory = os.path.abspath(start)
    while True:
        for name in (".venv", "venv"):
            venv = os.path.join(directory, name)
            if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
                found = _venv_python(venv)
                if found:
                    return found
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def find_python(explicit: str | list[str] | None, start_dir: str,
                env: dict[str, str] | None = None, cwd: str | None = None,
                explicit_source: str = "--python") -> Interpreter:
    """The interpreter for a program in `start_dir` (its directory, or the working
    directory of a module), in the order the module docstring gives."""
    env = os.environ if env is None else env
    if isinstance(explicit, list):
        explicit = explicit[0] if explicit else None
    if explicit:
        path = os.path.expanduser(explicit)
        if os.sep not in path:
            path = shutil.which(path, path=env.get("PATH")) or path
        elif not os.path.isabs(path):
            path = os.path.abspath(os.path.join(cwd or start_dir, path))
        if os.path.isdir(path):
            # a venv's directory stands for its interpreter
            path = _venv_python(path) or path
        return probe(path, explicit_source)
    active = env.get("VIRTUAL_ENV")
    if active:
        found = _venv_python(active)
        if found:
            return probe(found, "$VIRTUAL_ENV")
    found = _venv_above(start_dir)
    if found:
        return probe(found, f"{os.path.basename(os.path.dirname(os.path.dirname(found)))} "
                            "above the program")
    on_path = shutil.which("python3", path=env.get("PATH"))
    if on_path:
        try:
            return _through_pyenv(on_path, cwd or start_dir, env) or probe(on_path, "python3 on PATH")
        except InvalidInput:
            pass
    return probe(sys.executable, "tui-debugger's own Python")


def _is_pyenv_shim(path: str) -> bool:
    """pyenv's shim: a script in a `shims` directory that runs `pyenv exec`."""
    if os.path.basename(os.path.dirname(path)) != "shims":
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(2048)
    except OSError:
        return False
    return head.startswith(b"#!") and b"pyenv" in head and b'exec "$program"' in head


#: pyenv's choice for one directory and environment: (what it depends on) -> interpreter
_pyenv_choices: dict[str, str] = {}


def _pyenv_inputs(shim: str, cwd: str, env: dict[str, str]) -> str:
    """What pyenv's choice of a version depends on (pyenv-version-name,
    pyenv-version-file): PYENV_VERSION, the nearest .python-version above the
    directory (PYENV_DIR if set), else $PYENV_ROOT/version; each file by its
    name and content. The shim itself by its stat, in case pyenv is redone."""
    root = env.get("PYENV_ROOT") or os.path.dirname(os.path.dirname(shim))
    parts: list[object] = [shim, _stamp(shim), root, env.get("PYENV_VERSION")]
    directory = os.path.abspath(env.get("PYENV_DIR") or cwd)
    while True:
        candidate = os.path.join(directory, ".python-version")
        if os.path.isfile(candidate):
            parts += [candidate, _content(candidate)]
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            parts += [None, os.path.join(root, "version"), _content(os.path.join(root, "version"))]
            break
        directory = parent
    return json.dumps(parts)


def _stamp(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def _content(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(4096)
    except OSError:
        return None


def _through_pyenv(shim: str, cwd: str, env: dict[str, str]) -> Interpreter | None:
    """The interpreter pyenv's shim runs from `cwd` in `env`, to be run
    straight: asked of the shim (once for the same version files and
    PYENV_VERSION), then probed as itself. None when `shim` is not pyenv's or
    does not answer; the shim is then run as any wrapper is."""
    if not _is_pyenv_shim(shim):
        return None
    key = _pyenv_inputs(shim, cwd, env)
    real = _pyenv_choices.get(key)
    if real is None or not os.path.isfile(real):
        try:
            done = subprocess.run([shim, "-I", "-c", "import sys; print(sys.executable)"],
                                  capture_output=True, text=True, timeout=20,
                                  stdin=subprocess.DEVNULL, cwd=cwd, env=env)
        except (OSError, subprocess.SubprocessError):
            return None
        real = done.stdout.strip()
        if done.returncode != 0 or not os.path.isabs(real) or not os.path.isfile(real) \
                or _is_pyenv_shim(real):
            return None
        _pyenv_choices[key] = real
    found = probe(real, "pyenv's python3 on PATH")
    root = os.path.realpath(env.get("PYENV_ROOT") or os.path.dirname(os.path.dirname(shim)))
    bin_dir = os.path.dirname(real)
    # `pyenv exec` puts the version's bin first on PATH, but not the system's.
    first = bin_dir if os.path.realpath(bin_dir).startswith(root + os.sep) else ""
    return replace(found, path_first=first)


def module_origin(python: str, module: str, cwd: str) -> str | None:
    """The file `python -m module` would run, asked of that interpreter (its
    packages are not ours), with the working directory first as -m has it."""
    code = ("import importlib.util, sys; sys.path.insert(0, sys.argv[2]); "
            "s = importlib.util.find_spec(sys.argv[1]); "
            "print(s.origin if s and s.origin else '')")
    try:
        done = subprocess.run([python, "-c", code, module, cwd], capture_output=True, text=True,
                              timeout=20, stdin=subprocess.DEVNULL, cwd=cwd)
    except (OSError, subprocess.SubprocessError):
        return None
    origin = done.stdout.strip()
    return origin if origin and os.path.isfile(origin) else None
