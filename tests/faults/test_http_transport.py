"""Fault suite, round two: `tui-debugger mcp --transport http` against another
local user and hostile headers.

* a port another user took first: the server says so and exits non-zero,
  before any banner, and makes or shows no token;
* Host and Origin compared exactly (`127.0.0.1:PORT@evil.com` and
  `http://127.0.0.1:1.evil.com` are not ours), whatever the token;
* slow and idle connections of another user are closed by a deadline and a
  connection cap, so the token holder is answered (under a small file limit,
  where they used to exhaust every descriptor)."""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.faults.test_other_uid import as_other, other_user  # noqa: F401 - a fixture
from tests.support.mcp import ROOT, free_port

BANNER = "MCP over HTTP at"

SQUAT = r"""
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
print("ready", flush=True)
s.settimeout(float(sys.argv[2]))
got = b""
try:
    conn, _ = s.accept()
    conn.settimeout(2)
    try:
        got = conn.recv(65536)
    except OSError:
        pass
    print("connected", got.decode(errors="replace"), flush=True)
except socket.timeout:
    print("nobody came", flush=True)
"""


def _as_other_popen(user, code: str, *args: str) -> subprocess.Popen:
    uid, gid = user
    return subprocess.Popen(["/usr/bin/python3", "-c", code, *args], user=uid, group=gid,
                            extra_groups=[], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd="/", env={"PATH": "/usr/bin:/bin"})


def _server(port: int, *, nofile: int | None = None) -> subprocess.Popen:
    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    return subprocess.Popen(
        [sys.executable, "-m", "tui_debugger", "mcp", "--transport", "http", "--port", str(port)],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env=dict(os.environ), preexec_fn=limit)


def _banner(proc: subprocess.Popen, port: int) -> str:
    """The banner, then the port answering (a waited-for state, not a sleep)."""
    line = proc.stderr.readline().decode()
    assert BANNER in line, line
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return line
        except OSError:
            assert time.monotonic() < deadline, "the server printed its banner, never listened"
            time.sleep(0.05)


def _stop(proc: subprocess.Popen) -> bytes:
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err or b""


def _token() -> str:
    from tui_debugger.paths import runtime_dir

    return (runtime_dir() / "mcp-http.token").read_text().strip()


def _post(port: int, *, host: str, token: str, origin: str | None = None,
          timeout: float = 10) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "fault", "version": "0"}}}).encode()
    head = [f"POST /mcp HTTP/1.1", f"Host: {host}", f"Authorization: Bearer {token}",
            "Content-Type: application/json", "Accept: application/json, text/event-stream",
            f"Content-Length: {len(body)}", "Connection: close"]
    if origin is not None:
        head.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        status = sock.makefile("rb").readline().decode()
    return int(status.split()[1])


def test_a_port_taken_by_another_user_fails_before_any_banner(other_user, mcp_env):
    from tui_debugger.paths import runtime_dir

    port = free_port()
    squatter = _as_other_popen(other_user, SQUAT, str(port), "8")
    try:
        assert squatter.stdout.readline().strip() == "ready"
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "tui_debugger", "mcp", "--transport", "http", "--port",
             str(port)], cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=30, env=dict(os.environ))
        assert time.monotonic() - started < 20
        assert done.returncode not in (0, None), done
        assert BANNER not in done.stderr and "Bearer" not in done.stderr, done.stderr
        assert "already in use" in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert not (runtime_dir() / "mcp-http.token").exists()
    finally:
        squatter.kill()
        out, _ = squatter.communicate(timeout=10)
    assert "Bearer" not in out, out


def test_host_and_origin_are_compared_exactly(mcp_env, no_leftover_processes):
    port = free_port()
    proc = _server(port)
    try:
        _banner(proc, port)
        token = _token()
        ok = f"127.0.0.1:{port}"
        assert _post(port, host=ok, token=token) == 200
        assert _post(port, host=f"localhost:{port}", token=token) == 200
        assert _post(port, host=ok, token=token, origin=f"http://127.0.0.1:{port}") == 200
        for bad_host in (f"127.0.0.1:{port}@evil.com", f"127.0.0.1:{port}.evil.com",
                         f"evil.com#127.0.0.1:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}",
                         f"127.0.0.1:{port} x"):
            assert _post(port, host=bad_host, token=token) == 421, bad_host
        for bad_origin in ("http://127.0.0.1:1.evil.com", f"http://127.0.0.1:{port}.evil.com",
                           f"http://127.0.0.1:{port}@evil.com", "null",
                           f"https://evil.com/http://127.0.0.1:{port}"):
            assert _post(port, host=ok, token=token, origin=bad_origin) == 403, bad_origin
        assert _post(port, host=ok, token="wrong" * 10) == 401
    finally:
        _stop(proc)


SLOW_CLIENTS = r"""
import json, socket, sys, time
port, count, hold = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
socks = []
for i in range(count):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % port)
        socks.append(s)
    except OSError:
        s.close()
print("holding %d" % len(socks), flush=True)
deadline = time.monotonic() + hold
closed = 0
for s in socks:
    s.settimeout(max(0.01, deadline - time.monotonic()))
    try:
        if s.recv(1024) == b"":
            closed += 1
    except socket.timeout:
        pass
    except OSError:
        closed += 1
print(json.dumps({"opened": len(socks), "closed": closed}), flush=True)
"""


@pytest.mark.slow
def test_slow_connections_of_another_user_do_not_starve_the_token_holder(
        other_user, mcp_env, no_leftover_processes):
    from tui_debugger.mcp import server as mcp_server

    request_timeout = getattr(mcp_server, "HTTP_REQUEST_TIMEOUT_S", 10)
    port = free_port()
    # A small file limit, so that the slow clients would exhaust it.
    proc = _server(port, nofile=96)
    try:
        _banner(proc, port)
        token = _token()
        slow = _as_other_popen(other_user, SLOW_CLIENTS, str(port), "150",
                               str(request_timeout + 8))
        try:
            assert slow.stdout.readline().startswith("holding")
            for _ in range(3):
                started = time.monotonic()
                assert _post(port, host=f"127.0.0.1:{port}", token=token, timeout=8) == 200
                assert time.monotonic() - started < 5
            report = json.loads(slow.stdout.readline())
        finally:
            slow.kill()
            slow.communicate(timeout=10)
        # every slow connection was closed by the server, none held for ever
        assert report["closed"] == report["opened"], report
        assert _post(port, host=f"127.0.0.1:{port}", token=token) == 200
    finally:
        err = _stop(proc)
    # no accept loop spinning on "Too many open files"
    assert len(err) < 20_000, err[-2000:]
