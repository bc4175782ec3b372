"""A `next` through `tui-debugger dap` beside the same round on debugpy's own
adapter: what an editor pays for joining the shared session.

  raw DAP, to the line   next -> stopped -> stackTrace, straight to debugpy's
                         adapter (with our TCP_NODELAY fix, as the session has it)
  raw DAP, round         ... then scopes -> variables
  endpoint, to the line  the same requests to `tui-debugger dap` attached to a
                         headless session (CLI-started), which runs each through
                         the session's socket as the editor's commands
  endpoint, round        ... then scopes -> variables

Run:  python benchmarks/dap_roundtrip.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backends.dap.client import DapClient  # noqa: E402
from benchmarks.step_latency import LOOP_LINE, PROGRAM, RawSession, summary  # noqa: E402


def cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "tui_debugger", *args], check=True,
                   capture_output=True, timeout=120)


async def endpoint_rounds(program: str, rounds: int) -> tuple[list[float], list[float]]:
    cli("start", "--break", f"{program}:{LOOP_LINE}", program)
    cli("break", "remove", "--all")
    client = await DapClient.start_stdio([sys.executable, "-m", "tui_debugger", "dap"],
                                         name="tui-debugger dap", env=dict(os.environ))
    stopped: asyncio.Queue = asyncio.Queue()
    client.on("stopped", lambda m: stopped.put_nowait(m))
    to_line, steps = [], []
    try:
        await client.request("initialize", {"adapterID": "tui-debugger", "clientID": "bench",
                                            "linesStartAt1": True, "pathFormat": "path"})
        await client.request("attach", {})
        await client.request("configurationDone", {})
        first = await asyncio.wait_for(stopped.get(), 30)
        thread = (first.get("body") or first)["threadId"]
        for _ in range(rounds):
            t0 = time.perf_counter()
            await client.request("next", {"threadId": thread})
            await asyncio.wait_for(stopped.get(), 30)
            st = await client.request("stackTrace", {"threadId": thread, "levels": 20})
            to_line.append(time.perf_counter() - t0)
            sc = await client.request("scopes", {"frameId": st["stackFrames"][0]["id"]})
            await client.request("variables",
                                 {"variablesReference": sc["scopes"][0]["variablesReference"]})
            steps.append(time.perf_counter() - t0)
        await client.request("disconnect", {}, timeout=10)
    finally:
        await client.close()
        cli("stop")
    return to_line, steps


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="dapbench") as tmp:
        os.environ["TUI_DEBUGGER_RUNTIME_DIR"] = os.path.join(tmp, "run")
        os.environ["TUI_DEBUGGER_STATE_DIR"] = os.path.join(tmp, "state")
        os.environ["TUI_DEBUGGER_PERSIST_BREAKPOINTS"] = "0"
        program = os.path.join(tmp, "loop.py")
        Path(program).write_text(PROGRAM)
        raw = await RawSession(program).start()
        raw_steps = []
        try:
            for _ in range(rounds):
                raw_steps.append((await raw.round())[0])
        finally:
            await raw.close()
        end_line, end_steps = await endpoint_rounds(program, rounds)
    base_line = sorted(raw.to_line)[len(raw.to_line) // 2] * 1000
    base_step = sorted(raw_steps)[len(raw_steps) // 2] * 1000
    print(summary("raw DAP, to the line", raw.to_line, None))
    print(summary("endpoint, to the line", end_line, base_line))
    print(summary("raw DAP, round", raw_steps, None))
    print(summary("endpoint, round", end_steps, base_step))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    asyncio.run(main(parser.parse_args().rounds))
