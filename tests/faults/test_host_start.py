"""Fault suite: starting a session's host process.

What `tui-debugger start` (and every TUI session) puts where another local
user or the caller's directory can reach it: the launch spec (the program's
environment included) is never on a command line, where `ps` shows it to
everyone; no module of the caller's directory runs inside the daemon or the
debugpy adapter; a bad session name is refused before anything starts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.mcp import PROGRAMS

SECRET = "s3cr3t-api-token-4242"


def tui_debugger(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    # The installed executable, as a user runs it (`python -m` would itself put
    # the working directory on sys.path, which is not what is tested here).
    exe = shutil.which("tui-debugger")
    assert exe is not None, "tui-debugger is not installed in the test environment"
    return subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env=dict(os.environ))


def command_lines() -> dict[int, str]:
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                out[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().replace(
                    b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
    return out


def test_the_launch_environment_is_on_no_command_line(tmp_path, mcp_env, no_leftover_daemons):
    started = tui_debugger("start", "--session", "envtest", "--stop-on-entry",
                           "--env", f"API_TOKEN={SECRET}",
                           str(PROGRAMS / "py_sleep.py"), cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    try:
        leaks = {pid: cmd for pid, cmd in command_lines().items() if SECRET in cmd}
        assert not leaks, leaks
        # and the program did get it
        shown = tui_debugger("print", "--session", "envtest", "len(__import__('os').environ"
                             "['API_TOKEN'])", cwd=tmp_path)
        assert str(len(SECRET)) in shown.stdout, shown.stdout + shown.stderr
    finally:
        tui_debugger("stop", "--session", "envtest", cwd=tmp_path)


# Modules a Python process imports early; each one, if it ran, leaves a marker
# naming the process it ran in.
SHADOWS = ("argparse", "signal", "secrets", "json", "socket", "selectors", "contextlib",
           "subprocess", "typing", "enum")


def test_the_daemon_imports_nothing_from_the_callers_directory(tmp_path, mcp_env,
                                                             no_leftover_daemons):
    caller = tmp_path / "project"
    caller.mkdir()
    markers = tmp_path / "markers"
    markers.mkdir()
    for name in SHADOWS:
        (caller / f"{name}.py").write_text(
            "import os, sys\n"
            f"open(os.path.join({str(markers)!r}, '{name}-%d' % os.getpid()), 'w').write("
            "' '.join(sys.argv))\n"
            "raise SystemExit('shadowed module ran')\n")
    # The program lives elsewhere: its own directory is its own business.
    started = tui_debugger("start", "--session", "shadow", str(PROGRAMS / "py_sleep.py"),
                           cwd=caller)
    try:
        assert started.returncode == 0, started.stderr
        ran = {p.name: p.read_text() for p in markers.iterdir()}
        assert not ran, ran
    finally:
        tui_debugger("stop", "--session", "shadow", cwd=caller)


@pytest.mark.parametrize("name", ["../escape", "a b", "x" * 60, "-dash"])
def test_an_invalid_session_name_starts_nothing(name, tmp_path, mcp_env):
    from tui_debugger.paths import runtime_dir

    before = set(os.listdir(runtime_dir()))
    started = tui_debugger("start", f"--session={name}", str(PROGRAMS / "py_sleep.py"),
                           cwd=tmp_path, timeout=30)
    assert started.returncode != 0
    assert "Invalid session name" in started.stderr, started.stderr
    assert "Traceback" not in started.stderr
    # (the settings stamp is the command line's, written once it read the settings)
    after = set(os.listdir(runtime_dir())) - {"settings-checked"}
    assert after <= before, sorted(after - before)


BROKEN_SITE = """
import os, sys
if b"tui_debugger.host.daemon" in open("/proc/self/cmdline", "rb").read():
    sys.stderr.write("this host's Python is broken: site failed\\n")
    sys.stderr.flush()
    os._exit(3)
"""


@pytest.fixture
def broken_host_python(tmp_path, monkeypatch):
    """A host whose Python dies before it is ready (a broken site, here), and
    only the host's: the CLI and the test go on as usual."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BROKEN_SITE)
    monkeypatch.setenv("PYTHONPATH", str(site))
    return tmp_path


def test_start_whose_host_dies_says_so_with_its_log(broken_host_python, mcp_env,
                                                    no_leftover_daemons):
    # `start` hands its command line to the host it starts first (cli/quick.py, start)
    started = tui_debugger("start", str(PROGRAMS / "py_sleep.py"), cwd=broken_host_python,
                           timeout=30)
    assert started.returncode != 0
    assert "The session host exited before it was ready (code 3)." in started.stderr, \
        started.stderr
    assert "site failed" in started.stderr and "Traceback" not in started.stderr


async def test_a_launch_whose_host_dies_says_so_with_its_log(broken_host_python, mcp_env,
                                                             no_leftover_daemons):
    from tests.support.mcp import call, in_process_client

    async with in_process_client() as client:
        answer = await call(client, "debug_launch", {"program": str(PROGRAMS / "py_sleep.py")},
                            ok=False)
    assert answer.is_error and answer["code"] == "command_failed", answer.text
    assert "The session host exited before it was ready (code 3)." in answer.text, answer.text
    assert "site failed" in answer.text
