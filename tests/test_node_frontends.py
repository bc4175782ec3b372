"""Node.js through the session's commands and through MCP: the same whole
session as for Python, on the CDP backend, with a real node."""

from __future__ import annotations

import shutil

import pytest

from backends.errors import DebuggerError
from tests.support import require
from tests.support.mcp import call, in_process_client
from tui_debugger.execute import execute
from tui_debugger.host.hub import Hub

APP = """\
function makeOrder(id, qty) {
  const order = { id, qty, lines: [{ sku: "TEA", n: qty }], note: "fragile" };
  return order; // @return
}
let total = 0;
for (let i = 1; i <= 3; i++) {
  const order = makeOrder(i, i * 2);
  total += order.qty; // @add
  console.log("order", order.id, "total", total);
}
console.error("done");
process.exitCode = 4;
"""


def line(marker: str) -> int:
    return next(n for n, text in enumerate(APP.splitlines(), 1) if marker in text)


@pytest.fixture
def app(tmp_path):
    require(shutil.which("node") is not None, "node")
    path = tmp_path / "orders.js"
    path.write_text(APP)
    return path


async def test_node_whole_session_through_the_commands(no_leftover_processes, app):
    hub = Hub(serve=True)
    try:
        status = await execute(hub, "launch", {"program": str(app),
                                               "breakpoints": [f"{app}:{line('@return')}"]},
                               origin="tui", client_cwd=str(app.parent))
        assert status.adapter == "node"
        session = hub.local(None)

        async def run(command, args=None):
            return await execute(hub, command, args or {}, origin="tui", session=session)

        stop = await run("await", {"timeoutMs": 20000})
        assert stop.status == "stopped" and stop.stop.location.line == line("@return")
        assert stop.stop.function == "makeOrder"
        locals_ = {v.name: v for v in stop.context.locals}
        assert locals_["id"].value == "1" and locals_["order"].has_children
        lines = await run("variables", {"path": "order.lines[0]"})
        assert {v.name: v.value for v in lines.variables}["sku"] == '"TEA"'
        assert (await run("evaluate", {"expression": "order.qty * 10"})).value == "20"
        with pytest.raises(DebuggerError) as err:
            await run("evaluate", {"expression": "nope.x"})
        assert "ReferenceError" in err.value.message
        stack = await run("stack", {})
        assert stack.frames[0].name == "makeOrder" and stack.frames[1].line == line("makeOrder(i, i * 2)")
        out = await run("finish", {})
            # V8 finishes the assignment the call was part of, so it may land a line later.
        assert out.status == "stopped" and out.stop.location.line in (line("makeOrder(i, i * 2)"), line("@add"))
        await run("breakpoint_remove", {"all": True})
        await run("breakpoint_add", {"file": str(app), "line": line("@add"), "condition": "i === 3"})
        third = await run("continue", {"waitMs": 20000})
        assert third.status == "stopped"
        assert (await run("evaluate", {"expression": "i"})).value == "3"
        await run("breakpoint_remove", {"all": True})
        ended = await run("continue", {"waitMs": 20000})
        assert ended.status == "terminated" and ended.exit_code == 4
        output = await run("output", {})
        text = "".join(e.text for e in output.entries)
        assert "order 3 total 12" in text and "done" in text
        await run("terminate", {})
    finally:
        await hub.close_all()


async def test_node_through_mcp(mcp_env, no_leftover_processes, app):
    async with in_process_client() as client:
        launched = await call(client, "debug_launch", {"program": str(app), "stopOnEntry": True})
        assert launched["adapter"] == "node"
        entry = await call(client, "debug_wait", {"timeoutMs": 20000})
        assert "stop" in entry and entry["stop"]["reason"] == "entry"
        await call(client, "debug_breakpoint_add", {"file": str(app), "line": line("@add"),
                                                   "logMessage": "qty {order.qty}"})
        await call(client, "debug_breakpoint_add", {"file": str(app), "line": line("@return")})
        hit = await call(client, "debug_continue", {"waitMs": 20000})
        assert "stop" in hit and hit["stop"]["location"]["line"] == line("@return")
        variables = await call(client, "debug_variables", {"path": "order", "names": ["note", "qty"]})
        assert {v["name"]: v["value"] for v in variables["variables"]} == {"note": '"fragile"', "qty": "2"}
        stepped = await call(client, "debug_step_over", {})
        assert "stop" in stepped
        await call(client, "debug_breakpoint_remove", {"all": True})
        ended = await call(client, "debug_continue", {"waitMs": 20000})
        assert ended["status"] == "terminated" and ended["exitCode"] == 4
        output = await call(client, "debug_output", {"since": 0})
        assert "order 1 total 2" in "".join(e["text"] for e in output["entries"])
        await call(client, "debug_terminate", {})
