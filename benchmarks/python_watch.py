"""What a Python watch costs the code that never touches the watched value.

A 2,000,000-iteration loop in a function that does not name `balance`, timed
by the program itself (perf_counter around the loop), three ways side by side
in each round, per Python:

  alone     python3 PROGRAM, no debugger
  debugpy   under tui-debugger (debugpy), no watch
  watched   the same, with `watch acct.balance` set at a breakpoint before it
  item      the same, with `watch acct.__dict__["balance"]`: an item, which any
            code can change, so every line of the loop is looked at

Rounds interleave the three so a busy machine slows each alike; medians.
Run:  python benchmarks/python_watch.py [--rounds N] [--python PATH ...] [--json]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

PROGRAM = '''\
import sys, time


class Account:
    def __init__(self):
        self.balance = 100


def spin(n):
    total = 0
    for i in range(n):
        total += i % 7
    return total


def main():
    acct = Account()
    ready = 1  # BREAK
    started = time.perf_counter()
    spin(2_000_000)
    elapsed = time.perf_counter() - started
    acct.balance -= 1
    with open(sys.argv[1], "w") as out:
        out.write(str(elapsed))


main()
'''


def cli(*args: str, env: dict) -> str:
    done = subprocess.run(["tui-debugger", *args], capture_output=True, text=True, timeout=300,
                          env=env)
    if done.returncode != 0:
        raise SystemExit(f"tui-debugger {' '.join(args)} failed: {done.stderr or done.stdout}")
    return done.stdout


def one(python: str, program: str, result: str, how: str, env: dict) -> float:
    if os.path.exists(result):
        os.unlink(result)
    if how == "alone":
        subprocess.run([python, program, result], check=True, timeout=300)
    else:
        line = PROGRAM.splitlines().index("    ready = 1  # BREAK") + 1
        try:
            cli("start", "--python", python, "--break", f"{program}:{line}", program, result,
                env=env)
            cli("await", env=env)
            if how in ("watched", "item"):
                cli("watch", "acct.balance" if how == "watched" else 'acct.__dict__["balance"]',
                    env=env)
            out = cli("continue", env=env)  # the watch stops at balance -= 1, or the end
            if "Still running" in out:
                out = cli("await", "--timeout", "280", env=env)
            if how in ("watched", "item"):
                if ": 100 -> 99 at" not in out:
                    raise SystemExit(f"the watch did not stop where balance changed:\n{out}")
                cli("continue", env=env)
        finally:
            subprocess.run(["tui-debugger", "stop"], capture_output=True, env=env, timeout=120)
    with open(result) as got:
        return float(got.read())


def pythons() -> list[str]:
    found = []
    for version in ("3.11", "3.12", "3.13"):
        hits = sorted(glob.glob(f"/root/.pyenv/versions/{version}.*/bin/python3")
                      + glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python3")))
        if hits:
            found.append(hits[-1])
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--python", action="append")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        program = os.path.join(tmp, "spin.py")
        with open(program, "w") as out:
            out.write(PROGRAM)
        result = os.path.join(tmp, "elapsed")
        env = dict(os.environ, TUI_DEBUGGER_RUNTIME_DIR=os.path.join(tmp, "rt"))
        for python in args.python or pythons():
            times: dict[str, list[float]] = {"alone": [], "debugpy": [], "watched": [],
                                             "item": []}
            for _ in range(args.rounds):
                for how in times:
                    times[how].append(one(python, program, result, how, env))
            version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"],
                                     capture_output=True, text=True).stdout.strip()
            med = {how: statistics.median(t) for how, t in times.items()}
            rows.append({"python": version, **{f"{h}_s": round(v, 4) for h, v in med.items()},
                         "watched_vs_alone": round(med["watched"] / med["alone"], 2),
                         "watched_vs_debugpy": round(med["watched"] / med["debugpy"], 2),
                         "item_vs_alone": round(med["item"] / med["alone"], 2),
                         "rounds": args.rounds})
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'python':8} {'alone s':>9} {'debugpy s':>10} {'watched s':>10} "
          f"{'w/alone':>8} {'w/debugpy':>10} {'item s':>8} {'item/alone':>11}")
    for r in rows:
        print(f"{r['python']:8} {r['alone_s']:9.3f} {r['debugpy_s']:10.3f} {r['watched_s']:10.3f} "
              f"{r['watched_vs_alone']:8.2f} {r['watched_vs_debugpy']:10.2f} {r['item_s']:8.3f} "
              f"{r['item_vs_alone']:11.2f}")


if __name__ == "__main__":
    sys.exit(main())
