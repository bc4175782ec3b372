"""Removing a breakpoint releases the threads held at it: 40 threads reach one
breakpoint together, it is removed, and the next continue runs them all on
(before: "N more thread(s) held at a breakpoint", N continues to pass a
breakpoint that no longer existed). Threads held at a breakpoint that stays
are still shown one by one."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

THREADS = 40
PROGRAM = """import sys, threading
N = int(sys.argv[1])
barrier = threading.Barrier(N)
def work(i):
    barrier.wait()
    x = i * 2  # hit
    return x  # other
threads = [threading.Thread(target=work, args=(i,)) for i in range(N)]
for t in threads: t.start()
for t in threads: t.join()
print("all done", flush=True)
"""


def cli(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "tui_debugger", *args], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def held(text: str) -> int:
    match = re.search(r"(\d+) more thread\(s\) held", text)
    return int(match.group(1)) if match else 0


def run_to_held(program: str) -> str:
    """Continue until a stop at the breakpoint has two more threads held there."""
    text = cli("continue", "--session", "held")
    while held(text) < 2:
        assert "Stopped (breakpoint #" in text, text
        text = cli("continue", "--session", "held")
    return text


def test_a_removed_breakpoint_holds_no_thread(isolated_runtime, no_leftover_daemons, tmp_path):
    program = tmp_path / "threads.py"
    program.write_text(PROGRAM)
    cli("start", "--session", "held", "--stop-on-entry", str(program), str(THREADS))
    try:
        cli("break", "add", "--session", "held", f"{program}:6")
        other = cli("break", "add", "--session", "held", f"{program}:11")  # never reached
        run_to_held(str(program))
        # Removing another breakpoint leaves the holds as they are.
        cli("break", "rm", "--session", "held", re.search(r"#(\d+)", other).group(1))
        text = cli("continue", "--session", "held")
        assert "Stopped (breakpoint #1)" in text and held(text) >= 1, text
        # Removing the one they are held at lets them all go.
        cli("break", "rm", "--session", "held", "1")
        text = cli("continue", "--session", "held")
        assert "held" not in text and "The program ended: exit code 0" in text, text
    finally:
        subprocess.run([sys.executable, "-m", "tui_debugger", "stop", "--session", "held"],
                       capture_output=True, timeout=60)


NATIVE = Path(__file__).resolve().parents[1] / "programs" / "native_thread_hits.c"


@pytest.mark.parametrize("adapter", ["lldb-dap"])  # (lldb-cli holds no hit beside a stop)
def test_a_removed_native_breakpoint_holds_no_thread(isolated_runtime, no_leftover_daemons,
                                                     adapter):
    line = next(n for n, text in enumerate(NATIVE.read_text().splitlines(), 1) if "@hit" in text)
    cli("start", "--session", "held", "--adapter", adapter, "--stop-on-entry", str(NATIVE),
        "barrier", "20")
    try:
        added = cli("break", "add", "--session", "held", f"{NATIVE}:{line}")
        number = re.search(r"#(\d+)", added).group(1)
        run_to_held(str(NATIVE))
        cli("break", "rm", "--session", "held", number)
        text = cli("continue", "--session", "held")
        assert "held" not in text and "The program ended: exit code 0" in text, text
    finally:
        subprocess.run([sys.executable, "-m", "tui_debugger", "stop", "--session", "held"],
                       capture_output=True, timeout=60)
