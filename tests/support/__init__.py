"""What the tests share that is not a fixture: what a test needs from this
machine (`require`), programs and their marked lines, fakes of tools this
machine cannot run, and helpers that read the TUI's screen or an MCP answer the
way a person or an agent does. Fixtures live in tests/conftest.py.

`require(tool)` skips a test whose debugger is missing on a developer's machine,
and fails it under CI=true: CI must prove every backend works.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(message: str) -> None:
    """Something a test needs cannot be had: skip on a developer's machine, fail
    under CI=true, where every backend must be proven."""
    if IN_CI:
        pytest.fail(message + "; CI must run every backend", pytrace=False)
    pytest.skip(message)


@contextlib.contextmanager
def one_at_a_time(name: str) -> Iterator[None]:
    """Held while something the test processes share (tests/programs/build,
    tests/.cache) is checked and made, so that test processes running side by
    side (`pytest -n`) make it once and never read it half made."""
    cache = ROOT / "tests" / ".cache"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def require(available: bool, what: str) -> None:
    if not available:
        unavailable(f"{what} is not installed here (.ci/run installs it)")


def require_executable(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    require(False, " or ".join(names))
    raise AssertionError("unreachable")


def processes_tagged(value: str) -> list[tuple[int, str]]:
    """Live processes whose environment mentions `value` (a per-test directory):
    finds daemons and their debuggers even after they were re-parented to init."""
    from backends.process import pid_alive

    found = []
    needle = value.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if needle in env and pid_alive(int(entry)):
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                cmd = "?"
            found.append((int(entry), cmd))
    return found


def marker_line(path: Path, marker: str) -> int:
    """The line of a program marked with the comment `# marker` (`// marker` in
    JavaScript)."""
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if f"# {marker}" in line or f"#{marker}" in line.replace(" ", "") \
                or f"// {marker}" in line:
            return n
    raise AssertionError(f"no marker {marker} in {path}")


def runtime_dirs(base: Path) -> dict[str, str]:
    """The environment that puts a session's sockets, saved state and config
    under `base` (short: it holds Unix sockets, whose paths stop at ~100 bytes)."""
    return {
        "TUI_DEBUGGER_RUNTIME_DIR": str(base / "run"),
        "TUI_DEBUGGER_STATE_DIR": str(base / "state"),
        "TUI_DEBUGGER_CONFIG": str(base / "no-config.toml"),
    }


def runtime_env() -> dict[str, str]:
    """This test's runtime directories, to hand to a process that does not
    inherit our environment (a tmux server)."""
    return {k: os.environ[k] for k in runtime_dirs(Path("/")) if k in os.environ}


def npm_install(directory: Path, package: str, installed: Path, what: str) -> None:
    """`npm install PACKAGE` (name@version) into `directory` (tests/.cache,
    gitignored), unless `installed` is there already; call it under
    one_at_a_time. A failed install says why and what to check."""
    if installed.exists():
        return
    npm = shutil.which("npm")
    require(npm is not None and shutil.which("node") is not None, "node and npm")
    directory.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            [npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix",
             str(directory), package], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        unavailable(f"npm did not install {what} within 300 s: check npm's registry access "
                    "(npm ping)")
    if done.returncode != 0 or not installed.exists():
        unavailable(f"npm could not install {what}:\n{done.stderr[-2000:]}")
