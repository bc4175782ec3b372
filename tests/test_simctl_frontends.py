"""The simulator flow through the front ends: the `attach_sim` command (MCP's
debug_attach_sim) and `tui-debugger attach --sim`, against the fake xcrun, with
real LLDB attaching to a real local process."""

from __future__ import annotations

import subprocess
import sys

import pytest

from backends.process import pid_alive
from tests.support.simctl import APP_SOURCE, BREAK_LINE, BUNDLE, IPHONE_15, wait_until_released
from tui_debugger.execute import execute
from tui_debugger.host.hub import Hub


@pytest.mark.parametrize("kind", ["lldb-cli", "lldb-dap"])
async def test_attach_sim_command_stops_at_a_breakpoint_and_detaches(sims, sim_app, kind):
    proc = sim_app.start()
    sims.set_app(IPHONE_15, BUNDLE, proc.pid, appPath=str(sim_app.bundle))
    hub = Hub(serve=True)
    try:
        status = await execute(hub, "attach_sim", {"simulatorName": "iPhone 15", "bundleId": BUNDLE,
                                                   "adapter": kind}, origin="mcp")
        assert status.state in ("running", "stopped") and status.adapter == kind
        session = hub.sessions[status.session]
        assert session.metadata["simulator"]["udid"] == IPHONE_15
        added = await execute(hub, "breakpoint_add", {"file": str(APP_SOURCE), "line": BREAK_LINE},
                              origin="mcp", session=session)
        assert added.breakpoint.verified
        stop = await execute(hub, "await", {"timeoutMs": 20000}, origin="mcp", session=session)
        assert stop.status == "stopped" and stop.stop.location.line == BREAK_LINE
        assert stop.stop.function and "draw_frame" in stop.stop.function
        stack = await execute(hub, "stack", {}, origin="mcp", session=session)
        assert "draw_frame" in stack.frames[0].name
        raw = await execute(hub, "lldb_command", {"command": "thread backtrace"}, origin="mcp",
                            session=session)
        assert "draw_frame" in raw.output
        await execute(hub, "detach", {}, origin="mcp", session=session)
    finally:
        await hub.close_all()
    assert pid_alive(proc.pid)
    tracer, state = await wait_until_released(proc.pid)
    assert tracer == 0 and state != "t"


@pytest.mark.slow
def test_cli_attach_sim_headless(sims, sim_app, tmp_path):
    proc = sim_app.start()
    sims.set_app(IPHONE_15, BUNDLE, proc.pid, appPath=str(sim_app.bundle))

    def tdb(*args):
        return subprocess.run([sys.executable, "-m", "tui_debugger", *args], capture_output=True,
                              text=True, timeout=90, cwd=tmp_path, stdin=subprocess.DEVNULL)

    started = tdb("attach", "--headless", "--sim", "iPhone 15", "--bundle-id", BUNDLE)
    assert started.returncode == 0, started.stderr
    assert "lldb-cli" in started.stdout
    added = tdb("break", "add", f"{APP_SOURCE}:{BREAK_LINE}")
    assert added.returncode == 0 and "unverified" not in added.stdout, added.stdout + added.stderr
    stop = tdb("await", "--timeout", "20")
    assert "draw_frame" in stop.stdout, stop.stdout + stop.stderr
    denied = tdb("lldb", "process", "kill")
    assert denied.returncode == 1 and "allowlist" in denied.stderr and "allowUnsafe" in denied.stderr
    detached = tdb("detach")
    assert detached.returncode == 0, detached.stderr
    assert pid_alive(proc.pid)

    missing = tdb("attach", "--headless", "--sim", "iPhone 99", "--bundle-id", BUNDLE)
    assert missing.returncode == 1 and "iPhone 99" in missing.stderr and "Traceback" not in missing.stderr
