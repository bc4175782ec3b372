"""A stop in a child process: how long from the child reaching the line to the
stop published by the session tree (issue goal: within 1 s).

For each kind of child (a `subprocess.run` of another Python, a
`multiprocessing.Pool` worker with fork, and a Node `child_process.fork`), a
session hosted in this process (the TUI's path; a daemon adds one socket hop)
launches the parent with a breakpoint in the child. The child writes the wall
time just before the breakpoint's line, and the parent the time just before it
starts the child; the session's `process` event for the child's stop is timed
when it is published. Printed per kind, best and median of N runs:

  reach -> stop   the child at the line (its breakpoint already set) to the
                  stop published: what the person waits for once the child runs
  spawn -> stop   the parent starting the child to the stop published: the
                  child's start, our session for it and its attach included

Run:  python benchmarks/child_stop.py [--repeat N] [--kind K]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backends.models import BreakpointSpec, LaunchRequest  # noqa: E402
from tui_debugger.host.hub import Hub  # noqa: E402

PROGRAMS = {
    "subprocess.run": ("parent.py", "child.py", "debugpy", {
        "parent.py": """\
import os, subprocess, sys, time
open(os.environ["BENCH_SPAWN"], "w").write(repr(time.time()))
subprocess.run([sys.executable, "child.py"], check=True)
""",
        "child.py": """\
import os, time
open(os.environ["BENCH_REACH"], "w").write(repr(time.time()))
value = 7  # BREAK
""",
    }),
    "pool-fork": ("pool.py", "pool.py", "debugpy", {
        "pool.py": """\
import multiprocessing, os, time


def work(n):
    open(os.environ["BENCH_REACH"], "w").write(repr(time.time()))
    return n * n  # BREAK


if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    open(os.environ["BENCH_SPAWN"], "w").write(repr(time.time()))
    with multiprocessing.Pool(1) as pool:
        print(pool.map(work, [3]))
""",
    }),
    "node-fork": ("parent.js", "child.js", "node", {
        "parent.js": """\
const fs = require('fs');
fs.writeFileSync(process.env.BENCH_SPAWN, String(Date.now() / 1000));
require('child_process').fork(__dirname + '/child.js');
""",
        "child.js": """\
require('fs').writeFileSync(process.env.BENCH_REACH, String(Date.now() / 1000));
const value = 7;  // BREAK
""",
    }),
}


async def one_run(kind: str, work: Path) -> tuple[float, float]:
    parent, child_file, adapter, files = PROGRAMS[kind]
    for name, text in files.items():
        (work / name).write_text(text)
    line = next(n for n, text in enumerate((work / child_file).read_text().splitlines(), 1)
                if "BREAK" in text)
    reach, spawn = work / "reach", work / "spawn"
    for path in (reach, spawn):
        path.unlink(missing_ok=True)
    hub = Hub(serve=False)
    root = await hub.create_session(f"bench-{kind}", cwd=str(work))
    stopped = asyncio.get_running_loop().create_future()

    def on_event(event) -> None:
        if event.kind == "process" and event.event == "stopped" and not stopped.done():
            stopped.set_result(time.time())

    root.add_listener(on_event)
    await root.add_breakpoint(BreakpointSpec(path=str(work / child_file), line=line), "user")
    try:
        await root.launch(LaunchRequest(program=str(work / parent), cwd=str(work),
                                        env={"BENCH_REACH": str(reach),
                                             "BENCH_SPAWN": str(spawn)}), adapter)
        at = await asyncio.wait_for(stopped, 120)
    finally:
        await hub.close_all()
    return at - float(reach.read_text()), at - float(spawn.read_text())


async def main_async(kinds: list[str], repeat: int) -> None:
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'child':<16}{'reach -> stop (best / median)':>32}{'spawn -> stop (best / median)':>32}")
    for kind in kinds:
        if PROGRAMS[kind][2] == "node" and not shutil.which("node"):
            print(f"{kind:<16}  node is not installed")
            continue
        reach_times, spawn_times = [], []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="child-stop-") as tmp:
                reach_s, spawn_s = await one_run(kind, Path(tmp))
            reach_times.append(reach_s)
            spawn_times.append(spawn_s)
        print(f"{kind:<16}"
              f"{min(reach_times):>20.3f} s / {statistics.median(reach_times):.3f} s"
              f"{min(spawn_times):>20.3f} s / {statistics.median(spawn_times):.3f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kind", action="append", choices=sorted(PROGRAMS))
    args = parser.parse_args()
    asyncio.run(main_async(args.kind or list(PROGRAMS), args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
