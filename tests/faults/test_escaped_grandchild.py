"""Fault suite, round two: a grandchild that escapes every tag.

The program forks a child that calls setsid and forks again, and the
grandchild replaces itself with `sleep` under an empty environment: no
process group, no session, no environment tag of ours. When the session's
host (the daemon) is killed with -9, the grandchild must still end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.mcp import ROOT

ESCAPE = r"""
import os, sys, time
out = sys.argv[1]
child = os.fork()
if child == 0:
    os.setsid()
    if os.fork() == 0:
        os.execve("/bin/sh", ["sh", "-c", 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 300',
                              out], {})
    os._exit(0)
os.waitpid(child, 0)
while True:
    time.sleep(0.1)
"""


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _watchdog_holds(host: int, pid: int) -> bool:
    """Whether the host's watchdog holds a pidfd on `pid` (its record)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not any(a.startswith(f"{host}-".encode()) for a in argv):
            continue
        try:
            for fd in os.listdir(f"/proc/{entry}/fdinfo"):
                info = Path(f"/proc/{entry}/fdinfo/{fd}").read_text()
                if f"Pid:\t{pid}\n" in info:
                    return True
        except OSError:
            continue
    return False


@pytest.mark.slow
def test_a_double_forked_setsid_grandchild_ends_with_its_host(tmp_path, mcp_env,
                                                              no_leftover_daemons):
    from tui_debugger.paths import meta_path

    program = tmp_path / "escape.py"
    program.write_text(ESCAPE)
    marker = tmp_path / "grandchild.pid"
    started = subprocess.run(
        [sys.executable, "-m", "tui_debugger", "start", "--session", "escape", str(program),
         str(marker)], cwd=ROOT, capture_output=True, text=True, timeout=90,
        stdin=subprocess.DEVNULL, env=dict(os.environ))
    assert started.returncode == 0, started.stderr
    host = json.loads(meta_path("escape").read_text())["pid"]
    grandchild = int(_wait(lambda: marker.exists() and marker.read_text().strip(), 30,
                           "the grandchild"))
    try:
        assert b"TUI_DEBUGGER" not in Path(f"/proc/{grandchild}/environ").read_bytes()
        assert os.getsid(grandchild) not in (os.getsid(host), os.getsid(0))
        # The host reports what runs below it once a second; wait for the record
        # (a state), but not forever: without one the check below says what broke.
        deadline = time.monotonic() + 5
        while not _watchdog_holds(host, grandchild) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(host, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while _alive(grandchild) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(grandchild), "the escaped grandchild outlived its host"
    finally:
        if _alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)
