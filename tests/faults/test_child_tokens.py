"""pydevd's access tokens stay off the command line of the debuggee's Python
children too: one started by subprocess (`python script`, `python -c`) and one
that a fork exec'd. Each is still debugged (the tokens reach it another way)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "programs" / "children" / "token_children.py"


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui_debugger", *args], capture_output=True,
                          text=True, timeout=timeout)


def command_lines(marker: str) -> dict[int, str]:
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                text = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in text:
                found[int(entry.name)] = text
    return found


@pytest.mark.slow
def test_no_token_on_a_childs_command_line(isolated_runtime, no_leftover_daemons, tmp_path):
    out = tmp_path / "pids"
    out.mkdir()
    done = cli("start", "--session", "tokens", str(PROGRAM), str(out))
    assert done.returncode == 0, done.stderr
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            lines = command_lines(str(out))
            kinds = {k for k in ("script", "code") if (out / f"{k}.pid").exists()}
            exec_d = [pid for pid, text in lines.items() if text.rstrip().endswith(" exec")
                      and "pydevd" in text]  # the fork, once it exec'd a debugged Python
            if kinds == {"script", "code"} and exec_d:
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"the children did not all start: {command_lines(str(out))}")
        lines = command_lines(str(out))
        assert len(lines) >= 4, lines  # the program, two children, the exec'd one
        for pid, text in lines.items():
            # debugpy's tokens are 64 hex digits: none, as a flag's value or in code
            assert "--client-access-token" not in text and "--access-token" not in text, text
            assert not re.search(r"[0-9a-f]{32}", text), text
        # They are debugged all the same: each is a session of the tree.
        pids = [int((out / f"{k}.pid").read_text()) for k in ("script", "code")]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            listed = cli("sessions").stdout
            if all(f"tokens.{pid}" in listed for pid in pids + exec_d):
                break
            time.sleep(0.3)
        else:
            pytest.fail(f"children not debugged: {listed}")
        for pid in pids:
            threads = cli("threads", "--session", f"tokens.{pid}")
            assert threads.returncode == 0 and "MainThread" in threads.stdout, threads
    finally:
        cli("stop", "--session", "tokens")
