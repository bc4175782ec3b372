"""Fault suite: a Go program's stderr reaches the output under dlv. delve
starts the program with its own stdout and stderr; stdout was forwarded, while
stderr (lines and panic traces) went nowhere."""

from __future__ import annotations

from tests.support import require
from tests.support.mcp import call, in_process_client


async def test_go_stderr_and_panics_reach_the_output(mcp_env, no_leftover_processes):
    from backends.adapters import find_dlv

    from tests.support.native_build import go_program

    require(find_dlv() is not None, "dlv")
    binary = go_program("go_stderr")
    async with in_process_client() as client:
        started = await call(client, "debug_launch", {"program": str(binary), "adapter": "dlv"})
        if started.get("status") not in ("terminated", "exited"):
            # the panic stops the program on its way out (uncaught, like an exception)
            await call(client, "debug_wait", {"timeoutMs": 20_000})
        await call(client, "debug_continue", {"waitMs": 10_000}, ok=False)
        output = await call(client, "debug_output", {})
        by_category: dict[str, str] = {}
        for entry in output["entries"]:
            by_category[entry["category"]] = by_category.get(entry["category"], "") + \
                entry["text"]
        assert "to stdout" in by_category.get("stdout", ""), output
        stderr = by_category.get("stderr", "")
        assert "to stderr: disk almost full" in stderr, output
        assert "panic: boom from go_stderr" in stderr and "goroutine 1" in stderr, output
        await call(client, "debug_terminate", {}, ok=False)
