"""MCP tool-call round trips against the raw adapter round, on debugpy.

Measures, stepping through a loop in a real debugpy session:

  raw DAP                 step: next -> stopped -> stackTrace -> scopes -> variables;
                          variables: one `variables` request for the locals
                          (straight DAP, with our TCP_NODELAY fix, as shipped)
  MCP in-process          debug_step_over / debug_variables through the SDK's client
                          connected to the server object (no transport); the
                          session it launches lives in its own host, as always
  MCP stdio               the same calls to `tui-debugger mcp` over stdio: what an
                          agent's client does
  MCP stdio, joined       the same, with the session hosted by a headless
                          `tui-debugger start` daemon and reached through its socket
  MCP stdio, joined, thin the same server and session, driven by a bare newline-JSON
                          client (asyncio subprocess pipes, no SDK): the server's own
                          cost, apart from the SDK client's
  router, joined          the same commands through the Router over that socket,
                          without MCP (the path of the CLI and the TUI)

  launch                  debug_launch with a breakpoint over stdio, until it
                          answers with the first stop (--launches times; with
                          --launch-gap S, S seconds after the last one ended, as an
                          agent that debugged a while: the server's spare host is
                          ready by then; without, back to back, it is still starting)

The agent's round is a step and then the locals: debug_step_over +
debug_variables, against the raw step + variables round, per round.

The step tools answer with the stop and its context (source lines and
locals), so a step is comparable to the whole raw chain above.

Run:  python benchmarks/mcp_roundtrip.py [--rounds N] [--launches N] [--launch-gap S]
Prints the median and p90 of each, and ratios to the raw round.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


from benchmarks.step_latency import LOOP_LINE, PROGRAM, raw_rounds  # noqa: E402


def summary(name: str, samples: list[float], base: float) -> str:
    med = statistics.median(samples) * 1000
    p90 = sorted(samples)[max(0, int(len(samples) * 0.9) - 1)] * 1000
    return f"{name:34} median {med:7.2f} ms   p90 {p90:7.2f} ms   {med / base:6.1f}x"


async def tool_rounds(client, rounds: int, launch: bool, program: str) -> tuple[list[float], list[float]]:
    async def tool(name: str, args: dict) -> dict:
        result = await client.call_tool(name, args)
        assert not result.is_error, (name, result.content)
        return result.structured_content

    if launch:
        await tool("debug_launch", {"program": program, "breakpoints": [f"{program}:{LOOP_LINE}"]})
    await tool("debug_wait", {"timeoutMs": 30_000})
    await tool("debug_breakpoint_remove", {"all": True})
    steps, variables = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        answer = await tool("debug_step_over", {})
        steps.append(time.perf_counter() - t0)
        # An agent's step answer carries the stop alone (no status beside it).
        assert "stop" in answer, answer
        t0 = time.perf_counter()
        await tool("debug_variables", {})
        variables.append(time.perf_counter() - t0)
    if launch:  # a joined session is the daemon's: the next row steps it on
        await tool("debug_terminate", {})
    return steps, variables


class _Answer:
    """A tools/call answer as tool_rounds reads it (the SDK's result's fields)."""

    def __init__(self, result: dict) -> None:
        self.is_error = bool(result.get("isError"))
        self.structured_content = result.get("structuredContent")
        self.content = result.get("content")


class LineClient:
    """A bare MCP client: JSON-RPC lines over the server's stdin and stdout,
    as an agent's client (rarely a Python one) speaks it; no SDK, so what it
    times is the server's cost and the pipes'."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None,
                 cwd: str | None = None) -> None:
        self.args = args
        self.env = env
        self.cwd = cwd
        self.proc: asyncio.subprocess.Process | None = None
        self.ids = iter(range(1, 1 << 62))
        self.pending: dict[int, asyncio.Future] = {}
        self.reader: asyncio.Task | None = None

    async def __aenter__(self) -> "LineClient":
        self.proc = await asyncio.create_subprocess_exec(
            *self.args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            env=self.env, cwd=self.cwd, limit=64 * 1024 * 1024)
        self.reader = asyncio.get_running_loop().create_task(self._read())
        from mcp_types.version import LATEST_HANDSHAKE_VERSION

        await self.request("initialize", {"protocolVersion": LATEST_HANDSHAKE_VERSION,
                                          "capabilities": {},
                                          "clientInfo": {"name": "bench", "version": "0"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    def _send(self, message: dict) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            message = json.loads(line)
            future = self.pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)  # a notification has no id: skipped
        for future in self.pending.values():
            future.set_exception(EOFError("the server closed its stdout"))

    async def request(self, method: str, params: dict) -> dict:
        msg_id = next(self.ids)
        future = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = future
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        answer = await future
        assert "result" in answer, answer
        return answer["result"]

    async def call_tool(self, name: str, arguments: dict) -> _Answer:
        return _Answer(await self.request("tools/call", {"name": name, "arguments": arguments}))

    async def __aexit__(self, *exc: object) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.close()  # EOF: the server ends
        try:
            await asyncio.wait_for(self.proc.wait(), 20)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        if self.reader is not None:
            self.reader.cancel()


def server_args(session: str | None) -> list[str]:
    return ["-m", "tui_debugger", "mcp", *(["--session", session] if session else [])]


async def over_lines(rounds: int, session: str) -> tuple[list[float], list[float]]:
    """The joined rounds through LineClient."""
    async with LineClient([sys.executable, *server_args(session)]) as client:
        return await tool_rounds(client, rounds, False, "")


async def in_process(program: str, rounds: int) -> tuple[list[float], list[float]]:
    from mcp.client import Client

    from tui_debugger.mcp.server import create_server

    async with create_server() as front:
        async with Client(front.server) as client:
            return await tool_rounds(client, rounds, True, program)


async def over_stdio(program: str, rounds: int, session: str | None) -> tuple[list[float], list[float]]:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=server_args(session),
                                   env=dict(os.environ))
    async with Client(params) as client:
        return await tool_rounds(client, rounds, session is None, program)


async def launch_times(program: str, launches: int, gap: float = 0.0) -> list[float]:
    """debug_launch with a breakpoint, over stdio, until it answers with the
    first stop: what an agent waits for before its first step."""
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "tui_debugger", "mcp"],
                                   env=dict(os.environ))
    times = []
    async with Client(params) as client:
        for _ in range(launches):
            await asyncio.sleep(gap)
            t0 = time.perf_counter()
            result = await client.call_tool(
                "debug_launch", {"program": program, "breakpoints": [f"{program}:{LOOP_LINE}"]})
            times.append(time.perf_counter() - t0)
            assert not result.is_error, result.content
            assert "stop" in result.structured_content, result.structured_content
            await client.call_tool("debug_terminate", {})
    return times


async def router_rounds(session: str, rounds: int) -> tuple[list[float], list[float]]:
    from tui_debugger.client.router import Router

    router = Router("mcp", session=session)
    try:
        await router.call("await", {"timeout_ms": 30_000})
        await router.call("breakpoint_remove", {"all": True})
        steps, variables = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            await router.call("next", for_agent=True)
            steps.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await router.call("variables", for_agent=True)
            variables.append(time.perf_counter() - t0)
    finally:
        await router.close()
    return steps, variables


def start_daemon(program: str, name: str = "bench", env: dict[str, str] | None = None,
                 cwd: str | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tui_debugger", "start", "--json", "--session", name,
         "--break", f"{program}:{LOOP_LINE}", program],
        capture_output=True, text=True, check=True, env=env, cwd=cwd)
    return json.loads(done.stdout)["session"]


@contextlib.contextmanager
def loop_program() -> Iterator[str]:
    """The stepped loop's program in a directory of its own, with the sessions'
    runtime and state directories beside it (no user's session is touched)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TUI_DEBUGGER_RUNTIME_DIR"] = os.path.join(tmp, "run")
        os.environ["TUI_DEBUGGER_STATE_DIR"] = os.path.join(tmp, "state")
        os.environ["TUI_DEBUGGER_PERSIST_BREAKPOINTS"] = "0"
        program = os.path.join(tmp, "loop.py")
        Path(program).write_text(PROGRAM)
        yield program


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--launches", type=int, default=10)
    parser.add_argument("--launch-gap", type=float, default=0.0,
                        help="seconds between one launch's end and the next")
    ns = parser.parse_args()
    with loop_program() as program:
        raw_step, raw_vars = asyncio.run(raw_rounds(program, ns.rounds))
        local_step, local_vars = asyncio.run(in_process(program, ns.rounds))
        stdio_step, stdio_vars = asyncio.run(over_stdio(program, ns.rounds, None))
        session = start_daemon(program)
        router_step, router_vars = asyncio.run(router_rounds(session, ns.rounds))
        joined_step, joined_vars = asyncio.run(over_stdio(program, ns.rounds, session))
        thin_step, thin_vars = asyncio.run(over_lines(ns.rounds, session))
        subprocess.run([sys.executable, "-m", "tui_debugger", "stop", "--session", session],
                       capture_output=True, check=False)
        launches = asyncio.run(launch_times(program, ns.launches, ns.launch_gap))
    step_base = statistics.median(raw_step) * 1000
    vars_base = statistics.median(raw_vars) * 1000
    print(f"MCP round trips, debugpy, {ns.rounds} rounds "
          f"(Python {sys.version.split()[0]}, {os.cpu_count()} cores)")
    print("step (next + stop + stack + scopes + locals):")
    print(summary("  raw DAP round", raw_step, step_base))
    print(summary("  debug_step_over, in-process", local_step, step_base))
    print(summary("  debug_step_over, stdio", stdio_step, step_base))
    print(summary("  debug_step_over, stdio, joined", joined_step, step_base))
    print(summary("  debug_step_over, joined, thin", thin_step, step_base))
    print(summary("  next, router, joined", router_step, step_base))
    print("variables (the frame's locals):")
    print(summary("  raw DAP variables request", raw_vars, vars_base))
    print(summary("  debug_variables, in-process", local_vars, vars_base))
    print(summary("  debug_variables, stdio", stdio_vars, vars_base))
    print(summary("  debug_variables, stdio, joined", joined_vars, vars_base))
    print(summary("  debug_variables, joined, thin", thin_vars, vars_base))
    print(summary("  variables, router, joined", router_vars, vars_base))
    both = lambda a, b: [x + y for x, y in zip(a, b)]  # noqa: E731 - one round: step, then locals
    raw_both = both(raw_step, raw_vars)
    both_base = statistics.median(raw_both) * 1000
    print("the agent's round (step, then the locals):")
    print(summary("  raw DAP step + variables", raw_both, both_base))
    print(summary("  MCP in-process", both(local_step, local_vars), both_base))
    print(summary("  MCP stdio", both(stdio_step, stdio_vars), both_base))
    print(summary("  MCP stdio, joined", both(joined_step, joined_vars), both_base))
    print(summary("  MCP stdio, joined, thin client", both(thin_step, thin_vars), both_base))
    print(summary("  router, joined (no MCP)", both(router_step, router_vars), both_base))
    if launches:  # --launches 0: the rounds alone
        print("launch to first stop (debug_launch with a breakpoint, stdio):")
        print(summary("  debug_launch", launches, statistics.median(launches) * 1000))


if __name__ == "__main__":
    main()
