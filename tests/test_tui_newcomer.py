"""The TUI as a newcomer meets it (Pilot, real debugpy): keys typed ahead act in
the order typed, the mouse works in every pane, the keys people expect from
other debuggers, jump to a line, inspect under the cursor, open any file."""

from __future__ import annotations

import pytest
from textual import events

from tests.support.tui import example_line, find_node, screen_text, tree_labels, wait_until
from tui_debugger.tui.app import create_app

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

CALL_RESTOCK = example_line("added = restock(item")
MISSING = example_line("missing = minimum - item.quantity")
TOTAL_LOOP = example_line("total += item.value()")


def typed_ahead(app, *keys: str) -> None:
    """Keys as a terminal delivers them in one write: every one queued before
    the app handles the first (Pilot's press waits for the app between keys)."""
    for key in keys:
        event = events.Key(key, None)
        event.set_sender(app)
        app._driver.send_message(event)  # noqa: SLF001 - what the driver does with a read


async def stopped_at(pilot, line: int, what: str = "") -> None:
    app = pilot.app
    await wait_until(pilot, lambda: app.state == "stopped" and app.source.location_line == line,
                     what=what or f"a stop at line {line}")


async def test_keys_typed_ahead_act_in_the_order_typed():
    app = create_app("launch", {"program": "examples/inventory.py",
                                "breakpoints": [f"examples/inventory.py:{CALL_RESTOCK}"]})
    async with app.run_test(size=(120, 40)) as pilot:
        await stopped_at(pilot, CALL_RESTOCK)
        # F9 on `missing = …` (inside restock), then F5, in one write: the
        # breakpoint is there before the program continues, so it stops on it.
        app.source.go_to_line(MISSING)
        typed_ahead(app, "f9", "f5")
        await stopped_at(pilot, MISSING, "the breakpoint added before continue")
        # The same from another pane: the breakpoint on `added = restock(…)`
        # removed on the Breakpoints pane (Delete), then F5: the next stop is the
        # remaining one in restock, not the removed one of the loop.
        await pilot.press("alt+p")
        breakpoints = app.query_one("#breakpoints")
        await wait_until(pilot, lambda: breakpoints.row_count == 2, what="two breakpoints")
        breakpoints.move_cursor(row=0)
        typed_ahead(app, "delete", "f5")
        await wait_until(pilot, lambda: app.state == "stopped" and len(app.breakpoints) == 1
                         and app.stop_info is not None and app.stop_info.location.line == MISSING,
                         what="the next hit of the remaining breakpoint")
        commands = [e.command for e in app.query_one("#activity").entries]
        assert commands.index("breakpoint_add") < commands.index("continue"), commands

        # Shift+Tab from the console's input to its result, then Enter, in one
        # write: Enter opens the result (it went to the input, which had not
        # lost the focus yet: the tmux test's unopened result on a busy
        # machine). Then Tab back and typing: the typing is in the input.
        from tui_debugger.tui.widgets.console_pane import ConsoleInput
        from tui_debugger.tui.widgets.console_results import ConsoleResults

        await pilot.press("alt+c", *"{'k': [1, 2]}", "enter")
        results = app.query_one(ConsoleResults)
        await wait_until(pilot, lambda: results.display and results.root.children, what="a result")
        result = results.root.children[-1]
        assert not result.is_expanded
        typed_ahead(app, "shift+tab", "enter")
        await wait_until(pilot, lambda: result.is_expanded, what="the result opened by Enter")
        assert app.focused is results
        typed_ahead(app, "tab", "x")
        box = app.query_one(ConsoleInput)
        await wait_until(pilot, lambda: app.focused is box and box.value == "x",
                         what="x typed in the input Tab went to")
        # Typing, then Tab, in one write: the completion sees the typing.
        box.value = ""
        for key, char in [*((c, c) for c in "isinst"), ("tab", "\t")]:
            event = events.Key(key, char)
            event.set_sender(app)
            app._driver.send_message(event)  # noqa: SLF001
        await wait_until(pilot, lambda: box.value.startswith("isinstance"),
                         what="isinst and Tab in one write completed")


def row_offset(app, widget, y: int, wanted) -> tuple[int, int]:
    """The offset in `widget` of the first cell of row y whose meta fits `wanted`
    (what the screen hands a click there)."""
    cell = _cell_in_row(app, widget, y, wanted)
    if cell is None:
        raise AssertionError(f"no such cell on row {y} of {widget}")
    return cell


def node_row(tree, node) -> int:
    """The node's row on screen (scrolled into view first)."""
    if not 0 <= node.line - tree.scroll_offset.y < tree.scrollable_content_region.height:
        tree.scroll_to(y=max(0, node.line - 1), animate=False, immediate=True)
    return node.line - tree.scroll_offset.y


def _cell_in_row(app, widget, y: int, wanted) -> tuple[int, int] | None:
    region = widget.region
    if not 0 <= y < region.height:
        return None
    for x in range(region.width):
        if wanted(app.screen.get_style_at(region.x + x, region.y + y).meta):
            return x, y
    return None


async def node_cell(pilot, widget, node, wanted, what: str = "the node's row") -> tuple[int, int]:
    """The offset in tree `widget` of the first cell of `node`'s row whose meta
    fits `wanted`, once that row is on screen: a node just added has no line
    (-1) until the tree builds its lines, and its row no cells until painted."""
    found: list[tuple[int, int]] = []

    def on_screen() -> bool:
        if node.line < 0:
            return False
        cell = _cell_in_row(pilot.app, widget, node_row(widget, node), wanted)
        if cell is not None:
            found.append(cell)
        return cell is not None

    await wait_until(pilot, on_screen, what=f"{what} on screen")
    return found[-1]


async def test_the_mouse_alone_in_every_pane():
    from tui_debugger.tui.widgets.breakpoint_dialog import BreakpointDialog
    from tui_debugger.tui.widgets.console_results import ConsoleResults
    from tui_debugger.tui.widgets.value_dialog import ValueDialog

    app = create_app("launch", {"program": "examples/inventory.py",
                                "breakpoints": [f"examples/inventory.py:{CALL_RESTOCK}"]})
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state == "stopped"
                         and find_node(app.variables, "item") is not None, what="the first stop")
        tree = app.variables

        # Variables: ▶ opens a value and closes it again.
        item = find_node(tree, "item")
        await pilot.click(tree, offset=await node_cell(pilot, tree, item, lambda m: m.get("toggle")))
        await wait_until(pilot, lambda: find_node(tree, "item.quantity") is not None,
                         what="item opened by a click on ▶")
        # A plain value: a click highlights it, a second click asks for a new value.
        quantity = find_node(tree, "item.quantity")
        where = await node_cell(pilot, tree, quantity, lambda m: "line" in m and "toggle" not in m)
        await pilot.click(tree, offset=(where[0] + 6, where[1]))
        assert tree.cursor_node is quantity and not isinstance(app.screen, ValueDialog)
        await pilot.click(tree, offset=(where[0] + 6, where[1]))
        await wait_until(pilot, lambda: isinstance(app.screen, ValueDialog), what="the value dialog")
        await pilot.press("escape")
        item = find_node(tree, "item")
        await pilot.click(tree, offset=await node_cell(pilot, tree, item, lambda m: m.get("toggle")))
        await wait_until(pilot, lambda: not find_node(tree, "item").is_expanded, what="item closed")

        # The console's results tree opens with the mouse too.
        await pilot.press("alt+c", *"warehouse.shelves", "enter")
        results = app.query_one(ConsoleResults)
        await wait_until(pilot, lambda: results.display and results.root.children, what="a result")
        await pilot.pause()
        result = results.root.children[-1]
        if result.is_expanded:  # opened with its first page: close it by a click
            await pilot.click(results, offset=await node_cell(pilot, results, result,
                                                              lambda m: m.get("toggle")))
            await wait_until(pilot, lambda: not result.is_expanded, what="the result closed")
        await pilot.click(results, offset=await node_cell(pilot, results, result,
                                                          lambda m: m.get("toggle")))
        await wait_until(pilot, lambda: result.is_expanded and result.children, what="the result open")
        shelf = result.children[0]
        await pilot.click(results, offset=await node_cell(pilot, results, shelf,
                                                          lambda m: m.get("toggle")))
        await wait_until(pilot, lambda: shelf.is_expanded and shelf.children
                         and "loading" not in shelf.children[0].label.plain, what="a shelf open")

        # Breakpoints: a click on the glyph disables, another enables; a row clicked twice edits.
        await pilot.press("alt+p")
        pane = app.query_one("#breakpoints")
        await wait_until(pilot, lambda: pane.row_count == 1, what="the breakpoint listed")
        glyph = row_offset(app, pane, 1, lambda m: m.get("row") == 0 and m.get("column") == 0)
        await pilot.click(pane, offset=glyph)
        await wait_until(pilot, lambda: not app.breakpoints[0].spec.enabled, what="disabled by a click")
        await pilot.click(pane, offset=glyph)
        await wait_until(pilot, lambda: app.breakpoints[0].spec.enabled, what="enabled by a click")
        where = row_offset(app, pane, 1, lambda m: m.get("row") == 0 and m.get("column") == 2)
        await pilot.click(pane, offset=where)
        await pilot.click(pane, offset=where)
        await wait_until(pilot, lambda: isinstance(app.screen, BreakpointDialog), what="the dialog")
        await pilot.press("escape")

        # Threads: a row clicked twice selects the thread.
        await pilot.press("alt+h")
        threads = app.query_one("#threads")
        await wait_until(pilot, lambda: threads.row_count >= 1, what="the threads")
        where = row_offset(app, threads, 1, lambda m: m.get("row") == 0)
        await pilot.click(threads, offset=where)
        await pilot.click(threads, offset=where)
        await wait_until(pilot, lambda: "thread_select" in
                         [e.command for e in app.query_one("#activity").entries],
                         what="thread_select from two clicks")


SPIN = """\
import time

def spin():
    n = 0
    while True:  # spin
        n += 1
        time.sleep(0.01)

spin()
"""


async def test_keys_people_expect(tmp_path):
    from tui_debugger.tui.widgets.quit_dialog import QuitDialog

    program = tmp_path / "spin.py"
    program.write_text(SPIN)
    app = create_app("launch", {"program": str(program)}, cwd=str(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state == "running", what="the program running")
        # Ctrl+C pauses, as in gdb, lldb and pdb.
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: app.state == "stopped" and app.stop_info is not None,
                         what="Ctrl+C pausing the program")
        assert app.stop_info.reason == "pause"

        # Alt+W: the watch input, ready to type into; Enter adds the watch.
        await pilot.press("alt+w")
        assert app.focused is not None and app.focused.id == "watch-input"
        await pilot.press(*"n + 1", "enter")
        await wait_until(pilot, lambda: app.watch_expressions == ["n + 1"], what="the watch added")

        # In the console, Alt+letters move to their panes instead of typing a letter.
        await pilot.press("alt+c", *"n")
        console = app.focused
        assert console.id == "console-input" and console.value == "n"
        for key, widget_id in [("alt+p", "breakpoints"), ("alt+c", "console-input"),
                               ("alt+w", "watch-input"), ("alt+c", "console-input"),
                               ("alt+v", "variables"), ("alt+c", "console-input")]:
            await pilot.press(key)
            assert app.focused is not None and app.focused.id == widget_id, (key, app.focused)
        assert console.value == "n"

        # Stopped, Ctrl+C in a text field is left to it (copy); elsewhere it says what it does.
        await pilot.press("ctrl+c")
        assert app.state == "stopped" and console.value == "n"

        # q asks first; Escape stays, q in the dialog quits.
        await pilot.press("alt+s", "q")
        await wait_until(pilot, lambda: isinstance(app.screen, QuitDialog), what="the quit dialog")
        assert "ends the program" in screen_text(app)
        await pilot.press("escape")
        assert not isinstance(app.screen, QuitDialog) and app.is_running
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, QuitDialog), what="the quit dialog")
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running, what="the app quitting")


def pane_text(app, selector: str) -> str:
    """The rows of a pane as they are on screen."""
    region = app.query_one(selector).region
    rows = screen_text(app).splitlines()[region.y:region.bottom]
    return "\n".join(row[region.x:region.right] for row in rows)


async def test_narrow_terminals_keep_line_numbers_and_wide_ones_the_hits():
    long_message = "restocking {item.sku} " + "with a very long explanation " * 6
    app = create_app("launch", {"program": "examples/inventory.py", "breakpoints": [
        f"examples/inventory.py:{CALL_RESTOCK}",
        {"file": "examples/inventory.py", "line": MISSING, "condition": "item.quantity < 100"}]})
    async with app.run_test(size=(80, 24)) as pilot:
        await stopped_at(pilot, CALL_RESTOCK)
        await pilot.press("f5")
        await stopped_at(pilot, MISSING)
        await wait_until(pilot, lambda: app.query_one("#stack").row_count == 3, what="the stack")
        await pilot.pause()
        status = app.status.render().plain
        assert f":{MISSING} in restock" in status, status
        stack = pane_text(app, "#stack")
        assert f".py:{MISSING}" in stack and f".py:{CALL_RESTOCK}" in stack, stack
        await pilot.press("alt+p")
        await wait_until(pilot, lambda: f".py:{MISSING}" in pane_text(app, "#breakpoints"),
                         what="the breakpoints' lines at 80 columns")
        shown = pane_text(app, "#breakpoints")
        assert f".py:{CALL_RESTOCK}" in shown, shown

        # 160 columns, a logpoint's long message: hits and who set it stay in view.
        await pilot.resize_terminal(160, 45)
        await pilot.press("alt+c", *f"1", "enter")  # (a round trip: the resize is laid out)
        app._run("breakpoint_add", {"file": "examples/inventory.py", "line": TOTAL_LOOP,
                                    "log_message": long_message})
        await wait_until(pilot, lambda: len(app.breakpoints) == 3, what="the logpoint")
        await pilot.press("alt+p")
        await wait_until(pilot, lambda: "log restocking" in pane_text(app, "#breakpoints"),
                         what="the logpoint listed")
        for row in pane_text(app, "#breakpoints").splitlines():
            if "log restocking" in row:
                assert "…" in row and row.rstrip().endswith("you"), row


PRINT_ITEM = example_line('print(f"{item.sku:8}')


async def test_jump_inspect_and_open_any_file():
    from tui_debugger.tui.widgets.console_results import ConsoleResults
    from tui_debugger.tui.widgets.open_file_dialog import OpenFileDialog
    from tests.support.tui import ROOT

    app = create_app("launch", {"program": "examples/inventory.py",
                                "breakpoints": [f"examples/inventory.py:{CALL_RESTOCK}"]})
    async with app.run_test(size=(120, 40)) as pilot:
        await stopped_at(pilot, CALL_RESTOCK)
        source = app.source

        # Inspect: a click on `item` in the code, then K: its value in the
        # console, opening like a variable; the focus stays in the source.
        text = source.file.lines[CALL_RESTOCK - 1]
        column = text.index("item")
        y = CALL_RESTOCK - 1 - source.scroll_offset.y
        await pilot.click("#source", offset=(source.gutter_width + column + 2, y + 1))  # +1: border
        await pilot.press("K")
        results = app.query_one(ConsoleResults)
        await wait_until(pilot, lambda: results.root.children, what="the inspected value")
        node = results.root.children[-1]
        assert node.label.plain.startswith(">>> item = Item(")
        assert app.focused is source
        assert app.query_one("#io-tabs").active == "tab-console"
        # K again, with no click: the line's names in turn.
        await pilot.press("K")
        await wait_until(pilot, lambda: ">>> added" in screen_text(app) or "added" in
                         "".join(str(line) for line in app.query_one("#console-log").lines),
                         what="the first name of the line")

        # Jump: the print line runs next, restock is never called.
        source.go_to_line(PRINT_ITEM)
        await pilot.press("J")
        await wait_until(pilot, lambda: app.state == "stopped" and app.stop_info is not None
                         and app.stop_info.reason == "goto"
                         and app.source.location_line == PRINT_ITEM, what="the jump's stop")
        await pilot.press("f10", "alt+o")
        await wait_until(pilot, lambda: "TEA-01" in screen_text(app) and "qty=12" in screen_text(app),
                         what="the print, quantity untouched")

        # Ctrl+O: a typed path relative to the working directory, and the project's files.
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, OpenFileDialog), what="the open dialog")
        dialog = app.screen
        shown = {path for path, _ in dialog.candidates}
        assert str(ROOT / "README.md") in shown  # a project file outside the program's directory
        await pilot.press(*"tests/support/tui.py", "enter")
        await wait_until(pilot, lambda: source.file is not None
                         and source.file.path == str(ROOT / "tests" / "support" / "tui.py"),
                         what="the typed path opened")


def test_jump_on_the_command_line():
    from tui_debugger.cli.parse import build_parser, cli_args
    from tui_debugger.commands import registry

    command = registry.get("until")
    spec = next(s for s in command.cli if s.path == ("jump",))
    ns = build_parser().parse_args(["jump", "examples/inventory.py:72"])
    assert cli_args(command, spec, ns) == {"file": "examples/inventory.py", "line": 72, "jump": True}


async def test_a_continue_leaves_no_old_return_value_in_locals():
    from tests.support.tui import tree_labels

    app = create_app("launch", {"program": "examples/inventory.py", "breakpoints": [
        f"examples/inventory.py:{CALL_RESTOCK}", f"examples/inventory.py:{MISSING}"]})
    async with app.run_test(size=(120, 40)) as pilot:
        await stopped_at(pilot, CALL_RESTOCK)
        await pilot.press("f5")
        await stopped_at(pilot, MISSING)
        await pilot.press("shift+f11")
        await wait_until(pilot, lambda: any("(return) restock" in label for label in
                                            tree_labels(app.variables)), what="the return value")
        await pilot.press("f5")
        await wait_until(pilot, lambda: app.state == "stopped" and app.stop_info is not None
                         and app.stop_info.reason == "breakpoint"
                         and app.source.location_line == CALL_RESTOCK
                         and find_node(app.variables, "item") is not None, what="the next hit")
        assert not any("(return)" in label for label in tree_labels(app.variables))


async def test_the_start_is_not_held_up_by_the_key_bar_or_the_garbage_collector(monkeypatch):
    """A person waits for the new program's first stop: the key bar's ~40 keys
    are made once it is on screen, not before (KeyFooter.held), and changes of
    the bindings that come together make them once; the garbage collector that
    `run` pauses for its start (gcpause.py) runs again once the start is over,
    with what the start made frozen."""
    import gc

    from textual.widgets._footer import FooterKey

    from tui_debugger import gcpause
    from tui_debugger.tui.widgets.footer import KeyFooter

    made_after_stop: list[bool] = []
    remake = KeyFooter.recompose

    async def counted(self):
        made_after_stop.append(self.app.stop_shown)
        return await remake(self)

    monkeypatch.setattr(KeyFooter, "recompose", counted)
    # The hold ends at the stop, or after FOOTER_HELD_AT_MOST (1 s) for a start
    # that never stops; a loaded machine can take longer than that to the stop.
    monkeypatch.setattr("tui_debugger.tui.app.FOOTER_HELD_AT_MOST", 60.0)
    gcpause.pause()  # as cli.main does for `run`
    try:
        app = create_app("launch", {"program": "examples/inventory.py", "stop_on_entry": True})
        async with app.run_test(size=(120, 40)) as pilot:
            footer = app.query_one(KeyFooter)
            await wait_until(pilot, lambda: app.stop_shown, what="the entry stop on screen")
            await wait_until(pilot, lambda: len(footer.query(FooterKey)) > 3,
                             what="the key bar made after the stop")
            assert made_after_stop and all(made_after_stop), made_after_stop
            assert gc.isenabled()
            # what the start made is frozen, left out of the passes to come
            assert gc.get_freeze_count() > 0
            await wait_until(pilot, lambda: not footer._remake_queued, what="no remake queued")
            # Three changes heard back to back (nothing else runs between them)
            # queue one remake. Counted where it is queued: a live program may
            # change the bindings again later, and that remake is its own.
            queued = []
            after_refresh = footer.call_after_refresh

            def counted_queue(callback, *args, **kwargs):
                queued.append(callback)
                return after_refresh(callback, *args, **kwargs)

            monkeypatch.setattr(footer, "call_after_refresh", counted_queue)
            before = len(made_after_stop)
            for _ in range(3):
                footer.bindings_changed(app.screen)
            assert len(queued) == 1, queued
            await wait_until(pilot, lambda: len(made_after_stop) > before, what="the keys made again")
            assert "Over" in " ".join(str(key.description) for key in footer.query(FooterKey))
    finally:
        gcpause.resume()
        gc.enable()
        gcpause.thaw()  # this test process's objects, the collector's again


async def test_the_key_bar_timer_that_fires_after_the_close_does_nothing():
    """FOOTER_AFTER_STOP's timer can fire while the TUI closes, after its last
    screen is gone: the key bar is then left alone (Textual's refresh_bindings
    raised ScreenStackError out of the close)."""
    app = create_app("launch", {"program": "examples/inventory.py", "stop_on_entry": True})
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.stop_shown, what="the entry stop on screen")
        await app.action_quit()
    assert not app.screen_stack
    app._show_bindings_for("running")  # as the timer would, late
