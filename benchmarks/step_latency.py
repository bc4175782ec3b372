"""Step latency: one `next` and what a person or an agent then looks at.

Measures, on a real debugpy session stepping through a loop:

  raw DAP, stock        next -> stopped -> stackTrace -> scopes -> variables, straight
                        over DAP, debugpy as shipped (no TCP_NODELAY inside it)
  raw DAP, nodelay      the same, with our TCP_NODELAY fix in the adapter and debuggee
  raw DAP, to the line  the part of that round a new source line needs: next ->
                        stopped -> stackTrace (any debugpy front end's floor for
                        showing where a step went, before its own work)
  session (in-process)  our `next` command in the process that hosts the session
                        (the TUI's path): waits for the stop, then builds the context
                        view (source lines + locals)
  daemon (socket)       the same command sent over the session socket to a headless
                        host (the CLI's and the MCP server's path)
  CLI process           `tui-debugger next` as a shell command (adds Python start-up)

Run:  python benchmarks/step_latency.py [--rounds N]
Prints the median and p90 of each, and ratios to the raw DAP round.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backends.dap.adapters import with_nodelay  # noqa: E402
from backends.dap.client import DapClient  # noqa: E402

PROGRAM = """\
import time
total = 0
for i in range(10_000_000):
    total += i
    if i % 1_000_000 == 0:
        time.sleep(0)
"""
LOOP_LINE = 4


def summary(name: str, samples: list[float], base: float | None) -> str:
    med = statistics.median(samples) * 1000
    p90 = sorted(samples)[int(len(samples) * 0.9) - 1] * 1000
    ratio = f"{med / base:6.1f}x" if base else "   1.0x"
    return f"{name:28} median {med:7.2f} ms   p90 {p90:7.2f} ms   {ratio}"


class RawSession:
    """A debugpy session driven by bare DAP, stopped at LOOP_LINE with its
    breakpoint removed, so each `round` steps once more through the loop."""

    def __init__(self, program: str, nodelay: bool = True) -> None:
        self.program = program
        self.nodelay = nodelay
        self.client: DapClient | None = None
        self.stopped: asyncio.Queue = asyncio.Queue()
        self.thread = 0
        #: next + stopped + stackTrace of each round, in seconds
        self.to_line: list[float] = []

    async def start(self) -> "RawSession":
        env = dict(os.environ)
        debuggee_env: dict[str, str] = {}
        if self.nodelay:
            env["PYTHONPATH"] = with_nodelay(env.get("PYTHONPATH"))
            debuggee_env["PYTHONPATH"] = with_nodelay(os.environ.get("PYTHONPATH"))
        else:
            env.pop("PYTHONPATH", None)
        client = self.client = await DapClient.start_stdio(
            [sys.executable, "-m", "debugpy.adapter"], name="debugpy", env=env)
        initialized = asyncio.Event()
        client.on("stopped", lambda m: self.stopped.put_nowait(m))
        client.on("initialized", lambda m: initialized.set())
        await client.request("initialize", {"adapterID": "debugpy", "linesStartAt1": True,
                                            "columnsStartAt1": True, "pathFormat": "path"})
        launch = asyncio.ensure_future(client.request("launch", {
            "type": "python", "request": "launch", "program": self.program,
            "console": "internalConsole", "env": debuggee_env, "justMyCode": True,
            "python": [sys.executable],
        }))
        await asyncio.wait_for(initialized.wait(), 30)
        await client.request("setBreakpoints", {"source": {"path": self.program},
                                                "breakpoints": [{"line": LOOP_LINE}]})
        await client.request("configurationDone", {})
        await launch
        first = await asyncio.wait_for(self.stopped.get(), 30)
        self.thread = first["body"]["threadId"] if "body" in first else first["threadId"]
        await client.request("setBreakpoints", {"source": {"path": self.program},
                                                "breakpoints": []})
        return self

    async def round(self) -> tuple[float, float]:
        """(next + stopped + stackTrace + scopes + variables, one more variables
        request), in seconds; `self.to_line` gets next + stopped + stackTrace."""
        client = self.client
        assert client is not None
        t0 = time.perf_counter()
        await client.request("next", {"threadId": self.thread})
        await asyncio.wait_for(self.stopped.get(), 30)
        st = await client.request("stackTrace", {"threadId": self.thread, "startFrame": 0,
                                                 "levels": 20})
        self.to_line.append(time.perf_counter() - t0)
        sc = await client.request("scopes", {"frameId": st["stackFrames"][0]["id"]})
        ref = sc["scopes"][0]["variablesReference"]
        await client.request("variables", {"variablesReference": ref})
        step = time.perf_counter() - t0
        t0 = time.perf_counter()
        await client.request("variables", {"variablesReference": ref})
        return step, time.perf_counter() - t0

    async def close(self) -> None:
        if self.client is not None:
            try:
                await self.client.request("disconnect", {"terminateDebuggee": True}, timeout=5)
            finally:
                await self.client.close()


async def raw_rounds(program: str, rounds: int, nodelay: bool = True,
                     to_line: list[float] | None = None) -> tuple[list[float], list[float]]:
    """Raw DAP rounds: (next + stopped + stackTrace + scopes + variables, one more
    variables request) per round, in seconds; next + stopped + stackTrace added
    to `to_line`."""
    raw = RawSession(program, nodelay)
    try:
        await raw.start()
        steps, variables = [], []
        for _ in range(rounds):
            step, var = await raw.round()
            steps.append(step)
            variables.append(var)
        if to_line is not None:
            to_line.extend(raw.to_line)
        return steps, variables
    finally:
        await raw.close()


async def session_rounds(program: str, rounds: int) -> list[float]:
    from tui_debugger.execute import execute
    from tui_debugger.host.hub import Hub

    hub = Hub(serve=False)
    try:
        await execute(hub, "launch", {"program": program, "breakpoints": [f"{program}:{LOOP_LINE}"]},
                      origin="tui")
        session = hub.local(None)
        await execute(hub, "await", {"timeoutMs": 30000}, origin="tui", session=session)
        await execute(hub, "breakpoint_remove", {"all": True}, origin="tui", session=session)
        samples = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            result = await execute(hub, "next", {}, origin="tui", session=session)
            assert result.status == "stopped", result
            samples.append(time.perf_counter() - t0)
        return samples
    finally:
        await hub.close_all()


async def daemon_rounds(program: str, rounds: int) -> tuple[list[float], str]:
    from tui_debugger.cli.full import start_daemon
    from tui_debugger.client.remote import RemoteSession

    started = await asyncio.to_thread(start_daemon, "launch", {
        "program": program, "breakpoints": [f"{program}:{LOOP_LINE}"], "session_name": "bench"})
    remote = await RemoteSession.connect(started["session"], "cli")
    try:
        await remote.call("await", {"timeoutMs": 30000})
        await remote.call("breakpoint_remove", {"all": True})
        samples = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            result = await remote.call("next", {})
            assert result["status"] == "stopped", result
            samples.append(time.perf_counter() - t0)
        return samples, started["session"]
    finally:
        await remote.close()


def cli_rounds(rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tui_debugger", "next"], check=True,
                       capture_output=True)
        samples.append(time.perf_counter() - t0)
    subprocess.run([sys.executable, "-m", "tui_debugger", "stop"], capture_output=True)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TUI_DEBUGGER_RUNTIME_DIR"] = os.path.join(tmp, "run")
        os.environ["TUI_DEBUGGER_STATE_DIR"] = os.path.join(tmp, "state")
        program = os.path.join(tmp, "loop.py")
        Path(program).write_text(PROGRAM)
        stock, _ = asyncio.run(raw_rounds(program, max(5, ns.rounds // 3), nodelay=False))
        to_line: list[float] = []
        fixed, _ = asyncio.run(raw_rounds(program, ns.rounds, nodelay=True, to_line=to_line))
        local = asyncio.run(session_rounds(program, ns.rounds))
        remote, _ = asyncio.run(daemon_rounds(program, ns.rounds))
        cli = cli_rounds(max(5, ns.rounds // 3))
    base = statistics.median(fixed) * 1000
    print(f"step latency, debugpy, {ns.rounds} rounds (Python {sys.version.split()[0]}, {os.cpu_count()} cores)")
    print(summary("raw DAP round, stock", stock, base))
    print(summary("raw DAP round, nodelay", fixed, base))
    print(summary("raw DAP, to the line", to_line, base))
    print(summary("session next (in-process)", local, base))
    print(summary("daemon next (socket)", remote, base))
    print(summary("`tui-debugger next` (CLI)", cli, base))
    print(f"nodelay fix: {statistics.median(stock) / statistics.median(fixed):.1f}x faster raw round")


if __name__ == "__main__":
    main()
