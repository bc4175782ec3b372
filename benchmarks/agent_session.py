"""What an agent pays, in bytes, for a find-the-bug session on the bundled example.

Replays, back to back through the MCP client on a fresh in-process server, the
calls an agent makes to answer "why does the black tea end up with 3 in stock?"
on examples/inventory.py, each call being what the last answer suggests:

  launch with a breakpoint in restock -> the answer is the stop (item TEA-01)
  continue                            -> the next item, TEA-02 (quantity 0)
  step over                           -> `missing` computed: 3
  evaluate item.quantity + missing    -> 3: restock tops it up to the minimum
  trace restock's line over the rest  -> the quantities of the other items
  output                              -> the program's printed summary
  terminate

Bytes are those of each tools/call result as the client receives it (text
content and structuredContent, compact JSON), and of tools/list. The budget
(issue: lean answers): every answer <= 4 KB, the session <= 8 KB.

Run:  python benchmarks/agent_session.py [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROGRAM = ROOT / "examples" / "inventory.py"
ANSWER_BUDGET = 4096
SESSION_BUDGET = 8192


def line_of(text: str) -> int:
    for number, line in enumerate(PROGRAM.read_text().splitlines(), 1):
        if text in line:
            return number
    raise KeyError(text)


def compact(value) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


async def replay() -> dict:
    from mcp.client import Client

    from tui_debugger.mcp.server import create_server

    missing_line = line_of("missing = minimum - item.quantity")
    calls: list[tuple[str, dict]] = [
        ("debug_launch", {"program": str(PROGRAM), "breakpoints": [f"{PROGRAM}:{missing_line}"]}),
        ("debug_continue", {}),
        ("debug_step_over", {}),
        ("debug_evaluate", {"expression": "item.quantity + missing"}),
        ("debug_trace", {"file": str(PROGRAM), "line": missing_line,
                         "expression": "item.quantity", "maxHits": 10}),
        ("debug_output", {}),
        ("debug_terminate", {}),
    ]
    rows = []
    async with create_server() as front:
        async with Client(front.server) as client:
            tools = (await client.list_tools()).tools
            listed = compact([t.model_dump(mode="json", by_alias=True, exclude_none=True)
                              for t in tools])
            for tool, args in calls:
                started = time.perf_counter()
                result = await client.call_tool(tool, args)
                took = time.perf_counter() - started
                raw = result.model_dump(mode="json", by_alias=True, exclude_none=True)
                rows.append({"tool": tool, "bytes": compact(raw), "ms": round(took * 1000, 1),
                             "error": bool(result.is_error)})
    total = sum(r["bytes"] for r in rows)
    largest = max(rows, key=lambda r: r["bytes"])
    return {"calls": rows, "total_bytes": total, "largest": largest,
            "tools_list_bytes": listed, "tools": len(tools)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    ns = parser.parse_args()
    base = tempfile.mkdtemp(prefix="tdbench-", dir="/tmp")
    os.environ["TUI_DEBUGGER_RUNTIME_DIR"] = os.path.join(base, "rt")
    os.environ["TUI_DEBUGGER_STATE_DIR"] = os.path.join(base, "state")
    os.environ["TUI_DEBUGGER_PERSIST_BREAKPOINTS"] = "0"
    os.chdir(ROOT)
    report = asyncio.run(replay())
    if ns.json:
        print(json.dumps(report, indent=2))
        return 0
    for row in report["calls"]:
        flag = "  ERROR" if row["error"] else ""
        print(f"{row['tool']:18} {row['bytes']:6} B  {row['ms']:7.1f} ms{flag}")
    largest = report["largest"]
    print(f"calls: {len(report['calls'])}   total: {report['total_bytes']} B "
          f"(budget {SESSION_BUDGET}, {report['total_bytes'] / SESSION_BUDGET:.2f}x)   "
          f"largest: {largest['bytes']} B ({largest['tool']}; budget {ANSWER_BUDGET})")
    print(f"tools/list: {report['tools_list_bytes']} B compact, {report['tools']} tools")
    ok = report["total_bytes"] <= SESSION_BUDGET and largest["bytes"] <= ANSWER_BUDGET and not any(
        r["error"] for r in report["calls"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
