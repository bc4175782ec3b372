"""Round-trip time of one Chrome DevTools Protocol request to Node's inspector,
with and without re-arming TCP_QUICKACK on the client socket.

    python benchmarks/cdp_roundtrip.py [--rounds N]

Starts `node --inspect-brk` on a tiny program, keeps it paused on its first
line, and times `Runtime.evaluate` and `Debugger.evaluateOnCallFrame` requests
(the calls a stop's inspection is made of), plus one large answer (a 256 KiB
string, many TCP segments). Prints milliseconds per round trip for three
clients: no TCP_QUICKACK, re-armed before each send only, and re-armed before
each send and on every arrival of bytes (what the backend does).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from backends.adapters import find_node  # noqa: E402
from backends.cdp import connection as cdp_connection  # noqa: E402
from backends.cdp.connection import TCP_QUICKACK, CdpConnection  # noqa: E402
from backends.process import spawn  # noqa: E402

PROGRAM = "const answer = 42;\nconsole.log(answer);\n"


async def measure(quickack: bool, rounds: int, on_receive: bool = True) -> dict[str, float]:
    node = find_node()
    if not node:
        raise SystemExit("node is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.js")
        with open(path, "w") as f:
            f.write(PROGRAM)
        child = await spawn([node, "--inspect-brk=127.0.0.1:0", path], what="node")
        try:
            url = None
            while url is None:
                line = (await asyncio.wait_for(child.proc.stderr.readline(), 10)).decode()
                match = re.search(r"ws://\S+", line)
                url = match.group(0) if match else None
            paused: asyncio.Queue = asyncio.Queue()

            def on_event(method: str, params: dict) -> None:
                if method == "Debugger.paused":
                    paused.put_nowait(params)

            cdp_connection.QuickAckClientConnection.quickack = on_receive
            try:
                conn = await CdpConnection.open(url, on_event, quickack=quickack)
            finally:
                cdp_connection.QuickAckClientConnection.quickack = True
            await conn.request("Runtime.enable")
            await conn.request("Debugger.enable")
            await conn.request("Runtime.runIfWaitingForDebugger")
            frame_id = (await asyncio.wait_for(paused.get(), 10))["callFrames"][0]["callFrameId"]
            for _ in range(5):  # warm up
                await conn.request("Runtime.evaluate", {"expression": "1 + 1"})
            times = {"Runtime.evaluate": [], "Debugger.evaluateOnCallFrame": [],
                     "256 KiB answer": []}
            for _ in range(rounds):
                start = time.perf_counter()
                await conn.request("Runtime.evaluate", {"expression": "1 + 1"})
                times["Runtime.evaluate"].append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                await conn.request(
                    "Debugger.evaluateOnCallFrame",
                    {"callFrameId": frame_id, "expression": "typeof answer",
                     "generatePreview": True},
                )
                times["Debugger.evaluateOnCallFrame"].append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                await conn.request("Runtime.evaluate", {"expression": "'x'.repeat(262144)",
                                                        "returnByValue": True})
                times["256 KiB answer"].append((time.perf_counter() - start) * 1000)
            await conn.close()
        finally:
            await child.kill_group(grace=0.5)
    out = {}
    for name, values in times.items():
        out[name + " median"] = statistics.median(values)
        out[name + " mean"] = statistics.fmean(values)
        out[name + " max"] = max(values)
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    print(f"node inspector round trips, {args.rounds} rounds each (milliseconds)")
    if TCP_QUICKACK is None:
        print("TCP_QUICKACK is not available on this platform: both runs are the same")
    results = {}
    variants = (
        ("no TCP_QUICKACK", False, False),
        ("QUICKACK on send", True, False),
        ("QUICKACK send+recv", True, True),
    )
    for label, quickack, on_receive in variants:
        results[label] = await measure(quickack, args.rounds, on_receive)
    keys = list(next(iter(results.values())))
    width = max(len(k) for k in keys)
    print(f"{'':{width}}  " + "  ".join(f"{label:>19}" for label in results))
    for key in keys:
        print(f"{key:{width}}  " + "  ".join(f"{results[label][key]:>19.2f}" for label in results))


if __name__ == "__main__":
    asyncio.run(main())
