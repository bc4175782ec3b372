"""The program under the debugger grown along one dimension at a time: every row
of the scale table (docs/performance.md, "At scale") in one run, beside the
program alone and a bare DAP client talking to debugpy directly (the floor).

  output      N lines printed, launch to end
  output-node, output-dlv, output-lldb-dap, output-lldb-cli
              the same flood from a Node script, a Go program (under delve) and a C
              program (under lldb-dap and under the LLDB CLI); output-node-write: the
              Node flood through process.stdout.write, no console.log (Node's
              inspector sends no event per line); output-native: all five
  breakpoints 100 breakpoints added one at a time, one file
  continues   100 continues, breakpoint to breakpoint
  stack       a stack 3,002 frames deep: 20 frames, then maxFrames 1000
  module      a breakpoint at line 99,995 of a 100,000-line module (this Python and
              each --python, chosen through a launch.json; --module-lines N: another
              size, the breakpoint 5 lines before its end)
  threads     10 threads pass one breakpoint 50 ms apart; 100 threads at a barrier
  go-threads  the same with goroutines under delve (dlv dap)
  memory      resident size of each process of a stopped session, the TUI included
              (beside pudb's: --pudb PYTHON)

Run:  python benchmarks/scale.py [--lines N] [--python PATH ...] [--only ROW ...]
                                 [--pudb PYTHON] [--module-lines N] [--bare-as-shipped]

The bare client's program gets our sitecustomize (TCP_NODELAY, and on Python
3.12+ the speed-ups of pydevd's sys.monitoring tracer); --bare-as-shipped turns
those speed-ups off in it (TUI_DEBUGGER_PYDEVD_SPEEDUPS=0): pydevd's tracer as
debugpy ships it, beside ours in the same run.

tui-debugger is driven the way an agent drives it: the MCP server's tools, in
process (the session lives in this process, as in `tui-debugger mcp`). Wall
times, on whatever machine this runs: read the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backends.dap.adapters import with_nodelay  # noqa: E402
from backends.dap.client import DapClient  # noqa: E402

WORK = Path(tempfile.mkdtemp(prefix="tdb-scale-"))
#: more environment for the bare client's program (--bare-as-shipped)
BARE_ENV: dict[str, str] = {}

FLOOD = "import sys\nn = int(sys.argv[1])\nfor i in range(n):\n    print('line', i)\n"
LINES = "total = 0\n" + "".join(f"total += {i}  # line {i + 2}\n" for i in range(150)) + "print(total)\n"
LOOP = "total = 0\nfor i in range(1000):\n    total += i  # @loop\nprint(total)\n"
#: the same flood in the other backends' languages: `line i`, N lines from argv
FLOOD_JS = "const n = Number(process.argv[2]);\nfor (let i = 0; i < n; i++) {\n  console.log('line', i);\n}\n"
FLOOD_JS_WRITE = ("const n = Number(process.argv[2]);\nfor (let i = 0; i < n; i++) {\n"
                  "  process.stdout.write('line ' + i + '\\n');\n}\n")
# fmt.Println writes each line itself (os.Stdout has no buffer), as Go programs do;
# C's stdio buffers a pipe in 4 KiB blocks: each language's own way of printing.
FLOOD_GO = ('package main\n\nimport (\n\t"fmt"\n\t"os"\n\t"strconv"\n)\n\n'
            'func main() {\n\tn, _ := strconv.Atoi(os.Args[1])\n'
            '\tfor i := 0; i < n; i++ {\n\t\tfmt.Println("line", i)\n\t}\n}\n')
FLOOD_C = ('#include <stdio.h>\n#include <stdlib.h>\n\n'
           'int main(int argc, char **argv) {\n    int n = atoi(argv[1]);\n'
           '    for (int i = 0; i < n; i++) {\n        printf("line %d\\n", i);\n    }\n'
           '    return 0;\n}\n')
#: the flood's rows on the other backends (--only output-native: all of them)
NATIVE_OUTPUT_ROWS = ("output-node", "output-node-write", "output-dlv", "output-lldb-dap",
                      "output-lldb-cli")
DEEP = ("import sys\nsys.setrecursionlimit(10000)\n"
        "def down(n):\n    if n == 0:\n        return 0  # @bottom\n    return down(n - 1) + 1\n"
        "down(3000)\n")


def write(name: str, text: str) -> Path:
    path = WORK / name
    path.write_text(text)
    return path


def big_module(size: int = 100_000) -> tuple[Path, int]:
    lines = ["x = 0"] + [f"x += {i % 7}" for i in range(1, size - 6)] + ["y = x  # @late"]
    lines += ["z = y"] * (size - len(lines))
    path = write("big.py", "\n".join(lines) + "\n")
    return path, size - 5


def built_floods() -> dict[str, list[str]]:
    """The flood as a Node script, a Go binary and a C binary (built with debug
    information, as tests/support/native_build.py builds the test programs):
    each row's program argv, N to follow."""
    import shutil

    script, script_write = write("flood.js", FLOOD_JS), write("flood_write.js", FLOOD_JS_WRITE)
    go_source, c_source = write("flood.go", FLOOD_GO), write("flood.c", FLOOD_C)
    env = {**os.environ, "GO111MODULE": "off", "GOCACHE": str(WORK / ".gocache")}
    subprocess.run([shutil.which("go") or "go", "build", "-gcflags=all=-N -l", "-o",
                    str(WORK / "flood-go"), str(go_source)], check=True, env=env, cwd=WORK)
    subprocess.run([shutil.which("gcc") or "cc", "-g", "-O0", "-o", str(WORK / "flood-c"),
                    str(c_source)], check=True)
    node = shutil.which("node") or "node"
    return {"node": [node, str(script)], "node, stdout.write": [node, str(script_write)],
            "go": [str(WORK / "flood-go")], "c": [str(WORK / "flood-c")]}


def row(case: str, *cells: str) -> None:
    print(f"| {case} | " + " | ".join(cells) + " |", flush=True)


def alone(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


# --------------------------------------------------------------- bare debugpy

async def bare_debugpy(program: Path, args: list[str], breakpoints: list[int],
                       python: str = sys.executable, on_stop=None) -> float:
    """A bare DAP client on debugpy's adapter, debugpy's defaults (output as DAP
    events): launch to end, in seconds. `on_stop(client, message)` decides what
    each stop does (default: continue)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = with_nodelay(env.get("PYTHONPATH"))
    # The adapter is ours (debugpy in this environment); the program runs under `python`.
    client = await DapClient.start_stdio([sys.executable, "-m", "debugpy.adapter"], name="debugpy",
                                         env=env)
    stopped: asyncio.Queue = asyncio.Queue()
    ended = asyncio.Event()
    initialized = asyncio.Event()
    client.on("stopped", lambda m: stopped.put_nowait(m))
    client.on("terminated", lambda m: ended.set())
    client.on("initialized", lambda m: initialized.set())
    t0 = time.perf_counter()
    try:
        await client.request("initialize", {"adapterID": "debugpy", "linesStartAt1": True,
                                            "columnsStartAt1": True, "pathFormat": "path"})
        launch = asyncio.ensure_future(client.request("launch", {
            "type": "python", "request": "launch", "program": str(program), "args": args,
            "console": "internalConsole", "python": [python], "justMyCode": True,
            "env": {"PYTHONPATH": with_nodelay(None), **BARE_ENV}}, timeout=600))
        await asyncio.wait_for(initialized.wait(), 60)
        if breakpoints:
            await client.request("setBreakpoints", {"source": {"path": str(program)},
                                                    "breakpoints": [{"line": n} for n in breakpoints]})
        await client.request("configurationDone", {})
        await launch
        while not ended.is_set():
            waiter = asyncio.ensure_future(stopped.get())
            ender = asyncio.ensure_future(ended.wait())
            done, _ = await asyncio.wait({waiter, ender}, timeout=600,
                                         return_when=asyncio.FIRST_COMPLETED)
            if waiter not in done:
                waiter.cancel()
                break
            message = waiter.result()
            ender.cancel()
            if on_stop is not None and await on_stop(client, message, t0):
                return time.perf_counter() - t0
            await client.request("continue", {"threadId": message["body"]["threadId"]}, timeout=30)
        return time.perf_counter() - t0
    finally:
        with contextlib.suppress(Exception):
            await client.request("disconnect", {"terminateDebuggee": True}, timeout=3)
        await client.close()


async def bare_breakpoints(program: Path, count: int) -> list[float]:
    times: list[float] = []

    async def add_them(client, message, t0):
        for n in range(1, count + 1):
            t = time.perf_counter()
            await client.request("setBreakpoints", {"source": {"path": str(program)},
                                                    "breakpoints": [{"line": 2 + i} for i in range(n)]})
            times.append(time.perf_counter() - t)
        return True

    await bare_debugpy(program, [], [1], on_stop=add_them)
    return times


# --------------------------------------------------------------- tui-debugger

@contextlib.asynccontextmanager
async def mcp():
    from tests.support.mcp import in_process_client

    async with in_process_client() as client:
        yield client


async def tool(client, name: str, arguments: dict | None = None) -> dict:
    result = await client.call_tool(name, arguments or {})
    data = result.structured_content or {}
    if result.is_error:
        raise RuntimeError(f"{name}: {data}")
    return data


async def until_end(client) -> dict:
    while True:
        answer = await tool(client, "debug_wait", {"timeoutMs": 600_000})
        if answer["status"] == "terminated":
            return answer
        if answer["status"] == "stopped":
            await tool(client, "debug_continue", {"waitMs": 0})


async def ours_output(program: Path, lines: int, adapter: str | None = None) -> float:
    async with mcp() as client:
        t0 = time.perf_counter()
        launch = {"program": str(program), "args": [str(lines)]}
        if adapter:
            launch["adapter"] = adapter
        await tool(client, "debug_launch", launch)
        await until_end(client)
        spent = time.perf_counter() - t0
        # Not timed: the flood's last line reached the session (a row that ends
        # early, its output left behind, would read as fast).
        tail = await tool(client, "debug_output", {"tail": 5})
        if f"line {lines - 1}\n" not in "".join(e["text"] for e in tail["entries"]):
            print(f"  {adapter or 'debugpy'}: the last line is not in the output's tail: {tail}")
        return spent


async def ours_breakpoints(program: Path, count: int) -> list[float]:
    async with mcp() as client:
        await tool(client, "debug_launch", {"program": str(program), "stopOnEntry": True})
        times = []
        for i in range(count):
            t = time.perf_counter()
            await tool(client, "debug_breakpoint_add", {"file": str(program), "line": 2 + i})
            times.append(time.perf_counter() - t)
        await tool(client, "debug_terminate")
        return times


async def ours_continues(program: Path, count: int) -> list[float]:
    line = next(n for n, t in enumerate(program.read_text().splitlines(), 1) if "@loop" in t)
    async with mcp() as client:
        await tool(client, "debug_launch", {"program": str(program),
                                            "breakpoints": [f"{program}:{line}"]})
        times = []
        for _ in range(count):
            t = time.perf_counter()
            answer = await tool(client, "debug_continue", {"waitMs": 30_000})
            assert answer["status"] == "stopped", answer
            times.append(time.perf_counter() - t)
        await tool(client, "debug_terminate")
        return times


async def ours_stack(program: Path) -> list[tuple[float, int, int]]:
    import json

    line = next(n for n, t in enumerate(program.read_text().splitlines(), 1) if "@bottom" in t)
    async with mcp() as client:
        await tool(client, "debug_launch", {"program": str(program),
                                            "breakpoints": [f"{program}:{line}"]})
        out = []
        for frames in (20, 1000):
            t = time.perf_counter()
            answer = await tool(client, "debug_stack", {"maxFrames": frames})
            out.append((time.perf_counter() - t, len(json.dumps(answer)), len(answer.get("frames", []))))
        await tool(client, "debug_terminate")
        return out


async def ours_first_stop(program: Path, line: int, python: str = sys.executable
                          ) -> tuple[float, str, str]:
    """Launch to the first stop under `python` (through a launch.json's
    "python", as a project would choose it); answers the seconds, the state
    and the launch answer's message (the notice of a long wait)."""
    import json

    folder = program.parent / f"py{abs(hash(python))}"
    (folder / ".vscode").mkdir(parents=True, exist_ok=True)
    (folder / ".vscode" / "launch.json").write_text(json.dumps({"configurations": [{
        "name": "big", "type": "debugpy", "request": "launch", "program": str(program),
        "python": python}]}))
    async with mcp() as client:
        t0 = time.perf_counter()
        answer = await tool(client, "debug_launch", {"launchConfig": "big", "cwd": str(folder),
                                                     "breakpoints": [f"{program}:{line}"]})
        message = answer.get("message") or ""
        status = answer.get("state")
        if status != "stopped":
            waited = await tool(client, "debug_wait", {"timeoutMs": 600_000})
            # debug_wait answers with the stop itself (`stop`), or a status when none came
            status = "stopped" if waited.get("stop") else waited.get("status", "no stop")
        spent = time.perf_counter() - t0
        await tool(client, "debug_terminate")
        return spent, status, message


async def ours_threads(program: Path, mode: str, count: int, source: Path | None = None,
                       **launch) -> tuple[int, int, float]:
    source = source or program
    line = next(n for n, t in enumerate(source.read_text().splitlines(), 1) if "@hit" in t)
    async with mcp() as client:
        t0 = time.perf_counter()
        answer = await tool(client, "debug_launch", {
            "program": str(program), "args": [mode, str(count)],
            "breakpoints": [f"{source}:{line}"], **launch})
        shown, told = 0, 0
        status = answer.get("state")
        while status != "terminated":
            if status == "running":
                answer = await tool(client, "debug_wait", {"timeoutMs": 30_000})
                status = answer["status"]
                continue
            shown += 1
            told += len(answer["stop"].get("passed_threads") or [])
            answer = await tool(client, "debug_continue", {"waitMs": 5000})
            status = answer["status"]
        message = answer.get("message") or ""
        if "went on:" in message:
            told += len(message.split("went on:")[1].split(","))
        return shown, told, time.perf_counter() - t0


def rss_tree(root: int) -> list[tuple[int, str, int]]:
    """(pid, command, resident KiB) of root and its descendants."""
    out = subprocess.run(["ps", "-eo", "pid=,ppid=,rss=,args="], capture_output=True, text=True).stdout
    procs = {}
    for line in out.splitlines():
        pid, ppid, rss, args = line.split(None, 3)
        procs[int(pid)] = (int(ppid), int(rss), args)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in procs:
            found.append((pid, procs[pid][2][:70], procs[pid][1]))
            todo += [p for p, (pp, _, _) in procs.items() if pp == pid]
    return found


def tmux_process(name: str, command: list[str], ready, timeout: float = 120) -> int:
    """Run `command` in a detached tmux session `name`; once `ready(screen)` is
    true of its screen, answer the pid of the process in its pane."""
    import shlex

    # A tmux server of our own, started with this environment.
    subprocess.run(["tmux", "-L", name, "new-session", "-d", "-s", name, "-x", "160", "-y", "45",
                    "-c", str(ROOT), shlex.join(command)], check=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = subprocess.run(["tmux", "-L", name, "capture-pane", "-p", "-t", name],
                                capture_output=True, text=True).stdout
        if ready(screen):
            break
        time.sleep(0.5)
    else:
        raise RuntimeError(f"{command[0]} did not show its stop in {timeout:.0f} s:\n{screen}")
    time.sleep(2)  # painted; let it settle before it is measured
    return int(subprocess.run(["tmux", "-L", name, "display-message", "-p", "-t", name, "#{pane_pid}"],
                              capture_output=True, text=True).stdout)


def memory_of_a_stopped_session(pudb: str | None) -> None:
    """Each process of a session stopped at a breakpoint of the bundled
    example, the TUI included (the real executable, in tmux, joined to the
    session), beside pudb stopped in the same program."""
    example = ROOT / "examples" / "inventory.py"
    line = next(n for n, t in enumerate(example.read_text().splitlines(), 1) if "restock(item" in t)
    env = dict(os.environ)
    tmux = f"tdb-scale-{os.getpid()}"
    started = subprocess.run([sys.executable, "-m", "tui_debugger", "start", "--json", "--session", "scale-mem",
                              "--break", f"{example}:{line}", str(example)],
                             capture_output=True, text=True, env=env, timeout=120)
    import json

    total = 0
    try:
        info = json.loads(started.stdout)
        host = info.get("hostPid")
        subprocess.run([sys.executable, "-m", "tui_debugger", "await", "--session", "scale-mem"],
                       capture_output=True, timeout=120)
        tui = tmux_process(tmux, [sys.executable, "-m", "tui_debugger", "ui", "--session", "scale-mem"],
                           lambda screen: "restock(item" in screen and "Stack" in screen)
        for pid, command, kib in rss_tree(tui) + rss_tree(host):
            row("memory, stopped session", command, f"{kib / 1024:.0f} MB")
            total += kib
        row("memory, stopped session", "all, the TUI included", f"{total / 1024:.0f} MB")
    finally:
        subprocess.run(["tmux", "-L", tmux, "kill-server"], capture_output=True)
        subprocess.run([sys.executable, "-m", "tui_debugger", "stop", "--session", "scale-mem"],
                       capture_output=True, timeout=60)
    if pudb is None:
        row("memory, pudb", "(not measured: pass --pudb PYTHON, a Python with pudb installed)")
        return
    try:
        # pudb stops at the program's first line: its whole session is this one process.
        shown = tmux_process(tmux, ["env", f"XDG_CONFIG_HOME={WORK}", pudb, "-m", "pudb", str(example)],
                             lambda screen: "Variables:" in screen or "Breakpoints" in screen)
        for pid, command, kib in rss_tree(shown):
            row("memory, pudb stopped", command, f"{kib / 1024:.0f} MB")
    finally:
        subprocess.run(["tmux", "-L", tmux, "kill-server"], capture_output=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2_000_000)
    parser.add_argument("--python", action="append", default=[],
                        help="another interpreter for the module row (debugpy on its path)")
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--pudb", help="a Python with pudb installed, for the memory row")
    parser.add_argument("--module-lines", type=int, default=100_000)
    parser.add_argument("--bare-as-shipped", action="store_true",
                        help="the bare client's program without our sys.monitoring speed-ups")
    args = parser.parse_args()
    if args.bare_as_shipped:
        BARE_ENV["TUI_DEBUGGER_PYDEVD_SPEEDUPS"] = "0"
    want = set(args.only)
    if "output-native" in want:
        want |= set(NATIVE_OUTPUT_ROWS)
    want = want or {"output", *NATIVE_OUTPUT_ROWS, "breakpoints", "continues", "stack", "module", "threads",
                              "go-threads", "memory"}
    os.environ.setdefault("TUI_DEBUGGER_REDACT", "0")
    print("| case | program alone | bare debugpy | tui-debugger |")
    print("|---|---|---|---|")
    if "output" in want:
        flood = write("flood.py", FLOOD)
        base = alone([sys.executable, str(flood), str(args.lines)])
        bare = await bare_debugpy(flood, [str(args.lines)], [])
        ours = await ours_output(flood, args.lines)
        row(f"{args.lines:,} lines printed, launch to end", f"{base:.1f} s", f"{bare:.1f} s",
            f"{ours:.1f} s ({ours / base:.1f}x alone)")
    if want & set(NATIVE_OUTPUT_ROWS):
        floods = built_floods()
        for name, language, adapter in (("output-node", "node", "node"),
                                        ("output-node-write", "node, stdout.write", "node"),
                                        ("output-dlv", "go", "dlv"),
                                        ("output-lldb-dap", "c", "lldb-dap"),
                                        ("output-lldb-cli", "c", "lldb-cli")):
            if name not in want:
                continue
            argv = floods[language]
            base = alone([*argv, str(args.lines)])
            ours = await ours_output(Path(argv[-1]), args.lines, adapter)
            # The same launch printing one line: what the row pays before the flood.
            start = await ours_output(Path(argv[-1]), 1, adapter)
            row(f"{args.lines:,} lines printed, launch to end ({adapter}, {language})",
                f"{base:.2f} s", "—", f"{ours:.1f} s ({ours / base:.1f}x alone; "
                f"1 line: {start:.1f} s)")
    if "breakpoints" in want:
        program = write("lines.py", LINES)
        bare = await bare_breakpoints(program, 100)
        ours = await ours_breakpoints(program, 100)
        row("100 breakpoints added one at a time", "—",
            f"{sum(bare):.1f} s ({bare[0] * 1000:.0f} → {bare[-1] * 1000:.0f} ms each)",
            f"{sum(ours):.1f} s ({ours[0] * 1000:.0f} → {ours[-1] * 1000:.0f} ms each)")
    if "continues" in want:
        times = await ours_continues(write("loop.py", LOOP), 100)
        times.sort()
        row("100 continues, breakpoint to breakpoint", "—", "—",
            f"{times[len(times) // 2] * 1000:.0f} ms median, p90 {times[89] * 1000:.0f} ms")
    if "stack" in want:
        (t20, b20, n20), (t1000, b1000, n1000) = await ours_stack(write("deep.py", DEEP))
        row("stack 3,002 deep: 20 frames / maxFrames 1000", "—", "—",
            f"{t20 * 1000:.0f} ms, {b20 / 1024:.1f} KB / {t1000 * 1000:.0f} ms, "
            f"{b1000 / 1024:.1f} KB ({n1000} frames)")
    if "module" in want:
        program, line = big_module(args.module_lines)
        for python in [sys.executable, *args.python]:
            version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"],
                                     capture_output=True, text=True).stdout.strip()
            base = alone([python, str(program)])
            bare = await bare_debugpy(program, [], [line], python=python,
                                      on_stop=lambda c, m, t0: asyncio.sleep(0, True))
            spent, status, message = await ours_first_stop(program, line, python)
            ours = f"{spent:.1f} s ({status})"
            if "still" in message or "No stop yet" in message:
                print(f"  launch answer: {message.splitlines()[0][:160]}")
            row(f"breakpoint at line {line:,} of {args.module_lines:,} (Python {version})",
                f"{base:.2f} s",
                f"{bare:.1f} s", ours)
    if "threads" in want:
        hits = ROOT / "tests" / "programs" / "py_thread_hits.py"
        for mode, count, label in (("stagger", 10, "10 threads pass one breakpoint 50 ms apart"),
                                   ("barrier", 100, "100 threads released by a barrier")):
            shown, told, spent = await ours_threads(hits, mode, count)
            row(label, "—", "—", f"{shown} hits shown, {told} told as passed, of {count} "
                f"({spent:.1f} s)")
    if "go-threads" in want:
        from tests.support.native_build import go_program

        source = ROOT / "tests" / "programs" / "go_thread_hits.go"
        built = go_program("go_thread_hits")
        for mode, count, label in (("stagger", 10, "10 goroutines pass one breakpoint 50 ms apart"),
                                   ("barrier", 100, "100 goroutines released together")):
            shown, told, spent = await ours_threads(built, mode, count, source, adapter="dlv")
            row(f"{label} (delve)", "—", "—", f"{shown} hits shown of {count} ({spent:.1f} s)")
    if "memory" in want:
        memory_of_a_stopped_session(args.pudb)


if __name__ == "__main__":
    asyncio.run(main())
