"""debugpy's adapter started by the session's host before its own imports
(backends/early_adapter.py): taken by the launch when it is exactly what the
launch would start, ended at once when it is not, never left running."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backends.early_adapter import wants_debugpy
from backends.process import descendants
from tui_debugger.host.early import daemon_argv

PROGRAMS = Path(__file__).parent / "programs"
NOT_USED = "debugpy's adapter started early was not used"


def tdb(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _hosts(runtime: Path) -> list[int]:
    return [int(p.stem.split("-")[1]) for p in (runtime / "run").glob("daemon-*.log")
            if p.stem.split("-")[1].isdigit()]


def _adapters_below(host: int) -> list[int]:
    return [p for p in descendants(host) if "-m debugpy.adapter" in _cmdline(p)]


def _log(runtime: Path) -> str:
    return "".join(p.read_text() for p in (runtime / "run").glob("daemon-*.log"))


def test_which_command_lines_start_it_early():
    assert wants_debugpy(["start", "--stop-on-entry", "examples/inventory.py"])
    assert wants_debugpy(["run", "--adapter", "debugpy", "app.py", "--", "-v"])
    assert not wants_debugpy(["start", "examples/inventory.c"])
    assert not wants_debugpy(["start", "--adapter", "lldb-dap", "prog.py"])
    assert not wants_debugpy(["start", "--adapter=node", "prog.py"])
    assert not wants_debugpy(["run"])


@pytest.fixture
def workdir(tmp_path):
    shutil.copy(PROGRAMS / "py_basic.py", tmp_path / "py_basic.py")
    return tmp_path


@pytest.mark.timeout(120)
def test_the_launch_takes_the_adapter_started_early(no_leftover_daemons, isolated_runtime, workdir):
    # The host as `start` starts it, its spec not sent yet: the adapter comes first.
    host = subprocess.Popen([*daemon_argv(debugpy=True)], cwd=workdir, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (early := _adapters_below(host.pid)) and time.monotonic() < deadline:
            assert host.poll() is None, host.stderr.read().decode()
            time.sleep(0.05)
        assert len(early) == 1, "the host did not start debugpy's adapter before its spec"
        spec = {"command": "launch", "cwd": str(workdir), "origin": "cli",
                "args": {"program": "py_basic.py", "stop_on_entry": True}}
        host.stdin.write(json.dumps(spec).encode())
        host.stdin.close()
        ready = json.loads(host.stdout.readline())
        assert ready["ok"], ready
        # The launch ran on that very adapter: nothing started twice, nothing spare.
        assert _adapters_below(host.pid) == early
        assert "Stopped (entry)" in tdb(workdir, "await", "--timeout", "30").stdout
        assert tdb(workdir, "stop").returncode == 0
        host.wait(timeout=30)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
        assert NOT_USED not in host.stderr.read().decode()


@pytest.mark.timeout(120)
def test_start_at_the_entry_stop_with_one_adapter(no_leftover_daemons, isolated_runtime, workdir):
    started = tdb(workdir, "start", "--stop-on-entry", "py_basic.py")
    assert started.returncode == 0, started.stderr
    assert "Stopped (entry)" in started.stdout
    (host,) = _hosts(isolated_runtime)
    assert len(_adapters_below(host)) == 1
    assert NOT_USED not in _log(isolated_runtime)
    assert tdb(workdir, "stop").returncode == 0


@pytest.mark.timeout(120)
def test_another_environment_ends_the_early_adapter_at_once(no_leftover_daemons, isolated_runtime,
                                                             workdir):
    # A setting the host exports into its environment after the adapter started
    # (apply_config): the adapter the launch wants differs, so it starts its own.
    lldb_dap = shutil.which("lldb-dap-19") or "/usr/bin/lldb-dap-19"
    Path(os.environ["TUI_DEBUGGER_CONFIG"]).write_text(
        f'[adapters.lldb-dap]\npath = "{lldb_dap}"\n')
    started = tdb(workdir, "start", "--stop-on-entry", "py_basic.py")
    assert started.returncode == 0, started.stderr
    assert "Stopped (entry)" in started.stdout
    (host,) = _hosts(isolated_runtime)
    assert NOT_USED in _log(isolated_runtime)
    assert len(_adapters_below(host)) == 1
    assert tdb(workdir, "stop").returncode == 0


@pytest.mark.timeout(120)
def test_a_launch_that_fails_leaves_no_adapter(no_leftover_daemons, isolated_runtime, workdir):
    failed = tdb(workdir, "start", "--stop-on-entry", "not_here.py")
    assert failed.returncode != 0
    assert "not_here.py" in failed.stdout + failed.stderr
    assert "Traceback" not in failed.stdout + failed.stderr
    # no_leftover_daemons: the host and its early adapter are gone
