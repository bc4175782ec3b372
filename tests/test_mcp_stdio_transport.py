"""The stdio transport of `tui-debugger mcp` (mcp/stdio.py, serve_stdio), as a
real process spoken to in raw JSON-RPC lines: requests in one burst and in
pieces, answers each once and whole, a client that reads late or leaves, a
line too long to hold, files for stdin and stdout, and the wire kept private
while serving. Bad lines one by one are tests/faults/test_bad_input.py's."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support import unavailable
from tests.support.mcp import PY_BASIC, ROOT, line_of

BOUND_S = 30.0  # every answer and every exit arrives within this
REL_BASIC = "tests/programs/py_basic.py"


def request(msg_id: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


def tool(msg_id: int, name: str, arguments: dict[str, Any] | None = None) -> bytes:
    return request(msg_id, "tools/call", {"name": name, "arguments": arguments or {}})


INITIALIZE = request(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                       "clientInfo": {"name": "transport-test", "version": "0"}})
INITIALIZED = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'


class RawServer:
    """`tui-debugger mcp` on pipes: its stdout read line by line by a thread
    into a queue, so every wait is for a line, bounded."""

    def __init__(self, *args: str, read: bool = True) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tui_debugger", "mcp", *args], cwd=ROOT,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=dict(os.environ))
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: list[bytes] = []
        if read:
            threading.Thread(target=self._read, daemon=True).start()
        self.stderr_reader = threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr),
                                              daemon=True)
        self.stderr_reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        line = self.lines.get(timeout=BOUND_S)
        assert line is not None, f"the server closed stdout; stderr: {self.errors()}"
        assert line.endswith(b"\n")
        return json.loads(line)  # a whole JSON-RPC message on each line

    def answers(self, count: int) -> list[dict[str, Any]]:
        return [self.answer() for _ in range(count)]

    def initialize(self) -> None:
        self.send(INITIALIZE)
        assert self.answer()["id"] == 0
        self.send(INITIALIZED)

    def errors(self) -> str:
        if self.proc.poll() is not None:
            self.stderr_reader.join(BOUND_S)  # all of it, once the server is gone
        return b"".join(self.stderr).decode(errors="replace")[-3000:]

    def end(self) -> int:
        """Close stdin (the end of the session for an MCP server) and wait."""
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        return self.proc.wait(BOUND_S)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(BOUND_S)


@pytest.fixture
def server(mcp_env, no_leftover_processes):
    started = RawServer()
    yield started
    started.kill()


def by_id(answers: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    found: dict[Any, dict[str, Any]] = {}
    for answer in answers:
        assert answer.get("id") not in found, f"answered twice: {answer}"
        found[answer.get("id")] = answer
    return found


@pytest.mark.slow
def test_a_burst_of_calls_in_pieces_is_answered_each_once_and_whole(server):
    """Forty calls on a stopped debugpy session and two bad lines, written as
    one burst cut at arbitrary bytes (lines split across writes, several lines
    in one): every request answered once, each answer a whole line, the
    values right."""
    server.initialize()
    scale = line_of(PY_BASIC, "@scale")
    server.send(tool(1, "debug_launch", {"program": REL_BASIC,
                                         "breakpoints": [f"{REL_BASIC}:{scale}"]}))
    launched = server.answer()
    assert launched["id"] == 1 and not launched["result"].get("isError"), launched
    assert launched["result"]["structuredContent"]["stop"]["location"]["line"] == scale

    calls = {}
    burst = b""
    for i in range(10, 50):
        name, arguments = [("debug_evaluate", {"expression": "value * factor"}),
                           ("debug_variables", {}), ("debug_stack", {}),
                           ("debug_context", {})][i % 4]
        calls[i] = name
        burst += tool(i, name, arguments)
        if i == 20:
            burst += b"not json at all\n"
        if i == 30:
            burst += b'{"jsonrpc": "1.0", "id": 999, "method": "tools/list"}\r\n'
    for start in range(0, len(burst), 777):
        server.send(burst[start:start + 777])
    answers = by_id(server.answers(len(calls) + 2))
    assert answers[None]["error"]["code"] == -32700
    assert answers[999]["error"]["code"] == -32600
    for i, name in calls.items():
        result = answers[i]["result"]
        assert not result.get("isError"), (name, result)
        if name == "debug_evaluate":
            assert result["structuredContent"]["value"] == "2", result
    server.send(tool(2, "debug_terminate"))
    assert server.answer()["id"] == 2
    assert server.end() == 0, server.errors()


def test_answers_wait_for_a_client_that_reads_late(server):
    """Sixty tool lists (about 12 KB each, far more than a pipe holds) asked
    for without reading: the server keeps reading requests while its answers
    wait for the pipe, and all of them arrive once the client reads."""
    server.initialize()
    burst = b"".join(request(i, "tools/list") for i in range(1, 61))
    writer = threading.Thread(target=server.send, args=(burst,), daemon=True)
    writer.start()
    writer.join(BOUND_S)
    assert not writer.is_alive(), "the server stopped reading while its answers waited"
    answers = by_id(server.answers(60))
    assert sorted(answers) == list(range(1, 61))
    assert all(len(a["result"]["tools"]) > 10 for a in answers.values())
    server.send(request(61, "ping"))
    assert server.answer()["id"] == 61
    assert server.end() == 0, server.errors()


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_a_line_too_long_is_answered_without_being_held(server):
    """A 40 MB line, written in pieces: answered with its id, an error, while
    the server's memory grows by far less than the line; then serving goes on."""
    if not Path("/proc/self/status").exists():
        unavailable("/proc (Linux) to read the server's peak memory")
    server.initialize()
    server.send(request(1, "ping"))
    assert server.answer()["id"] == 1
    before = _peak_rss_kb(server.proc.pid)
    server.send(b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x", '
                b'"arguments": {"blob": "')
    piece = b"x" * (1024 * 1024)
    for _ in range(40):
        server.send(piece)
    server.send(b'"}}}\n')
    answer = server.answer()
    assert answer["id"] == 7 and answer["error"]["code"] == -32600, answer
    assert "limit" in answer["error"]["message"]
    grown_mb = (_peak_rss_kb(server.proc.pid) - before) / 1024
    assert grown_mb < 16, f"the server's peak memory grew by {grown_mb:.0f} MB"
    server.send(request(2, "ping") + request(3, "ping"))  # two lines in one write
    assert sorted(a["id"] for a in server.answers(2)) == [2, 3]
    assert server.end() == 0, server.errors()


def test_the_wire_is_private_while_serving(server):
    """While serving, fd 0 reads the null device and fd 1 is stderr, so what a
    child or a stray print writes cannot reach the wire."""
    if not Path("/proc/self/fd").exists():
        unavailable("/proc (Linux) to read the server's descriptors")
    server.initialize()
    server.send(request(1, "ping"))
    assert server.answer()["id"] == 1  # serving
    fds = Path(f"/proc/{server.proc.pid}/fd")
    assert os.readlink(fds / "0") == os.devnull
    assert os.readlink(fds / "1") == os.readlink(fds / "2")
    assert server.end() == 0, server.errors()


def test_a_client_that_leaves_without_reading(mcp_env, no_leftover_processes):
    """A client that closes its end of stdout, then stdin: the answers it will
    not read are dropped, and the server ends cleanly."""
    server = RawServer(read=False)
    try:
        server.send(INITIALIZE)
        assert json.loads(server.proc.stdout.readline())["id"] == 0
        server.send(INITIALIZED)
        server.proc.stdout.close()
        server.send(b"".join(request(i, "tools/list") for i in range(1, 20)))
        assert server.end() == 0, server.errors()
        assert "Traceback" not in server.errors()
    finally:
        server.kill()


def test_stdin_and_stdout_as_files(mcp_env, tmp_path, no_leftover_processes):
    """`tui-debugger mcp < requests > answers`: files, which the event loop
    cannot watch, are read and written all the same; every request gets one
    answer, and the end of the file ends the server."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(INITIALIZE + INITIALIZED + b"not json\n"
                         + request(1, "ping") + request(2, "tools/list"))
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run([sys.executable, "-m", "tui_debugger", "mcp"], cwd=ROOT,
                              stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                              env=dict(os.environ), timeout=BOUND_S)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    found = by_id([json.loads(line) for line in answers.read_bytes().splitlines()])
    assert set(found) == {0, None, 1, 2}, found
    assert found[None]["error"]["code"] == -32700
