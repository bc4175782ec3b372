"""What an agent pays, in bytes, for a blind hunt in a C program none of us wrote.

The native section of the blind-hunt benchmark (agent_session.py measures the
Python session): zlib's zran.c example (Debian's zlib1g-dev ships it under
/usr/share/doc/zlib1g-dev/examples) with one off-by-one put in it, so that "the
output starts one byte early". Replayed back to back through the MCP client on
a fresh in-process server (lldb-dap by default), each call being what the last
answer suggests:

  launch, a breakpoint where the skip to the offset begins -> the stop (locals
                                                      with two 16-48 KB buffers)
  evaluate *here                     -> the access point's fields
  step over, evaluate offset         -> how far to skip past it
  breakpoint on the last skip, continue -> the stop there
  step over, evaluate strm.avail_out -> one less than offset: the bug
  set strm.avail_out to offset       -> answers the value now stored
  step out                           -> the value deflate_index_extract returned
  continue, output from the start    -> the program's first lines, as written
  terminate

Bytes are those of each tools/call result as the client receives it (text and
structuredContent, compact JSON). Measured for issue 33, where the same hunt by
an agent took 29 calls and 32,742 bytes (largest answer 3,612 B).

Run:  python benchmarks/native_hunt.py [--adapter lldb-cli] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EXAMPLES = Path("/usr/share/doc/zlib1g-dev/examples")
#: the off-by-one: the last skip stops one byte short of the offset
CORRECT = "strm.avail_out = (unsigned)offset;"
BUGGY = "strm.avail_out = (unsigned)offset - 1;"
ANSWER_BUDGET = 4096


def compact(value) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def build(workdir: Path) -> tuple[Path, Path, Path]:
    """The buggy zran, its source, and a gzip file to read."""
    for name in ("zran.c", "zran.h"):
        plain, packed = EXAMPLES / name, EXAMPLES / f"{name}.gz"
        if plain.exists():
            shutil.copyfile(plain, workdir / name)
        elif packed.exists():
            (workdir / name).write_bytes(gzip.decompress(packed.read_bytes()))
        else:
            sys.exit(f"{plain} is missing: apt-get install zlib1g-dev")
    source = workdir / "zran.c"
    text = source.read_text()
    if CORRECT not in text:
        sys.exit(f"this zran.c has no line {CORRECT!r} to break")
    source.write_text(text.replace(CORRECT, BUGGY))
    program = workdir / "zran"
    subprocess.run(["gcc", "-g", "-O0", "-DTEST", "-o", str(program), str(source), "-lz"],
                   check=True)
    data = workdir / "numbers.gz"
    data.write_bytes(gzip.compress("".join(f"{i}\n" for i in range(1, 200_001)).encode(),
                                   mtime=0))
    return program, source, data


def line_of(source: Path, text: str) -> int:
    for number, line in enumerate(source.read_text().splitlines(), 1):
        if text in line:
            return number
    raise KeyError(text)


async def hunt(adapter: str, program: Path, source: Path, data: Path) -> dict:
    from mcp.client import Client

    from tui_debugger.mcp.server import create_server

    rows: list[dict] = []

    async def call(client, tool: str, args: dict) -> dict:
        started = time.perf_counter()
        result = await client.call_tool(tool, args)
        took = time.perf_counter() - started
        raw = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        rows.append({"tool": tool, "bytes": compact(raw), "ms": round(took * 1000, 1),
                     "error": bool(result.is_error)})
        return result.structured_content or {}

    skip_start = line_of(source, "offset -= here->out;")
    last_skip = line_of(source, BUGGY)
    async with create_server() as front:
        async with Client(front.server) as client:
            await call(client, "debug_launch", {
                "program": str(program), "args": [str(data)], "adapter": adapter,
                "breakpoints": [f"{source}:{skip_start}"]})
            await call(client, "debug_evaluate", {"expression": "*here"})
            await call(client, "debug_step_over", {})
            # (lldb-cli answers lldb's own description: "(off_t) $1 = 32768")
            offset = (await call(client, "debug_evaluate",
                                 {"expression": "offset"}))["value"].split(" = ")[-1]
            await call(client, "debug_breakpoint_add", {"file": str(source), "line": last_skip})
            await call(client, "debug_continue", {})
            await call(client, "debug_step_over", {})
            await call(client, "debug_evaluate", {"expression": "strm.avail_out"})
            await call(client, "debug_set_variable", {"path": "strm.avail_out", "value": offset})
            await call(client, "debug_breakpoint_remove", {"all": True})
            await call(client, "debug_step_out", {})
            await call(client, "debug_continue", {})
            await call(client, "debug_output", {"head": 3})
            await call(client, "debug_terminate", {})
    total = sum(r["bytes"] for r in rows)
    return {"adapter": adapter, "calls": rows, "total_bytes": total,
            "largest": max(rows, key=lambda r: r["bytes"]),
            "ms": round(sum(r["ms"] for r in rows), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapter", default="lldb-dap", choices=["lldb-dap", "lldb-cli"])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    ns = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="tdbench-native-", dir="/tmp"))
    os.environ["TUI_DEBUGGER_RUNTIME_DIR"] = str(base / "rt")
    os.environ["TUI_DEBUGGER_STATE_DIR"] = str(base / "state")
    os.environ["TUI_DEBUGGER_PERSIST_BREAKPOINTS"] = "0"
    try:
        program, source, data = build(base)
        os.chdir(base)
        report = asyncio.run(hunt(ns.adapter, program, source, data))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if ns.json:
        print(json.dumps(report, indent=2))
        return 0
    for row in report["calls"]:
        flag = "  ERROR" if row["error"] else ""
        print(f"{row['tool']:24} {row['bytes']:6} B  {row['ms']:7.1f} ms{flag}")
    largest = report["largest"]
    print(f"{ns.adapter}: calls: {len(report['calls'])}   total: {report['total_bytes']} B   "
          f"largest: {largest['bytes']} B ({largest['tool']}; budget {ANSWER_BUDGET})   "
          f"time in calls: {report['ms']} ms")
    ok = largest["bytes"] <= ANSWER_BUDGET and not any(r["error"] for r in report["calls"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
