"""Disassembly, instruction steps, memory, watchpoints and core dumps through
the front ends: MCP tools as an agent drives them (back to back, each call
decided by the last answer) and the CLI's own forms, on real lldb."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from backends.adapters import find_lldb, find_lldb_dap
from tests.support import require
from tests.support.native_build import c_program, crash_core, line_of, source_path
from tests.support.mcp import call, fails, in_process_client

DEMO_C = source_path("native_demo.c")


@pytest.fixture(params=["lldb-dap", "lldb-cli"])
def adapter(request):
    finder = find_lldb_dap if request.param == "lldb-dap" else find_lldb
    require(finder() is not None, request.param)
    return request.param


async def test_agent_disassembles_steps_reads_memory_and_watches(mcp_env, adapter,
                                                                  no_leftover_processes):
    loop = line_of("native_demo.c", "loop_body")
    async with in_process_client() as client:
        launched = await call(client, "debug_launch", {
            "program": str(c_program("native_demo")), "adapter": adapter,
            "breakpoints": [f"{DEMO_C}:{loop}"]})
        assert launched["adapter"] == adapter
        stop = await call(client, "debug_wait", {"timeoutMs": 20000})
        assert "stop" in stop

        around = await call(client, "debug_disassemble", {"count": 12})
        current = [i for i in around["instructions"] if i.get("current")]
        assert len(current) == 1 and current[0]["address"] == around["pc"]
        assert any(i.get("line") == loop and "accumulator" in i.get("source", "")
                   for i in around["instructions"])
        assert any(i.get("file", "").endswith("native_demo.c") for i in around["instructions"])
        listing = await call(client, "debug_disassemble", {"function": "square", "count": 3})
        assert listing["instructions"][0]["symbol"] == "square"

        # stepi lands on the instruction after the pc, as the listing showed it.
        following = around["instructions"][around["instructions"].index(current[0]) + 1]
        stepped = await call(client, "debug_stepi", {})
        assert "stop" in stepped
        assert (await call(client, "debug_disassemble", {"count": 3}))["pc"] == following["address"]
        assert "stop" in (await call(client, "debug_nexti", {}))

        memory = await call(client, "debug_memory_read", {"expression": "origin.label",
                                                          "count": 6})
        assert bytes.fromhex(memory["hex"]) == b"origin" and "|origin|" in "".join(memory["rows"])
        by_address = await call(client, "debug_memory_read",
                                {"address": memory["address"], "count": 2})
        assert by_address["hex"] == "6f72"

        watched = await call(client, "debug_watch", {"expression": "global_counter"})
        assert watched["watches"][0]["verified"] and watched["watches"][0]["value"] == "7"
        await call(client, "debug_breakpoint_remove", {"all": True})
        hit = await call(client, "debug_continue", {"waitMs": 20000})
        assert hit["stop"]["reason"] == "data breakpoint"
        change = hit["stop"]["watch_changes"][0]
        assert (change["expression"], change["old"], change["new"]) == ("global_counter", "7", "8")
        assert "global_counter: 7 -> 8" in hit.text
        await fails(client, "debug_watch", {"expression": "no_such_name"}, "invalid_input",
                    "no_such_name")
        listed = await call(client, "debug_watch", {})
        assert [w["expression"] for w in listed["watches"]] == ["global_counter"]
        removed = await call(client, "debug_watch", {"all": True})
        assert not removed.get("watches") and removed["removed"][0]["expression"] == "global_counter"
        ended = await call(client, "debug_continue", {"waitMs": 20000})
        assert ended["status"] == "terminated"


async def test_agent_opens_a_core_dump(mcp_env, adapter, tmp_path, no_leftover_processes):
    program = c_program("native_segfault")
    core = crash_core(program, tmp_path / "core")
    async with in_process_client() as client:
        opened = await call(client, "debug_launch", {"program": str(program),
                                                     "coreFile": str(core), "adapter": adapter})
        assert opened["postMortem"] and opened["state"] == "stopped"
        assert "SIGSEGV" in opened["stop"]["text"]
        assert opened["nextSteps"] == ["debug_stack", "debug_memory_read", "debug_disassemble"]
        stack = await call(client, "debug_stack", {})
        assert [f["name"] for f in stack["frames"][:2]] == ["read_next_value", "main"]
        local = await call(client, "debug_variables", {"frameIndex": 1, "path": "lonely"})
        assert {v["name"]: v["value"] for v in local["variables"]}["value"] == "1"
        memory = await call(client, "debug_memory_read", {"expression": "&lonely",
                                                          "frameIndex": 1, "count": 4})
        assert memory["hex"] == "01000000"
        listing = await call(client, "debug_disassemble", {"count": 4})
        assert any(i.get("current") for i in listing["instructions"])
        for tool in ("debug_continue", "debug_step_over", "debug_stepi"):
            await fails(client, tool, {}, "invalid_input", "core dump")
        await fails(client, "debug_watch", {"expression": "lonely.value"}, "invalid_input",
                    "core dump")
        await call(client, "debug_terminate", {})


def _tdb(cwd, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    if check and done.returncode != 0:
        raise AssertionError(f"tui-debugger {' '.join(args)}: {done.stdout}{done.stderr}")
    return done


@pytest.mark.slow
def test_cli_core_disassemble_memory(tmp_path, no_leftover_daemons, no_leftover_processes):
    require(find_lldb_dap() is not None, "lldb-dap")
    program = c_program("native_segfault")
    core = crash_core(program, tmp_path / "crash")
    opened = json.loads(_tdb(tmp_path, "core", str(program), str(core), "--json").stdout)
    assert opened["postMortem"] and opened["adapter"] == "lldb-dap"
    try:
        bt = _tdb(tmp_path, "bt").stdout
        assert "read_next_value" in bt and "main" in bt
        listing = _tdb(tmp_path, "disassemble", "--count", "6").stdout
        assert "=>" in listing and f"native_segfault.c:{line_of('native_segfault.c', 'crash')}" \
            in listing
        assert "main:" in _tdb(tmp_path, "disassemble", "main", "-c", "2").stdout
        memory = _tdb(tmp_path, "memory", "&lonely", "--frame", "1", "--count", "4").stdout
        assert "01 00 00 00" in memory
        refused = _tdb(tmp_path, "next", check=False)
        assert refused.returncode == 1 and "core dump" in refused.stderr
    finally:
        _tdb(tmp_path, "stop", check=False)


async def test_a_backend_without_them_says_so_by_name(mcp_env, no_leftover_processes):
    from tests.support.native_build import PROGRAMS

    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(PROGRAMS / "py_basic.py"),
                                            "stopOnEntry": True})
        # (debug_watch is not among them: Python has watches, tests/test_python_watch.py)
        for tool, args in (("debug_disassemble", {}), ("debug_memory_read", {"address": "0x10"}),
                           ("debug_stepi", {})):
            await fails(client, tool, args, "invalid_input", "debugpy")
        assert (await call(client, "debug_status", {}))["state"] == "stopped"
        await call(client, "debug_terminate", {})
