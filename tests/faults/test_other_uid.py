"""Fault suite: another local user must not reach a session.

A second uid (created here; that needs root, so under CI=true a run that is
not root fails instead of skipping) tries every door a live session opens:
the session's Unix socket, debugpy's adapter ports, delve's DAP port and the
Node inspector's HTTP listing. Each must give it nothing: no DAP answer, no
websocket URL. And no secret of the session is on a command line, where `ps`
shows it to everyone."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import require, unavailable
from tests.support.mcp import (
    PROGRAMS,
    call,
    in_process_client,
)

OTHER = "tdbg-other"

# What the other user runs: connect to each port, send a DAP initialize (or an
# HTTP GET for the inspector), and report what came back.
PROBE = r"""
import json, socket, sys
results = {}
for kind, port in json.loads(sys.argv[1]):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect(("127.0.0.1", port))
        if kind == "http":
            s.sendall(b"GET /json/list HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        else:
            body = json.dumps({"seq": 1, "type": "request", "command": "initialize",
                               "arguments": {"adapterID": "x"}}).encode()
            s.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        results[str(port)] = data.decode(errors="replace")
    except socket.timeout:
        results[str(port)] = data.decode(errors="replace") if "data" in dir() else ""
    except OSError as exc:
        results[str(port)] = "error: %s" % exc
    finally:
        s.close()
print(json.dumps(results))
"""

UNIX_PROBE = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
    print("connected")
except OSError as exc:
    print("refused: %s" % exc)
"""


@pytest.fixture(scope="module")
def other_user():
    """A second local user (uid, gid), created for the test when missing."""
    if os.geteuid() != 0:
        unavailable("a second uid needs root to create and to switch to")
    # useradd lives in sbin, which a non-login PATH (PATH=/usr/bin:/bin) leaves out.
    sbin = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    useradd, userdel = shutil.which("useradd", path=sbin), shutil.which("userdel", path=sbin)
    if useradd is None or userdel is None:
        unavailable("useradd is missing (Debian: passwd)")
    created = False
    try:
        entry = pwd.getpwnam(OTHER)
    except KeyError:
        subprocess.run([useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        OTHER], check=True, capture_output=True)
        created = True
        entry = pwd.getpwnam(OTHER)
    yield entry.pw_uid, entry.pw_gid
    if created:
        subprocess.run([userdel, OTHER], capture_output=True)


def as_other(user, code: str, *args: str) -> str:
    uid, gid = user
    done = subprocess.run(["/usr/bin/python3", "-c", code, *args], user=uid, group=gid,
                          extra_groups=[], capture_output=True, text=True, timeout=30,
                          cwd="/", env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def listening_ports(pids: list[int]) -> list[int]:
    """TCP ports in LISTEN state held by any of `pids`."""
    inodes = set().union(*(_socket_inodes(p) for p in pids))
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:
                ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return sorted(set(ports))


def session_processes() -> list[int]:
    from backends.process import descendants

    return descendants(os.getpid())


def no_secret_on_command_lines(pids: list[int]) -> None:
    for pid in pids:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        assert "access-token" not in cmd and "ws://" not in cmd, cmd


async def _launch_and_probe(client, user, program: str, adapter: str | None, kinds: str):
    args = {"program": program}
    if adapter:
        args["adapter"] = adapter
    await call(client, "debug_launch", args)
    pids = session_processes()
    ports = listening_ports(pids)
    assert ports, f"no listening port found for {adapter or program}"
    answers = json.loads(as_other(user, PROBE, json.dumps([[kinds, p] for p in ports])))
    for port, text in answers.items():
        assert "webSocketDebuggerUrl" not in text and "ws://" not in text, (adapter, port, text)
        if kinds == "dap":  # not one DAP message back
            assert "Content-Length" not in text, (adapter, port, text)
    no_secret_on_command_lines(pids)
    # the session still serves its own user
    assert (await call(client, "debug_status", {}))["state"] in ("running", "stopped")
    await call(client, "debug_terminate", {})
    return ports


async def test_debugpy_ports_refuse_another_user(other_user, mcp_env, no_leftover_processes):
    async with in_process_client() as client:
        await _launch_and_probe(client, other_user, str(PROGRAMS / "py_sleep.py"), None, "dap")


@pytest.mark.slow
async def test_delve_refuses_another_user(other_user, mcp_env, no_leftover_processes):
    from backends.adapters import find_dlv

    from tests.support.native_build import go_program

    require(find_dlv() is not None, "dlv")
    binary = go_program("go_counter")
    async with in_process_client() as client:
        await _launch_and_probe(client, other_user, str(binary), "dlv", "dap")


@pytest.mark.slow
async def test_node_inspector_url_is_not_listed(other_user, mcp_env, no_leftover_processes):
    require(shutil.which("node") is not None, "node")
    async with in_process_client() as client:
        await _launch_and_probe(client, other_user, str(PROGRAMS / "node" / "spin.js"), "node",
                                "http")


async def test_the_session_socket_refuses_another_user(other_user, mcp_env,
                                                       no_leftover_processes):
    from tui_debugger.paths import runtime_dir

    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(PROGRAMS / "py_sleep.py")})
        sockets = list(Path(runtime_dir()).glob("*.sock"))
        assert sockets
        for sock in sockets:
            assert as_other(other_user, UNIX_PROBE, str(sock)).startswith("refused")
        await call(client, "debug_terminate", {})


def test_the_probe_reaches_an_open_port(other_user):
    """Control: the probe does read an answer from a port that lets it in, so a
    refusal above is the session's doing."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]

    def answer():
        conn, _ = server.accept()
        conn.recv(1024)
        conn.sendall(b"Content-Length: 2\r\n\r\n{}")
        conn.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    answers = json.loads(as_other(other_user, PROBE, json.dumps([["dap", port]])))
    server.close()
    assert "Content-Length" in answers[str(port)]


def test_a_squatted_runtime_directory_is_refused(other_user, tmp_path, monkeypatch):
    """Another user who creates our runtime directory first (in /tmp) must not
    receive our sockets: the directory is refused, with what to do instead."""
    from backends.errors import InvalidInput
    from tui_debugger import paths

    squatted = tmp_path / "squatted"
    squatted.mkdir(mode=0o777)
    os.chown(squatted, *other_user)
    monkeypatch.setenv("TUI_DEBUGGER_RUNTIME_DIR", str(squatted))
    with pytest.raises(InvalidInput, match="another user"):
        paths.runtime_dir()


HTTP_PROBE = r"""
import json, sys, urllib.request, urllib.error
url, token_file = sys.argv[1], sys.argv[2]
out = {}
try:
    open(token_file).read()
    out["token_file"] = "read"
except OSError as exc:
    out["token_file"] = "refused: %s" % exc.strerror
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
request = urllib.request.Request(url, data=body, headers={
    "content-type": "application/json", "accept": "application/json, text/event-stream"})
try:
    with urllib.request.urlopen(request, timeout=10) as answer:
        out["status"] = answer.status
        out["body"] = answer.read().decode(errors="replace")[:2000]
except urllib.error.HTTPError as exc:
    out["status"] = exc.code
    out["body"] = exc.read().decode(errors="replace")[:2000]
print(json.dumps(out))
"""


async def test_mcp_over_http_refuses_another_user(other_user, mcp_env, no_leftover_processes):
    import asyncio

    from tests.support.mcp import free_port, http_server
    from tui_debugger.paths import runtime_dir

    port = free_port()
    async with http_server(port):  # listening once it printed its banner
        token_file = runtime_dir() / "mcp-http.token"
        answer = json.loads(await asyncio.to_thread(
            as_other, other_user, HTTP_PROBE, f"http://127.0.0.1:{port}/mcp", str(token_file)))
        assert answer["token_file"].startswith("refused"), answer
        assert answer["status"] == 401 and "debug_launch" not in answer["body"], answer
