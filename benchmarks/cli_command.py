"""One CLI command's wall time on a live session, beside a bare Python start-up:
what an agent that drives the CLI (one process per command) pays per call.

A headless session of the bundled example (`start --stop-on-entry`) is
started; then each command runs as its own process (`python -m tui_debugger
...`, exec to exit), and the session is stopped. `--against DIR` runs the same
rounds with the tui_debugger of another checkout (put first on PYTHONPATH),
alternating with this one round by round so that both see the same load.

    python benchmarks/cli_command.py [--rounds N] [--against DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = [("start", ["start", "--stop-on-entry", "inventory.py"]), ("--version", ["--version"]),
            ("status", ["status"]), ("next", ["next"]), ("print", ["print", "1", "+", "2"]),
            ("await", ["await", "--timeout", "5"]), ("stop", ["stop"])]


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT / "examples", env=env, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    took = (time.perf_counter() - started) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode()}")
    return took


def one_round(env: dict[str, str]) -> dict[str, float]:
    out = {"python -c pass": timed([sys.executable, "-c", "pass"], env)}
    for label, args in COMMANDS:
        out[label] = timed([sys.executable, "-m", "tui_debugger", *args], env)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--against", metavar="DIR", help="another checkout to compare with")
    ns = parser.parse_args()
    runtime = tempfile.mkdtemp(prefix="tdb-cli-bench-")
    base = {**os.environ, "TUI_DEBUGGER_RUNTIME_DIR": runtime}
    base.pop("TUI_DEBUGGER_SESSION", None)
    variants = {"this": {**base, "PYTHONPATH": str(ROOT)}}
    if ns.against:
        variants = {"against": {**base, "PYTHONPATH": str(Path(ns.against).resolve())}, **variants}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    for _ in range(ns.rounds):
        for name, env in variants.items():
            results[name].append(one_round(env))
    print(f"load average {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} cores; "
          f"median of {ns.rounds} rounds, ms")
    labels = list(results["this"][0])
    print("| command | " + " | ".join(variants) + " |")
    print("|---|" + "---|" * len(variants))
    for label in labels:
        cells = [f"{statistics.median(r[label] for r in results[name]):,.0f}" for name in variants]
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
