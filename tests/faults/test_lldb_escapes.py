"""Fault suite: the LLDB escapes, run for real. Each attempt that once ran a
shell, Python, native code or wrote a file through the denylist is sent to a
live session on every path text takes to LLDB (debug_lldb_command, and
debug_evaluate on lldb-dap, plain and with lldb-dap's backtick prefix). Each
must answer a typed error at once, leave no marker file, and leave the session
stopped where it was. The control at the end proves the marker would appear:
with allowUnsafe the same shell command does run."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from tests.support import require
from tests.test_lldb_allowlist import ESCAPES
from tests.support.mcp import PROGRAMS, call, in_process_client, line_of


def _with_marker(command: str, marker: Path) -> str:
    return re.sub(r"\bM\b", str(marker), command)


@pytest.mark.parametrize("adapter", ["lldb-dap", "lldb-cli"])
async def test_no_escape_runs(adapter, mcp_env, no_leftover_processes):
    from backends.adapters import find_lldb, find_lldb_dap

    from tests.support.native_build import c_program

    require((find_lldb_dap() if adapter == "lldb-dap" else find_lldb()) is not None, adapter)
    binary = c_program("native_demo")
    source = PROGRAMS / "native_demo.c"
    markers = Path(tempfile.mkdtemp(prefix="tdbg-escape-"))
    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "program": str(binary), "adapter": adapter,
            "breakpoints": [f"{source}:{line_of(source, 'LINE:loop_body')}"]})
        assert "stop" in (await call(client, "debug_wait", {"timeoutMs": 20_000}))
        paths = [("debug_lldb_command", "command", "")]
        if adapter == "lldb-dap":  # its evaluate REPL runs commands
            paths += [("debug_evaluate", "expression", ""), ("debug_evaluate", "expression", "`")]
        for n, escape in enumerate(ESCAPES):
            for tool, argument, prefix in paths:
                marker = markers / f"m{n}-{tool}-{len(prefix)}"
                answer = await call(client, tool, {argument: prefix + _with_marker(escape, marker)},
                                    ok=False)
                assert answer.is_error, (tool, escape, answer.text)
                assert answer["code"] in ("command_denied", "command_failed", "invalid_input"), (
                    tool, escape, answer.text)
                if tool == "debug_lldb_command" or prefix:
                    assert answer["code"] == "command_denied" and "allowlist" in answer.text
                assert "Traceback" not in answer.text
                assert not marker.exists(), f"{tool} {escape!r} ran"
        assert not list(markers.iterdir())
        # still stopped in the loop, and the read-only commands run
        assert (await call(client, "debug_status", {}))["state"] == "stopped"
        shown = await call(client, "debug_lldb_command", {"command": "fr v origin"})
        assert "x = 3" in shown["output"] and not shown.get("unsafe")
        if adapter == "lldb-dap":
            bt = await call(client, "debug_evaluate", {"expression": "bt"})
            assert "native_demo" in bt["value"]
            assert (await call(client, "debug_evaluate", {"expression": "origin.x"}))["value"] == "3"
        # control: the same shell command does run when the user allows it
        control = markers / "control"
        ran = await call(client, "debug_lldb_command", {
            "command": f"platform shell touch {control}", "allowUnsafe": True})
        assert ran["unsafe"] and control.exists()
        await call(client, "debug_terminate", {})
