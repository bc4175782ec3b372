"""Native programs as people start them (real lldb-dap): a C or Rust source
given as the program is built with debug information and debugged, and a
stripped binary says it has no debug information and stops on entry when asked."""

from __future__ import annotations

import subprocess

import pytest

from backends.adapters import find_lldb_dap
from backends.native_build import build_argv, debug_info
from tests.support import require, require_executable
from tests.support.mcp import call, fails, in_process_client
from tests.support.tui import ROOT

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

INVENTORY_C = ROOT / "examples" / "inventory.c"


def c_line(marker: str) -> int:
    return next(n for n, text in enumerate(INVENTORY_C.read_text().splitlines(), 1) if marker in text)


@pytest.fixture
def lldb_dap():
    require(find_lldb_dap() is not None, "lldb-dap")


def test_build_commands_and_debug_information(tmp_path):
    assert build_argv("/s/a.c", "/o/a")[1:] == ["-g", "-O0", "-o", "/o/a", "/s/a.c"]
    assert build_argv("/s/a.cpp", "/o/a")[1:] == ["-g", "-O0", "-o", "/o/a", "/s/a.cpp"]
    assert build_argv("/s/a.rs", "/o/a")[1:3] == ["-g", "-C"]
    cc = require_executable("cc")
    source = tmp_path / "hello.c"
    source.write_text("int main(void) { return 0; }\n")
    for flags, expected in ((["-g"], (True, True)), (["-O2"], (False, True)),
                            (["-O2", "-s"], (False, False))):
        subprocess.run([cc, *flags, "-o", tmp_path / "hello", source], check=True)
        assert debug_info(str(tmp_path / "hello")) == expected, flags
    assert debug_info(str(source)) is None


async def test_a_c_source_is_built_then_debugged(mcp_env, lldb_dap):
    require_executable("cc")
    line = c_line("int added = restock(")
    async with in_process_client() as client:
        launched = await call(client, "debug_launch", {
            "program": str(INVENTORY_C), "breakpoints": [f"{INVENTORY_C}:{line}"]})
        assert launched["adapter"] == "lldb-dap" and launched["state"] == "stopped"
        assert f"inventory.c:{line}" in launched.text
        output = await call(client, "debug_output", {})
        assert "built: cc -g -O0 -o" in "".join(e["text"] for e in output["entries"]), output
        await call(client, "debug_terminate", {})

        # A source that does not compile: the compiler's message, nothing left running.
        broken = mcp_env / "broken.c"
        broken.write_text("int main(void) { return undefined_name; }\n")
        failed = await fails(client, "debug_launch", {"program": str(broken)}, "command_failed")
        assert "undefined_name" in failed.text and "cc -g -O0" in failed.text


async def test_a_stripped_binary_says_so_and_stops_on_entry(mcp_env, lldb_dap, tmp_path):
    cc = require_executable("cc")
    source = tmp_path / "hello.c"
    source.write_text('#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n')
    binary = tmp_path / "hello_nodebug"
    subprocess.run([cc, "-O2", "-s", "-o", binary, source], check=True)
    async with in_process_client() as client:
        launched = await call(client, "debug_launch", {"program": str(binary), "stopOnEntry": True})
        assert launched["state"] == "stopped", launched.text
        output = await call(client, "debug_output", {})
        assert "has no debug information and no symbols (stripped)" in "".join(e["text"] for e in output["entries"]), output
        await call(client, "debug_terminate", {})


async def test_a_breakpoint_during_a_step_out_then_continue_stops_at_breakpoints(mcp_env, lldb_dap):
    """LLDB finishes an interrupted step-out at a later continue ("step" where the
    function returned); continue must go to the next breakpoint instead."""
    require_executable("cc")
    loop, restock = c_line("total += shelves[s]"), c_line("int missing = minimum")
    async with in_process_client() as client:
        launched = await call(client, "debug_launch", {"program": str(INVENTORY_C), "breakpoints": [
            f"{INVENTORY_C}:{restock}", f"{INVENTORY_C}:{loop}"]})
        assert launched["stop"]["reason"] == "breakpoint"
        out = await call(client, "debug_step_out", {})
        assert out["stop"]["reason"] == "breakpoint"  # the loop's breakpoint, during the step-out
        reasons = []
        for _ in range(5):
            answer = await call(client, "debug_continue", {})
            reasons.append((answer["stop"]["reason"], answer["stop"]["location"]["line"]))
        assert all(reason == "breakpoint" for reason, _ in reasons), reasons
        assert reasons[-1][1] == restock, reasons
        await call(client, "debug_terminate", {})
