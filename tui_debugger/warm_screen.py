"""The user's warm screen: a process with the TUI already imported, waiting to
become the next `tui-debugger run`'s TUI, so that a person's second `run`
does not import Textual, the panes and the command registry again (about
half a second of CPU, the largest share of the wait for the first stop;
docs/performance.md).

A TUI started by `run` in a terminal starts one (`python -P -m
tui_debugger.cli.screen`) once its first stop is on screen, when none is
waiting, for the person's next `run`: in the environment and directory
`run` was started with, in a session of its own. It waits as a warm host does (warm.wait_for_taker: its own socket, lock and description
in the 0700 runtime directory, the same fit checks: this user only, by
SO_PEERCRED on both sides; the same Python, install, project and whole
environment but for the shell's per-command variables; the same idle time,
`warm stop`, an end on a change of the installed files), its idle time
counted from the end of the TUI that started it.

`run` in a terminal asks it first (take_and_run). Taken, it receives the
terminal itself: the starter's standard input, output and error as file
descriptors over the socket (SCM_RIGHTS, as kitty's prewarmed process and
emacsclient do with a terminal), adopts the starter's environment and
directory, and runs `run`'s command line as the starter would have. The
starter stays in the terminal's foreground, holding nothing but the
connection: the signals the terminal sends it (a resize, a hang-up, an
interrupt while a shell has the terminal) it passes on, and it exits with the
TUI's exit code. The screen has no controlling terminal of its own (it runs
in a session of its own), so reading and writing the terminal it was given
is never stopped by job control. Anything that does not fit (no terminal,
another environment, no warm screen) starts the TUI here, as before.

Light on purpose (the door imports it): os, socket, json, signal.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from typing import Any

from . import warm

PLACE = warm.Place("screen.sock", "screen.json", "screen.lock", "tui-debugger-warm-screen")

#: the messages on the connection once it is taken, one JSON object a line:
#: starter → screen {"signal": N}; screen → starter {"exit": RC}
_FORWARDED = ("SIGWINCH", "SIGHUP", "SIGTERM", "SIGINT", "SIGQUIT")
#: what the screen does with a signal the starter passed on: a resize, an end,
#: or (the keyboard's, reaching it only while a shell has the terminal in its
#: own mode) to its process group, the shell with it, as the terminal would
_TO_GROUP = ("SIGINT", "SIGQUIT")


def usable(argv: list[str], env: Any = None) -> bool:
    """`run` in a terminal: its three standard streams are one, and warm
    processes are not turned off."""
    if not argv or argv[0] != "run" or {"-h", "--help"} & set(argv):
        return False
    if not warm.enabled(env):
        return False
    try:
        return all(os.isatty(fd) for fd in (0, 1, 2))
    except OSError:
        return False


#: the environment and directory of this `run`, as its door found them
#: (remember_starter), before a setting is put in the environment: what a
#: warm screen started for the next `run` must have to fit it
_starter: dict[str, Any] | None = None


def remember_starter() -> None:
    global _starter
    _starter = {"env": dict(os.environ), "cwd": os.getcwd()}


def start_one() -> None:
    """A warm screen for the person's next `run`, unless one waits already or
    this TUI was not started by `run` in a terminal (remember_starter). Its
    idle time starts when this process ends."""
    import subprocess
    import time

    from . import paths

    global _starter
    starter, _starter = _starter, None
    if starter is None or not warm.enabled(starter["env"]) or status() is not None:
        return
    try:
        base = paths.runtime_dir()
        log = base / f"daemon-starting-{os.getpid()}-{int(time.time() * 1000)}.log"
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                [sys.executable, "-P", "-m", "tui_debugger.cli.screen", "--after", str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd=starter["cwd"],
                env=starter["env"], start_new_session=True)
        # Named as a host's log, so the clean-up keeps it while it lives.
        with contextlib.suppress(OSError):
            os.replace(log, base / f"daemon-{proc.pid}.log")
    except Exception:  # a nicety: the next `run` starts its TUI itself
        pass


def take_and_run(argv: list[str]) -> int | None:
    """Hand `argv` (a `run` line) and this terminal to the warm screen and
    wait for its end: the TUI's exit code; None when no warm screen fits (the
    caller runs the TUI itself)."""
    import signal

    if not (status() or {}).get("ready"):
        return None  # none, or one still importing the TUI: this one starts its own
    request = warm.fit_request(os.getcwd())
    request["argv"] = argv
    taken = warm.ask_to_take(request, place=PLACE)
    if taken is None:
        return None
    sock, answer = taken
    try:
        socket.send_fds(sock, [b"t"], [0, 1, 2])
    except OSError:
        sock.close()
        return None
    sock.settimeout(None)

    def forward(signum: int, _frame: Any) -> None:
        with contextlib.suppress(OSError):
            sock.sendall(json.dumps({"signal": signal.Signals(signum).name}).encode() + b"\n")

    for name in _FORWARDED:
        signal.signal(getattr(signal, name), forward)
    reader = sock.makefile("rb")
    try:
        for line in reader:
            with contextlib.suppress(ValueError):
                message = json.loads(line)
                if isinstance(message, dict) and isinstance(message.get("exit"), int):
                    return message["exit"]
    except OSError:
        pass
    finally:
        for name in _FORWARDED:
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        with contextlib.suppress(OSError):
            sock.close()
    log = (answer.get("log") or "its log in the runtime directory")
    print(f"error: the TUI ended without an exit code (see {log}); run it again, or with "
          "TUI_DEBUGGER_WARM=0 to start it here", file=sys.stderr)
    return 1


def status() -> dict[str, Any] | None:
    """The warm screen's description, if its process is alive."""
    return warm.status(PLACE)


def stop(timeout: float = 10.0) -> int | None:
    """End the warm screen, ready or still starting: its pid once gone, None
    when there was none."""
    import signal

    info = status()
    if info is not None and not info.get("ready"):
        pid = info["pid"]  # its description, in this user's 0700 directory
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"tui_debugger.cli.screen" not in f.read():
                    return None  # the pid is another process's now
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
        warm.wait_gone(pid, timeout)
        return pid
    return warm.stop(timeout, place=PLACE)


# ============================================================================ the screen's side


def receive_terminal(conn: socket.socket, timeout: float = warm.ANSWER_TIMEOUT_S) -> list[int]:
    """The starter's three standard streams, sent after the answer; [] when
    they do not come."""
    conn.settimeout(timeout)
    try:
        _, fds, _, _ = socket.recv_fds(conn, 1, 3)
    except OSError:
        return []
    finally:
        with contextlib.suppress(OSError):
            conn.settimeout(None)
    if len(fds) != 3:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        return []
    return list(fds)


def become_the_starter(request: dict[str, Any], fds: list[int]) -> None:
    """Take the starter's place: its environment, directory and terminal
    (fds 0, 1, 2), with the standard streams opened anew on them as a Python
    started in that terminal opens them."""
    os.environ.clear()
    os.environ.update({k: v for k, v in request["env"].items() if isinstance(v, str)})
    os.chdir(request["cwd"])
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    encoding = getattr(sys.__stdout__, "encoding", None) or "utf-8"  # this environment's
    sys.stdin = sys.__stdin__ = open(0, encoding=encoding, closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = open(1, "w", buffering=1, encoding=encoding,  # noqa: SIM115
                                       closefd=False)
    sys.stderr = sys.__stderr__ = open(2, "w", buffering=1, encoding=encoding,  # noqa: SIM115
                                       errors="backslashreplace", closefd=False)


_ending: list[bool] = []


def pass_on_signals(conn: socket.socket) -> None:
    """Each signal the starter passes on, raised here (in a thread of its
    own); the starter gone without a word is the terminal hung up."""
    import signal
    import threading

    def serve() -> None:
        reader = conn.makefile("rb")
        try:
            for line in reader:
                with contextlib.suppress(ValueError, AttributeError, OSError):
                    name = json.loads(line).get("signal")
                    if name not in _FORWARDED:
                        continue
                    signum = getattr(signal, name)
                    if name in _TO_GROUP:
                        os.killpg(os.getpgrp(), signum)
                    else:
                        os.kill(os.getpid(), signum)
        except OSError:
            pass
        if not _ending:
            os.kill(os.getpid(), signal.SIGHUP)

    threading.Thread(target=serve, name="warm-screen-signals", daemon=True).start()


def tell_exit(conn: socket.socket, rc: int) -> None:
    """The TUI's exit code to the starter, which exits with it."""
    _ending.append(True)
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps({"exit": int(rc)}).encode() + b"\n")
    with contextlib.suppress(OSError):
        conn.close()
