"""The program's own Python under tui-debugger, on 3.11, 3.12 and 3.13, against
the program alone and under pdb, side by side in one run.

Two measures per interpreter (each the best of --repeat runs, wall time):

  first stop   a two-line program: `tui-debugger start --stop-on-entry` until it
               answers with the stop (the whole CLI call: client, host, debugpy's
               adapter, launcher and program); pdb: `python -m pdb` to its prompt.
  hot loop     3,000,000 iterations of `total += i`, then a breakpoint after the
               loop: alone (no breakpoint), pdb (`-c "b N" -c c`), tui-debugger
               (`start --break FILE:N` until it answers with the stop).

The interpreters are pyenv's (PYENV_ROOT, else ~/.pyenv) of each version; the
program runs under each through `--python`, as a user's venv would. debugpy's
compiled speed-ups are built for the Python it was installed for (3.11 here);
3.12 and 3.13 run its pure-Python tracer on sys.monitoring.

Run:  python benchmarks/python_versions.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = ("3.11", "3.12", "3.13")
ITERATIONS = 3_000_000

HOT = f"""\
total = 0
for i in range({ITERATIONS}):
    total += i
print(total)  # the breakpoint
"""
ENTRY = "x = 1\nprint(x)\n"


def interpreter(version: str) -> str | None:
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = sorted(glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", "python3")))
    return found[-1] if found else None


def timed(argv: list[str], cwd: str, env: dict[str, str], stdin: str | None = None,
          check: bool = True) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=600)
    elapsed = time.perf_counter() - started
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}")
    return elapsed


def best(repeat: int, run) -> float:
    return min(run() for _ in range(repeat))


def tdb(*args: str) -> list[str]:
    return [sys.executable, "-m", "tui_debugger", *args]


def measure(python: str, work: str, env: dict[str, str], repeat: int) -> dict[str, float]:
    hot, entry = os.path.join(work, "hot.py"), os.path.join(work, "entry.py")
    line = HOT.splitlines().index("print(total)  # the breakpoint") + 1

    def under_tdb(*start: str) -> float:
        elapsed = timed(tdb("start", "--python", python, *start), work, env)
        timed(tdb("stop"), work, env, check=False)
        return elapsed

    return {
        "alone": best(repeat, lambda: timed([python, hot], work, env)),
        "pdb": best(repeat, lambda: timed(
            [python, "-m", "pdb", "-c", f"b {line}", "-c", "c", "-c", "q", hot], work, env)),
        "tui-debugger": best(repeat, lambda: under_tdb("--break", f"hot.py:{line}", "hot.py")),
        "first stop, pdb": best(repeat, lambda: timed([python, "-m", "pdb", entry], work, env,
                                                      stdin="q\n")),
        "first stop, tui-debugger": best(repeat, lambda: under_tdb("--stop-on-entry",
                                                                    "entry.py")),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="tdb-pyver-") as work:
        Path(work, "hot.py").write_text(HOT)
        Path(work, "entry.py").write_text(ENTRY)
        env = {**os.environ, "TUI_DEBUGGER_RUNTIME_DIR": os.path.join(work, "run"),
               "TUI_DEBUGGER_STATE_DIR": os.path.join(work, "state"),
               "TUI_DEBUGGER_PERSIST_BREAKPOINTS": "0"}
        env.pop("VIRTUAL_ENV", None)
        for version in VERSIONS:
            python = interpreter(version)
            if python is None:
                print(f"Python {version}: not installed (pyenv install {version})",
                      file=sys.stderr)
                continue
            results[version] = measure(python, work, env, options.repeat)
    if options.json:
        print(json.dumps(results, indent=2))
        return 0
    columns = ["alone", "pdb", "tui-debugger", "first stop, pdb", "first stop, tui-debugger"]
    print(f"hot loop of {ITERATIONS:,} iterations, then a breakpoint; best of "
          f"{options.repeat}, seconds")
    print(f"{'python':8}" + "".join(f"{c:>26}" for c in columns))
    for version, row in results.items():
        print(f"{version:8}" + "".join(f"{row[c]:>26.2f}" for c in columns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
