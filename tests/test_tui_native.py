"""The TUI's machine-level views on a real C program under lldb-dap: the source
pane turned to disassembly (Ctrl+D), instruction steps (Alt+F11), memory at a
value from Variables (m), and a watchpoint set from Variables (w) whose stop
says old and new."""

from __future__ import annotations

import pytest

from backends.adapters import find_lldb_dap
from tests.support import require
from tests.support.native_build import c_program, line_of, source_path
from tests.support.tui import find_node, wait_until
from tui_debugger.tui.app import create_app
from tui_debugger.tui.widgets.disassembly_view import DisassemblyView
from tui_debugger.tui.widgets.memory_screen import MemoryScreen

pytestmark = pytest.mark.usefixtures("no_leftover_processes")


async def test_disassembly_stepi_memory_and_watch_from_variables():
    require(find_lldb_dap() is not None, "lldb-dap")
    loop = line_of("native_demo.c", "loop_body")
    app = create_app("launch", {"program": str(c_program("native_demo")), "adapter": "lldb-dap",
                                "breakpoints": [f"{source_path('native_demo.c')}:{loop}"]}, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state == "stopped" and app.variables.filled > 0,
                         what="the stop at the loop")
        view = app.query_one(DisassemblyView)
        assert not view.display
        await pilot.press("ctrl+d")
        assert view.display and not app.source.display
        await wait_until(pilot, lambda: view.current_row is not None, what="the disassembly")
        body = str(view.query_one("#disassembly-body").render())
        assert f"native_demo.c:{loop}" in body and "=> 0x" in body
        pc_before = view.border_subtitle

        await pilot.press("alt+f11")  # stepi: the view follows the pc
        await wait_until(pilot, lambda: app.state == "stopped" and view.border_subtitle != pc_before
                         and view.current_row is not None, what="the instruction step")
        await pilot.press("ctrl+d")
        assert app.source.display and not view.display

        tree = app.variables
        tree.focus()
        tree.move_cursor(find_node(tree, "origin"))
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(app.screen, MemoryScreen), what="the memory view")
        assert app.screen.result.hex.startswith("0300000004000000")  # origin = {3, 4, ...}
        await pilot.press("escape")

        tree.move_cursor(find_node(tree, "accumulator"))
        await pilot.press("w")
        watches: list = []

        async def listed() -> None:
            watches[:] = (await app.link.call("watch", {})).watches

        while not watches:
            await listed()
            await pilot.pause(0.05)
        assert watches[0].expression == "accumulator" and watches[0].value == "0"
        await app.link.call("breakpoint_remove", {"all": True})  # only the watchpoint stops it
        await pilot.press("f5")
        await wait_until(pilot, lambda: app.state == "stopped" and app.stop_info is not None
                         and app.stop_info.watch_changes, what="the watchpoint's stop")
        change = app.stop_info.watch_changes[0]
        assert (change.expression, change.old) == ("accumulator", "0")
        await app.action_quit()


async def test_run_core_opens_post_mortem(tmp_path):
    require(find_lldb_dap() is not None, "lldb-dap")
    from tests.support.native_build import crash_core

    program = c_program("native_segfault")
    core = crash_core(program, tmp_path / "crash")
    # What `tui-debugger run --core COREFILE PROGRAM` starts.
    app = create_app("launch", {"program": str(program), "core_file": str(core)}, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state == "stopped" and app.stop_info is not None
                         and app.variables.filled > 0, what="the core's stop")
        assert "SIGSEGV" in (app.stop_info.text or "")
        assert app.source.location_line == line_of("native_segfault.c", "crash")
        await pilot.press("f10")  # refused: the program is dead
        await wait_until(pilot, lambda: any("core dump" in str(n.message)
                                            for n in app._notifications), what="the refusal")
        assert app.state == "stopped"
        await app.action_quit()


async def test_step_out_value_struct_fields_and_short_buffers(tmp_path):
    """Shift+F11 out of a C function: its returned value heads Variables; a byte
    buffer is short there; `*item` in the console shows the struct's fields."""
    import shutil
    import subprocess
    from pathlib import Path

    from tests.support.tui import tree_labels
    from tui_debugger.tui.widgets.console_results import ConsoleResults

    require(find_lldb_dap() is not None and shutil.which("gcc") is not None, "lldb-dap and gcc")
    source = tmp_path / "inventory.c"
    text = (Path(__file__).resolve().parent.parent / "examples" / "inventory.c").read_text()
    # A byte buffer among restock's caller's locals.
    source.write_text(text.replace("    int restocked = 0;\n",
                                   "    int restocked = 0;\n    unsigned char seen[4096] = {11, 206};\n"))
    program = tmp_path / "inventory"
    subprocess.run(["gcc", "-g", "-O0", "-o", str(program), str(source)], check=True)
    body = next(n for n, line in enumerate(source.read_text().splitlines(), 1)
                if "int missing = minimum - item->quantity;" in line)
    app = create_app("launch", {"program": str(program), "adapter": "lldb-dap",
                                "breakpoints": [f"{source}:{body}"]}, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state == "stopped" and app.variables.filled > 0,
                         what="the stop in restock")
        await pilot.press("alt+c")
        app.focused.value = "*item"
        await pilot.press("enter")
        results = app.query_one(ConsoleResults)
        await wait_until(pilot, lambda: len(results.root.children) == 1, what="the console result")
        assert 'sku = 0x' in results.root.children[0].label.plain
        assert "quantity = 12}" in results.root.children[0].label.plain

        await pilot.press("shift+f11")
        await wait_until(pilot, lambda: app.state == "stopped" and any(
            "(Return Value)" in label for label in tree_labels(app.variables)),
            what="the returned value in Variables")
        labels = tree_labels(app.variables)
        assert labels[0] == "Locals"
        assert labels[1].strip().startswith("(Return Value) = 0") and "int" in labels[1]
        seen = next(label for label in labels if label.strip().startswith("seen"))
        assert '"\\v\\xce…"' in seen and "(4096 bytes)" in seen, seen
        await app.action_quit()
