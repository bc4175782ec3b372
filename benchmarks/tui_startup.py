"""Start-up of the real executable: `tui-debugger run --stop-on-entry PROGRAM`
in a pseudo-terminal, from exec until the screen shows the entry stop. The
session's host (a daemon) starts first, then the TUI imports Textual and
paints; the two overlap.

    python benchmarks/tui_startup.py [--runs N] [--program FILE] [--size 160x45]

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
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time


def once(env: dict[str, str], program: str, cwd: str, size: tuple[int, int]) -> float | None:
    master, slave = pty.openpty()
    columns, rows = size
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "tui_debugger", "run", "--stop-on-entry", program],
                            stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                            start_new_session=True)
    os.close(slave)
    screen, took = b"", None
    while time.perf_counter() - started < 60:
        if select.select([master], [], [], 0.5)[0]:
            try:
                screen += os.read(master, 65536)
            except OSError:
                break
            if b"STOPPED" in screen and b"entry" in screen:
                took = time.perf_counter() - started
                break
    proc.send_signal(signal.SIGTERM)  # quits as `q` does: the session ends with it
    while proc.poll() is None:
        if select.select([master], [], [], 0.2)[0]:
            try:
                os.read(master, 65536)
            except OSError:
                break
    proc.wait(timeout=30)
    os.close(master)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--size", default="160x45", help="the terminal's COLUMNSxROWS")
    parser.add_argument("--program", help="the program to run (examples/inventory.py: the "
                        "bundled example)")
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
        times = [once(env, program, os.path.dirname(program), (columns, rows))
                 for _ in range(ns.runs)]
    shown = [t for t in times if t is not None]
    print(f"run -> entry stop on screen, {ns.runs} runs, {ns.size} (Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cores): median {statistics.median(shown) * 1000:.0f} ms, "
          f"min {min(shown) * 1000:.0f} ms, max {max(shown) * 1000:.0f} ms"
          + (f", {len(times) - len(shown)} never shown" if len(shown) < len(times) else ""))


if __name__ == "__main__":
    main()
