"""Ray at scale: 16 tasks paused at breakpoint() on a local cluster.

Starts a Ray head in a network namespace of its own (only `lo`, as the tests
do; needs root and iproute2), runs a driver whose 16 tasks each call
breakpoint(), and times, through the CLI as a person or an agent runs it:

  list          `tui-debugger ray --json` once all 16 are paused
  attach all    `tui-debugger ray attach --all`: one root session `ray` and
                16 workers, child sessions of it, in one host
  step one      `tui-debugger next --session …` on one worker, the 15 others
                still paused (checked)
  continue all  `continue` on each, then the driver's results
  stop root     `tui-debugger stop --session ray`: the tree ends, detached

Run:  python benchmarks/ray_scale.py [--tasks 16]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DRIVER = '''\
import ray
ray.init(address="auto", logging_level="ERROR", log_to_driver=False)

@ray.remote(num_cpus=0)
def work(i):
    value = i * 10
    breakpoint()
    for k in range(10):  # the steps timed stay in this frame
        value += k
    return value + 1

print("results", sum(ray.get([work.remote(i) for i in range({tasks})])), flush=True)
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=16)
    ns = parser.parse_args()
    if os.geteuid() != 0 or not shutil.which("ip"):
        raise SystemExit("needs root and iproute2 (a network namespace for the cluster)")
    ray = Path(sys.executable).with_name("ray")
    namespace = f"tdbg-rayb-{secrets.token_hex(3)}"
    prefix = ["ip", "netns", "exec", namespace]
    temp = f"/tmp/tdbg-rayb-{secrets.token_hex(3)}"
    work = Path(tempfile.mkdtemp(prefix="ray-scale-"))
    env = {**os.environ, "TUI_DEBUGGER_RUNTIME_DIR": str(work / "run"),
           "RAY_USAGE_STATS_ENABLED": "0"}

    def tui(*args: str) -> tuple[float, str]:
        t0 = time.perf_counter()
        done = subprocess.run([*prefix, sys.executable, "-m", "tui_debugger", *args], cwd=work,
                              env=env, capture_output=True, text=True, timeout=300)
        if done.returncode:
            raise SystemExit(f"tui-debugger {' '.join(args)}: {done.stderr}")
        return time.perf_counter() - t0, done.stdout

    subprocess.run(["ip", "netns", "add", namespace], check=True)
    driver = None
    try:
        subprocess.run([*prefix, "ip", "link", "set", "lo", "up"], check=True)
        t0 = time.perf_counter()
        subprocess.run([*prefix, str(ray), "start", "--head", "--num-cpus", "2", "--include-dashboard",
                        "true", "--dashboard-host", "127.0.0.1", "--disable-usage-stats",
                        f"--temp-dir={temp}"], env=env, check=True, capture_output=True)
        head = time.perf_counter() - t0
        (work / "driver.py").write_text(DRIVER.replace("{tasks}", str(ns.tasks)))
        driver = subprocess.Popen([*prefix, sys.executable, str(work / "driver.py")], cwd=work,
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True)
        t0 = time.perf_counter()
        while True:
            took, out = tui("ray", "--json")
            if len(json.loads(out)["paused"]) >= ns.tasks:
                break
            if time.perf_counter() - t0 > 300:
                raise SystemExit(f"only {len(json.loads(out)['paused'])} tasks paused in 300 s")
            time.sleep(0.5)
        paused_after = time.perf_counter() - t0
        lists = [tui("ray", "--json")[0] for _ in range(5)]
        attach, out = tui("ray", "attach", "--all", "--json")
        tree = json.loads(out)
        sessions = [w["session"] for w in tree["workers"]]
        assert tree["root"] == "ray" and len(sessions) == ns.tasks, tree
        # Each worker's answer is its first stop, unless it came later than the
        # attach waits (a loaded machine): then `await` it, as an agent would.
        for name in sessions:
            tui("await", "--session", name, "--timeout", "120")
        steps = [tui("next", "--session", sessions[0])[0] for _ in range(5)]
        statuses = [json.loads(tui("status", "--session", s, "--json")[1])["state"]
                    for s in sessions[1:]]
        assert all(state == "stopped" for state in statuses), statuses
        t0 = time.perf_counter()
        for name in sessions:
            tui("continue", "--session", name, "--wait-ms", "0")
        out, _ = driver.communicate(timeout=120)
        resumed = time.perf_counter() - t0
        expected = sum(i * 10 + 45 + 1 for i in range(ns.tasks))
        assert f"results {expected}" in out, out
        stop_root, _ = tui("stop", "--session", "ray")
    finally:
        # What we attached to ends with the root (it only detaches); on a failure too.
        subprocess.run([*prefix, sys.executable, "-m", "tui_debugger", "stop", "--session", "ray"],
                       cwd=work, env=env, capture_output=True, timeout=120)
        if driver is not None and driver.poll() is None:
            driver.kill()
        subprocess.run([*prefix, str(ray), "stop", "--force"], capture_output=True, env=env)
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
        shutil.rmtree(temp, ignore_errors=True)
    print(f"Ray, {ns.tasks} tasks paused at breakpoint() (load {os.getloadavg()[0]:.2f}):")
    print(f"  head started                 {head:7.2f} s")
    print(f"  all {ns.tasks} paused after driver   {paused_after:7.2f} s")
    print(f"  list (ray --json), median    {statistics.median(lists) * 1000:7.0f} ms")
    print(f"  attach all (ray + {len(sessions)} workers)  {attach:7.2f} s")
    print(f"  step one, median of 5        {statistics.median(steps) * 1000:7.0f} ms "
          f"(the other {len(sessions) - 1} still paused)")
    print(f"  continue all, driver done    {resumed:7.2f} s")
    print(f"  stop the root (detach all)   {stop_root:7.2f} s")


if __name__ == "__main__":
    main()
