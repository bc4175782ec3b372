"""Which Ray workers wait for a debugger, read from the dashboard's State API.

`GET /api/v0/workers?detail=1` lists each worker with `worker_id`, `pid`,
`ip`, `node_id`, `is_alive`, and in detail `debugger_port` and
`num_paused_threads` (> 0 while a thread waits in `ray.util.debugpy`);
`GET /api/v0/tasks?detail=1` lists the running tasks with their `worker_id`,
`name`, `func_or_class_name`, `actor_id` and `is_debugger_paused`. Both answer
`{"result": true, "data": {"result": {"result": [rows…], …}}}`.

Where a paused worker stopped (file:line, and whether it is a `breakpoint()`
or an exception frozen post mortem) is not in the State API; it is read from
the worker's own stack with `py-spy dump` when the worker runs on this
machine and py-spy is at hand (Ray's `ray[default]` ships it), and is
otherwise known once attached.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.parse
from typing import Any

from ..errors import CommandFailed, DependencyMissing, InvalidInput
from ..models import Model

DEFAULT_DASHBOARD = "http://127.0.0.1:8265"
#: Ray's default dashboard port, for an address given without one.
DASHBOARD_PORT = 8265
HTTP_TIMEOUT = 10.0
LIMIT = 10_000


class PausedTask(Model):
    """One worker thread that waits for a debugger, and what it runs."""

    task_id: str | None = None
    name: str  # the task's or actor method's name
    function: str | None = None
    actor_id: str | None = None
    node_id: str | None = None
    worker_id: str
    pid: int
    host: str  # where its debugpy listens (the node's address)
    port: int
    #: "breakpoint" or "post-mortem", when the worker's stack was read
    kind: str | None = None
    #: file:line of the user's frame, when the worker's stack was read
    where: str | None = None
    exception: str | None = None

    def label(self) -> str:
        place = f" at {self.where}" if self.where else ""
        kind = f" ({self.kind})" if self.kind else ""
        return f"{self.name}{kind}{place}, pid {self.pid} on {self.host}:{self.port}"


def dashboard_url(address: str | None = None) -> str:
    """The dashboard to ask: ADDRESS, else $RAY_ADDRESS when it is an HTTP
    address, else the local cluster's (127.0.0.1:8265). A bare `host` or
    `host:port` is taken as the dashboard's; `ray://` and GCS addresses name
    other Ray services, so they are refused with what to give instead."""
    given = address or os.environ.get("RAY_ADDRESS") or ""
    if not given or given == "auto" or (not address and not given.startswith("http")):
        return DEFAULT_DASHBOARD
    if given.startswith("ray://"):
        raise InvalidInput(f"{given} is a Ray client address; give the cluster's dashboard "
                           "instead, e.g. http://HEAD:8265 (as `ray status` or the head's log "
                           "shows it).")
    if "://" not in given:
        given = "http://" + given
    parts = urllib.parse.urlsplit(given)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInput(f"Not a dashboard address: {given!r}. Give http://HOST:PORT "
                           "(Ray's default port is 8265).")
    port = parts.port or DASHBOARD_PORT
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}:{port}"


def _get(dashboard: str, path: str) -> list[dict[str, Any]]:
    # Imported here: urllib.request brings http.client and email (~16 ms), which
    # every process importing the commands (the TUI, each host) paid for a
    # command that asks a Ray dashboard.
    import urllib.error
    import urllib.request

    url = f"{dashboard}{path}"
    try:
        with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT) as response:  # noqa: S310 - http(s) only
            body = json.loads(response.read().decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        raise CommandFailed(f"Ray's dashboard at {dashboard} answered {exc.code} to {path}. "
                            "Is it Ray 2.39 or newer, started with the dashboard "
                            "(`ray[default]`)?") from None
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DependencyMissing(f"No Ray dashboard at {dashboard} ({reason}). Start a cluster "
                                "(`ray start --head`), or give its dashboard address: "
                                "`tui-debugger ray http://HEAD:8265` (or set RAY_ADDRESS).") from None
    except json.JSONDecodeError:
        raise CommandFailed(f"{url} did not answer JSON: is that Ray's dashboard?") from None
    try:
        return list(body["data"]["result"]["result"])
    except (KeyError, TypeError):
        raise CommandFailed(f"{url} answered in a shape this version does not know: "
                            f"{str(body)[:200]}") from None


def list_paused(dashboard: str, *, read_stacks: bool = True) -> list[PausedTask]:
    """Every worker thread of the cluster that waits for a debugger, oldest
    worker first, with the task it runs."""
    workers = _get(dashboard, f"/api/v0/workers?detail=1&limit={LIMIT}")
    paused = [w for w in workers if w.get("is_alive", True)
              and int(w.get("num_paused_threads") or 0) > 0 and int(w.get("debugger_port") or 0) > 0]
    if not paused:
        return []
    query = urllib.parse.urlencode({"detail": 1, "limit": LIMIT, "filter_keys": "state",
                                    "filter_predicates": "=", "filter_values": "RUNNING"})
    tasks: dict[str, dict[str, Any]] = {}
    for task in _get(dashboard, f"/api/v0/tasks?{query}"):
        worker = task.get("worker_id")
        # A worker runs one task at a time unless it is an async actor: the one
        # Ray marks paused wins.
        if worker and (worker not in tasks or task.get("is_debugger_paused")):
            tasks[worker] = task
    found = []
    for worker in paused:
        task = tasks.get(worker["worker_id"], {})
        name = task.get("name") or task.get("func_or_class_name") or f"worker {worker.get('pid')}"
        found.append(PausedTask(
            task_id=task.get("task_id"), name=name, function=task.get("func_or_class_name"),
            actor_id=task.get("actor_id"), node_id=worker.get("node_id"),
            worker_id=worker["worker_id"], pid=int(worker.get("pid") or 0),
            host=worker.get("ip") or "127.0.0.1", port=int(worker["debugger_port"])))
    if read_stacks and found:
        # One py-spy per worker, side by side: each takes ~0.1 s.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(8, len(found))) as pool:
            list(pool.map(read_stack, found))
    found.sort(key=lambda t: (t.name, t.pid))
    return found


def find_py_spy(pid: int | None = None) -> str | None:
    """py-spy on PATH, else in the worker's own environment (the cluster's:
    `ray[default]` installs it there, while tui-debugger may live in a venv or
    pipx of its own), else beside ours."""
    found = shutil.which("py-spy")
    if found:
        return found
    for folder in [*(cluster_bin_dirs(pid) if pid else []), os.path.dirname(sys.executable)]:
        beside = os.path.join(folder, "py-spy")
        if os.access(beside, os.X_OK):
            return beside
    return None


def cluster_bin_dirs(pid: int) -> list[str]:
    """The scripts folders of the environment a Ray worker runs in. Its argv
    is no help (Ray renames the process `ray::TASK`) and its exe is the base
    interpreter a venv links to; the environment is where the worker loaded
    Ray's own extension modules from (/proc/PID/maps): PREFIX/lib/pythonX.Y/
    site-packages/ray/… means PREFIX/bin (a venv, conda, ~/.local alike)."""
    dirs: list[str] = []
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                path = line.rstrip("\n").split(" ", 5)[-1].strip()
                cut = path.find(f"{os.sep}site-packages{os.sep}ray{os.sep}")
                if cut < 0:
                    continue
                lib = os.path.dirname(path[:cut])  # PREFIX/lib
                folder = os.path.join(os.path.dirname(lib), "bin")
                if folder not in dirs:
                    dirs.append(folder)
                break
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            first = handle.read().split(b"\0", 1)[0].decode(errors="replace")
        if os.path.isabs(first):
            dirs.append(os.path.dirname(first))
    except OSError:
        pass
    try:
        dirs.append(os.path.dirname(os.readlink(f"/proc/{pid}/exe")))
    except OSError:
        pass
    return dirs


def py_spy_hint(tasks: list[PausedTask]) -> str | None:
    """What to install where, when a paused worker of this machine could not
    be read for want of py-spy (its place then shows only once attached)."""
    unread = [t for t in tasks if t.kind is None and os.path.exists(f"/proc/{t.pid}")]
    if not unread or find_py_spy(unread[0].pid) is not None:
        return None
    dirs = cluster_bin_dirs(unread[0].pid)
    python = next((os.path.join(d, "python") for d in dirs
                   if os.access(os.path.join(d, "python"), os.X_OK)), None)
    into = f"`{python} -m pip install py-spy`" if python else "`pip install py-spy`"
    return (f"Where each task waits is read with py-spy, found neither on PATH nor in the "
            f"cluster's environment: {into} (the cluster's environment; `ray[default]` has "
            "it), or put py-spy on PATH. Attaching shows the place meanwhile.")


_FRAME = re.compile(r"^\s+(?P<function>\S+) \((?P<file>[^)]+):(?P<line>\d+)\)")


def read_stack(task: PausedTask) -> None:
    """Where the worker waits, from `py-spy dump` of its process: the frame
    that called Ray's debugger (a `breakpoint()` in the user's code), or the
    frame that raised for a post-mortem pause. Only for a worker of this
    machine, and only when py-spy may read it; otherwise left unknown."""
    spy = find_py_spy(task.pid)
    if spy is None or not os.path.exists(f"/proc/{task.pid}"):
        return
    try:
        done = subprocess.run([spy, "dump", "--full-filenames", "--pid", str(task.pid)],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return
    if done.returncode != 0:
        return
    frames = [m.groupdict() for m in map(_FRAME.match, done.stdout.splitlines()) if m]
    # py-spy lists each thread's innermost frame first; the thread that waits
    # is the one inside ray/util/debugpy.py, and the user's frame is the first
    # below it that is not Ray's own.
    for index, frame in enumerate(frames):
        if not frame["file"].endswith(os.path.join("ray", "util", "debugpy.py")):
            continue
        below = frames[index + 1:]
        if any(f["function"] == "_post_mortem" for f in below[:3]) or \
                frame["function"] == "_post_mortem":
            task.kind = "post-mortem"
            return  # the raising frame is gone from the stack: the stop shows it
        task.kind = "breakpoint"
        caller = next((f for f in below if not _is_ray(f["file"])), None)
        if caller is not None:
            task.where = f"{caller['file']}:{caller['line']}"
        return


def _is_ray(path: str) -> bool:
    return f"{os.sep}ray{os.sep}" in path and "site-packages" in path or path.startswith("ray/")


def require_dashboard_reachable(dashboard: str) -> None:
    _get(dashboard, "/api/v0/nodes?limit=1")


__all__ = ["PausedTask", "cluster_bin_dirs", "dashboard_url", "find_py_spy", "list_paused",
           "py_spy_hint", "read_stack"]


def doctor_info() -> dict[str, object]:
    """What `doctor` says of Ray: its command where the user's environment has
    it (Ray is theirs; tui-debugger only reads a cluster's dashboard)."""
    found = shutil.which("ray")
    # Not `ray --version`: it imports Ray (seconds), and doctor answers at once.
    version = None
    return {
        "name": "ray", "available": found is not None, "path": found, "version": version,
        "install_hint": "pip install 'ray[default]>=2.39' debugpy, in the environment of the "
                        "Ray program (a paused task needs both; tui-debugger itself needs "
                        "neither: it reads the cluster's dashboard)",
        "note": "paused tasks and actors of a Ray cluster: `tui-debugger ray`",
    }
