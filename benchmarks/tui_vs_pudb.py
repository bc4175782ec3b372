"""Step to screen, side by side: tui-debugger and pudb, the real executables in tmux.

Both debuggers run the same Python program in a 160x45 tmux window, stopped at
a breakpoint in a loop. For each step the key is sent (F10 for tui-debugger, `n`
for pudb) and the screen is read as fast as tmux answers (one control-mode
client, `capture-pane` in a loop, about 1 ms a read). Two times from the key:

  first change   the first screen that differs from the one before the key
  source line    the first screen whose source pane marks the new current line
  settled        the last change, once the screen shows every expected part of
                 the new stop (the current line, the stack's line, the locals'
                 new values) and then stays the same for --quiet seconds

pudb runs the program in its own process (`python -m pudb`); tui-debugger runs
it under debugpy (`tui-debugger run --break`). What a person waits for is the
same: the key, then the screen.

The big scenario steps the same loop with big locals (a dict and a list of
200,000 entries and a 1 MB string) in a file of 100,000 lines.

The flood scenario prints 50,000 lines before the breakpoint. The program writes
the time just before it reaches the breakpoint line; "stop shown" is from then
until the stop is on screen. Then the same steps are measured with that output
behind them.

    python benchmarks/tui_vs_pudb.py [--steps N] [--only NAME]…

Three columns: `tui-debugger run` (the TUI hosts the session), `tui-debugger ui`
joining a headless `tui-debugger start` (the session in another process), pudb.
Then the in-process figures of `benchmarks/tui_step.py` (Textual's Pilot, no
terminal), unless --no-pilot.

With --floor, two more figures of the same run, what any debugger with
debugpy's adapter under a screen in tmux pays before its own work: tmux alone
(a program that repaints one line on each key, key to screen as above) and
debugpy alone (next -> stopped -> stackTrace, the part of a step a new source
line needs, a bare DAP client on debugpy's adapter: benchmarks/step_latency.py).

Needs tmux, and pudb (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 160, 45

LOOP = """\
def work():
    total = 0
    for i in range(10_000_000):
        total += i
    return total


work()
"""
LOOP_LINE = 4  # `total += i`; a step goes to line 3 (`for`) and back

FLOOD = """\
import os, time
for n in range(50_000):
    print(f"flood line {n} of 50000, some text to make it a realistic log line")
open(os.environ["FLOOD_MARK"], "w").write(repr(time.time()))
total = 0
for i in range(10_000_000):
    total += i
"""
FLOOD_LINE = 7

#: The same loop with big locals (a dict and a list of 200,000 entries, a 1 MB
#: string) in a file of 100,000 lines: a step should cost what a small one does.
HUGE = "".join(f"# line {n} of padding, to make a long file\n" for n in range(100_000)) + """\
def work():
    table = {f"key{i}": i for i in range(200_000)}
    items = list(range(200_000))
    blob = "x" * 1_000_000
    total = 0
    for i in range(10_000_000):
        total += i
    return total


work()
"""
HUGE_LINE = 100_007


class Tmux:
    """A tmux server of our own and one control-mode client to read the screen
    without starting a process per read."""

    runs = 0

    def __init__(self, folder: Path):
        self.exe = shutil.which("tmux") or sys.exit("tmux is not installed")
        Tmux.runs += 1
        self.socket = str(folder / f"tmux-{Tmux.runs}.sock")
        self.client: subprocess.Popen[bytes] | None = None

    def start(self, cwd: Path, env: dict[str, str], argv: list[str]) -> None:
        env_args = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
        subprocess.run([self.exe, "-S", self.socket, "-f", "/dev/null", "new-session", "-d",
                        "-s", "bench", "-x", str(WIDTH), "-y", str(HEIGHT), "-c", str(cwd),
                        *env_args, *argv], check=True)
        subprocess.run([self.exe, "-S", self.socket, "set-option", "-g", "window-size", "manual"],
                       check=True)
        self.client = subprocess.Popen([self.exe, "-S", self.socket, "-C", "attach", "-t", "bench"],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._block()  # the answer to the attach itself
        self.command("refresh-client -C %dx%d" % (WIDTH, HEIGHT))

    def command(self, line: str) -> list[str]:
        """One control-mode command; its output lines (notifications are skipped)."""
        assert self.client and self.client.stdin and self.client.stdout
        self.client.stdin.write(line.encode() + b"\n")
        self.client.stdin.flush()
        return self._block()

    def _block(self) -> list[str]:
        assert self.client and self.client.stdout
        out: list[str] = []
        inside = False
        while True:
            raw = self.client.stdout.readline()
            if not raw:
                raise RuntimeError("the tmux control client went away")
            text = raw.decode("utf-8", "replace").rstrip("\n")
            if not inside:
                if text.startswith("%begin"):
                    inside = True
                continue
            if text.startswith("%end") or text.startswith("%error"):
                return out
            out.append(text)

    def screen(self) -> str:
        return "\n".join(self.command("capture-pane -p -t bench"))

    def keys(self, *keys: str) -> None:
        self.command("send-keys -t bench " + " ".join(keys))

    def stop(self) -> None:
        if self.client is not None:
            self.client.kill()
            self.client.wait()
        subprocess.run([self.exe, "-S", self.socket, "kill-server"], capture_output=True)


@dataclass
class Tool:
    name: str
    step_key: str
    argv: Callable[[Path, int], list[str]]
    env: Callable[[Path, Path, int], dict[str, str]]
    #: the parts of the screen that show a stop at (line, i, total)
    shows: Callable[[str, str, int, int, int], bool]
    #: the source pane marks this line as the current one
    source_at: Callable[[str, int], bool]
    #: before the first measured stop (e.g. continue to the breakpoint)
    to_breakpoint: list[str] = field(default_factory=list)
    #: a headless session to join, started before and stopped after (argv of `start`)
    host: Callable[[Path, int], list[str]] | None = None
    flood: bool = True  # whether the 50,000-line scenario means something for it


def source_row(screen: str, text: str, marker: str) -> bool:
    return any(marker in row and text in row for row in screen.splitlines())


def tui_shows(screen: str, program: str, line: int, i: int, total: int) -> bool:
    rows = screen.splitlines()
    return (bool(rows) and f"{program}:{line}" in rows[0]  # status bar
            and re.search(rf"\bi = {i}\b", screen) is not None
            and re.search(rf"\btotal = {total}\b", screen) is not None
            and source_row(screen, LOOP_SOURCE[line], "▶")
            and re.search(rf"▶0\s+\S+\s+{re.escape(program)}:{line}\b", screen) is not None)


def tui_source_at(screen: str, line: int) -> bool:
    # Inside the source pane's borders: the variables pane beside it has ▶ too.
    return any("▶" in part and LOOP_SOURCE[line] in part
               for part in (row.split("│")[1] for row in screen.splitlines() if row.count("│") >= 2))


def pudb_source_at(screen: str, line: int) -> bool:
    return re.search(rf"^>.*{re.escape(LOOP_SOURCE[line].strip())}", screen, re.M) is not None


def pudb_shows(screen: str, program: str, line: int, i: int, total: int) -> bool:
    # With big locals pudb wraps the 1 MB string over its whole variables pane:
    # i and total are out of view, and the stop is the source and stack lines.
    values_in_view = "total: " in screen
    return (re.search(rf"^>.*{re.escape(LOOP_SOURCE[line].strip())}", screen, re.M) is not None
            and re.search(rf">> \S+ {re.escape(program)}:{line}\b", screen) is not None
            and (not values_in_view or (re.search(rf"\bi: {i}\b", screen) is not None
                                        and re.search(rf"\btotal: {total}\b", screen) is not None)))


LOOP_SOURCE: dict[int, str] = {}


def tui_env(folder: Path, program: Path, line: int) -> dict[str, str]:
    return {"TERM": "xterm-256color", "TUI_DEBUGGER_CONFIG": str(folder / "none.toml"),
            "TUI_DEBUGGER_STATE_DIR": str(folder / "state"),
            "TUI_DEBUGGER_RUNTIME_DIR": str(folder / "rt")}


def pudb_env(folder: Path, program: Path, line: int) -> dict[str, str]:
    config = folder / "xdg"
    (config / "pudb").mkdir(parents=True, exist_ok=True)
    (config / "pudb" / "pudb.cfg").write_text("[pudb]\nseen_welcome = e999\nprompt_on_quit = False\n")
    name = "saved-breakpoints-%d.%d" % sys.version_info[:2]
    (config / "pudb" / name).write_text(f"b {program}:{line}\n")
    return {"TERM": "xterm-256color", "XDG_CONFIG_HOME": str(config)}


TOOLS = ["tui-debugger", "tui-debugger ui", "pudb"]

#: the least a program in tmux can do for a key: repaint one line
ECHO = r"""
import os, tty
tty.setraw(0)
n = 0
os.write(1, b"\x1b[2J\x1b[Hkeys: 0.")
while os.read(0, 64):
    n += 1
    os.write(1, b"\x1b[H\x1b[2Kkeys: %d." % n)
"""


def tmux_floor(folder: Path, steps: int, quiet: float) -> list[float]:
    """Key to screen in seconds for ECHO, each key measured as a step is."""
    tmux = Tmux(folder)
    tmux.start(folder, {"TERM": "xterm-256color"}, [sys.executable, "-c", ECHO])
    try:
        wait_for(tmux, lambda s: "keys: 0." in s, "the echo program")
        time.sleep(0.3)
        shown = []
        for n in range(1, steps + 1):
            _, at, _ = one_step(tmux, "n", lambda s, n=n: f"keys: {n}." in s,
                                lambda s, n=n: f"keys: {n}." in s, quiet)
            shown.append(at)
        return shown
    finally:
        tmux.stop()


def debugpy_floor(folder: Path, steps: int) -> list[float]:
    """next -> stopped -> stackTrace in seconds, a bare DAP client on debugpy's adapter."""
    import asyncio
    sys.path.insert(0, str(ROOT))
    from benchmarks.step_latency import PROGRAM, raw_rounds
    program = folder / "raw_loop.py"
    program.write_text(PROGRAM)
    to_line: list[float] = []
    asyncio.run(raw_rounds(str(program), steps, to_line=to_line))
    return to_line


def tool(name: str) -> Tool:
    exe = shutil.which("tui-debugger") or str(Path(sys.executable).parent / "tui-debugger")
    if name == "tui-debugger":
        return Tool(name, "F10", lambda program, line: [exe, "run", "--break", f"{program.name}:{line}",
                                                        program.name],
                    tui_env, tui_shows, tui_source_at)
    if name == "tui-debugger ui":
        # The session in a headless host (`start`), the TUI joining it as a client:
        # the debugger's I/O runs in another process than the screen.
        return Tool(name, "F10", lambda program, line: [exe, "ui", "--session", "bench"],
                    tui_env, tui_shows, tui_source_at, flood=False,
                    host=lambda program, line: [exe, "start", "--session", "bench", "--break",
                                                f"{program.name}:{line}", program.name])
    return Tool(name, "n", lambda program, line: [sys.executable, "-m", "pudb", program.name],
                pudb_env, pudb_shows, pudb_source_at, to_breakpoint=["c"])


def wait_for(tmux: Tmux, predicate: Callable[[str], bool], what: str, timeout: float = 60) -> float:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux.screen()
        if predicate(screen):
            return time.time()
        time.sleep(0.002)
    raise TimeoutError(f"timed out waiting for {what}; the screen was:\n{screen}")


def one_step(tmux: Tmux, key: str, expected: Callable[[str], bool], source: Callable[[str], bool],
             quiet: float) -> tuple[float, float, float]:
    """(first change, source line, settled) in seconds from the key."""
    before = tmux.screen()
    started = time.perf_counter()
    tmux.keys(key)
    first = last = painted = None
    previous = before
    shown_at = None
    deadline = started + 30
    while True:
        screen = tmux.screen()
        now = time.perf_counter()
        if screen != previous:
            if first is None:
                first = now
            last = now
            previous = screen
            if painted is None and source(screen):
                painted = now
            if shown_at is None and expected(screen):
                shown_at = now
        if shown_at is not None and now - last >= quiet:
            assert first is not None and painted is not None
            return first - started, painted - started, last - started
        if now > deadline:
            raise TimeoutError(f"the step did not settle; the screen was:\n{screen}")


def run_steps(t: Tool, folder: Path, program: Path, line: int, steps: int, quiet: float,
              flood: bool = False) -> dict[str, list[float]]:
    tmux = Tmux(folder)
    env = t.env(folder, program, line)
    mark = folder / "flood.mark"
    if flood:
        env["FLOOD_MARK"] = str(mark)
    if t.host is not None:
        subprocess.run(t.host(program, line), cwd=folder, env={**os.environ, **env}, check=True,
                       capture_output=True, timeout=60)
    tmux.start(folder, env, t.argv(program, line))
    results: dict[str, list[float]] = {"first change": [], "source line": [], "settled": []}
    try:
        state = (line, 0, 0)  # (line, i, total) of the stop on screen
        if t.to_breakpoint:
            wait_for(tmux, lambda s: "PuDB" in s, "the debugger")
            tmux.keys(*t.to_breakpoint)
        shown = wait_for(tmux, lambda s: t.shows(s, program.name, *state), "the breakpoint stop")
        if flood:
            results["stop shown"] = [shown - float(mark.read_text())]
        time.sleep(0.3)
        for _ in range(steps):
            at, i, total = state
            # `total += i` (line) steps to `for` (line - 1), which steps to the next i.
            state = (line - 1, i, total + i) if at == line else (line, i + 1, total)
            first, painted, settled = one_step(tmux, t.step_key,
                                               lambda s, st=state: t.shows(s, program.name, *st),
                                               lambda s, at=state[0]: t.source_at(s, at), quiet)
            results["first change"].append(first)
            results["source line"].append(painted)
            results["settled"].append(settled)
    finally:
        tmux.stop()
        if t.host is not None:
            subprocess.run([*t.host(program, line)[:1], "stop", "--session", "bench"], cwd=folder,
                           env={**os.environ, **env}, capture_output=True, timeout=60)
        if t.name.startswith("tui-debugger"):
            # The warm host and screen a quit TUI leaves (docs/configuration.md)
            # would wait out their idle time in a runtime folder that is gone.
            subprocess.run([*t.argv(program, line)[:1], "warm", "stop"], cwd=folder,
                           env={**os.environ, **env}, capture_output=True, timeout=60)
    return results


def median_p95(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(values) * 1000, ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--quiet", type=float, default=0.25,
                        help="seconds without a change that count as settled (default 0.25)")
    parser.add_argument("--only", choices=TOOLS, action="append",
                        help="measure only these (default: all three)")
    parser.add_argument("--no-flood", action="store_true", help="skip the 50,000-line scenario")
    parser.add_argument("--no-big", action="store_true", help="skip the big-locals scenario")
    parser.add_argument("--no-pilot", action="store_true",
                        help="skip the in-process figures (benchmarks/tui_step.py)")
    parser.add_argument("--floor", action="store_true",
                        help="also measure tmux alone and debugpy alone (what any front end pays)")
    ns = parser.parse_args()
    names = ns.only or TOOLS
    figures: dict[tuple[str, str], dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="tui-vs-pudb-") as tmp:
        folder = Path(tmp)
        small = folder / "small.py"
        small.write_text(LOOP)
        flood = folder / "flood.py"
        flood.write_text(FLOOD)
        huge = folder / "big.py"
        huge.write_text(HUGE)
        for name in names:
            t = tool(name)
            LOOP_SOURCE.clear()
            LOOP_SOURCE.update(enumerate(LOOP.splitlines(), 1))
            figures[(name, "steps")] = run_steps(t, folder, small, LOOP_LINE, ns.steps, ns.quiet)
            if not ns.no_big:
                LOOP_SOURCE.clear()
                LOOP_SOURCE.update(enumerate(HUGE.splitlines(), 1))
                figures[(name, "big")] = run_steps(t, folder, huge, HUGE_LINE, ns.steps, ns.quiet)
            if not ns.no_flood and t.flood:
                LOOP_SOURCE.clear()
                LOOP_SOURCE.update(enumerate(FLOOD.splitlines(), 1))
                figures[(name, "flood")] = run_steps(t, folder, flood, FLOOD_LINE, max(5, ns.steps // 3),
                                                     ns.quiet, flood=True)
        if ns.floor:
            floor = {"tmux": tmux_floor(folder, ns.steps, ns.quiet),
                     "debugpy": debugpy_floor(folder, ns.steps)}
    print(f"tmux {WIDTH}x{HEIGHT}, {ns.steps} steps; milliseconds from the key (median / p95)\n")
    compare = "pudb" in names and len(names) > 1
    print(f"{'':34}" + "".join(f"{n:>24}" for n in names)
          + (f"   {names[0]} / pudb (median)" if compare else ""))
    rows = [("step: first change", "steps", "first change"),
            ("step: source line", "steps", "source line"), ("step: settled", "steps", "settled"),
            ("big locals, long file: source line", "big", "source line"),
            ("big locals, long file: settled", "big", "settled"),
            ("50,000 lines, then stop shown", "flood", "stop shown"),
            ("after them, step: first change", "flood", "first change"),
            ("after them, step: source line", "flood", "source line"),
            ("after them, step: settled", "flood", "settled")]
    for label, scenario, key in rows:
        cells = []
        medians = []
        for name in names:
            values = figures.get((name, scenario), {}).get(key)
            if not values:
                cells.append(f"{'-':>24}")
                medians.append(None)
                continue
            med, p95 = median_p95(values)
            medians.append(med)
            cells.append(f"{med:11.1f} / {p95:8.1f}" if len(values) > 1 else f"{med:22.1f}")
        ratio = ""
        pudb = medians[names.index("pudb")] if compare else None
        if pudb and medians[0]:
            ratio = f"   {medians[0] / pudb:5.1f}x" if medians[0] >= pudb / 10 else \
                f"   {medians[0] / pudb:5.2f}x"
        print(f"{label:34}" + "".join(f"{c:>24}" for c in cells) + ratio)
    if ns.floor:
        tmux_ms, debugpy_ms = (median_p95(floor[k]) for k in ("tmux", "debugpy"))
        print(f"\n{'tmux alone: key -> one line repainted':50}{tmux_ms[0]:8.1f} / {tmux_ms[1]:6.1f}")
        print(f"{'debugpy alone: next -> stopped -> stackTrace':50}"
              f"{debugpy_ms[0]:8.1f} / {debugpy_ms[1]:6.1f}")
        print(f"{'the two together (medians)':50}{tmux_ms[0] + debugpy_ms[0]:8.1f}")
        if "pudb" in names:
            pudb_line = median_p95(figures[("pudb", "steps")]["source line"])[0]
            print(f"{'1.2x pudb, step: source line':50}{1.2 * pudb_line:8.1f}")
    if not ns.no_big:
        print("\nbig locals / small locals, step settled (median): " + ", ".join(
            f"{name} {median_p95(figures[(name, 'big')]['settled'])[0] / median_p95(figures[(name, 'steps')]['settled'])[0]:.2f}x"
            for name in names if (name, "big") in figures))
    if not ns.no_pilot and any(name.startswith("tui-debugger") for name in names):
        # The same steps in process, headless (Textual's Pilot): what the TUI itself costs.
        print("\nIn process (Textual's Pilot, no terminal): benchmarks/tui_step.py\n", flush=True)
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "tui_step.py"),
                        "--steps", str(min(ns.steps, 20))], check=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
