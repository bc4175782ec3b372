"""Fault suite: the debugger dies (SIGKILL) while a call waits on the running
program. The pending call must answer an error that names the debugger's death
(not "the program ended"), the program must end at once rather than run on with
no debugger, and the server must go on serving."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from tests.support import require
from tests.support.mcp import PROGRAMS, call, in_process_client

# adapter name -> (what its process's command line holds, program builder)
CASES = {
    "debugpy": "debugpy.adapter",
    "lldb-dap": "lldb-dap",
    "lldb-cli": "lldb",
    "dlv": "dlv dap",
}


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _below_us() -> list[int]:
    from backends.process import descendants, pid_alive

    return [p for p in descendants(os.getpid()) if pid_alive(p)]


def _debuggee_and_adapter(program: str, adapter: str) -> tuple[list[int], list[int]]:
    """The pids below us of the program and of its debugger (lldb-server aside)."""
    debuggee = [p for p in _below_us() if Path(program).name in _cmdline(p)
                and CASES[adapter] not in _cmdline(p)]
    adapters = [p for p in _below_us() if CASES[adapter] in _cmdline(p)
                and "lldb-server" not in _cmdline(p)]
    return debuggee, adapters


def _program(adapter: str) -> str:
    from tests.support.native_build import c_program, go_program

    if adapter == "debugpy":
        return str(PROGRAMS / "py_sleep.py")
    if adapter == "dlv":
        from backends.adapters import find_dlv

        require(find_dlv() is not None, "dlv")
        return str(go_program("go_counter"))
    from backends.adapters import find_lldb, find_lldb_dap

    require((find_lldb_dap() if adapter == "lldb-dap" else find_lldb()) is not None, adapter)
    return str(c_program("native_counter"))


@pytest.mark.parametrize("adapter", [
    "debugpy", pytest.param("lldb-cli", marks=pytest.mark.slow),
    pytest.param("lldb-dap", marks=pytest.mark.slow), pytest.param("dlv", marks=pytest.mark.slow),
])
async def test_a_dead_debugger_is_named_and_its_program_ends(adapter, mcp_env,
                                                             no_leftover_processes):
    program = _program(adapter)
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": program, "adapter": adapter,
                                            "stopOnEntry": True})
        debuggee, adapters = _debuggee_and_adapter(program, adapter)
        assert adapters, f"no {adapter} process found"
        pending = asyncio.create_task(client.call_tool("debug_continue", {"waitMs": 20_000}))
        await asyncio.sleep(0.5)  # the program runs; the call waits for a stop
        for pid in adapters:
            os.kill(pid, signal.SIGKILL)
        started = time.monotonic()
        answer = await asyncio.wait_for(pending, 15)
        text = " ".join(getattr(c, "text", "") for c in answer.content)
        assert answer.is_error and "died" in text and adapter in text, text
        assert "Traceback" not in text
        assert time.monotonic() - started < 10
        # the program does not run on without its debugger
        deadline = time.monotonic() + 5
        while any(p in _below_us() for p in debuggee) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert not [p for p in debuggee if p in _below_us()], "the program still runs"
        # the next call says why too, and the server serves on
        after = await client.call_tool("debug_stack", {})
        text = " ".join(getattr(c, "text", "") for c in after.content)
        assert after.is_error and "died" in text and "Traceback" not in text, text


@pytest.mark.parametrize("adapter", ["debugpy", pytest.param("lldb-cli", marks=pytest.mark.slow),
                                     pytest.param("dlv", marks=pytest.mark.slow)])
async def test_a_debugger_that_dies_while_stopped(adapter, mcp_env, no_leftover_processes):
    """Killed while the program is stopped, with no call waiting: the next call
    names the death and the program is gone."""
    program = _program(adapter)
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": program, "adapter": adapter,
                                            "stopOnEntry": True})
        debuggee, adapters = _debuggee_and_adapter(program, adapter)
        for pid in adapters:
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 8
        text = ""
        while time.monotonic() < deadline:
            answer = await client.call_tool("debug_continue", {"waitMs": 2_000})
            text = " ".join(getattr(c, "text", "") for c in answer.content)
            if "died" in text:
                break
            await asyncio.sleep(0.2)
        assert "died" in text and adapter in text and "Traceback" not in text, text
        deadline = time.monotonic() + 5
        while any(p in _below_us() for p in debuggee) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert not [p for p in debuggee if p in _below_us()], "the program still runs"
