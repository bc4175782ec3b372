"""One program, many processes, as an agent meets it: how long `debug_launch`
takes to answer with a stop in a `ProcessPoolExecutor` worker, against the
program's own run time, and what the hunt for a bug only a worker shows costs
(calls, bytes of answers, tool time).

Each run starts an MCP server in this process (tests/support's way: the SDK's
client on the server object), which starts a host for the program as any agent's
does. Printed: best and median of N runs of

  own run         the program alone, `python pricing.py`
  launch -> stop  debug_launch with a breakpoint in the worker, to its answer
                  (the worker's stop, with its locals)
  hunt            launch, three steps, an evaluate, continue to the end,
                  terminate: calls, bytes (structured content and text), seconds
  blind hunt      as an agent that has not read the code: a breakpoint on the
                  worker's `return`, continue until a total that is not
                  qty * unit shows in the locals, evaluate, terminate

Run:  python benchmarks/tree_launch.py [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROGRAM = (ROOT / "tests" / "programs" / "children" / "pricing.py").read_text()


def line_of(marker: str) -> int:
    return next(n for n, text in enumerate(PROGRAM.splitlines(), 1) if f"# {marker}" in text)


async def hunt(work: Path, blind: bool = False) -> tuple[float, int, int, float]:
    from mcp.client import Client

    from tui_debugger.mcp.server import create_server

    file = work / "pricing.py"
    calls = size = 0
    spent = 0.0
    launch_s = 0.0
    async with create_server(None) as front:
        async with Client(front.server) as client:
            async def tool(name: str, arguments: dict) -> dict:
                nonlocal calls, size, spent
                started = time.monotonic()
                result = await client.call_tool(name, arguments)
                spent += time.monotonic() - started
                calls += 1
                size += len(json.dumps(result.model_dump(mode="json", by_alias=True,
                                                         exclude_none=True),
                                       separators=(",", ":")))
                assert not result.is_error, result
                return result.structured_content or {}

            started = time.monotonic()
            if blind:
                answer = await tool("debug_launch", {
                    "program": str(file), "cwd": str(work),
                    "breakpoints": [f"{file}:{line_of('@return')}"]})
                launch_s = time.monotonic() - started
                for _ in range(5):
                    shown = {v["name"]: v["value"] for v in answer["context"]["locals"]
                             if "value" in v}
                    if {"total", "qty", "unit"} <= set(shown) and int(shown["total"]) != int(
                            shown["qty"]) * int(shown["unit"]):
                        break
                    answer = await tool("debug_continue", {})
                await tool("debug_evaluate", {"expression": "qty * unit - total"})
                await tool("debug_terminate", {})
                return launch_s, calls, size, spent
            launched = await tool("debug_launch", {
                "program": str(file), "cwd": str(work),
                "breakpoints": [{"file": str(file), "line": line_of("@price"),
                                 "condition": "item[0] > 2"}]})
            launch_s = time.monotonic() - started
            assert launched.get("process"), launched
            for _ in range(3):
                await tool("debug_step_over", {})
            await tool("debug_evaluate", {"expression": "total"})
            await tool("debug_continue", {"waitMs": 30_000})
            await tool("debug_terminate", {})
    return launch_s, calls, size, spent


def own_run(work: Path) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "pricing.py"], cwd=work, check=True,
                   stdout=subprocess.DEVNULL)
    return time.monotonic() - started


async def main_async(repeat: int) -> None:
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    own, launch, spent, blind = [], [], [], []
    calls = size = blind_calls = blind_size = 0
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="tree-launch-") as tmp:
            work = Path(tmp)
            (work / "pricing.py").write_text(PROGRAM)
            own.append(own_run(work))
            launch_s, calls, size, spent_s = await hunt(work)
            launch.append(launch_s)
            spent.append(spent_s)
            _, blind_calls, blind_size, blind_s = await hunt(work, blind=True)
            blind.append(blind_s)
    for name, values in (("own run", own), ("launch -> stop", launch), ("hunt tool time", spent),
                         ("blind hunt time", blind)):
        print(f"{name:<16}{min(values):>8.2f} s best {statistics.median(values):>8.2f} s median")
    print(f"hunt: {calls} calls, {size} bytes; blind hunt: {blind_calls} calls, {blind_size} bytes")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("TUI_DEBUGGER_PERSIST_BREAKPOINTS", "0")
    asyncio.run(main_async(args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
