"""Fault suite: the process hosting a session dies (kill -9, SIGHUP, SIGTERM)
while its program runs. Nothing it started may live on: not the debugger
(lldb, lldb-server, an adapter), not the program. A host that is asked to end
(SIGHUP, SIGTERM) also removes its socket and its .json."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import processes_tagged, require
from tests.support.mcp import PROGRAMS

ROOT = Path(__file__).resolve().parents[2]


def _start(adapter: str, program: str, env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "tui_debugger", "start", "--adapter", adapter, "--session",
         "victim", "--json", program], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _host_pid(runtime: Path) -> int:
    return int(json.loads((runtime / "victim.json").read_text())["pid"])


@pytest.mark.parametrize(("adapter", "how"), [
    ("lldb-cli", signal.SIGKILL),
    pytest.param("lldb-cli", signal.SIGTERM, marks=pytest.mark.slow),
    pytest.param("lldb-cli", signal.SIGHUP, marks=pytest.mark.slow),
    pytest.param("lldb-dap", signal.SIGKILL, marks=pytest.mark.slow),
    pytest.param("debugpy", signal.SIGKILL, marks=pytest.mark.slow),
    pytest.param("dlv", signal.SIGKILL, marks=pytest.mark.slow),
])
def test_nothing_outlives_its_host(adapter, how, isolated_runtime):
    from backends.adapters import find_dlv, find_lldb, find_lldb_dap

    from tests.support.native_build import c_program, go_program

    if adapter == "debugpy":
        program = str(PROGRAMS / "py_sleep.py")
    elif adapter == "dlv":
        require(find_dlv() is not None, "dlv")
        program = str(go_program("go_counter"))
    else:
        require((find_lldb() if adapter == "lldb-cli" else find_lldb_dap()) is not None, adapter)
        program = str(c_program("native_counter"))
    env = dict(os.environ)
    runtime = Path(env["TUI_DEBUGGER_RUNTIME_DIR"])
    tag = os.path.join(str(isolated_runtime), "")  # rt1/ must not match rt12/
    _start(adapter, program, env)
    host = _host_pid(runtime)
    running = processes_tagged(tag)
    assert len(running) >= 2, running  # the host and at least its debugger
    os.kill(host, how)
    left = left_after(tag, 8)
    assert not left, f"left running after {signal.Signals(how).name} of the host: {left}"
    if how != signal.SIGKILL:  # a host asked to end cleans up after itself
        assert not (runtime / "victim.sock").exists() and not (runtime / "victim.json").exists()


def left_after(tag: str, seconds: float) -> list:
    """The tagged processes still running after up to `seconds`; they are
    killed before the answer, so a failing test leaves nothing behind."""
    deadline = time.monotonic() + seconds
    left = processes_tagged(tag)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = processes_tagged(tag)
    for pid, _ in left:
        with_suppress_kill(pid)
    return left


def with_suppress_kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


@pytest.mark.parametrize("how", [
    pytest.param("pane closed", marks=pytest.mark.slow),
    pytest.param("SIGTERM", marks=pytest.mark.slow),
    pytest.param("SIGKILL", marks=pytest.mark.slow),
])
def test_the_tui_ends_what_it_started(how, isolated_runtime, tmp_path, monkeypatch):
    """The TUI on the real executable, in tmux, with lldb-cli running the program.
    Its session lives in a host of its own: closed or told to end, the TUI ends
    it; killed outright, the host sees its owner gone with no client left and
    ends it after orphan_grace_s (the idle time stays at its default of 30
    minutes here)."""
    from backends.adapters import find_lldb

    from tests.support import require_executable
    from tests.support.native_build import c_program
    from tests.support.tmux import Tmux

    require(find_lldb() is not None, "lldb")
    exe = require_executable("tui-debugger")
    tmux = Tmux(require_executable("tmux"), tmp_path / "tmux.sock")
    runtime = Path(os.environ["TUI_DEBUGGER_RUNTIME_DIR"])
    env_args = [arg for key, value in os.environ.items() if key.startswith("TUI_DEBUGGER_")
                for arg in ("-e", f"{key}={value}")]
    tmux.run("new-session", "-d", "-s", "tui", "-x", "110", "-y", "32", "-c", str(ROOT),
             "-e", "TERM=xterm-256color", *env_args,
             exe, "run", "--adapter", "lldb-cli", str(c_program("native_counter")))
    try:
        deadline = time.monotonic() + 30
        while not list(runtime.glob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.1)
        metas = list(runtime.glob("*.json"))
        assert metas, "the TUI's session has no host:\n" + tmux.screen()
        host_pid = int(json.loads(metas[0].read_text())["pid"])
        tui_pid = int(tmux.run("display-message", "-p", "-t", "tui", "#{pane_pid}").stdout)
        assert host_pid != tui_pid  # the TUI is a client of its session's host
        tmux.wait_for(lambda screen: "RUNNING" in screen or "STOPPED" in screen, "the session")
        if how == "pane closed":
            tmux.run("kill-session", "-t", "tui")
        else:
            os.kill(tui_pid, getattr(signal, how))
        tag = os.path.join(str(isolated_runtime), "")
        started = time.monotonic()
        left = left_after(tag, 25)
        assert not left, f"left running after {how}: {left}"
        print(f"{how}: everything ended within {time.monotonic() - started:.1f} s")
        if how != "SIGKILL":
            assert not list(runtime.glob("*.sock")) and not list(runtime.glob("*.json"))
    finally:
        tmux.run("kill-server", check=False)


def test_daemon_logs_are_cleaned_and_capped(isolated_runtime):
    """184 daemon logs piled up: now the logs of ended daemons are kept to the
    newest ten, and a live daemon's log is cut back when it grows too large."""
    from tui_debugger import paths

    runtime = paths.runtime_dir()
    for n in range(30):  # ended daemons (pids that cannot be alive), oldest first
        log = runtime / f"daemon-{9_000_000 + n}.log"
        log.write_text("old\n")
        os.utime(log, (1_000_000 + n, 1_000_000 + n))
    legacy = runtime / "daemon-123-1700000000000.log"  # the old naming
    legacy.write_text("legacy\n")
    os.utime(legacy, (1, 1))
    live = runtime / f"daemon-{os.getpid()}.log"  # a live writer
    live.write_bytes(b"x" * (11 * 1024 * 1024))
    paths.clean_daemon_logs(keep=10)
    ours = {f"daemon-{9_000_000 + n}.log" for n in range(30)}
    kept = sorted(p.name for p in runtime.glob("daemon-*.log") if p.name in ours)
    assert kept == [f"daemon-{9_000_000 + n}.log" for n in range(20, 30)]
    assert not legacy.exists()
    assert live.exists() and live.stat().st_size == 0


def test_a_starter_killed_during_its_launch_still_ends_the_session(isolated_runtime, monkeypatch):
    """The TUI joins its session while the launch goes on, so it can be killed
    (-9) before its host first looks at it. The host still knows it is gone
    (the starter's own start time is in the spec) and ends the session once no
    client is left, instead of leaving the program and its debugger running."""
    from backends.procinfo import start_time
    from tui_debugger.host.early import _send_spec, _spawn

    monkeypatch.setenv("TUI_DEBUGGER_ORPHAN_GRACE_S", "1")
    starter = subprocess.Popen(["sleep", "60"])
    started = start_time(starter.pid)
    starter.kill()
    starter.wait()
    proc, _ = _spawn(str(ROOT))
    try:
        _send_spec(proc, {"command": "launch", "cwd": str(ROOT), "origin": "tui",
                          "owner": starter.pid, "owner_started": started,
                          "args": {"program": str(PROGRAMS / "py_sleep.py"),
                                   "session_name": "orphan"}})
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        assert ready.get("ok"), ready
        proc.wait(timeout=20)  # the orphan grace (1 s) and the end, not the idle timeout
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    tag = os.path.join(str(isolated_runtime), "")
    assert not left_after(tag, 8)
