"""The warm host's spare program process (backends/spare_program.py): after a
session, a Python with debugpy and pydevd imported waits in the last
program's interpreter and environment, and the next launch that fits runs
its program in it. What the program sees must be what a cold start gives it:
its argv, directory, sys.path, environment (the new command's shell values
among it), input, breakpoints and exit code. A launch that does not fit (its
Python is another) starts cold and ends the spare; `warm stop` ends it too."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from backends.procinfo import pid_alive
from tests.support import marker_line
from tests.support.pyenvs import base_python
from tests.test_cli import tdb
from tests.test_warm_host import start_and_stop, wait_for, warm_on, warm_pid  # noqa: F401
from tui_debugger import warm

PROBE = """\
import json, os, sys
seen = {
    "pid": os.getpid(), "argv": sys.argv, "cwd": os.getcwd(), "path0": sys.path[0],
    "ours_on_path": [p for p in sys.path if "_nodelay" in p or "debugpy" in p],
    "shlvl": os.environ.get("SHLVL"),
    "stdin": sys.stdin.read(), "name": __name__, "file": __file__,
    "version": list(sys.version_info[:2])}
for key, value in seen.items():  # a line each: `output` cuts long lines
    print("PROBE", key, json.dumps(value), flush=True)
reached = True  # @here
raise SystemExit(3)
"""


def spare_of(host: int) -> int:
    """The pid of the warm host's spare program process, once it is there."""
    def find() -> int | None:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except (OSError, ValueError, IndexError):
                continue
            if ppid == host and b"spare_debuggee.py" in cmdline:
                return int(entry)
        return None
    return wait_for(find, what="the warm host's spare program process")


def probe_of(work: Path) -> dict:
    output = tdb(work, "output").stdout
    seen = {}
    for line in output.splitlines():
        if line.startswith("PROBE "):
            _, key, value = line.split(" ", 2)
            seen[key] = json.loads(value)
    assert "version" in seen, output
    return seen


@pytest.mark.timeout(180)
def test_the_next_launch_runs_in_the_spare_as_a_cold_one_would(warm_on, monkeypatch):
    work = warm_on
    (work / "probe.py").write_text(PROBE)
    line = marker_line(work / "probe.py", "@here")
    host = start_and_stop(work)
    assert warm_pid() == host
    spare = spare_of(host)

    monkeypatch.setenv("SHLVL", "7")  # set anew by each shell: not in the way of the spare
    started = tdb(work, "start", "--break", f"probe.py:{line}", "probe.py", "three", "4")
    assert "stopped" in started.stdout or "Stopped" in started.stdout, started.stdout
    probe = probe_of(work)
    assert probe["pid"] == spare  # the program is the spare process
    assert probe["argv"] == [str(work / "probe.py"), "three", "4"]
    assert probe["cwd"] == str(work) and probe["path0"] == str(work)
    assert probe["ours_on_path"] == [], probe  # neither our directory nor debugpy's
    assert probe["shlvl"] == "7"
    assert probe["stdin"] == ""  # no input given: end of file, as /dev/null
    assert probe["name"] == "__main__" and probe["file"] == str(work / "probe.py")
    shown = tdb(work, "print", "seen['version']").stdout  # its locals, stopped
    assert str(probe["version"]) in shown, shown
    ended = tdb(work, "continue", "--wait", "30000", check=False).stdout
    assert "3" in ended and ("exit" in ended or "ended" in ended), ended
    tdb(work, "stop")

    # Warm again, with a new spare; `warm stop` ends it with its host.
    again = spare_of(host)
    assert again != spare
    tdb(work, "warm", "stop")
    wait_for(lambda: not pid_alive(again), what="the spare's end with its host")


@pytest.mark.timeout(180)
def test_a_launch_under_another_python_starts_cold_and_ends_the_spare(warm_on):
    work = warm_on
    (work / "probe.py").write_text(PROBE)
    host = start_and_stop(work)
    spare = spare_of(host)
    other = base_python("3.12")
    tdb(work, "start", "--python", other, "probe.py")
    assert warm.status() is None  # the warm host was taken: the host fits, its spare not
    tdb(work, "await", check=False)
    probe = probe_of(work)
    assert probe["version"] == [3, 12] and probe["pid"] != spare
    wait_for(lambda: not pid_alive(spare), what="the unused spare's end")
    tdb(work, "stop")


@pytest.mark.timeout(180)
def test_a_launch_in_another_directory_starts_cold(warm_on):
    # A relative PYTHONPATH entry is made absolute against the directory
    # Python starts in: a spare started elsewhere would see another path.
    work = warm_on
    (work / "probe.py").write_text(PROBE)
    (work / "sub").mkdir()
    host = start_and_stop(work)
    spare = spare_of(host)
    tdb(work, "start", "--cwd", "sub", str(work / "probe.py"))
    tdb(work, "await", check=False)
    probe = probe_of(work)
    assert probe["cwd"] == str(work / "sub") and probe["pid"] != spare
    wait_for(lambda: not pid_alive(spare), what="the unused spare's end")
    tdb(work, "stop")
