"""DapClient against the real debugpy adapter: stdio and TCP transports,
request/response matching, errors, events, reverse requests, and what happens
to pending requests when the adapter dies."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from pathlib import Path

import pytest

from backends.process import end_descendants

from backends.dap.adapters import with_nodelay
from backends.dap.client import DapClient
from backends.dap.framing import Decoder, encode
from backends.errors import BackendDied, CommandFailed, Timeout
from backends.process import pid_alive, spawn

PROGRAMS = Path(__file__).parent / "programs"
ADAPTER = [sys.executable, "-m", "debugpy.adapter"]
# debugpy's own sockets without Nagle's delay: every launch here is ~10x quicker.
FAST_ENV = {**os.environ, "PYTHONPATH": with_nodelay(os.environ.get("PYTHONPATH"))}


def initialize_args(**extra):
    return {
        "clientID": "tests", "adapterID": "debugpy", "pathFormat": "path",
        "linesStartAt1": True, "columnsStartAt1": True, **extra,
    }


def launch_args(program: str, **extra):
    return {
        "type": "python", "request": "launch", "program": program, "cwd": str(PROGRAMS),
        "console": "internalConsole", "redirectOutput": True, "subProcess": False, **extra,
    }


@pytest.fixture
def no_orphans(no_leftover_processes):
    """no_leftover_processes, and also the grandchildren that were orphaned on
    the way: while this runs, orphans are re-parented to the test process (a
    child subreaper, Linux) instead of init, so the check still sees them."""
    import ctypes

    pr_set_child_subreaper = 36
    libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
    if libc is not None:
        libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0)
    yield


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Events:
    """Collects events by name so a test can await the next one."""

    def __init__(self, client: DapClient):
        self.queues: dict[str, asyncio.Queue] = {}
        client.on_any(self._put)

    def _put(self, message):
        self.queues.setdefault(message["event"], asyncio.Queue()).put_nowait(message)

    async def next(self, name: str, timeout: float = 10.0):
        queue = self.queues.setdefault(name, asyncio.Queue())
        return await asyncio.wait_for(queue.get(), timeout)


async def test_stdio_initialize_and_refused_request(no_orphans):
    client = await DapClient.start_stdio(ADAPTER, name="debugpy", env=FAST_ENV)
    try:
        body = await client.request("initialize", initialize_args(), timeout=10)
        assert body["supportsConfigurationDoneRequest"] is True
        filters = {f["filter"]: f["default"] for f in body["exceptionBreakpointFilters"]}
        assert filters["uncaught"] is True
        with pytest.raises(CommandFailed) as info:
            await client.request("noSuchRequest", {}, timeout=10)
        assert info.value.details["command"] == "noSuchRequest"
        assert info.value.message  # the adapter's own words
    finally:
        await client.close()
    assert not pid_alive(client.process.pid)


async def test_tcp_connect_retries_until_the_adapter_listens(no_orphans):
    port = free_port()
    adapter = await spawn([*ADAPTER, "--host", "127.0.0.1", "--port", str(port)],
                          what="debugpy adapter")
    client = None
    try:
        # Connecting at once: the adapter is still importing, so the first
        # attempts are refused and the client retries.
        client = await DapClient.connect_tcp("127.0.0.1", port, name="debugpy",
                                             process=adapter, connect_timeout=15)
        sock = client._writer.get_extra_info("socket")
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        body = await client.request("initialize", initialize_args(), timeout=10)
        assert body["supportsTerminateRequest"] is True
    finally:
        if client is not None:
            await client.close()
        await adapter.kill_group()


async def test_tcp_connect_gives_up_with_a_timeout():
    port = free_port()  # nothing listens there once the probe is closed
    with pytest.raises(Timeout, match=f"127.0.0.1:{port}"):
        await DapClient.connect_tcp("127.0.0.1", port, name="nobody", connect_timeout=0.3)


async def test_request_timeout_names_the_command(no_orphans):
    client = await DapClient.start_stdio(ADAPTER, name="debugpy", env=FAST_ENV)
    try:
        await client.request("initialize", initialize_args(), timeout=10)
        # debugpy answers launch only after configurationDone, which never comes.
        with pytest.raises(Timeout, match="'launch'"):
            await client.request(
                "launch", launch_args(str(PROGRAMS / "py_basic.py")), timeout=0.5
            )
    finally:
        await client.close()


@pytest.mark.parametrize("transport", ["stdio", "tcp"])
async def test_pending_requests_fail_at_once_when_the_adapter_dies(transport, no_orphans):
    if transport == "stdio":
        client = await DapClient.start_stdio(ADAPTER, name="debugpy", env=FAST_ENV)
    else:
        # Over TCP the adapter may log to stderr, so its last words are there to quote.
        port = free_port()
        adapter = await spawn([*ADAPTER, "--host", "127.0.0.1", "--port", str(port),
                               "--log-stderr"], what="debugpy adapter", env=FAST_ENV)
        client = await DapClient.connect_tcp("127.0.0.1", port, name="debugpy",
                                             process=adapter, connect_timeout=15)
    events = Events(client)
    closed: list[BackendDied] = []
    client.on_close(closed.append)
    try:
        await client.request("initialize", initialize_args(), timeout=10)
        launch = client.send_request("launch", launch_args(str(PROGRAMS / "py_basic.py")),
                                     timeout=60)
        await events.next("initialized")
        # pydevd has connected: it answers this one at once, and the answer may
        # be on its way when the kill lands (and is then rightly delivered).
        threads = client.send_request("threads", timeout=60)
        os.kill(client.process.pid, signal.SIGKILL)  # the adapter crashes
        started = asyncio.get_running_loop().time()
        # Sent once the adapter is dead: it can never be answered.
        late = asyncio.ensure_future(client.request("threads", timeout=60))
        died: list[BackendDied] = []
        for pending in (launch, threads, late):
            try:  # each settles at once: its answer, if it came before the kill, else the death
                await asyncio.wait_for(pending, 5)
            except BackendDied as exc:
                died.append(exc)
        assert asyncio.get_running_loop().time() - started < 3
        assert died and late.exception() is died[-1]
        for exc in died:
            assert "debugpy adapter exited" in exc.message
            if transport == "tcp":
                assert "Last stderr lines" in exc.message
        assert len(closed) == 1
        with pytest.raises(BackendDied):  # and later requests fail straight away
            await client.request("threads", timeout=5)
    finally:
        await client.close()
        # The debuggee debugpy had started outlives its killed adapter; a backend
        # ends it by pid, as this raw client does not.
        await end_descendants()


async def test_adapter_that_fails_to_start_reports_its_stderr(no_orphans):
    client = await DapClient.start_stdio([*ADAPTER, "--no-such-flag"], name="debugpy")
    try:
        with pytest.raises(BackendDied) as info:
            await client.request("initialize", initialize_args(), timeout=10)
        assert "unrecognized arguments" in info.value.message
        assert "exit code" in info.value.message
    finally:
        await client.close()


async def test_run_in_terminal_starts_the_program_in_its_own_group(no_orphans):
    output: list[tuple[str, str]] = []
    client = await DapClient.start_stdio(
        ADAPTER, name="debugpy", env=FAST_ENV, output_sink=lambda c, t: output.append((c, t))
    )
    events = Events(client)
    try:
        await client.request(
            "initialize", initialize_args(supportsRunInTerminalRequest=True), timeout=10
        )
        launch = client.send_request(
            "launch",
            launch_args(str(PROGRAMS / "py_output.py"), console="integratedTerminal",
                        redirectOutput=False),
            timeout=30,
        )
        await events.next("initialized")
        await client.request("configurationDone", timeout=10)
        await asyncio.wait_for(launch, 30)
        assert client.terminal_processes, "runInTerminal was not asked for"
        launcher = client.terminal_processes[0]
        assert os.getpgid(launcher.pid) == launcher.pid  # a process group of its own
        exited = await events.next("exited", 30)
        assert exited["body"]["exitCode"] == 3
        await asyncio.wait_for(launcher.proc.wait(), 10)
        await asyncio.sleep(0.1)  # the output pump drains the pipe
        text = "".join(t for c, t in output if c == "stdout")
        assert "hello stdout" in text
    finally:
        await client.close()


async def test_run_in_terminal_refused_cleanly(tmp_path, no_orphans):
    # debugpy does not wait for the runInTerminal answer, only for a launcher
    # that never comes; shorten that wait and read its log for our refusal.
    env = {**FAST_ENV, "DEBUGPY_PROCESS_SPAWN_TIMEOUT": "1"}
    client = await DapClient.start_stdio(
        [*ADAPTER, "--log-dir", str(tmp_path)], name="debugpy", env=env, run_in_terminal=False
    )
    try:
        await client.request(
            "initialize", initialize_args(supportsRunInTerminalRequest=True), timeout=10
        )
        with pytest.raises(CommandFailed, match="launcher"):
            await client.request(
                "launch",
                launch_args(str(PROGRAMS / "py_output.py"), console="integratedTerminal"),
                timeout=30,
            )
        assert not client.terminal_processes
        logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("*.log"))
        assert '"success": false' in logs and "internalConsole" in logs
    finally:
        await client.close()


async def test_events_by_name_catch_all_and_async_handlers(no_orphans):
    client = await DapClient.start_stdio(ADAPTER, name="debugpy", env=FAST_ENV)
    seen_named: list[str] = []
    seen_any: list[str] = []
    got_async = asyncio.Event()

    async def on_initialized_async(message):
        await asyncio.sleep(0)
        got_async.set()

    client.on("initialized", lambda m: seen_named.append(m["event"]))
    unsubscribe = client.on("output", lambda m: seen_named.append("output"))
    unsubscribe()
    client.on("initialized", on_initialized_async)
    client.on_any(lambda m: seen_any.append(m["event"]))
    events = Events(client)
    try:
        await client.request("initialize", initialize_args(), timeout=10)
        launch = client.send_request("launch", launch_args(str(PROGRAMS / "py_output.py")),
                                     timeout=30)
        await asyncio.wait_for(got_async.wait(), 10)
        await client.request("configurationDone", timeout=10)
        await asyncio.wait_for(launch, 30)
        await events.next("terminated", 20)
        assert seen_named == ["initialized"]
        assert "initialized" in seen_any and "output" in seen_any and "exited" in seen_any
    finally:
        await client.close()


async def test_reverse_requests_no_adapter_here_sends_are_refused():
    """No adapter installed here sends startDebugging or unknown reverse requests,
    so the adapter end of the stream is written by hand for these two."""
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    their_reader, their_writer = await asyncio.open_connection(sock=theirs)
    client = DapClient(reader, writer, name="handwritten")
    try:
        their_writer.write(encode({"seq": 1, "type": "request", "command": "startDebugging",
                                   "arguments": {"request": "attach", "configuration": {}}}))
        their_writer.write(encode({"seq": 2, "type": "request", "command": "frobnicate"}))
        decoder, answers = Decoder(), []
        while len(answers) < 2:
            answers += decoder.feed(await asyncio.wait_for(their_reader.read(4096), 5))
        by_seq = {a["request_seq"]: a for a in answers}
        assert by_seq[1]["success"] is False and "startDebugging" in by_seq[1]["message"]
        assert by_seq[2]["success"] is False and "frobnicate" in by_seq[2]["message"]
        # Closing the adapter's end fails what is pending.
        pending = client.send_request("threads", timeout=10)
        their_writer.close()
        with pytest.raises(BackendDied, match="handwritten adapter"):
            await asyncio.wait_for(pending, 5)
    finally:
        await client.close()
