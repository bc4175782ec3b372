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

With warm processes on (`--warm`'s warm runs, or no --warm), each TUI lives
on after its stop until it has started the warm screen for the next `run`
(tui_debugger/warm_screen.py), as a person's TUI does; a `run` that the warm
screen takes is a starter that only waits, so its CPU is the starter's, not
the TUI's.

Without --program, a two-line program in a temporary directory. Its Python,
and pudb's: the venv of the Python that runs this benchmark, activated as
the README's set-up leaves a shell (`activated`).
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
        if env.get("TUI_DEBUGGER_WARM") != "0":
            # As a person's TUI does, it lives on after its first stop: long enough
            # to start the warm screen for the next `run` (after the stop is shown).
            screen = os.path.join(env["TUI_DEBUGGER_RUNTIME_DIR"], "screen.json")
            deadline = time.perf_counter() + 15
            while not os.path.exists(screen) and time.perf_counter() < deadline:
                if select.select([master], [], [], 0.1)[0]:
                    try:
                        os.read(master, 65536)
                    except OSError:
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
    return took, cpu


def busy_share() -> tuple[int, int]:
    """(busy, all) jiffies of every core since boot (Linux /proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)


def settled(timeout: float = 5.0, window: float = 0.25, share: float = 0.2) -> None:
    """Wait until the cores have been busier than `share` for no `window` of
    the last: what the last run left working (a TUI starting the warm screen
    for the next `run`, its rehearsal, a warm host's spare program) is done,
    and the next run, cold or not, meets the machine as a person's command
    would. A machine that stays busy (another suite) waits `timeout` only."""
    if not os.path.exists("/proc/stat"):
        return
    deadline = time.monotonic() + timeout
    before = busy_share()
    while time.monotonic() < deadline:
        time.sleep(window)
        now = busy_share()
        busy, total = now[0] - before[0], now[1] - before[1]
        before = now
        if total and busy / total < share:
            return


def screen_ready(runtime_dir: str, timeout: float = 15.0) -> None:
    """Wait until the warm screen in `runtime_dir` says it is ready, if one is starting."""
    import json

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(os.path.join(runtime_dir, "screen.json")) as f:
                if json.load(f).get("ready"):
                    return
        except FileNotFoundError:
            return
        except (OSError, ValueError):
            pass
        time.sleep(0.05)


def end_spares(runtime_dir: str) -> None:
    """End the spare program process of the warm host in `runtime_dir`: the
    next launch then starts its program as a cold one does."""
    import json

    try:
        with open(os.path.join(runtime_dir, "warm.json")) as f:
            host = int(json.load(f)["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                spare = b"spare_debuggee.py" in f.read()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == host and spare:
            os.kill(int(entry), signal.SIGKILL)


def activated() -> dict[str, str]:
    """The environment of a shell where this Python's venv is activated, as the
    README's set-up leaves it: the program then runs under the venv's Python, as
    pudb's does under the Python that runs it. Without it, `python3` on PATH
    runs the program: on a machine with pyenv, its shim, ~80 ms of bash per
    start that pudb never pays."""
    if sys.prefix == sys.base_prefix:
        return {}
    return {"VIRTUAL_ENV": sys.prefix,
            "PATH": os.path.join(sys.prefix, "bin") + os.pathsep + os.environ.get("PATH", "")}


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
    parser.add_argument("--no-spare", action="store_true", help="with --warm: also warm runs "
                        "whose warm host's spare program process is ended first, so the launch "
                        "starts the program cold (backends/spare_program.py)")
    parser.add_argument("--pudb", action="store_true", help="alternate with `python -m pudb "
                        "PROGRAM` to its first screen (pudb installed in this Python)")
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, **activated(), "TERM": "xterm-256color",
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
            # As "this" runs: cold beside --warm (a warm host or screen would
            # take the other checkout's run, and compare nothing).
            variants = {"against": {**variants["this"], "PYTHONPATH": os.path.abspath(ns.against)},
                        **variants}
        if ns.warm:
            variants = {"cold": variants.pop("this"), **variants,
                        "warm": {**env, "TUI_DEBUGGER_WARM": "1"}}
            if ns.no_spare:
                variants["warm, no spare"] = variants["warm"]
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
                # Before every run, the warm-up the last one left is over:
                # measured beside a rehearsing warm screen, cold runs were
                # 0.2-0.3 s slower than a person's cold `run` ever is.
                settled()
                if name.startswith("warm"):
                    # As a person's next `run` comes seconds later: the warm
                    # screen the last TUI started has imported and rehearsed.
                    screen_ready(variant_env["TUI_DEBUGGER_RUNTIME_DIR"])
                if name == "warm, no spare":
                    end_spares(variant_env["TUI_DEBUGGER_RUNTIME_DIR"])
                runs[name].append(once(variant_env, program, os.path.dirname(program),
                                       (columns, rows), pudb=name == "pudb"))
        if ns.warm or "this" in variants:
            subprocess.run([sys.executable, "-m", "tui_debugger", "warm", "stop"],
                           env=variants.get("warm", env), capture_output=True, timeout=30)
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
