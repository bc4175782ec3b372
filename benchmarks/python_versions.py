"""The program's own Python under tui-debugger, on 3.11, 3.12 and 3.13, against
the program alone and under pdb, side by side in one run.

Two measures per interpreter (each the best of --repeat runs, wall time):

  first stop   a two-line program: `tui-debugger start --stop-on-entry` until it
               answers with the stop (the whole CLI call: client, host, debugpy's
               adapter, launcher and program); pdb: `python -m pdb` to its prompt.
  hot loop     3,000,000 iterations of `total += i`, then a breakpoint after the
               loop: alone (no breakpoint), pdb (`-c "b N" -c c`), tui-debugger
               (`start --break FILE:N`, then `await` if it answered "running",
               until the stop).
  loop         the loop's own time, as the program measures it (perf_counter
               around it): alone, and under tui-debugger (read at the stop with
               `print loop`), so the start-up is out of it.

--before adds tui-debugger with pydevd's sys.monitoring tracer as debugpy ships
it (TUI_DEBUGGER_PYDEVD_SPEEDUPS=0, see backends/dap/_nodelay/sitecustomize.py),
measured in turn with the default, on 3.12 and later.

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
import time
started = time.perf_counter()
total = 0
for i in range({ITERATIONS}):
    total += i
loop = time.perf_counter() - started
print(total, "loop", loop)  # the breakpoint
"""
ENTRY = "x = 1\nprint(x)\n"


def interpreter(version: str) -> str | None:
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = sorted(glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", "python3")))
    return found[-1] if found else None


def run(argv: list[str], cwd: str, env: dict[str, str], stdin: str | None = None,
        check: bool = True) -> tuple[float, str]:
    """Wall time and standard output."""
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=900)
    elapsed = time.perf_counter() - started
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}")
    return elapsed, done.stdout


def timed(argv: list[str], cwd: str, env: dict[str, str], stdin: str | None = None,
          check: bool = True) -> float:
    return run(argv, cwd, env, stdin, check)[0]


def number_after(text: str, word: str) -> float:
    """The number that follows `word` in `text` (`loop 0.61`; `0.61 (float)` for "")."""
    import re

    found = re.search(re.escape(word) + r"\D*?([0-9.]+(?:e-?[0-9]+)?)", text)
    if found is None:
        raise RuntimeError(f"no {word} in {text!r}")
    return float(found.group(1))


def best(repeat: int, run) -> float:
    return min(run() for _ in range(repeat))


def tdb(*args: str) -> list[str]:
    return [sys.executable, "-m", "tui_debugger", *args]


def measure(python: str, work: str, env: dict[str, str], repeat: int,
            before: bool) -> dict[str, float]:
    hot, entry = os.path.join(work, "hot.py"), os.path.join(work, "entry.py")
    line = next(n for n, text in enumerate(HOT.splitlines(), 1) if "# the breakpoint" in text)
    row: dict[str, list[float]] = {}

    def keep(column: str, value: float) -> None:
        row.setdefault(column, []).append(value)

    def under_tdb(*start: str, speedups: str = "1", loop: str | None = None) -> float:
        chosen = {**env, "TUI_DEBUGGER_PYDEVD_SPEEDUPS": speedups}
        elapsed = timed(tdb("start", "--python", python, *start), work, chosen)
        # `start` answers "running" after a bounded wait: the stop may come later.
        elapsed += timed(tdb("await", "--timeout", "600"), work, chosen)
        if loop is not None:
            keep(loop, number_after(run(tdb("print", "loop"), work, chosen)[1], ""))
        timed(tdb("stop"), work, chosen, check=False)
        return elapsed

    newer = before and run([python, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                           work, env)[1].strip() == "True"
    for _ in range(repeat):  # each measure in turn, so a change of load reaches them all
        elapsed, out = run([python, hot], work, env)
        keep("alone", elapsed)
        keep("loop alone", number_after(out, "loop"))
        keep("pdb", timed([python, "-m", "pdb", "-c", f"b {line}", "-c", "c", "-c", "q", hot],
                          work, env))
        keep("tui-debugger", under_tdb("--break", f"hot.py:{line}", "hot.py",
                                       loop="loop, tui-debugger"))
        if newer:
            keep("tui-debugger, pydevd as is",
                 under_tdb("--break", f"hot.py:{line}", "hot.py", speedups="0",
                           loop="loop, pydevd as is"))
        keep("first stop, pdb", timed([python, "-m", "pdb", entry], work, env, stdin="q\n"))
        keep("first stop, tui-debugger", under_tdb("--stop-on-entry", "entry.py"))
    return {column: min(values) for column, values in row.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--before", action="store_true",
                        help="also tui-debugger with pydevd's sys.monitoring tracer as shipped")
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
            results[version] = measure(python, work, env, options.repeat, options.before)
    if options.json:
        print(json.dumps(results, indent=2))
        return 0
    order = ["alone", "pdb", "tui-debugger", "tui-debugger, pydevd as is", "loop alone",
             "loop, tui-debugger", "loop, pydevd as is", "first stop, pdb",
             "first stop, tui-debugger"]
    columns = [c for c in order if any(c in row for row in results.values())]
    print(f"hot loop of {ITERATIONS:,} iterations, then a breakpoint; best of "
          f"{options.repeat}, seconds")
    print("| python | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for version, row in results.items():
        print(f"| {version} | " + " | ".join(f"{row[c]:.2f} s" if c in row else "—"
                                              for c in columns) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
