"""A debugpy program that dies by a signal is said to: "killed by SIGTERM",
"killed by SIGABRT", as the native backends say it, not "exit code 241/250"
(the number debugpy's launcher can send for it)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui_debugger", *args], capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("death, said", [
    ("os.kill(os.getpid(), signal.SIGTERM)", "killed by SIGTERM"),
    ("os.abort()", "killed by SIGABRT"),
])
def test_a_death_by_signal_is_said(isolated_runtime, no_leftover_daemons, tmp_path, death, said):
    program = tmp_path / "dies.py"
    program.write_text(f"import os, signal\nprint('about to die', flush=True)\n{death}\n")
    done = cli("start", "--session", "dies", str(program))
    assert done.returncode == 0, done.stderr
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status = cli("status", "--session", "dies").stdout
            if "ended:" in status:
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"the program did not end: {status}")
        assert said in status, status
        assert "exit code" not in status, status
    finally:
        cli("stop", "--session", "dies")


NATIVE = """#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc > 1) abort();
    kill(getpid(), SIGTERM);
    return 0;
}
"""


@pytest.mark.parametrize("adapter", ["lldb-dap", "lldb-cli"])
@pytest.mark.parametrize("extra, said", [([], "killed by SIGTERM"), (["abort"], "killed by SIGABRT")])
def test_a_native_death_by_signal_is_said(isolated_runtime, no_leftover_daemons, tmp_path,
                                          adapter, extra, said):
    """LLDB stops at the signal first; the death that follows it was "exit code
    15" (the signal's number as an exit status)."""
    program = tmp_path / "dies.c"
    program.write_text(NATIVE)
    done = cli("start", "--session", "dies", "--adapter", adapter, str(program), *extra)
    assert done.returncode == 0, done.stderr
    try:
        stop = cli("await", "--session", "dies")
        assert "signal SIG" in stop.stdout, stop
        ended = cli("continue", "--session", "dies")
        assert "The program ended" in ended.stdout and said in ended.stdout, ended
        assert "exit code" not in ended.stdout, ended
    finally:
        cli("stop", "--session", "dies")
