"""The agent's round over MCP, two versions of the server side by side.

On a shared machine the load moves from one minute to the next, so two
versions of the MCP server measured one after the other compare the load as
much as the code. Here both serve at once, joined to one headless session
(`tui-debugger start`), and their rounds alternate, the order turned each
round, with the raw DAP round and the router's (no MCP) among them:

  raw DAP        next, stopped, stackTrace, scopes, variables; one more variables
  router         `next` + `variables` through the Router over the session socket
  router, relay  the same through a process that only copies the bytes between
                 the router and the host (--relay): the least an extra process
                 on the path costs, the floor of any MCP server that is a client
                 of the session's host
  before / after, thin
                 debug_step_over + debug_variables from a bare newline-JSON client
                 (mcp_roundtrip.LineClient): the server's own cost
  before / after, sdk
                 the same through the MCP SDK's stdio client (what a Python
                 agent uses)

"before" is the server of the checkout named by --before (run with
PYTHONPATH at it), "after" this checkout's. Without --before, only this
checkout's rows ("this"). With --host-before too, the before rows (and a
second router row) are joined to a session hosted by the before checkout's
daemon, so a change to the host is compared as well as the server's.

For the servers behind the thin clients it also prints the CPU time each
server used per round (Linux: /proc/PID/stat), which the load moves less
than the time a round takes.

Run:  python benchmarks/mcp_ab.py --before /path/to/old/checkout [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.mcp_roundtrip import LineClient, loop_program, server_args, start_daemon  # noqa: E402
from benchmarks.step_latency import RawSession  # noqa: E402

Round = Callable[[], Awaitable[float]]

#: The relay (--relay): one process, two sockets, each byte read from one
#: written to the other, nothing parsed; selectors and os.read/os.write, the
#: cheapest a Python process can forward.
RELAY = r"""
import os, selectors, socket, sys
listen = socket.socket(socket.AF_UNIX); listen.bind(sys.argv[1]); listen.listen(1)
print("ready", flush=True)
a, _ = listen.accept()
b = socket.socket(socket.AF_UNIX); b.connect(sys.argv[2])
sel = selectors.DefaultSelector()
sel.register(a, selectors.EVENT_READ, b); sel.register(b, selectors.EVENT_READ, a)
while True:
    for key, _ in sel.select():
        data = os.read(key.fileobj.fileno(), 262144)
        if not data:
            sys.exit(0)
        view = memoryview(data)
        while view:
            view = view[os.write(key.data.fileno(), view):]
"""


def tool_round(client: Any) -> Round:
    async def one() -> float:
        t0 = asyncio.get_running_loop().time()
        for name in ("debug_step_over", "debug_variables"):
            result = await client.call_tool(name, {})
            assert not result.is_error, (name, result.content)
        return asyncio.get_running_loop().time() - t0
    return one


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process so far (Linux), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def env_for(checkout: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(checkout), *filter(None, [env.get("PYTHONPATH")])])
    return env


async def main(ns: argparse.Namespace, program: str, session: str,
               before_session: str | None = None,
               ) -> tuple[dict[str, list[float]], dict[str, float]]:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    from tui_debugger.client.router import Router

    versions = ({"this": None} if ns.before is None
                else {"before": Path(ns.before).resolve(), "after": None})
    rounds: dict[str, Round] = {}
    servers: dict[str, int] = {}  # the thin rows' server pids
    async with contextlib.AsyncExitStack() as stack:
        raw = await RawSession(program).start()
        stack.push_async_callback(raw.close)

        async def raw_round() -> float:
            step, var = await raw.round()
            return step + var
        rounds["raw DAP"] = raw_round

        async def router_row(name: str, socket_path: str | None = None) -> Round:
            router = Router("mcp", session=name)
            stack.push_async_callback(router.close)
            if socket_path is None:
                await router.call("await", {"timeout_ms": 30_000})
            else:  # its connection, made at its first call, goes to the relay
                from tui_debugger.client import remote as client_module

                real = client_module.paths.socket_path
                client_module.paths.socket_path = lambda _name: Path(socket_path)
                try:
                    await router.call("await", {"timeout_ms": 30_000})
                finally:
                    client_module.paths.socket_path = real
            await router.call("breakpoint_remove", {"all": True})

            async def router_round() -> float:
                t0 = asyncio.get_running_loop().time()
                await router.call("next", for_agent=True)
                await router.call("variables", for_agent=True)
                return asyncio.get_running_loop().time() - t0
            return router_round

        if before_session is not None:
            rounds["router, before"] = await router_row(before_session)
        rounds["router"] = await router_row(session)
        if ns.relay:
            from tui_debugger import paths

            relay_path = paths.runtime_dir() / f"bench-relay-{os.getpid()}.sock"
            relay = await asyncio.create_subprocess_exec(
                sys.executable, "-c", RELAY, str(relay_path), str(paths.socket_path(session)),
                stdout=asyncio.subprocess.PIPE)
            stack.callback(lambda: relay.returncode is None and relay.kill())
            stack.callback(lambda: relay_path.unlink(missing_ok=True))
            assert relay.stdout is not None
            await relay.stdout.readline()
            rounds["router, relay"] = await router_row(session, str(relay_path))
            servers["router, relay"] = relay.pid

        for label, checkout in versions.items():
            cwd = str(checkout) if checkout is not None else None
            joined = before_session if (label == "before" and before_session) else session
            args = [sys.executable, *server_args(joined)]
            if "thin" in ns.clients:
                thin = LineClient(args, env=env_for(checkout), cwd=cwd)
                rounds[f"{label}, thin"] = tool_round(await stack.enter_async_context(thin))
                assert thin.proc is not None
                servers[f"{label}, thin"] = thin.proc.pid
            if "sdk" in ns.clients:
                params = StdioServerParameters(command=sys.executable, args=args[1:],
                                               env=env_for(checkout), cwd=cwd)
                sdk = Client(params)
                rounds[f"{label}, sdk"] = tool_round(await stack.enter_async_context(sdk))
        for one in rounds.values():  # warm-up: imports, first answers
            await one()
        times: dict[str, list[float]] = {name: [] for name in rounds}
        order = list(rounds)
        cpu_before = {name: cpu_seconds(pid) for name, pid in servers.items()}
        for i in range(ns.rounds):
            for name in order if i % 2 == 0 else order[::-1]:
                times[name].append(await rounds[name]())
        cpu = {}
        for name, pid in servers.items():
            now, then = cpu_seconds(pid), cpu_before[name]
            if now is not None and then is not None:
                cpu[name] = (now - then) / ns.rounds
        return times, cpu


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="a checkout of the version to compare against")
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--clients", default="thin,sdk", help="thin, sdk, or both (thin,sdk)")
    parser.add_argument("--relay", action="store_true",
                        help="a row through a process that only copies bytes to the host")
    parser.add_argument("--host-before", action="store_true",
                        help="the before rows joined to a session the before checkout hosts")
    ns = parser.parse_args()
    if ns.host_before and ns.before is None:
        parser.error("--host-before needs --before")
    with loop_program() as program:
        load_before = os.getloadavg()[0]
        sessions = [start_daemon(program)]
        try:
            if ns.host_before:
                before = Path(ns.before).resolve()
                sessions.append(start_daemon(program, "bench-before", env_for(before),
                                             cwd=str(before)))
            times, cpu = asyncio.run(main(ns, program, *sessions))
        finally:
            for session in sessions:
                subprocess.run([sys.executable, "-m", "tui_debugger", "stop", "--session",
                                session], capture_output=True, check=False)
    base = statistics.median(times["raw DAP"]) * 1000
    print(f"the agent's round (step, then the locals), {ns.rounds} rounds alternated, "
          f"load average (1 min) at the start / end: {load_before:.2f} / {os.getloadavg()[0]:.2f}")
    for name, samples in times.items():
        med = statistics.median(samples) * 1000
        p90 = sorted(samples)[max(0, int(len(samples) * 0.9) - 1)] * 1000
        used = f"   server CPU {cpu[name] * 1000:5.2f} ms/round" if name in cpu else ""
        print(f"  {name:15} median {med:7.2f} ms   p90 {p90:7.2f} ms   "
              f"{med / base:5.2f}x raw{used}")


if __name__ == "__main__":
    run()
