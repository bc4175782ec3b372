"""Start-up of the real executable: `tui-debugger run --stop-on-entry PROGRAM`
in a pseudo-terminal, from exec until the screen shows the entry stop. The
session's host (a daemon) starts first, then the TUI imports Textual and
paints; the two overlap.

    python benchmarks/tui_startup.py [--runs N] [--program FILE] [--size 160x45] [--against DIR]

Beside the wall time, the TUI process's own CPU time (user + system, all its
threads) when the stop is on screen: on two cores shared with the host, the
adapter and the program, the TUI's CPU is most of the wait. `--against DIR`
alternates each run with the same run of another checkout (put first on
PYTHONPATH), so both meet the same minutes of the machine.

The pseudo-terminal has a size, as a terminal has (160x45, the issue's tmux
window, unless --size says otherwise): one without (0x0) made Textual lay the
screen out at 80x25, then at 80x24, a layout and paint a real terminal never
costs.

Without --program, a two-line program in a temporary directory (its Python:
the active venv's, else python3 on PATH, as for any program there).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time


def cpu_ms(pid: int) -> float | None:
    """The process's user + system time so far (Linux), in milliseconds."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def once(env: dict[str, str], program: str, cwd: str, size: tuple[int, int],
         pudb: bool = False) -> tuple[float | None, float | None]:
    """(seconds to the entry stop on screen, the TUI's CPU ms by then).
    `pudb`: the same for `python -m pudb PROGRAM` (its first screen is its
    stop at the program's first line)."""
    master, slave = pty.openpty()
    columns, rows = size
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    started = time.perf_counter()
    argv = ([sys.executable, "-m", "pudb", program] if pudb else
            [sys.executable, "-m", "tui_debugger", "run", "--stop-on-entry", program])
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                            start_new_session=True)
    os.close(slave)
    screen, took, cpu = b"", None, None
    while time.perf_counter() - started < 60:
        if select.select([master], [], [], 0.5)[0]:
            try:
                screen += os.read(master, 65536)
            except OSError:
                break
            if (b">> <module>" in re.sub(rb"\x1b\[[0-9;?$]*[A-Za-z]", b"", screen) if pudb
                    else b"STOPPED" in screen and b"entry" in screen):
                took = time.perf_counter() - started
                cpu = cpu_ms(proc.pid)
                break
    if pudb:
        os.killpg(proc.pid, signal.SIGKILL)  # one process, the program in it
    else:
        proc.send_signal(signal.SIGTERM)  # quits as `q` does: the session ends with it
    while proc.poll() is None:
        if select.select([master], [], [], 0.2)[0]:
            try:
                os.read(master, 65536)
            except OSError:
                break
    proc.wait(timeout=30)
    os.close(master)
    return took, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--size", default="160x45", help="the terminal's COLUMNSxROWS")
    parser.add_argument("--program", help="the program to run (examples/inventory.py: the "
                        "bundled example)")
    parser.add_argument("--against", metavar="DIR", help="another checkout, its runs alternated "
                        "with this one's")
    parser.add_argument("--warm", action="store_true", help="alternate cold runs "
                        "(TUI_DEBUGGER_WARM=0) with runs that take the warm host the last one "
                        "left (one untimed run first makes it)")
    parser.add_argument("--pudb", action="store_true", help="alternate with `python -m pudb "
                        "PROGRAM` to its first screen (pudb installed in this Python)")
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "TERM": "xterm-256color",
               "TUI_DEBUGGER_RUNTIME_DIR": os.path.join(tmp, "run"),
               "TUI_DEBUGGER_STATE_DIR": os.path.join(tmp, "state"),
               "TUI_DEBUGGER_CONFIG": os.path.join(tmp, "none.toml")}
        program = os.path.join(tmp, "hello.py")
        with open(program, "w") as out:
            out.write("x = 1\nprint(x)\n")
        if ns.program:
            program = os.path.abspath(ns.program)
        columns, rows = (int(n) for n in ns.size.lower().split("x"))
        variants = {"this": {**env, "TUI_DEBUGGER_WARM": "0"} if ns.warm else env}
        if ns.against:
            variants = {"against": {**env, "PYTHONPATH": os.path.abspath(ns.against)}, **variants}
        if ns.warm:
            variants = {"cold": variants.pop("this"), **variants,
                        "warm": {**env, "TUI_DEBUGGER_WARM": "1"}}
            once(variants["warm"], program, os.path.dirname(program), (columns, rows))
        if ns.pudb:
            config = os.path.join(tmp, "xdg")
            os.makedirs(os.path.join(config, "pudb"))
            with open(os.path.join(config, "pudb", "pudb.cfg"), "w") as cfg:
                cfg.write("[pudb]\nseen_welcome = e999\nprompt_on_quit = False\n")
            variants["pudb"] = {**env, "XDG_CONFIG_HOME": config}
        runs: dict[str, list[tuple[float | None, float | None]]] = {k: [] for k in variants}
        for _ in range(ns.runs):
            for name, variant_env in variants.items():
                runs[name].append(once(variant_env, program, os.path.dirname(program),
                                       (columns, rows), pudb=name == "pudb"))
        if ns.warm:
            subprocess.run([sys.executable, "-m", "tui_debugger", "warm", "stop"],
                           env=variants["warm"], capture_output=True, timeout=30)
    medians = {}
    for name, results in runs.items():
        shown = [t for t, _ in results if t is not None]
        cpus = [c for t, c in results if t is not None and c is not None]
        label = f"{name}: " if len(runs) > 1 else ""
        if shown:
            medians[name] = statistics.median(shown)
        print(f"{label}run -> entry stop on screen, {ns.runs} runs, {ns.size} (Python "
              f"{sys.version.split()[0]}, {os.cpu_count()} cores): median "
              f"{statistics.median(shown) * 1000:.0f} ms, min {min(shown) * 1000:.0f} ms, "
              f"max {max(shown) * 1000:.0f} ms"
              + (f"; the TUI's CPU by then: median {statistics.median(cpus):.0f} ms" if cpus else "")
              + (f", {len(results) - len(shown)} never shown" if len(shown) < len(results) else ""))
    if "pudb" in medians:
        print("ratios to pudb (medians of the same run): " + ", ".join(
            f"{name} {value / medians['pudb']:.2f}x" for name, value in medians.items()
            if name != "pudb"))


if __name__ == "__main__":
    main()
