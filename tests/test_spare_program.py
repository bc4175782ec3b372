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
import stat
import sys
from pathlib import Path

import pytest

from backends import spare_program
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
        if line.startswith("[session "):  # the first line names the session it is of
            line = line.split("] ", 1)[-1]
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


def is_spare(pid: int) -> bool:
    """Whether process `pid` began as a spare program process."""
    return b"spare_debuggee.py" in Path(f"/proc/{pid}/cmdline").read_bytes()


def memory_file() -> Path:
    from tui_debugger import paths

    return paths.runtime_dir() / spare_program.MEMORY_FILE


@pytest.mark.timeout(180)
def test_a_cold_host_runs_the_program_in_a_spare_started_from_the_last_launch(warm_on, monkeypatch):
    # No warm host: the next cold host starts the last launch's program before
    # its own imports, from what that launch's host wrote down.
    monkeypatch.setenv("TUI_DEBUGGER_WARM", "0")
    work = warm_on
    (work / "probe.py").write_text(PROBE)
    line = marker_line(work / "probe.py", "@here")
    tdb(work, "start", "--break", f"probe.py:{line}", "probe.py", "one")
    first = probe_of(work)
    assert not is_spare(first["pid"])  # nothing remembered yet
    tdb(work, "stop")

    entries = json.loads(memory_file().read_text())
    assert stat.S_IMODE(memory_file().stat().st_mode) == 0o600
    (entry,) = [e for e in entries if e["cwd"] == os.path.realpath(work)]
    assert set(entry["set"]) | set(entry["unset"]) <= spare_program.REMEMBERED, entry
    assert entry["prefix"][-1].endswith("debugpy")

    tdb(work, "start", "--break", f"probe.py:{line}", "probe.py", "one")
    second = probe_of(work)
    assert is_spare(second["pid"])
    for key in ("argv", "cwd", "path0", "ours_on_path", "stdin", "name", "file", "version"):
        assert second[key] == first[key], key
    tdb(work, "stop")


@pytest.mark.timeout(180)
def test_a_launch_with_variables_of_its_own_is_not_written_down(warm_on, monkeypatch):
    monkeypatch.setenv("TUI_DEBUGGER_WARM", "0")
    work = warm_on
    (work / "probe.py").write_text(PROBE)
    tdb(work, "start", "--stop-on-entry", "probe.py")
    tdb(work, "stop")
    assert os.path.realpath(work) in memory_file().read_text()
    # A project's own variables may be secrets: such a launch is not written
    # down, and the directory's last entry goes (its spare would not fit).
    tdb(work, "start", "--env", "API_TOKEN=s3cret-Value-81", "--stop-on-entry", "probe.py")
    tdb(work, "stop")
    text = memory_file().read_text() if memory_file().exists() else "[]"
    assert "s3cret-Value-81" not in text
    assert all(e["cwd"] != os.path.realpath(work) for e in json.loads(text))


def test_a_memory_file_is_read_only_when_it_is_the_users_own_and_whole(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    debugpy_dir = spare_program._debugpy_dir()
    assert debugpy_dir is not None
    memory = {"prefix": [sys.executable, "-X", "frozen_modules=off", debugpy_dir],
              "cwd": os.path.realpath(work), "set": {"PYTHONUNBUFFERED": "1"}, "unset": []}
    path = tmp_path / "memory.json"
    spare_program.write_memory(str(path), str(work), memory)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert spare_program.read_memory(str(path), str(work)) == memory
    assert spare_program.read_memory(str(path), str(tmp_path)) is None  # another directory

    path.chmod(0o622)  # others may write it: not read
    assert spare_program.read_memory(str(path), str(work)) is None
    path.chmod(0o600)
    link = tmp_path / "link.json"
    link.symlink_to(path)
    assert spare_program.read_memory(str(link), str(work)) is None
    path.write_bytes(path.read_bytes()[:20])  # cut short
    assert spare_program.read_memory(str(path), str(work)) is None
    path.write_text('{"not": "a list"}')
    assert spare_program.read_memory(str(path), str(work)) is None


def test_a_memory_is_recalled_only_for_this_debugpy_and_our_own_variables(tmp_path, monkeypatch):
    monkeypatch.setattr(spare_program, "_last", None)
    debugpy_dir = spare_program._debugpy_dir()
    good = {"prefix": [sys.executable, "-X", "frozen_modules=off", debugpy_dir],
            "cwd": os.path.realpath(tmp_path), "set": {"PYTHONUNBUFFERED": "1"}, "unset": []}
    assert spare_program.recall(good, str(tmp_path))
    assert spare_program._last is not None and spare_program._last[1]["PYTHONUNBUFFERED"] == "1"
    for bad in ({**good, "prefix": [sys.executable, "-X", "frozen_modules=off", str(tmp_path)]},
                {**good, "prefix": [str(tmp_path / "no-python"), debugpy_dir]},
                {**good, "set": {"LD_PRELOAD": "/tmp/x.so"}},
                {**good, "unset": ["HOME"]},
                {**good, "cwd": "/"},
                {**good, "prefix": "python"},
                "not a dict"):
        monkeypatch.setattr(spare_program, "_last", None)
        assert not spare_program.recall(bad, str(tmp_path)), bad
        assert spare_program._last is None


def test_only_our_own_variables_are_written_down(monkeypatch, tmp_path):
    base = {"HOME": "/home/u", "SECRET": "x", "PATH": "/usr/bin"}
    prefix = [sys.executable, "-X", "frozen_modules=off", "/d/debugpy"]
    monkeypatch.setattr(spare_program, "_last", (prefix, {**base, "PYTHONUNBUFFERED": "1",
                                                          "DEBUGPY_EXTRA_ARGV": "--token t"},
                                                 str(tmp_path)))
    memory = spare_program.recollection(base)
    assert memory == {"prefix": prefix, "cwd": os.path.realpath(tmp_path),
                      "set": {"PYTHONUNBUFFERED": "1"}, "unset": []}
    monkeypatch.setattr(spare_program, "_last", (prefix, {**base, "API_KEY": "k"}, str(tmp_path)))
    assert spare_program.recollection(base) is None
    monkeypatch.setattr(spare_program, "_last", (prefix, {"HOME": "/home/u"}, str(tmp_path)))
    assert spare_program.recollection(base) is None  # it unset variables of the user's
