"""Fault suite, round two: the runtime directory, where sessions are found.

* never a user's file deleted or chmodded as a "stale session": a runtime
  directory pointed at a project, or another user's symlink to one, is
  refused or left alone; a `.json` that is not a dict is no traceback;
* `/tmp/tui-debugger-UID` made first by another user as a file or a dangling
  symlink: a clear error, no traceback;
* a full disk under it (a small tmpfs mounted here): clean errors, no empty
  token file, no `.tmp`, no phantom session."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.test_other_uid import other_user  # noqa: F401 - a fixture
from tests.support import unavailable
from tests.support.mcp import PROGRAMS, ROOT, call, fails, free_port, in_process_client

PROJECT_FILES = {"package.json": '{"name": "app"}', "tsconfig.json": "{}",
                 "list.json": "[1, 2]", "deep.json": "[" * 5000 + "]" * 5000}


def _project(directory: Path, mode: int) -> Path:
    directory.mkdir(mode=mode)
    os.chmod(directory, mode)
    for name, text in PROJECT_FILES.items():
        (directory / name).write_text(text)
    return directory


def _intact(directory: Path, mode: int) -> None:
    for name, text in PROJECT_FILES.items():
        assert (directory / name).read_text() == text, name
    assert stat.S_IMODE(directory.stat().st_mode) == mode


def _cli(*args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env=env)


def _env(**changes: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def test_a_runtime_directory_pointed_at_a_project_keeps_its_files(tmp_path, mcp_env):
    shared = _project(tmp_path / "shared", 0o755)
    done = _cli("sessions", env=_env(TUI_DEBUGGER_RUNTIME_DIR=str(shared)))
    assert done.returncode != 0 and "open to other users" in done.stderr, done
    assert "Traceback" not in done.stderr
    _intact(shared, 0o755)
    # a private one is used, and what is not a session's file is left alone
    private = _project(tmp_path / "private", 0o700)
    done = _cli("sessions", env=_env(TUI_DEBUGGER_RUNTIME_DIR=str(private)))
    assert done.returncode == 0, done
    assert "Traceback" not in done.stderr and "AttributeError" not in done.stdout
    _intact(private, 0o700)


@pytest.fixture
def world_writable():
    """Like /tmp but without the sticky bit, so the kernel's protected_symlinks
    does not step in: the program must refuse the link itself. In /tmp, where
    the other user can reach it."""
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="tdbg-tmp-", dir="/tmp"))
    os.chmod(tmp, 0o777)
    yield tmp
    shutil.rmtree(tmp, ignore_errors=True)


def _as_other(user, *argv: str) -> None:
    uid, gid = user
    subprocess.run(argv, user=uid, group=gid, extra_groups=[], check=True, cwd="/",
                   capture_output=True, env={"PATH": "/usr/bin:/bin"}, timeout=30)


@pytest.mark.parametrize("kind", ["link to a project", "dangling link", "file"])
def test_a_runtime_directory_made_first_by_another_user(kind, other_user, world_writable,
                                                        tmp_path, mcp_env):
    tmp = world_writable
    project = _project(tmp_path / "proj", 0o755)
    planted = tmp / f"tui-debugger-{os.getuid()}"
    if kind == "link to a project":
        _as_other(other_user, "ln", "-s", str(project), str(planted))
    elif kind == "dangling link":
        _as_other(other_user, "ln", "-s", str(tmp / "nowhere"), str(planted))
    else:
        _as_other(other_user, "touch", str(planted))
    env = _env(TUI_DEBUGGER_RUNTIME_DIR=None, XDG_RUNTIME_DIR=None, TMPDIR=str(tmp))
    for argv in (["sessions"], ["mcp"], ["start", str(PROGRAMS / "py_sleep.py")]):
        done = _cli(*argv, env=env, timeout=60)
        assert done.returncode != 0, (argv, done)
        assert "Traceback" not in done.stderr and "Please report" not in done.stderr, done.stderr
        assert "runtime directory" in done.stderr and str(planted) in done.stderr, done.stderr
    _intact(project, 0o755)
    assert not (tmp / "nowhere").exists()


@pytest.fixture
def full_disk(tmp_path):
    """A 256 KiB tmpfs, filled: the runtime directory of the test."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        unavailable("mounting a tmpfs needs root and mount")
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs",
                           str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        unavailable(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        runtime = mount / "run"
        runtime.mkdir(mode=0o700)
        with contextlib.suppress(OSError), open(mount / "filler", "wb") as filler:
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
        yield runtime
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _leftovers(runtime: Path) -> list[str]:
    return sorted(p.name for p in runtime.iterdir()
                  if p.name.endswith(".tmp") or (p.is_file() and p.stat().st_size == 0
                                                 and not p.name.endswith(".log")))


def test_a_full_disk_under_the_runtime_directory(full_disk, monkeypatch, mcp_env,
                                                 no_leftover_processes):
    env = _env(TUI_DEBUGGER_RUNTIME_DIR=str(full_disk))
    http = _cli("mcp", "--transport", "http", "--port", str(free_port()), env=env, timeout=60)
    assert http.returncode != 0, http
    assert "Traceback" not in http.stderr and "No space left" in http.stderr, http.stderr
    assert not (full_disk / "mcp-http.token").exists()
    started = _cli("start", str(PROGRAMS / "py_sleep.py"), env=env, timeout=90)
    assert started.returncode != 0, started
    assert "Please report" not in started.stderr and "No space left" in started.stderr, \
        started.stderr
    assert not _leftovers(full_disk), _leftovers(full_disk)


async def test_a_full_disk_leaves_no_phantom_session(full_disk, monkeypatch, mcp_env,
                                                     no_leftover_processes):
    monkeypatch.setenv("TUI_DEBUGGER_RUNTIME_DIR", str(full_disk))
    async with in_process_client() as client:
        error = await fails(client, "debug_launch", {"program": str(PROGRAMS / "py_sleep.py")},
                            "command_failed")
        assert "No space left" in error["error"], error
        sessions = await call(client, "debug_sessions", {})
        assert "py_sleep" not in sessions.text, sessions.text
    assert not _leftovers(full_disk), _leftovers(full_disk)


async def test_a_native_build_makes_its_folders_private_and_refuses_another_users(
        tmp_path, monkeypatch):
    """A C source is built under TMPDIR/tui-debugger-UID/build: every folder it
    makes there is 0700 (an intermediate left 0755 is then refused as the
    runtime directory), and a folder it finds open to others is refused, not
    built into."""
    import tempfile

    from backends import native_build
    from backends.errors import CommandFailed
    from tests.support import require

    require(shutil.which("cc") is not None, "cc")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    source = tmp_path / "hello.c"
    source.write_text("int main(void) { return 0; }\n")
    binary, _ = await native_build.build(str(source))
    assert os.path.exists(binary)
    top = tmp_path / f"tui-debugger-{os.getuid()}"
    for folder in (top, top / "build", Path(binary).parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    os.chmod(top / "build", 0o755)
    with pytest.raises(CommandFailed, match="not a private folder"):
        await native_build.build(str(source))
