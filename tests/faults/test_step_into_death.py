"""A step over a line where the program dies says the program ended, as a
continue over it does, not debugpy's "Server[1] disconnected unexpectedly"."""

from __future__ import annotations

import subprocess
import sys

import pytest


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui_debugger", *args], capture_output=True,
                          text=True, timeout=60)


SIGTERM = ("os.kill(os.getpid(), signal.SIGTERM)", "killed by SIGTERM")
#: (a step in would enter the handler, where it stops: only over)
EXIT_IN_HANDLER = ("signal.signal(signal.SIGUSR1, lambda *_: os._exit(3)); "
                   "os.kill(os.getpid(), signal.SIGUSR1)", "exit code 3")


@pytest.mark.parametrize("death, said, how", [
    (*SIGTERM, "next"), (*SIGTERM, "step"), (*SIGTERM, "continue"),
    (*EXIT_IN_HANDLER, "next"), (*EXIT_IN_HANDLER, "continue"),
])
def test_a_step_over_a_death_says_the_program_ended(isolated_runtime, no_leftover_daemons,
                                                    tmp_path, death, said, how):
    program = tmp_path / "dies.py"
    program.write_text(f"import os, signal\n{death}\nprint('never')\n")
    done = cli("start", "--session", "dies", "--stop-on-entry", str(program))
    assert done.returncode == 0, done.stderr
    try:
        to_line_2 = cli("next", "--session", "dies")
        assert ":2" in to_line_2.stdout, to_line_2
        over = cli(how, "--session", "dies")
        text = over.stdout + over.stderr
        assert over.returncode == 0, text
        assert "The program ended" in text and said in text, text
        assert "disconnected" not in text, text
    finally:
        cli("stop", "--session", "dies")
