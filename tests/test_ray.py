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
            listed = json.loads(self.tui("ray", "--json").stdout)["paused"]
            if len(listed) >= count:
                return listed
            assert time.monotonic() < deadline, f"{len(listed)} of {count} tasks paused: {listed}"
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


def test_cli_lists_attaches_steps_and_continues_paused_tasks(cluster):
    driver = cluster.driver()
    paused = cluster.paused(3)
    kinds = sorted(t["kind"] for t in paused)
    assert kinds == ["breakpoint", "breakpoint", "post-mortem"], paused
    assert all(t["where"].endswith("driver.py:11") for t in paused if t["kind"] == "breakpoint"), paused
    listing = cluster.tui("ray").stdout
    assert "square" in listing and "explode" in listing and "driver.py:11" in listing

    attached = json.loads(cluster.tui("ray", "attach", "--all", "--json").stdout)
    assert not attached["errors"], attached
    sessions = {s["session"]: s for s in attached["sessions"]}
    assert len(sessions) == 3
    squares = sorted(name for name in sessions if name.startswith("ray-square"))
    (failed,) = [name for name in sessions if name.startswith("ray-explode")]
    for name in squares:
        stop = sessions[name]["stop"]
        # Ray's hook stops in Ray's own frames: the user's frame is shown.
        assert stop["location"]["path"].endswith("driver.py") and stop["location"]["line"] == 11
        assert "y (int) = " in cluster.tui("locals", "--session", name).stdout
        stepped = cluster.tui("next", "--session", name).stdout
        assert "driver.py:12" in stepped, stepped
        # (with several sessions live, an answer first names the one it acted on)
        printed = cluster.tui("print", "y", "--session", name).stdout
        assert printed.removeprefix(f"[session {name}] ").split()[0] in ("1", "4"), printed
        cluster.tui("continue", "--session", name, "--wait-ms", "0")
    stop = sessions[failed]["stop"]
    assert stop["reason"] == "exception" and "bad 7" in json.dumps(stop), stop
    context = cluster.tui("context", "--session", failed).stdout
    assert "explode" in context and "ValueError" in context

    # The last task pauses once those are done. On a worker we are attached to,
    # it stops in that session (at the user's line again, not in Ray's hook);
    # on another, every attached session's output announces it.
    deadline = time.monotonic() + 90
    late = None
    while late is None:
        for name in squares:
            status = json.loads(cluster.tui("status", "--session", name, "--json").stdout)
            stop = status.get("stop") or {}
            # (the line of breakpoint() or the next: Ray's hook is left by stepping out)
            if status["state"] == "stopped" and (stop.get("location") or {}).get("line") in (11, 12):
                late = name
        if late is None and "1 more task paused: square" in cluster.tui(
                "output", "--session", failed).stdout:
            attached = json.loads(cluster.tui("ray", "attach", "square", "--json").stdout)
            late = attached["sessions"][0]["session"]
            sessions[late] = attached["sessions"][0]
        assert late or time.monotonic() < deadline, "the late task never showed"
        time.sleep(0.3)
    assert "x (int) = 5" in cluster.tui("locals", "--session", late).stdout
    cluster.tui("continue", "--session", late, "--wait-ms", "0")
    cluster.tui("continue", "--session", failed, "--wait-ms", "0")
    out = finish_driver(driver)
    assert "results [0, 1, 4, 9]" in out and "late 25" in out, out
    assert "explode raised RayTaskError(ValueError)" in out, out
    # The cluster runs on; nothing waits for a debugger any more.
    assert json.loads(cluster.tui("ray", "--json").stdout)["paused"] == []
    for name in sessions:
        cluster.tui("stop", "--session", name, check=False)


def test_mcp_attaches_with_ray_and_the_tui_opens_the_rest(cluster, tmp_path):
    from tests.support.tmux import finish, start

    driver = cluster.driver()
    cluster.paused(3)
    # An agent: debug_attach with `ray`, over stdio, as a client does.
    agent = subprocess.Popen([*cluster.prefix, sys.executable, "-m", "tui_debugger", "mcp"],
                             cwd=cluster.work, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)

    def rpc(ident: int, method: str, params: dict) -> dict:
        agent.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method,
                                      "params": params}) + "\n")
        agent.stdin.flush()
        while True:
            message = json.loads(agent.stdout.readline())
            if message.get("id") == ident:
                return message

    try:
        rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "test", "version": "1"}})
        agent.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        agent.stdin.flush()
        answer = rpc(2, "tools/call", {"name": "debug_attach", "arguments": {"ray": ""}})["result"]
        text = answer["content"][0]["text"]
        assert not answer.get("isError"), text
        # The answer's data is its structuredContent; the text is one line.
        said = text + json.dumps(answer["structuredContent"])
        assert "driver.py:11" in said or "ValueError" in said, said
        assert "2 more paused" in said, said
        session = answer["structuredContent"]["session"]
        answer = rpc(3, "tools/call", {"name": "debug_continue", "arguments": {}})["result"]
        assert not answer.get("isError"), answer
    finally:
        agent.stdin.close()
        agent.wait(timeout=30)

    # The person: `tui-debugger ray --ui` attaches to the rest and opens the TUI.
    others = [t for t in cluster.paused(1, timeout=30)]
    assert others
    env = runtime_env()
    tmux, marker = start(tmp_path, [*cluster.prefix, "env", *[f"{k}={v}" for k, v in env.items()],
                                    sys.executable, "-m", "tui_debugger", "ray", "--ui"],
                         cwd=cluster.work)
    try:
        screen = tmux.wait_for(lambda s: "STOPPED" in s and "driver.py" in s,
                               "the TUI on a paused task", timeout=90)
        assert "explode" in screen or "square" in screen
        tmux.run("send-keys", "-t", "tui", "F5")
        tmux.wait_for(lambda s: "STOPPED" not in s.splitlines()[0], "the task resumed", timeout=30)
    finally:
        # Quitting detaches from every task the TUI attached to: nothing of ours
        # is left, and the tasks run on to their results.
        finish(tmux, marker)
    assert json.loads(cluster.tui("sessions", "--json").stdout)["sessions"] == []
    # The last task pauses once the first ones are done: released from the CLI.
    late = json.loads(cluster.tui("ray", "attach", "square", "--json").stdout)["sessions"]
    assert late, "the late task did not pause"
    cluster.tui("continue", "--session", late[0]["session"], "--wait-ms", "0")
    out = finish_driver(driver)
    assert "results [0, 1, 4, 9]" in out and "late 25" in out, out
    cluster.tui("stop", "--session", late[0]["session"], check=False)
    assert session
