"""The user's warm host (tui_debugger/warm.py, host/warm_stay.py): a session's
host stays after its session, and the next `start` that fits hosts its
session on it; one that does not fit (another environment, project or
Python) starts cold and leaves it alone. It ends on its idle time, on
`warm stop`, and is never answered for another user. The rest of the suite
runs with TUI_DEBUGGER_WARM=0 (conftest.py); these tests turn it on."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.test_cli import PROGRAMS, tdb
from tui_debugger import paths, warm


@pytest.fixture
def warm_on(no_leftover_daemons, monkeypatch, tmp_path):
    """Warm hosts on, for 60 s unless a test says less; whatever is warm at
    the end is stopped (and no_leftover_daemons checks nothing is left)."""
    monkeypatch.setenv("TUI_DEBUGGER_WARM", "1")
    monkeypatch.setenv("TUI_DEBUGGER_WARM_IDLE_S", "60")
    monkeypatch.setenv("TUI_DEBUGGER_LINGER_S", "2")
    monkeypatch.setenv("TUI_DEBUGGER_PERSIST_BREAKPOINTS", "0")
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(PROGRAMS / "py_basic.py", work / "py_basic.py")
    yield work
    warm.stop()
    from tests.test_warm_screen import stop_screens

    stop_screens()  # a TUI's `run` starts one for the next `run`


def _serving(listener, **options) -> tuple[threading.Thread, list, list]:
    """`listener` served in a thread (warm.wait_for_taker, idle 5 s unless
    `options` say otherwise): the thread, what took it, and why it ended."""
    taken: list = []
    ended: list = []

    def serve():
        try:
            taken.append(warm.wait_for_taker(
                listener, **{"idle_s": 5, "stamp": warm.install_stamp(),
                             "project": paths.project_of(os.getcwd()),
                             "env": dict(os.environ), "log": "", **options}))
        except warm.Ended as exc:
            ended.append(str(exc))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread, taken, ended


def wait_for(predicate, timeout: float = 30.0, what: str = ""):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


def host_pid(work: Path) -> int:
    listed = json.loads(tdb(work, "sessions", "--json").stdout)
    (entry,) = listed["sessions"]
    return entry["pid"]


def start_and_stop(work: Path) -> int:
    """A session started and stopped from `work`: its host's pid."""
    tdb(work, "start", "--stop-on-entry", "py_basic.py")
    pid = host_pid(work)
    tdb(work, "stop")
    return pid


def warm_pid() -> int:
    info = wait_for(warm.status, what="a warm host")
    return info["pid"]


@pytest.mark.timeout(180)
def test_the_next_session_is_hosted_by_the_warm_host(warm_on):
    work = warm_on
    first = start_and_stop(work)
    assert warm_pid() == first  # the host of the ended session stays
    fds = len(os.listdir(f"/proc/{first}/fd"))
    base = paths.runtime_dir()
    # The user's only: the directory 0700, the socket and its description 0600.
    assert stat.S_IMODE(os.stat(base).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(base / warm.SOCKET_NAME).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(base / warm.META_NAME).st_mode) == 0o600
    listed = tdb(work, "sessions").stdout
    assert f"warm host: pid {first}" in listed
    assert f"warm host: pid {first}" in tdb(work, "doctor").stdout

    tdb(work, "start", "--stop-on-entry", "py_basic.py")
    assert host_pid(work) == first  # taken: the same process hosts the new session
    # and its launch took the debugpy adapter the warm host had started
    log = (base / f"daemon-{first}.log").read_text()
    assert "taken for a new session" in log and "was not used" not in log, log
    assert warm.status() is None  # and, taken, is nobody else's
    assert "acc" in tdb(work, "next").stdout or tdb(work, "status").returncode == 0
    tdb(work, "stop")
    assert warm_pid() == first  # warm again
    assert len(os.listdir(f"/proc/{first}/fd")) == fds  # a session leaves no descriptor behind

    stopped = tdb(work, "warm", "stop").stdout
    assert f"Warm host {first} ended." in stopped
    assert not paths.pid_alive(first)
    assert not (base / warm.SOCKET_NAME).exists()
    assert "No warm host was waiting." in tdb(work, "warm", "stop").stdout


@pytest.mark.timeout(180)
def test_another_environment_or_project_starts_cold(warm_on, tmp_path, monkeypatch):
    work = warm_on
    first = start_and_stop(work)
    assert warm_pid() == first

    # Another environment: a variable the program would see.
    monkeypatch.setenv("WARM_TEST_OTHER", "1")
    tdb(work, "start", "--stop-on-entry", "py_basic.py")
    other = host_pid(work)
    assert other != first and warm.status()["pid"] == first
    tdb(work, "stop")
    monkeypatch.delenv("WARM_TEST_OTHER")
    # That host found one warm already: it ends instead of staying.
    wait_for(lambda: not paths.pid_alive(other), what="the second host's end")

    # Another project.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(PROGRAMS / "py_basic.py", elsewhere / "py_basic.py")
    tdb(elsewhere, "start", "--stop-on-entry", "py_basic.py")
    third = host_pid(elsewhere)
    assert third != first and warm.status()["pid"] == first
    tdb(elsewhere, "stop")
    wait_for(lambda: not paths.pid_alive(third), what="the third host's end")
    assert warm.status()["pid"] == first


@pytest.mark.timeout(120)
def test_the_warm_host_refuses_another_python_and_says_why(warm_on):
    work = warm_on
    first = start_and_stop(work)
    assert warm_pid() == first
    for change, why in (({"python": "/usr/bin/python-other"}, "another Python"),
                        ({"cwd": "/"}, "another project"),
                        ({"version": "0.0.0"}, "another install")):
        request = {**warm.fit_request(str(work)), **change}
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(10)
        sock.connect(str(paths.runtime_dir() / warm.SOCKET_NAME))
        sock.sendall(json.dumps(request).encode() + b"\n")
        answer = json.loads(sock.makefile("rb").readline())
        sock.close()
        assert answer["ok"] is False and why in answer["why"], answer
    assert warm.status()["pid"] == first  # still warm, not taken


@pytest.mark.timeout(120)
def test_the_warm_host_ends_after_its_idle_time(warm_on, monkeypatch):
    work = warm_on
    monkeypatch.setenv("TUI_DEBUGGER_WARM_IDLE_S", "2")
    first = start_and_stop(work)
    # Gone by itself, its adapter with it (no_leftover_daemons checks).
    wait_for(lambda: not paths.pid_alive(first), timeout=60, what="the warm host's end")
    assert warm.status() is None
    assert not (paths.runtime_dir() / warm.SOCKET_NAME).exists()


@pytest.mark.timeout(120)
def test_turned_off_no_host_stays(warm_on, monkeypatch):
    work = warm_on
    monkeypatch.setenv("TUI_DEBUGGER_WARM", "0")
    first = start_and_stop(work)
    wait_for(lambda: not paths.pid_alive(first), what="the host's end")
    assert warm.status() is None
    assert not (paths.runtime_dir() / warm.SOCKET_NAME).exists()


def test_another_users_connection_is_not_answered(monkeypatch):
    """The peer-credential check: a connection whose peer is not this user
    gets no answer, and the host is not taken; a starter whose peer is not
    its user takes nothing."""
    listener = warm.Listener.claim()
    assert listener is not None
    assert warm.Listener.claim() is None  # one warm host per user
    # Every peer seen as another user's (the kernel's answer, SO_PEERCRED, replaced).
    monkeypatch.setattr(warm, "peer_credentials",
                        lambda sock: (os.getpid(), os.getuid() + 4242, os.getgid()))
    thread, taken, ended = _serving(listener)
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(5)
        sock.connect(str(paths.runtime_dir() / warm.SOCKET_NAME))
        try:
            sock.sendall(json.dumps(warm.fit_request(os.getcwd())).encode() + b"\n")
            heard = sock.recv(100)
        except (ConnectionResetError, BrokenPipeError):
            # closed with our request unread, or before it was sent (a busy
            # machine: the host refused the peer before this line ran)
            heard = b""
        assert heard == b""  # closed without a word
        sock.close()
        # And a starter never takes a host whose peer is another user's.
        assert warm.take(os.getcwd()) is None
    finally:
        thread.join(timeout=10)
        listener.release()
    assert not taken and ended == ["idle time over"]


def test_a_host_without_a_pid_here_is_not_taken(monkeypatch):
    """A warm host in another PID namespace shows pid 0 on the socket: it
    could be neither waited for nor signalled (pid 0 is the starter's own
    group), so the starter lets it go and starts cold; the host waits on."""
    monkeypatch.setenv("TUI_DEBUGGER_WARM", "1")
    listener = warm.Listener.claim()
    assert listener is not None
    real = warm.peer_credentials
    # the starter's view of the host: no pid in its namespace; the host's view stays real
    monkeypatch.setattr(warm, "peer_credentials",
                        lambda sock: (0, *real(sock)[1:]) if threading.current_thread()
                        is threading.main_thread() else real(sock))
    thread, taken, ended = _serving(listener)
    try:
        assert warm.take(os.getcwd()) is None
    finally:
        thread.join(timeout=10)
    conn, _ = taken[0]  # the host was taken, and its starter said nothing: EOF
    conn.settimeout(5)
    assert conn.recv(100) == b""
    conn.close()
    assert not ended


def test_peer_credentials_are_the_peers():
    a, b = socket.socketpair(socket.AF_UNIX)
    try:
        pid, uid, gid = warm.peer_credentials(a)
        assert (pid, uid, gid) == (os.getpid(), os.getuid(), os.getgid())
        assert warm.peer_is_this_user(a)
    finally:
        a.close()
        b.close()


def test_what_fits():
    env = {"PATH": "/bin", "HOME": "/home/x", "PWD": "/a"}
    request = {**warm.fit_request(os.getcwd()), "env": {**env, "PWD": "/b", "_": "/bin/x"}}
    project = paths.project_of(os.getcwd())
    assert warm.misfit(request, project=project, env=env) is None  # PWD and _ differ only
    assert "PATH" in warm.misfit({**request, "env": {**env, "PATH": "/usr/bin"}},
                                 project=project, env=env)
    assert "another Python" in warm.misfit({**request, "python": sys.executable + "x"},
                                           project=project, env=env)
    assert warm.enabled({}) and not warm.enabled({"TUI_DEBUGGER_WARM": "0"})


@pytest.mark.timeout(180)
async def test_an_agents_launch_takes_the_warm_host(warm_on, monkeypatch):
    """debug_launch (the MCP server's router, with its own spare host) hands
    its launch to the warm host when it fits, and keeps its spare."""
    import asyncio

    from tui_debugger.client.router import Router

    work = warm_on
    first = await asyncio.to_thread(start_and_stop, work)
    assert await asyncio.to_thread(warm_pid) == first
    monkeypatch.chdir(work)
    router = Router("mcp", cwd=str(work), keep_spare=True, owns_started=True)
    router.prepare_spare()
    try:
        result = await router.call("launch", {"program": "py_basic.py", "stop_on_entry": True})
        listed = await router.call("sessions")
        (entry,) = [s for s in listed.sessions if s.name == result.session]
        assert entry.pid == first
        await router.call("terminate", session=result.session)
    finally:
        await router.end_started()
        await router.close()
    assert await asyncio.to_thread(warm_pid) == first  # warm again after the agent's session


def _run_in_a_terminal(work: Path) -> int:
    """`run --stop-on-entry` in a pseudo-terminal to its stop, then SIGTERM
    (it quits as `q` does): its session's host's pid."""
    import signal

    from tests.test_tui_host import Terminal

    tui = Terminal("run", "--stop-on-entry", "py_basic.py", cwd=work)
    try:
        stopped = wait_for(lambda: [s for s in paths.live_sessions() if s.state == "stopped"],
                           timeout=90, what="the TUI's session stopped at its entry")
        # And on the TUI's screen: taken warm, the host has the stop long before
        # the TUI runs, and a TUI told to quit while it starts ends the host it
        # is starting, as a start that failed (that host does not stay warm).
        wait_for(lambda: b"STOPPED" in tui.screen and b"entry" in tui.screen, timeout=90,
                 what="the entry stop on the TUI's screen")
        wait_for(lambda: os.readlink(f"/proc/{stopped[0].pid}/fd/1") == os.devnull,
                 timeout=60, what="the launch's answer")
        tui.proc.send_signal(signal.SIGTERM)
        assert tui.proc.wait(timeout=30) == 0
    finally:
        tui.close()
    return stopped[0].pid


@pytest.mark.timeout(240)
def test_the_tuis_run_takes_the_warm_host(warm_on):
    work = warm_on
    first = _run_in_a_terminal(work)
    assert warm_pid() == first
    assert _run_in_a_terminal(work) == first
    assert warm_pid() == first


def test_a_warm_host_whose_socket_is_gone_ends_at_once():
    """A runtime directory removed under a waiting host (a test's, a
    benchmark's temporary one, a tmp cleaner) leaves nobody able to take it or
    stop it: it ends at its next check instead of waiting out its idle time."""
    listener = warm.Listener.claim()
    assert listener is not None and listener.reachable()
    checks: list[bool] = []
    real = listener.reachable
    listener.reachable = lambda: checks.append(real()) or checks[-1]
    thread, _, ended = _serving(listener, idle_s=60, check_s=0.05)
    try:
        wait_for(lambda: len(checks) >= 3, 10, "three checks of the socket")
        assert thread.is_alive() and all(checks)  # still reachable: it waits
        os.unlink(paths.runtime_dir() / warm.SOCKET_NAME)
        thread.join(timeout=10)
        assert not thread.is_alive()
    finally:
        listener.release()
    assert ended and "socket is gone" in ended[0]
