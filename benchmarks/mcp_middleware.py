"""What the MCP SDK's OpenTelemetry middleware costs a tool call.

The SDK's `Server` wraps every request in `OpenTelemetryMiddleware` (a span
per message, a no-op tracer until an exporter is installed). This times it
around a handler that does nothing, against the bare handler, per call.

Run:  python benchmarks/mcp_middleware.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
import types


async def main(calls: int) -> None:
    from mcp.server._otel import OpenTelemetryMiddleware

    middleware = OpenTelemetryMiddleware()
    ctx = types.SimpleNamespace(
        params={"name": "debug_step_over", "arguments": {}}, method="tools/call",
        protocol_version="2025-11-25", request_id=7, meta=None)

    async def handler(_ctx: object) -> dict:
        return {"content": []}

    for _ in range(calls // 10):  # warm-up
        await middleware(ctx, handler)
    t0 = time.perf_counter()
    for _ in range(calls):
        await middleware(ctx, handler)
    t1 = time.perf_counter()
    for _ in range(calls):
        await handler(ctx)
    t2 = time.perf_counter()
    print(f"OpenTelemetry middleware: {1e6 * (t1 - t0) / calls:.1f} µs a call; the bare "
          f"handler {1e6 * (t2 - t1) / calls:.1f} µs (load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    asyncio.run(main(parser.parse_args().calls))
