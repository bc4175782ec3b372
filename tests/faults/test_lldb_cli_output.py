"""Fault suite: lldb-cli's program output is bounded on disk. The program's
stdout and stderr once went to files in $TMPDIR that grew as fast as it wrote
(2.8 GB in 9 s of flooding); now they are FIFOs, so a flood waits in a 64 KiB
pipe until the backend reads it, and the program with it, as on a terminal."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from tests.support import require
from tests.support.mcp import call, in_process_client

LIMIT = 8 << 20  # bytes under $TMPDIR while the program floods


def _size(directory: Path) -> int:
    total = 0
    for path in directory.rglob("*"):
        try:
            if path.is_file():
                total += path.stat().st_size
        except OSError:
            pass
    return total


async def test_a_flood_does_not_grow_a_file(tmp_path, monkeypatch, mcp_env,
                                            no_leftover_processes):
    from backends.adapters import find_lldb

    from tests.support.native_build import c_program

    require(find_lldb() is not None, "lldb")
    binary = c_program("native_endless_output")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(binary), "adapter": "lldb-cli"})
        largest, cursor, categories = 0, 0, set()
        deadline, cap = time.monotonic() + 2, time.monotonic() + 15
        while largest <= LIMIT and time.monotonic() < cap and (
                time.monotonic() < deadline or not {"stdout", "stderr"} <= categories):
            largest = max(largest, _size(scratch))
            read = await call(client, "debug_output", {"since": cursor})
            cursor = read["nextCursor"]
            categories |= {entry["category"] for entry in read["entries"]}
            await asyncio.sleep(0.1)
        assert largest <= LIMIT, f"{largest} bytes under $TMPDIR after a few seconds of output"
        assert {"stdout", "stderr"} <= categories, categories
        output = await call(client, "debug_output", {"tail": 3})
        # The answer's data (structuredContent) holds the output; its text is one line.
        assert "zzzz" in "".join(e["text"] for e in output["entries"]), output
        # the program is running (writing), and a pause stops it
        paused = await call(client, "debug_pause", {"waitMs": 10_000})
        assert "stop" in paused, paused
        await call(client, "debug_terminate", {})
