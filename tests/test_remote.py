"""Remote targets: a program on another host (a network namespace of its own,
or loopback where namespaces cannot be made) served by the debuggers' own
remote servers, attached to with `debug_attach {host, port, adapter}`, its
sources found here through a path map. A server that goes away ends the
session with a message, and nothing is left running here."""

from __future__ import annotations

import os
import secrets
import shutil

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from backends.adapters import find_dlv, find_lldb, find_lldb_dap
from tests.support import require
from tests.support.mcp import call, in_process_client
from tests.support.native_build import PROGRAMS, line_of
from tests.support.remote import (
    close_remote_host,
    open_remote_host,
    processes_serving,
    reap_orphans,
)


@pytest.fixture
def remote_host():
    host = open_remote_host()
    try:
        yield host
    finally:
        close_remote_host(host)


def _port(host) -> int:
    if host.namespace:
        return 20000 + secrets.randbelow(20000)  # the namespace's ports are all free
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _built_elsewhere(tmp_path: Path, source: str, build) -> tuple[Path, Path, Path]:
    """Build `source` in a directory that then disappears, as on a build host:
    the debug info names sources that are only at another path here."""
    remote_src = tmp_path / "build-host" / "src"
    local_src = tmp_path / "checkout" / "src"
    remote_src.mkdir(parents=True)
    shutil.copy(PROGRAMS / source, remote_src / source)
    binary = build(remote_src / source, tmp_path / Path(source).stem)
    local_src.parent.mkdir(parents=True)
    shutil.move(str(remote_src), str(local_src))
    return binary, remote_src, local_src


def _gcc(source: Path, output: Path) -> Path:
    subprocess.run(["gcc", "-g", "-O0", "-o", str(output), str(source)], check=True,
                   cwd=source.parent)
    return output


def _go(source: Path, output: Path) -> Path:
    env = {**os.environ, "GO111MODULE": "off",
           "GOCACHE": str(PROGRAMS / "build" / ".gocache")}
    subprocess.run(["go", "build", "-gcflags=all=-N -l", "-o", str(output), str(source)],
                   check=True, cwd=source.parent, env=env)
    return output


async def _ended(client, timeout: float = 20.0):
    """The session's status once it has ended: the next request after the remote
    went away finds out (lldb: its next packet; DAP, CDP: the closed socket),
    and the end follows that request by a moment."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    await call(client, "debug_continue", {"waitMs": int(timeout * 1000)}, ok=False)
    while True:
        status = await call(client, "debug_status", {})
        if status["state"] == "terminated" or loop.time() > deadline:
            return status
        await asyncio.sleep(0.1)


@pytest.fixture(params=["lldb-dap", "lldb-cli"])
def lldb_adapter(request):
    finder = find_lldb_dap if request.param == "lldb-dap" else find_lldb
    require(finder() is not None, request.param)
    server = shutil.which("lldb-server-19") or shutil.which("lldb-server")
    require(server is not None, "lldb-server")
    return request.param, server


async def test_gdb_remote_with_a_path_map(no_leftover_processes, mcp_env, lldb_adapter,
                                          remote_host, tmp_path):
    adapter, server = lldb_adapter
    binary, remote_src, local_src = _built_elsewhere(tmp_path, "native_demo.c", _gcc)
    port = _port(remote_host)
    # lldb-server's HOST:PORT names who may connect; `*` takes anyone, and in the
    # namespace it listens on the namespace's address.
    remote_host.start([server, "gdbserver", f"*:{port}", "--", str(binary)])
    remote_host.wait_listening(port)
    loop = line_of("native_demo.c", "loop_body")
    local_file = str(local_src / "native_demo.c")
    async with in_process_client() as client:
        attached = await call(client, "debug_attach", {
            "host": remote_host.address, "port": port, "adapter": adapter,
            "program": str(binary), "pathMap": {str(remote_src): str(local_src)}})
        assert attached["state"] == "stopped" and attached["stop"]["reason"] == "entry"
        added = await call(client, "debug_breakpoint_add", {"file": local_file, "line": loop})
        assert added["breakpoint"]["verified"], added
        hit = await call(client, "debug_continue", {"waitMs": 20000})
        assert hit["stop"]["location"]["path"] == local_file
        assert hit["stop"]["location"]["line"] == loop
        assert "accumulator += i" in hit["context"]["source"]  # read here through the map

        # The remote end goes away; the next request finds out: the session ends
        # and says so.
        remote_host.stop_all()
        status = await _ended(client)
        assert status["state"] == "terminated", status
        assert "lost the connection to the gdb-remote server" in status["terminatedReason"]
        assert f"{remote_host.address}:{port}" in status["terminatedReason"]


async def test_dlv_headless_with_substitute_path(no_leftover_processes, mcp_env, remote_host,
                                                 tmp_path):
    require(find_dlv() is not None, "delve (dlv)")
    require(shutil.which("go") is not None, "go")
    binary, remote_src, local_src = _built_elsewhere(tmp_path, "go_demo.go", _go)
    port = _port(remote_host)
    remote_host.start([find_dlv(), "exec", "--headless", "--accept-multiclient",
                       "--api-version", "2", "--listen", f"{remote_host.address}:{port}",
                       str(binary)])
    remote_host.wait_listening(port)
    loop = line_of("go_demo.go", "loop_body")
    local_file = str(local_src / "go_demo.go")
    async with in_process_client() as client:
        attached = await call(client, "debug_attach", {
            "host": remote_host.address, "port": port, "adapter": "dlv",
            "pathMap": {str(remote_src): str(local_src)}})
        assert attached["state"] == "stopped", attached
        added = await call(client, "debug_breakpoint_add", {"file": local_file, "line": loop})
        assert added["breakpoint"]["verified"], added
        hit = await call(client, "debug_continue", {"waitMs": 20000})
        assert hit["stop"]["location"]["path"] == local_file, hit
        assert "accumulator += i" in hit["context"]["source"]
        remote_host.stop_all()
        status = await _ended(client)
        assert status["state"] == "terminated", status
        assert f"dlv server at {remote_host.address}:{port} was lost" in \
            status["terminatedReason"]


async def test_debugpy_listen_with_path_mappings(no_leftover_processes, mcp_env, remote_host,
                                                 tmp_path):
    remote_src = tmp_path / "server" / "app"
    local_src = tmp_path / "checkout" / "app"
    for directory in (remote_src, local_src):
        directory.mkdir(parents=True)
        shutil.copy(PROGRAMS / "py_basic.py", directory / "py_basic.py")
    port = _port(remote_host)
    remote_host.start([sys.executable, "-m", "debugpy", "--listen",
                       f"{remote_host.address}:{port}", "--wait-for-client",
                       str(remote_src / "py_basic.py")], env={**os.environ})
    remote_host.wait_listening(port)
    line = next(n for n, text in enumerate(
        (PROGRAMS / "py_basic.py").read_text().splitlines(), 1) if "@loop-body" in text)
    local_file = str(local_src / "py_basic.py")
    async with in_process_client() as client:
        await call(client, "debug_attach", {
            "host": remote_host.address, "port": port, "adapter": "debugpy",
            "pathMap": {str(remote_src): str(local_src)}})
        await call(client, "debug_breakpoint_add", {"file": local_file, "line": line})
        hit = await call(client, "debug_wait", {"timeoutMs": 20000})
        assert "stop" in hit, hit
        assert hit["stop"]["location"]["path"] == local_file, hit
        adapter_pids = processes_serving(port)
        await call(client, "debug_terminate", {})
    reap_orphans(adapter_pids)



async def test_node_inspect_with_remote_root(no_leftover_processes, mcp_env, remote_host,
                                             tmp_path):
    node = shutil.which("node")
    require(node is not None, "node")
    remote_src = tmp_path / "srv" / "app"
    local_src = tmp_path / "checkout" / "app"
    for directory in (remote_src, local_src):
        directory.mkdir(parents=True)
        shutil.copy(PROGRAMS / "node" / "script_target.js", directory / "script_target.js")
    port = _port(remote_host)
    remote_host.start([node, f"--inspect-brk={remote_host.address}:{port}",
                       str(remote_src / "script_target.js")])
    remote_host.wait_listening(port)
    line = next(n for n, text in enumerate(
        (PROGRAMS / "node" / "script_target.js").read_text().splitlines(), 1)
        if "@mark visit" in text)
    local_file = str(local_src / "script_target.js")
    async with in_process_client() as client:
        await call(client, "debug_attach", {
            "host": remote_host.address, "port": port, "adapter": "node",
            "pathMap": {str(remote_src): str(local_src)}})
        entry = await call(client, "debug_wait", {"timeoutMs": 20000})
        assert entry["stop"]["reason"] == "entry", entry  # --inspect-brk holds it there
        added = await call(client, "debug_breakpoint_add", {"file": local_file, "line": line})
        assert added["breakpoint"]["verified"], added
        hit = await call(client, "debug_continue", {"waitMs": 20000})
        assert hit["stop"]["location"]["path"] == local_file, hit
        assert hit["stop"]["location"]["line"] == line
        remote_host.stop_all()  # the remote end goes away: the session says so
        status = await _ended(client)
        assert status["state"] == "terminated", status
        assert f"Node inspector at {remote_host.address}:{port} closed" in \
            status["terminatedReason"]
