"""Ray: a real head started by the test, in a network namespace of its own
(only `lo` up, so Ray's workers listen on 127.0.0.1 and nothing leaves it); a
driver submits tasks, two of which call breakpoint() and one of which raises
(RAY_DEBUG_POST_MORTEM=1). We list them, attach, step, read locals and
continue from the CLI, MCP and the TUI (in tmux), all inside the namespace;
the driver ends with the right results, the cluster keeps running after we
detach, and nothing is left once `ray stop` ran."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import require, runtime_env
from tests.support.remote import can_make_namespaces

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

DRIVER = '''\
import sys
import ray

ray.init(address="auto", logging_level="ERROR", log_to_driver=False)


@ray.remote
def square(x):
    y = x * x
    if x in (1, 2, 5):
        breakpoint()  # pause
    return y + 0


@ray.remote
def explode(x):
    raise ValueError(f"bad {x}")


squares = [square.remote(i) for i in range(4)]
failing = explode.remote(7)
print("results", ray.get(squares), flush=True)
print("late", ray.get(square.remote(5)), flush=True)  # paused while the others are attached
try:
    ray.get(failing)
except Exception as exc:
    print("explode raised", type(exc).__name__, flush=True)
'''


def ray_executable() -> str:
    found = Path(sys.executable).with_name("ray")
    try:
        import ray  # noqa: F401
    except ImportError:
        require(False, "ray (the test lock's ray[default])")
    require(found.exists(), "the ray command")
    return str(found)


class Cluster:
    def __init__(self, tmp: Path) -> None:
        self.namespace = f"tdbg-ray-{secrets.token_hex(3)}"
        self.prefix = ["ip", "netns", "exec", self.namespace]
        self.temp = Path(f"/tmp/tdbg-ray-{secrets.token_hex(3)}")  # Ray's sockets: keep it short
        self.work = tmp
        self.ray = ray_executable()

    def run(self, argv: list[str], **options) -> subprocess.CompletedProcess:
        options.setdefault("timeout", 120)
        return subprocess.run([*self.prefix, *argv], capture_output=True, text=True, **options)

    def start(self) -> None:
        subprocess.run(["ip", "netns", "add", self.namespace], check=True, capture_output=True)
        self.run(["ip", "link", "set", "lo", "up"], check=True)
        env = {**os.environ, "RAY_DEBUG_POST_MORTEM": "1", "RAY_USAGE_STATS_ENABLED": "0"}
        done = self.run([self.ray, "start", "--head", "--num-cpus", "4", "--include-dashboard",
                         "true", "--dashboard-host", "127.0.0.1", "--disable-usage-stats",
                         f"--temp-dir={self.temp}"], env=env, timeout=180)
        assert done.returncode == 0, done.stdout + done.stderr

    def tui(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = self.run([sys.executable, "-m", "tui_debugger", *args], cwd=self.work)
        if check:
            assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done

    def driver(self) -> subprocess.Popen:
        script = self.work / "driver.py"
        script.write_text(DRIVER)
        return subprocess.Popen([*self.prefix, sys.executable, str(script)], cwd=self.work,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)

    def paused(self, count: int, timeout: float = 90) -> list[dict]:
        deadline = time.monotonic() + timeout
        while True:
            done = self.tui("ray", "--json", check=False)
            answer = json.loads(done.stdout or "{}")
            if done.returncode == 0:
                listed = answer["paused"]
                if len(listed) >= count:
                    return listed
                said = f"{len(listed)} of {count} tasks paused: {listed}"
            else:
                # `ray start` returns before the dashboard serves; on a busy
                # machine its first answers can be late: wait for it.
                assert answer.get("error", {}).get("code") == "dependency_missing", done.stdout
                said = f"the dashboard never answered: {done.stdout}"
            assert time.monotonic() < deadline, said
            time.sleep(0.5)

    def stop(self) -> None:
        self.run([self.ray, "stop", "--force"], timeout=120)
        pids = subprocess.run(["ip", "netns", "pids", self.namespace], capture_output=True,
                              text=True).stdout.split()
        left = []
        for pid in pids:
            try:
                left.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
        subprocess.run(["ip", "netns", "del", self.namespace], capture_output=True, timeout=30)
        shutil.rmtree(self.temp, ignore_errors=True)
        assert not left, f"left running in the namespace after `ray stop`: {left}"


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    """One head for the module (it takes 10-40 s to start)."""
    if not can_make_namespaces():
        require(False, "root and iproute2 (a network namespace for the Ray cluster)")
    made = Cluster(tmp_path_factory.mktemp("ray"))
    made.start()
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture
def cluster(ray_head, tmp_path, isolated_runtime):
    ray_head.work = tmp_path  # this test's driver and working directory
    return ray_head


def finish_driver(driver: subprocess.Popen) -> str:
    out, _ = driver.communicate(timeout=120)
    assert driver.returncode == 0, out
    return out


def tree_of(cluster, root: str = "ray") -> dict[str, dict]:
    """The live sessions of the root's tree, by name."""
    listed = json.loads(cluster.tui("sessions", "--json").stdout)["sessions"]
    return {s["name"]: s for s in listed if s["name"] == root or s.get("parent") == root}


def alive(pid: int) -> bool:
    # A zombie is dead: once another test made pytest a subreaper, a host that
    # ended is pytest's to reap and stays in /proc until it is.
    from backends.procinfo import pid_alive

    return pid_alive(pid)


def test_cli_attaches_every_paused_task_as_a_worker_of_one_ray_session(cluster, tmp_path):
    driver = cluster.driver()
    paused = cluster.paused(3)
    kinds = sorted(t["kind"] for t in paused)
    assert kinds == ["breakpoint", "breakpoint", "post-mortem"], paused
    assert all(t["where"].endswith("driver.py:11") for t in paused if t["kind"] == "breakpoint"), paused
    listing = cluster.tui("ray").stdout
    assert "square" in listing and "explode" in listing and "driver.py:11" in listing

    attached = json.loads(cluster.tui("ray", "attach", "--all", "--json").stdout)
    assert attached["root"] == "ray" and not attached["errors"], attached
    workers = {w["session"]: w for w in attached["workers"]}
    assert len(workers) == 3, workers
    # One root in one host; each worker a child of it, named by task and pid.
    tree = tree_of(cluster)
    assert list(tree)[0] == "ray" and tree["ray"]["adapter"] == "ray", tree
    assert {n for n, s in tree.items() if s.get("parent") == "ray"} == set(workers), tree
    assert len({s["pid"] for s in tree.values()}) == 1, tree
    for task in paused:
        assert f"ray-{task['name']}-{task['pid']}" in workers, (task, workers)
    squares = sorted(name for name in workers if name.startswith("ray-square"))
    (failed,) = [name for name in workers if name.startswith("ray-explode")]
    # The root has no program: a command for one worker names them.
    refused = cluster.tui("locals", "--session", "ray", check=False)
    assert refused.returncode != 0 and squares[0] in refused.stderr, refused.stderr
    for name in squares:
        stop = workers[name]["stop"]
        # Ray's hook stops in Ray's own frames: the user's frame is shown.
        assert stop["location"]["path"].endswith("driver.py") and stop["location"]["line"] == 11
        assert "y (int) = " in cluster.tui("locals", "--session", name).stdout
        stepped = cluster.tui("next", "--session", name).stdout
        assert "driver.py:12" in stepped, stepped
        # (with several sessions live, an answer first names the one it acted on)
        printed = cluster.tui("print", "y", "--session", name).stdout
        assert printed.removeprefix(f"[session {name}] ").split()[0] in ("1", "4"), printed
        # The other workers stay where they are.
        others = [n for n in workers if n != name]
        assert all(tree_of(cluster)[n]["state"] == "stopped" for n in others
                   if n not in squares[:squares.index(name)])
        cluster.tui("continue", "--session", name, "--wait-ms", "0")
    stop = workers[failed]["stop"]
    assert stop["reason"] == "exception" and "bad 7" in json.dumps(stop), stop
    context = cluster.tui("context", "--session", failed).stdout
    assert "explode" in context and "ValueError" in context

    # The last task pauses once those are done: on a worker we are attached to,
    # it stops in that worker's session (at the user's line, not in Ray's
    # hook); on another, it becomes a new worker of `ray`, and the root's
    # output says so.
    deadline = time.monotonic() + 90
    late = None
    while late is None:
        for name, entry in tree_of(cluster).items():
            if name == "ray" or not name.startswith("ray-square") or entry["state"] != "stopped":
                continue
            status = json.loads(cluster.tui("status", "--session", name, "--json").stdout)
            stop = status.get("stop") or {}
            # (the line of breakpoint() or the next: Ray's hook is left by stepping out)
            if status["state"] == "stopped" and (stop.get("location") or {}).get("line") in (11, 12):
                late = name
        assert late or time.monotonic() < deadline, "the late task never showed"
        time.sleep(0.3)
    if late not in workers:
        assert f"as session {late}" in cluster.tui("output", "--session", "ray").stdout
    assert "x (int) = 5" in cluster.tui("locals", "--session", late).stdout
    cluster.tui("continue", "--session", failed, "--wait-ms", "0")
    # `ray --ui` with the tree live opens the TUI on it, at the paused worker;
    # it joined the tree, so quitting leaves it.
    from tests.support.tmux import finish, start

    env = runtime_env()
    tmux, marker = start(tmp_path, [*cluster.prefix, "env", *[f"{k}={v}" for k, v in env.items()],
                                    sys.executable, "-m", "tui_debugger", "ray", "--ui"],
                         cwd=cluster.work)
    try:
        tmux.wait_for(lambda s: "STOPPED" in s and late in s and "driver.py" in s,
                      "the TUI on the late task's worker", timeout=90)
    finally:
        finish(tmux, marker)
    assert tree_of(cluster)[late]["state"] == "stopped"
    # Stopping the root ends the tree and detaches: the late task, still
    # paused, runs on to its result, and the cluster with it.
    host = tree_of(cluster)["ray"]["pid"]
    cluster.tui("stop", "--session", "ray")
    out = finish_driver(driver)
    assert "results [0, 1, 4, 9]" in out and "late 25" in out, out
    assert "explode raised RayTaskError(ValueError)" in out, out
    deadline = time.monotonic() + 30
    while tree_of(cluster) or alive(host):
        assert time.monotonic() < deadline, tree_of(cluster)
        time.sleep(0.2)
    assert json.loads(cluster.tui("ray", "--json").stdout)["paused"] == []


def test_mcp_attaches_the_tree_and_the_tui_follows_it(cluster, tmp_path):
    from tests.support.tmux import finish, start

    driver = cluster.driver()
    cluster.paused(3)
    # An agent: debug_attach with `ray`, over stdio, as a client does.
    agent = subprocess.Popen([*cluster.prefix, sys.executable, "-m", "tui_debugger", "mcp"],
                             cwd=cluster.work, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    ids = iter(range(1, 10_000))

    def rpc(method: str, params: dict) -> dict:
        ident = next(ids)
        agent.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method,
                                      "params": params}) + "\n")
        agent.stdin.flush()
        while True:
            message = json.loads(agent.stdout.readline())
            if message.get("id") == ident:
                return message

    def tool(name: str, arguments: dict, ok: bool = True) -> dict:
        answer = rpc("tools/call", {"name": name, "arguments": arguments})["result"]
        assert bool(answer.get("isError")) != ok, (name, answer)
        return answer

    def workers() -> dict[str, dict]:
        listed = tool("debug_sessions", {})["structuredContent"]["sessions"]
        return {s["name"]: s for s in listed if s.get("parent") == "ray"}

    try:
        rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "test", "version": "1"}})
        agent.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        agent.stdin.flush()
        answer = tool("debug_attach", {"ray": ""})
        said = answer["content"][0]["text"] + json.dumps(answer["structuredContent"])
        assert answer["structuredContent"]["session"] == "ray", said
        assert "3 paused workers attached" in said and "ValueError" in said, said
        children = workers()
        assert len(children) == 3 and all(s["state"] == "stopped" for s in children.values())
        squares = sorted(n for n in children if n.startswith("ray-square"))
        (failed,) = [n for n in children if n.startswith("ray-explode")]
        # Without debugSessionId the root answers, naming its workers.
        refused = tool("debug_evaluate", {"expression": "y"}, ok=False)
        assert "debugSessionId" in refused["content"][0]["text"] and squares[0] in \
            refused["content"][0]["text"], refused
        # Per worker: read, step, evaluate, while the others stay paused.
        one = squares[-1]
        seen = tool("debug_variables", {"debugSessionId": one, "names": ["y"]})
        assert '"y"' in json.dumps(seen["structuredContent"]), seen
        tool("debug_step_over", {"debugSessionId": one})
        value = tool("debug_evaluate", {"debugSessionId": one, "expression": "y"})
        assert value["structuredContent"]["value"] in ("1", "4"), value
        assert all(workers()[n]["state"] == "stopped" for n in children)
        # The post-mortem worker shows its exception; continue releases it.
        context = tool("debug_context", {"debugSessionId": failed})
        assert "bad 7" in json.dumps(context["structuredContent"]), context
        tool("debug_continue", {"debugSessionId": failed, "waitMs": 0})
        tool("debug_continue", {"debugSessionId": one, "waitMs": 0})

        # The person: `ui --session ray` opens the same tree on a paused worker.
        env = runtime_env()
        tmux, marker = start(tmp_path, [*cluster.prefix, "env",
                                        *[f"{k}={v}" for k, v in env.items()], sys.executable,
                                        "-m", "tui_debugger", "ui", "--session", "ray"],
                             cwd=cluster.work)
        try:
            screen = tmux.wait_for(lambda s: "STOPPED" in s and "driver.py" in s
                                   and squares[0] in s, "the TUI on the paused worker",
                                   timeout=90)
            tmux.run("send-keys", "-t", "tui", "F5")
            # The late task pauses once the others are done: the TUI follows it
            # (into the worker it stopped in: a new one, or this one again,
            # often too soon for RUNNING to be seen in between).
            screen = tmux.wait_for(lambda s: "STOPPED" in s.splitlines()[0] and "x = 5" in s,
                                   "the TUI on the late task", timeout=120)
        finally:
            finish(tmux, marker)  # it only joined: the tree stays
        late = [n for n, s in workers().items() if s["state"] == "stopped"]
        assert len(late) == 1, (late, screen)
        assert "x (int) = 5" in json.dumps(tool("debug_variables", {"debugSessionId": late[0]})
                                          ["structuredContent"]) or "5" in screen
        tool("debug_continue", {"debugSessionId": late[0], "waitMs": 0})
        out = finish_driver(driver)
        assert "results [0, 1, 4, 9]" in out and "late 25" in out, out
        assert "explode raised RayTaskError(ValueError)" in out, out
    finally:
        agent.stdin.close()
        agent.wait(timeout=60)
    # The agent's tree ended with it, detached: nothing of ours is left, the cluster runs on.
    deadline = time.monotonic() + 30
    while json.loads(cluster.tui("sessions", "--json").stdout)["sessions"]:
        assert time.monotonic() < deadline, "the agent's Ray sessions outlived it"
        time.sleep(0.3)
    assert json.loads(cluster.tui("ray", "--json").stdout)["paused"] == []


def apart_venv() -> Path:
    """tui-debugger installed from this checkout (not editable) into a venv of
    its own on another Python, as a user installs a tool (a venv, pipx): no
    Ray there, nor the cluster's py-spy. The venv and its dependencies are
    made once under tests/.cache; tui-debugger itself is installed afresh."""
    import hashlib

    from tests.support import ROOT, one_at_a_time
    from tests.support.pyenvs import base_python

    lock = ROOT / "requirements" / "test-lock.txt"
    digest = hashlib.sha256(lock.read_bytes() + (ROOT / "pyproject.toml").read_bytes()).hexdigest()
    venv = ROOT / "tests" / ".cache" / "venvs" / f"ray-apart-{digest[:12]}"
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    with one_at_a_time("ray-apart-venv"):
        if not (venv / ".made").exists():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([base_python("3.12"), "-m", "venv", str(venv)], check=True,
                           capture_output=True, timeout=120)
            done = subprocess.run([*pip, "-c", str(lock), str(ROOT)], capture_output=True,
                                  text=True, timeout=600)
            assert done.returncode == 0, done.stderr[-3000:]
            (venv / ".made").write_text("")
        done = subprocess.run([*pip, "--no-deps", "--force-reinstall", str(ROOT)],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    no_ray = subprocess.run([str(python), "-c", "import ray"], capture_output=True)
    assert no_ray.returncode != 0, "the venv apart from the cluster's must not see its Ray"
    return venv


def test_tui_debugger_in_a_venv_of_its_own_lists_attaches_and_reads_two_paused_tasks(cluster):
    """The cluster runs on the test venv's Ray; tui-debugger runs from another
    venv (another Python, no Ray, no py-spy, neither on PATH): where each task
    waits is still read (with the cluster's py-spy), and the attach, locals and
    evaluations of two paused tasks work as from the cluster's own venv."""
    venv = apart_venv()
    path = f"{venv / 'bin'}:/usr/sbin:/usr/bin:/sbin:/bin"
    assert shutil.which("py-spy", path=path) is None and shutil.which("ray", path=path) is None
    env = {**os.environ, "PATH": path}
    env.pop("VIRTUAL_ENV", None)

    def tui(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([*cluster.prefix, str(venv / "bin" / "tui-debugger"), *args],
                              cwd=cluster.work, env=env, capture_output=True, text=True,
                              timeout=120)
        if check:
            assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done

    driver = cluster.driver()
    try:
        cluster.paused(3)
        paused = json.loads(tui("ray", "--json").stdout)["paused"]
        assert sorted(t["kind"] for t in paused) == ["breakpoint", "breakpoint", "post-mortem"], paused
        assert all(t["where"].endswith("driver.py:11") for t in paused if t["kind"] == "breakpoint")

        attached = json.loads(tui("ray", "attach", "--all", "--json").stdout)
        assert not attached["errors"] and len(attached["workers"]) == 3, attached
        names = [w["session"] for w in attached["workers"]]
        squares = sorted(n for n in names if n.startswith("ray-square"))
        (failed,) = [n for n in names if n.startswith("ray-explode")]
        values = set()
        for name in squares:
            assert "y (int) = " in tui("locals", "--session", name).stdout
            printed = tui("print", "y", "--session", name).stdout
            values.add(printed.removeprefix(f"[session {name}] ").split()[0])
        assert values == {"1", "4"}, values
        assert "ValueError" in tui("context", "--session", failed).stdout
        for name in [*squares, failed]:
            tui("continue", "--session", name, "--wait-ms", "0")
        # The late task pauses once those are done, and is attached as it comes.
        deadline = time.monotonic() + 90
        late = None
        while late is None:
            listed = json.loads(tui("sessions", "--json").stdout)["sessions"]
            for entry in listed:
                if entry.get("parent") == "ray" and entry["state"] == "stopped" \
                        and "x (int) = 5" in tui("locals", "--session", entry["name"]).stdout:
                    late = entry["name"]
            assert late or time.monotonic() < deadline, "the late task never showed"
            time.sleep(0.3)
        tui("continue", "--session", late, "--wait-ms", "0")
        out = finish_driver(driver)
        assert "results [0, 1, 4, 9]" in out and "late 25" in out, out
        tui("stop", "--session", "ray")
        deadline = time.monotonic() + 30
        while json.loads(tui("sessions", "--json").stdout)["sessions"]:
            assert time.monotonic() < deadline, "the Ray sessions outlived their stop"
            time.sleep(0.3)
    finally:
        if driver.poll() is None:  # failed midway: the driver goes, `ray stop` takes its tasks
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait()
            tui("stop", "--session", "ray", check=False)


def test_without_py_spy_anywhere_the_listing_says_what_to_install_where(tmp_path):
    """A paused worker whose environment has no py-spy (nor PATH, nor
    tui-debugger's own venv): the hint names that environment's python."""
    venv = apart_venv()
    path = f"{venv / 'bin'}:/usr/bin:/bin"
    assert shutil.which("py-spy", path=path) is None
    worker = subprocess.Popen([str(venv / "bin" / "python"), "-c", "import time; time.sleep(120)"])
    try:
        probe = ("import sys; from backends.ray.discover import PausedTask, py_spy_hint; "
                 "print(py_spy_hint([PausedTask(name='t', worker_id='w', pid=int(sys.argv[1]), "
                 "host='127.0.0.1', port=1)]))")
        done = subprocess.run([str(venv / "bin" / "python"), "-c", probe, str(worker.pid)],
                              cwd=tmp_path, env={**os.environ, "PATH": path},
                              capture_output=True, text=True, timeout=60)
    finally:
        worker.kill()
        worker.wait()
    assert done.returncode == 0, done.stderr
    assert f"`{venv / 'bin' / 'python'} -m pip install py-spy`" in done.stdout, done.stdout
