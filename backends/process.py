"""Child processes: argument lists only, each in its own process group, ended
with its session.

Every backend starts its debugger (adapter, lldb, node) through `spawn`, and
ends it with `ChildProcess.kill_group`. Debuggees started by an adapter may sit
in a process group of their own; backends record their pid and end it with
`kill_tree` as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Sequence

from . import early_adapter, spare_program
from .errors import DependencyMissing
# Their home is light: the CLI client and host.py read them.
from .procinfo import pid_alive, start_time  # noqa: F401


@dataclass
class ChildProcess:
    proc: asyncio.subprocess.Process
    argv: list[str]

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    async def kill_group(self, grace: float = 1.0) -> None:
        """SIGTERM the whole group, then SIGKILL whatever is left after `grace`."""
        if self.proc.returncode is None:
            signal_group(self.proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), grace)
            except (asyncio.TimeoutError, ProcessLookupError):
                pass
        # The group can outlive its leader (a debuggee the adapter forked).
        signal_group(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), grace)
        for stream in (self.proc.stdin,):
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()


def _load_libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _load_libc()
_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> Any:
    def preexec() -> None:
        """Runs in the child between fork and exec."""
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent already went: do not start at all
            os._exit(1)
    return preexec


def die_with_this_process() -> Any:
    """A preexec_fn for a child that must not outlive this process (Linux:
    PR_SET_PDEATHSIG, SIGKILL), or None where that cannot be had."""
    return _die_with(os.getpid()) if _LIBC is not None else None


async def spawn(
    argv: Sequence[str],
    *,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    stdin: int | None = subprocess.PIPE,
    stdout: int | None = subprocess.PIPE,
    stderr: int | None = subprocess.PIPE,
    what: str = "process",
    install_hint: str = "",
    spare_prefix: int | None = None,
) -> ChildProcess:
    """Start `argv` in a new session (so a process group of its own), to die
    with the process that started it (Linux: PR_SET_PDEATHSIG), so a host that
    is killed (kill -9, a closed terminal) leaves no debugger, and with it no
    debuggee, running.

    `spare_prefix`: argv is a Python program under debugpy whose first words
    (interpreter, options, debugpy's directory) are that many; a spare
    process already started for them is taken (spare_program)."""
    argv = [str(a) for a in argv]
    if spare_prefix is not None and (stdout, stderr) == (subprocess.PIPE,) * 2:
        spare_program.remember(argv[:spare_prefix], cwd, env)
        if spare_program.pending():
            spare = spare_program.take(argv, spare_prefix, cwd, env, stdin,
                                       also_volatile=frozenset({HOST_TAG}))
            if spare is not None:
                _spawned.add(spare.pid)
                adopted = await _adopt(spare)
                if stdin != subprocess.PIPE:
                    adopted.stdin.close()  # its input is /dev/null, which it opened itself
                return ChildProcess(adopted, argv)  # type: ignore[arg-type]
    if early_adapter.pending():
        early = early_adapter.take(argv, cwd, env)
        if early is not None and (stdin, stdout, stderr) == (subprocess.PIPE,) * 3:
            _spawned.add(early.pid)
            return ChildProcess(await _adopt(early), argv)  # type: ignore[arg-type]
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=_die_with(os.getpid()) if _LIBC is not None else None,
            limit=2**24,
        )
    except FileNotFoundError as exc:
        raise DependencyMissing(
            f"Cannot start the {what}: {argv[0]} was not found. {install_hint}".strip(),
            argv=argv,
        ) from exc
    except PermissionError as exc:
        raise DependencyMissing(
            f"Cannot start the {what}: {argv[0]} is not executable. {install_hint}".strip(),
            argv=argv,
        ) from exc
    _spawned.add(proc.pid)
    return ChildProcess(proc, argv)


class _Adopted:
    """A process started with subprocess.Popen before the event loop ran
    (early_adapter), seen as asyncio.subprocess.Process is: stream pipes, and
    an exit waited for through a pidfd (no thread, no poll)."""

    def __init__(self, popen: subprocess.Popen[bytes], stdin: asyncio.StreamWriter,
                 stdout: asyncio.StreamReader, stderr: asyncio.StreamReader) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self._exited: asyncio.Future[int] | None = None

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        code = self._popen.poll()
        if code is not None:
            return code
        loop = asyncio.get_running_loop()
        try:
            fd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            return await asyncio.to_thread(self._popen.wait)
        exited: asyncio.Future[None] = loop.create_future()
        loop.add_reader(fd, lambda: exited.done() or exited.set_result(None))
        try:
            await exited
        finally:
            loop.remove_reader(fd)
            os.close(fd)
        return self._popen.wait()

    def send_signal(self, sig: int) -> None:
        self._popen.send_signal(sig)

    def terminate(self) -> None:
        self._popen.terminate()

    def kill(self) -> None:
        self._popen.kill()


async def _adopt(popen: subprocess.Popen[bytes]) -> _Adopted:
    loop = asyncio.get_running_loop()
    readers = []
    for pipe in (popen.stdout, popen.stderr):
        reader = asyncio.StreamReader(limit=2**24, loop=loop)
        await loop.connect_read_pipe(lambda r=reader: asyncio.StreamReaderProtocol(r), pipe)
        readers.append(reader)
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(loop=loop), popen.stdin)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return _Adopted(popen, writer, readers[0], readers[1])


#: pids started by `spawn`: asyncio's child watcher waits for those, so the
#: orphan reaper leaves them alone.
_spawned: set[int] = set()


def signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(pid, sig)


def descendants(pid: int) -> list[int]:
    """All descendant pids of `pid` (Linux /proc; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().split(")")[-1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out: list[int] = []
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


async def kill_tree(pid: int, grace: float = 0.5) -> None:
    """End `pid` and everything below it, whatever process group they are in."""
    pids = [pid, *descendants(pid)]
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGTERM)
    deadline = asyncio.get_running_loop().time() + grace
    while any(pid_alive(p) for p in pids) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)
    for p in pids:
        if pid_alive(p):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGKILL)


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (Linux). Adapters start
    debuggees in process groups of their own; if an adapter dies, its debuggee is
    re-parented here instead of to init, so the host can still end it."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_CHILD_SUBREAPER = 36
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


async def end_descendants(grace: float = 0.5) -> None:
    """End every process below this one (a host's last act on exit)."""
    for pid in descendants(os.getpid()):
        await kill_tree(pid, grace)


def _proc_table() -> dict[int, tuple[str, int, int]]:
    """pid -> (state, ppid, start time) of every process, in one pass over /proc."""
    table: dict[int, tuple[str, int, int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            table[int(entry)] = (fields[0], int(fields[1]), int(fields[19]))
        except (OSError, IndexError, ValueError):
            continue
    return table


def _zombie_children(pid: int, table: dict[int, tuple[str, int, int]] | None = None) -> set[int]:
    table = _proc_table() if table is None else table
    return {p for p, (state, ppid, _) in table.items() if state == "Z" and ppid == pid}


def reap_orphans(seen_before: set[int],
                 table: dict[int, tuple[str, int, int]] | None = None) -> set[int]:
    """Reap the zombies among this process's children that nobody else waits
    for: debuggees adopted as a subreaper once their adapter let go of them.
    Only zombies already seen by the previous call (`seen_before`) are reaped,
    so a child whose own parent code is about to wait for it (subprocess.run)
    keeps its exit status. Returns the zombies to pass to the next call."""
    zombies = _zombie_children(os.getpid(), table) - _spawned
    for pid in zombies & seen_before:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
    return zombies - seen_before


async def reap_orphans_forever(interval: float = 1.0) -> None:
    """A long-lived host's (daemon, MCP server) task: no zombie outlives two
    intervals. Cancel it when the host ends."""
    seen: set[int] = set()
    while True:
        await asyncio.sleep(interval)
        # Read in a thread: one pass over /proc reads every process's stat file
        # (11 ms for 120 processes here idle, tens under load), which held the
        # host's loop, and a step's stop arriving meanwhile waited for it.
        table = await asyncio.to_thread(_proc_table)
        seen = reap_orphans(seen, table)
        _report_descendants(table)


# A process of its own that outlives this one, to end what it leaves behind. Its
# children die with it (PR_SET_PDEATHSIG), but a program under a debugger is
# their child: when lldb-server is killed at once, the kernel detaches the
# program and it runs on, re-parented to init. And a program's grandchild that
# double-forks, calls setsid and clears its environment escapes both the process
# group and any tag. So the watchdog knows them two ways:
# * every process started below this one carries HOST_TAG in its environment;
# * this host (a child subreaper, so orphans below it become its children) sends
#   the watchdog every descendant it sees, once a second ("PID START" lines), and
#   the watchdog holds a pidfd on each: a record that a reused pid cannot fool.
# When the watchdog's stdin reaches end of file without "done" (this process
# died), it kills every recorded process, whatever it became since (setsid, a
# new name, an empty environment), the processes below them, and every process
# of ours that carries the tag.
HOST_TAG = "TUI_DEBUGGER_HOST_TAG"
_WATCHDOG = r"""
import os, select, signal, sys, time
needle = ("%s=%s" % (sys.argv[1], sys.argv[2])).encode() + b"\0"
held = {}  # pid -> pidfd

def started(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None

def hold(pid, start):
    if pid in held or len(held) >= 4096:
        return
    try:
        fd = os.pidfd_open(pid)
    except (OSError, AttributeError):
        return
    if started(pid) != start:  # the pid was reused before we held it
        os.close(fd)
        return
    held[pid] = fd

def prune():
    if not held:
        return
    poller = select.poll()
    for fd in held.values():
        poller.register(fd, select.POLLIN)
    gone = {fd for fd, _ in poller.poll(0)}
    for pid, fd in list(held.items()):
        if fd in gone:
            os.close(fd)
            del held[pid]

def kill_held():
    for pid, fd in list(held.items()):
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except OSError:
            pass

def children_of(parents):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) in parents:
                    found.append((int(entry), int(fields[19])))
            except (OSError, IndexError, ValueError):
                pass
    return found

done = False
for line in sys.stdin:
    if line.strip() == "done":
        done = True
        break
    try:
        pid, start = map(int, line.split())
    except ValueError:
        continue
    prune()
    hold(pid, start)
# More than one pass: while the host's debugger dies, a program it started can
# still be forking or changing hands, and one look at /proc may miss it.
for attempt in range(5) if not done else ():
    time.sleep(0.2 * attempt)
    for pid, start in children_of(set(held)):  # forked since the last report
        hold(pid, start)
    kill_held()
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as f:
                tagged = needle in f.read() + b"\0"
        except OSError:
            continue
        if tagged:
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
"""

_watchdog: subprocess.Popen[bytes] | None = None


def start_orphan_watchdog() -> None:
    """For a long-lived host (daemon, MCP server): see _WATCHDOG."""
    global _watchdog
    if _watchdog is not None or not sys.platform.startswith("linux"):
        return
    import secrets

    tag = f"{os.getpid()}-{secrets.token_hex(8)}"
    os.environ[HOST_TAG] = tag  # before any child: they all inherit it
    env = {k: v for k, v in os.environ.items() if k != HOST_TAG}
    with contextlib.suppress(OSError):
        _watchdog = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCHDOG, HOST_TAG, tag],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, env=env)


_reported: dict[int, int] = {}  # pid -> start time, told to the watchdog


def _report_descendants(table: dict[int, tuple[str, int, int]]) -> None:
    """Tell the watchdog every live process below this one it does not know yet."""
    if _watchdog is None or _watchdog.stdin is None:
        return
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    below, stack = [], [os.getpid()]
    while stack:
        for child in children.get(stack.pop(), []):
            below.append(child)
            stack.append(child)
    lines = []
    for pid in below:
        state, _, start = table[pid]
        if state not in ("Z", "X") and pid != _watchdog.pid and _reported.get(pid) != start:
            _reported[pid] = start
            lines.append(f"{pid} {start}\n")
    for pid in [p for p in _reported if p not in table]:
        del _reported[pid]
    if lines:
        with contextlib.suppress(OSError, ValueError):
            _watchdog.stdin.write("".join(lines).encode())
            _watchdog.stdin.flush()


def stop_orphan_watchdog() -> None:
    """This host ended its children itself: the watchdog leaves without a kill."""
    global _watchdog
    if _watchdog is None or _watchdog.stdin is None:
        return
    with contextlib.suppress(OSError, ValueError):
        _watchdog.stdin.write(b"done\n")
        _watchdog.stdin.close()
    with contextlib.suppress(Exception):
        _watchdog.wait(timeout=2)
    _watchdog = None
