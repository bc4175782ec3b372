"""A live session whose <name>.json in the runtime directory was damaged
(truncated, garbage, removed) is still found: `sessions`, a command with
--session, `stop`; its host writes the file again; and `start --session NAME`
refuses the name instead of ending the old host or running a second one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from backends.procinfo import pid_alive
from tests.support import processes_tagged
from tui_debugger import paths

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "inventory.py"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui_debugger", *args], capture_output=True,
                          text=True, timeout=60)


def hosts(runtime: Path) -> list[int]:
    """The session hosts (daemons) of this test's runtime directory."""
    return [pid for pid, cmd in processes_tagged(os.path.join(str(runtime), ""))
            if "tui_debugger.host.daemon" in cmd]


def test_a_damaged_session_file_hides_no_live_session(isolated_runtime, no_leftover_daemons):
    done = cli("start", "--session", "dmg", "--stop-on-entry", str(EXAMPLE))
    assert done.returncode == 0, done.stderr
    meta = paths.meta_path("dmg")
    host = json.loads(meta.read_text())["pid"]
    intact = meta.read_text()
    damages = {"truncated": intact[: len(intact) // 2], "garbage": "\x00\xff garbage",
               "not a session's": '{"name": "x"}', "removed": None}
    try:
        for what, text in damages.items():
            if text is None:
                meta.unlink()
            else:
                meta.write_text(text)
            listed = cli("sessions")
            assert "dmg" in listed.stdout and "stopped" in listed.stdout, (what, listed)
            assert json.loads(meta.read_text())["pid"] == host, what  # written again
            if text is None:
                meta.unlink()
            else:
                meta.write_text(text)
            threads = cli("threads", "--session", "dmg")  # the quick client's own reader
            assert threads.returncode == 0 and "MainThread" in threads.stdout, (what, threads)
            meta.write_text(text or "")
            again = cli("start", "--session", "dmg", "--stop-on-entry", str(EXAMPLE))
            assert again.returncode != 0 and "already live" in again.stderr, (what, again)
            assert pid_alive(host), what  # the old host was not ended
            assert hosts(isolated_runtime) == [host], what  # nor a second one run
        meta.write_text("garbage")
        stopped = cli("stop", "--session", "dmg")
        assert stopped.returncode == 0, stopped
        assert "terminated" in stopped.stdout, stopped.stdout
    finally:
        cli("stop", "--session", "dmg")
    assert not os.path.exists(paths.socket_path("dmg"))
