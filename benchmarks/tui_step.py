"""Step-to-repaint in the TUI, against real debugpy.

For each scenario the TUI (built by the same factory as `tui-debugger run`, run
headless by Textual's Pilot) stops in a loop, then F10 is pressed N times. Two
times are taken per step, from the key press:

  source     until the source pane has painted the new current line
  variables  until the variables pane shows the new stop's values

Scenarios: small locals; huge locals (a dict and a list of 200,000 entries and a
1 MB string, with the list expanded in the tree, so its first page is fetched
again at every stop); and the same loop in a file of 100,000 lines.

Then the output flood: a program prints 50,000 lines, writes the time, and
reaches a breakpoint. Printed: from that time until the stop is painted, and the
steps after it (with the rest of the output still arriving).

Last, the output pane's ingest: 100,000 lines given to the app as 1,000 output
events of 100 lines (as the session sends them), until the pane has painted the
last one; printed as lines per second.

    python benchmarks/tui_step.py [--steps N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LOOP = """\
def work():
{setup}    total = 0
    for i in range(10_000_000):
        total += i
    return total


work()
"""
HUGE_SETUP = """\
    table = {f"key{i}": i for i in range(200_000)}
    items = list(range(200_000))
    blob = "x" * 1_000_000
"""


def programs(folder: Path) -> dict[str, tuple[Path, int]]:
    """name -> (program, line of `total += i`)."""
    small = folder / "small.py"
    small.write_text(LOOP.format(setup=""))
    huge = folder / "huge.py"
    huge.write_text(LOOP.format(setup=HUGE_SETUP))
    padding = "".join(f"pad_{i} = {i}\n" for i in range(100_000))
    long_file = folder / "long_file.py"
    long_file.write_text(padding + LOOP.format(setup=""))
    return {
        "small locals": (small, 4),
        "huge locals (200k entries, 1 MB string)": (huge, 7),
        "file of 100,000 lines": (long_file, 100_004),
    }


async def measure(program: Path, line: int, steps: int, expand: str | None) -> tuple[list[float], list[float]]:
    from tui_debugger.tui.app import create_app

    app = create_app("launch", {"program": str(program), "breakpoints": [f"{program}:{line}"]},
                     None, cwd=str(program.parent))
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: app.state == "stopped" and app.variables.filled > 0)
        await pilot.pause(0.2)
        if expand:
            node = next(n for n in app.variables.root.children[0].children
                        if n.data and n.data.path == expand)
            node.expand()
            await until(pilot, lambda: any(c.data.kind == "var" for c in node.children))
        times = await step_times(app, pilot, steps)
        await app.action_quit()
    return times


async def step_times(app, pilot, steps: int) -> tuple[list[float], list[float]]:
    """F10 `steps` times: (key -> source painted, key -> variables filled) each."""
    source_times: list[float] = []
    variable_times: list[float] = []
    for _ in range(steps):
        before = app.source.painted_location
        filled = app.variables.filled
        started = time.perf_counter()
        # As a terminal delivers it; Pilot.press would also wait for every widget to idle.
        app.simulate_key("f10")
        await until(pilot, lambda: app.source.painted_location not in (before, None))
        source_times.append(time.perf_counter() - started)
        await until(pilot, lambda: app.variables.filled > filled)
        variable_times.append(time.perf_counter() - started)
        await pilot.pause(0.05)  # let the step's other events land before the next press
    return source_times, variable_times


async def flood(folder: Path, steps: int) -> tuple[float, list[float], list[float]]:
    """(program at the breakpoint -> stop painted, then F10 -> source, F10 -> variables)."""
    from benchmarks.tui_vs_pudb import FLOOD, FLOOD_LINE
    from tui_debugger.tui.app import create_app

    program = folder / "flood.py"
    program.write_text(FLOOD)
    mark = folder / "flood.mark"
    os.environ["FLOOD_MARK"] = str(mark)
    app = create_app("launch", {"program": str(program), "breakpoints": [f"{program}:{FLOOD_LINE}"]},
                     None, cwd=str(folder))
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: app.source.painted_location == (str(program), FLOOD_LINE), 120)
        shown = time.time() - float(mark.read_text())
        await until(pilot, lambda: app.variables.filled > 0)
        source_times, variable_times = await step_times(app, pilot, steps)
        await app.action_quit()
    return shown, source_times, variable_times


async def ingest(folder: Path, lines: int = 100_000, per_event: int = 100) -> float:
    """Lines per second from the first output event until the pane shows the last line."""
    from tui_debugger.tui.app import create_app
    from tui_debugger.tui.widgets.output_pane import OutputPane
    from tui_debugger.events import Output
    from tui_debugger.output import OutputLine

    program = folder / "small.py"
    app = create_app("launch", {"program": str(program), "breakpoints": [f"{program}:4"]},
                     None, cwd=str(folder))
    chunks = ["".join(f"ingest line {n + k} of {lines}, some text to make it a log line\n"
                      for k in range(per_event)) for n in range(0, lines, per_event)]
    last = f"ingest line {lines - 1} of {lines}"
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: app.state == "stopped" and app.variables.filled > 0)
        await pilot.pause(0.2)
        log = app.query_one(OutputPane).log_view

        def painted() -> bool:
            return any(last in strip.text for strip in log.render_lines(log.size.region))

        seq = app.output_cursor
        started = time.perf_counter()
        for chunk in chunks:
            app.on_session_event(Output(line=OutputLine(seq=seq, category="stdout", text=chunk)))
            seq += 1
            await asyncio.sleep(0)  # other events (keys, the stop) interleave, as in the app
        await until(pilot, painted)
        elapsed = time.perf_counter() - started
        await app.action_quit()
    return lines / elapsed


async def until(pilot, predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the TUI did not get there in time")
        await asyncio.sleep(0.001)


def ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"{statistics.median(values) * 1000:7.1f} {p95 * 1000:7.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tui-step-") as tmp:
        # Keep the person's config and saved breakpoints out of the figures.
        os.environ["TUI_DEBUGGER_CONFIG"] = os.path.join(tmp, "none.toml")
        os.environ["TUI_DEBUGGER_STATE_DIR"] = os.path.join(tmp, "state")
        os.environ["TUI_DEBUGGER_RUNTIME_DIR"] = os.path.join(tmp, "rt")
        print(f"{ns.steps} steps each; milliseconds from the F10 key press (median, p95)\n")
        print(f"{'scenario':42} {'source painted':>16} {'variables filled':>18}")
        for name, (program, line) in programs(Path(tmp)).items():
            expand = "items" if "huge" in name else None
            source, variables = asyncio.run(measure(program, line, ns.steps, expand))
            print(f"{name:42} {ms(source):>16} {ms(variables):>18}")
        shown, source, variables = asyncio.run(flood(Path(tmp), ns.steps))
        print(f"{'steps after 50,000 lines of output':42} {ms(source):>16} {ms(variables):>18}")
        print(f"\n50,000 lines, then a breakpoint: the stop painted {shown * 1000:.1f} ms "
              "after the program reached it")
        rate = asyncio.run(ingest(Path(tmp)))
        print(f"output pane ingest: {rate:,.0f} lines/s (100,000 lines in events of 100)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
