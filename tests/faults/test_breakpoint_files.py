"""A breakpoint in a file no debugger should be handed is refused at once, with
why: a source over the size read for one (debugpy held setBreakpoints 56 s on
a 73 MB file, then failed), a binary file (it was "verified at line 2")."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tui_debugger.paths import MAX_SOURCE_BYTES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "inventory.py"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui_debugger", *args], capture_output=True,
                          text=True, timeout=60)


def test_huge_and_binary_files_take_no_breakpoint(isolated_runtime, no_leftover_daemons, tmp_path):
    huge = tmp_path / "huge.py"
    line = "x = 1  # a generated module's line\n"
    huge.write_text(line * (MAX_SOURCE_BYTES // len(line) + 1000))
    binary = tmp_path / "data.py"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8 + b"\nx = 1\n")
    done = cli("start", "--session", "files", "--stop-on-entry", str(EXAMPLE))
    assert done.returncode == 0, done.stderr
    try:
        started = time.monotonic()
        refused = cli("break", "add", "--session", "files", f"{huge}:2")
        assert time.monotonic() - started < 10, "the breakpoint was not answered at once"
        assert refused.returncode != 0, refused.stdout
        assert "bytes, over the" in refused.stderr and "Traceback" not in refused.stderr, refused
        refused = cli("break", "add", "--session", "files", f"{binary}:2")
        assert refused.returncode != 0, refused.stdout
        assert "binary file" in refused.stderr, refused.stderr
        listed = cli("break", "list", "--session", "files")
        assert "huge.py" not in listed.stdout and "data.py" not in listed.stdout, listed.stdout
        # A text source is taken as before.
        taken = cli("break", "add", "--session", "files", f"{EXAMPLE}:20")
        assert taken.returncode == 0, taken.stderr
    finally:
        cli("stop", "--session", "files")
