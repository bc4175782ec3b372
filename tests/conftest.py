"""The fixtures every test file shares. Helpers that are not fixtures live in
tests/support/.

One isolation fixture (`isolated_runtime`, autouse) keeps a tester's own
sessions, saved breakpoints, config and keymap out of every test.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import (  # noqa: E402 - the checkout must be importable first
    processes_tagged,
    require,
    require_executable,
    runtime_dirs,
    unavailable,
)

__all__ = ["processes_tagged", "require", "require_executable", "unavailable"]


@pytest.fixture(autouse=True)
def isolated_runtime(request, tmp_path_factory, monkeypatch):
    """Each test gets its own session, state and config directories, none of
    the tester's adapter or keymap choices, settings reloaded, the checkout as
    its working directory and a steady cursor (for snapshots).

    A test module whose tests share one live session, started by a module
    fixture, names a base directory in SHARED_RUNTIME; its sockets are then
    shared, and its saved state still starts empty at every test."""
    # Whatever a test writes into TUI_DEBUGGER_* (apply_config exports adapter paths)
    # must not reach the next test.
    saved = {k: v for k, v in os.environ.items() if k.startswith("TUI_DEBUGGER_")}
    shared = getattr(request.module, "SHARED_RUNTIME", None)
    base = Path(shared) if shared else tmp_path_factory.mktemp("rt")
    if shared:
        shutil.rmtree(base / "state", ignore_errors=True)
    for key, value in runtime_dirs(base).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("TUI_DEBUGGER_ADAPTER", raising=False)
    monkeypatch.delenv("TUI_DEBUGGER_KEYMAP", raising=False)
    monkeypatch.delenv("TUI_DEBUGGER_SESSION", raising=False)
    # No host stays warm after a test's session (tests/test_warm_host.py turns it on).
    monkeypatch.setenv("TUI_DEBUGGER_WARM", "0")
    monkeypatch.chdir(ROOT)
    tui_app = sys.modules.get("tui_debugger.tui.app")
    if tui_app is not None:
        monkeypatch.setattr(tui_app.DebuggerApp, "CURSOR_BLINK", False)
    from tui_debugger.config import reload_settings

    reload_settings()
    yield base
    for key in [k for k in os.environ if k.startswith("TUI_DEBUGGER_")]:
        if key not in saved:
            del os.environ[key]
    os.environ.update(saved)
    reload_settings()


@pytest.fixture(autouse=True)
def hung_tasks_told(request):
    """A test that runs into its timeout prints, 5 s before, where each of its
    asyncio tasks waits: pytest-timeout shows the threads only, and a hung
    test's event loop is most often idle in select(), which tells nothing."""
    marker = request.node.get_closest_marker("timeout")
    limit = float(marker.args[0]) if marker and marker.args else \
        float(request.config.getini("timeout") or 0)
    if limit <= 10:
        yield
        return
    timer = threading.Timer(limit - 5, _print_tasks)
    timer.daemon = True
    timer.start()
    yield
    timer.cancel()


def _print_tasks() -> None:
    import asyncio
    import gc

    lines = []
    for loop in [o for o in gc.get_objects() if isinstance(o, asyncio.AbstractEventLoop)]:
        if not loop.is_running():
            continue
        for _ in range(5):  # the set can change under us: read it again
            try:
                tasks = list(asyncio.all_tasks(loop))
                break
            except RuntimeError:
                tasks = []
        for task in tasks:
            lines.append(f"task {task.get_name()}:")
            awaited = task.get_coro()
            while awaited is not None:
                frame = (getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
                         or getattr(awaited, "ag_frame", None))
                if frame is None:
                    lines.append(f"    awaits {awaited!r:.300}")
                    break
                lines.append(f"    {frame.f_code.co_filename}:{frame.f_lineno} "
                             f"{frame.f_code.co_name}")
                awaited = (getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
                           or getattr(awaited, "ag_await", None))
    print("~~~~ asyncio tasks, 5 s before the timeout ~~~~\n" + "\n".join(lines),
          file=sys.stderr, flush=True)


@pytest.fixture
def mcp_env(isolated_runtime, monkeypatch):
    """What the MCP tests add to the isolation: no saved breakpoints, and an
    ended program's session lingers 2 s instead of the default."""
    from tui_debugger.config import reload_settings

    monkeypatch.setenv("TUI_DEBUGGER_PERSIST_BREAKPOINTS", "0")
    monkeypatch.setenv("TUI_DEBUGGER_LINGER_S", "2")
    reload_settings()
    return isolated_runtime


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


@pytest.fixture
def no_leftover_daemons(isolated_runtime):
    """Fails the test if any process started under this test's runtime directory
    (a daemon, an adapter, a debuggee) is still alive shortly after it."""
    yield
    tag = os.path.join(str(isolated_runtime), "")  # rt1/ must not match rt12/
    deadline = time.monotonic() + 8
    left = processes_tagged(tag)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = processes_tagged(tag)
    if left:
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        pytest.fail("processes left running:\n" + "\n".join(f"{p}: {c}" for p, c in left),
                    pytrace=False)


# ------------------------------------------------------------------ debuggers and programs


@pytest.fixture(scope="session")
def node() -> str:
    return require_executable("node", "nodejs")


@pytest.fixture(scope="session")
def ts_builds(node: str) -> dict[str, Path]:
    """tests/programs/node/src/*.ts compiled with inline source maps and with .map files."""
    from tests.support.node import build_typescript

    return build_typescript()


@pytest.fixture
def sims(tmp_path, monkeypatch):
    """Simulators and apps as tests/fake_xcrun reports them (tests/support/simctl.py)."""
    from tests.support.simctl import FAKE_XCRUN, FakeSimulators

    fake = FakeSimulators(tmp_path)
    monkeypatch.setenv("FAKE_XCRUN_FIXTURE", str(fake.path))
    monkeypatch.setenv("FAKE_XCRUN_LOG", str(fake.log))
    monkeypatch.setenv("TUI_DEBUGGER_XCRUN", str(FAKE_XCRUN))
    monkeypatch.setenv("TUI_DEBUGGER_STATE_DIR", str(fake.state_dir))
    monkeypatch.delenv("TUI_DEBUGGER_SIM_BACKEND", raising=False)
    return fake


@pytest.fixture
def sim_app(no_leftover_processes, tmp_path):
    """A real local process standing in for a simulator app, in its bundle."""
    from backends.adapters import find_lldb
    from tests.support.simctl import SimulatorApp

    require(find_lldb() is not None, "lldb")
    require(shutil.which("gcc") is not None, "gcc")
    simulated = SimulatorApp(tmp_path)
    yield simulated
    simulated.stop_all()
