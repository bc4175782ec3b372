"""Shared test set-up.

`require(tool)` skips a test whose debugger is missing on a developer's machine,
and fails it under CI=true: CI must prove every backend works.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(message: str) -> None:
    """Something a test needs cannot be had: skip on a developer's machine, fail
    under CI=true, where every backend must be proven."""
    if IN_CI:
        pytest.fail(message + "; CI must run every backend", pytrace=False)
    pytest.skip(message)


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


@pytest.fixture
def no_leftover_processes():
    """Fails the test if it leaves any child process of this test process alive."""
    from backends.process import become_subreaper, descendants, pid_alive

    # Orphans (a debuggee whose adapter died) are re-parented to us, so they count.
    become_subreaper()
    before = set(descendants(os.getpid()))
    yield
    deadline = time.monotonic() + 5
    while True:
        left = [p for p in descendants(os.getpid()) if p not in before and pid_alive(p)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if left:
        cmdlines = []
        for pid in left:
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                cmd = "?"
            cmdlines.append(f"{pid}: {cmd}")
        pytest.fail("processes left running:\n" + "\n".join(cmdlines), pytrace=False)


@pytest.fixture(autouse=True)
def isolated_runtime(tmp_path_factory, monkeypatch):
    """Each test gets its own session directory, state directory and no user
    config, so live sessions of the tester (or of other tests) never leak in."""
    # Whatever a test writes into TUI_DEBUGGER_* (apply_config exports adapter paths)
    # must not reach the next test.
    saved = {k: v for k, v in os.environ.items() if k.startswith("TUI_DEBUGGER_")}
    base = tmp_path_factory.mktemp("rt")
    monkeypatch.setenv("TUI_DEBUGGER_RUNTIME_DIR", str(base / "run"))
    monkeypatch.setenv("TUI_DEBUGGER_STATE_DIR", str(base / "state"))
    monkeypatch.setenv("TUI_DEBUGGER_CONFIG", str(base / "no-config.toml"))
    monkeypatch.delenv("TUI_DEBUGGER_ADAPTER", raising=False)
    try:
        from tui_debugger.config import reload_settings

        reload_settings()
    except ImportError:
        pass
    yield base
    for key in [k for k in os.environ if k.startswith("TUI_DEBUGGER_")]:
        if key not in saved:
            del os.environ[key]
    os.environ.update(saved)


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


@pytest.fixture
def no_leftover_daemons(isolated_runtime):
    """Fails the test if any process started under this test's runtime directory
    (a daemon, an adapter, a debuggee) is still alive shortly after it."""
    yield
    tag = str(isolated_runtime)
    deadline = time.monotonic() + 8
    left = processes_tagged(tag)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = processes_tagged(tag)
    if left:
        import signal

        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        pytest.fail("processes left running:\n" + "\n".join(f"{p}: {c}" for p, c in left),
                    pytrace=False)
