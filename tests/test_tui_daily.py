"""The TUI as a daily driver (Pilot, real debugpy): a key for every pane, find /
go to line / open file in the source, the breakpoint dialog, thread selection
moving the source, the status line on a repeated hit, and an ended program
leaving no current line."""

from __future__ import annotations

import re
import textwrap

import pytest

from tests.support import marker_line
from tests.support.mcp import PROGRAMS
from tests.support.tui import example_line, screen_text, source_row, wait_until
from tui_debugger.tui.app import create_app
from tui_debugger.tui.widgets.breakpoint_dialog import BreakpointDialog
from tui_debugger.tui.widgets.help_screen import HelpScreen
from tui_debugger.tui.widgets.open_file_dialog import OpenFileDialog
from tui_debugger.tui.widgets.source_prompt import SourcePrompt
from tui_debugger.tui.widgets.source_view import ROOM_HINT
from tui_debugger.tui.widgets.stack_pane import StackPane
from tui_debugger.tui.widgets.threads_pane import ThreadsPane

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

CALL_RESTOCK = example_line("added = restock(item")
IF_ADDED = example_line("if added:")
DEF_RESTOCK = example_line("def restock(")
MISSING = example_line("missing = minimum - item.quantity")


def launch_at(tmp_path, name: str, source: str, marker: str):
    """`source` written to tmp_path/name and launched with a breakpoint on the
    line marked `# marker`: the app, and that line."""
    program = tmp_path / name
    program.write_text(source)
    line = marker_line(program, marker)
    app = create_app("launch", {"program": str(program), "breakpoints": [f"{program}:{line}"]},
                     cwd=str(tmp_path))
    return app, line


async def stopped_at(pilot, line: int, what: str = "") -> None:
    app = pilot.app
    await wait_until(pilot, lambda: app.state == "stopped" and app.source.location_line == line,
                     what=what or f"a stop at line {line}")


async def test_pane_keys_find_goto_open_and_breakpoint_dialog():
    app = create_app("launch", {"program": "examples/inventory.py",
                                "breakpoints": [f"examples/inventory.py:{CALL_RESTOCK}"]})
    async with app.run_test(size=(120, 40)) as pilot:
        await stopped_at(pilot, CALL_RESTOCK)

        # Every pane has a key; a tabbed one comes to the front.
        for key, pane_id, widget_id in [("alt+p", "tab-breakpoints", "breakpoints"),
                                        ("alt+h", "tab-threads", "threads"),
                                        ("alt+u", "tab-stack", "stack"),
                                        ("alt+w", "tab-watches", "watch-input"),
                                        ("alt+v", "tab-variables", "variables"),
                                        ("alt+a", "tab-activity", "activity"),
                                        ("alt+c", "tab-console", "console-input"),
                                        ("alt+o", "tab-output", "output-log"),
                                        ("alt+s", None, "source")]:
            await pilot.press(key)
            assert app.focused is not None and app.focused.id == widget_id, (key, app.focused)
            if pane_id:
                assert pane_id in {t.active for t in app.query("TabbedContent")}, key
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        shown = screen_text(app)
        assert "Go to the Breakpoints pane" in shown and "Alt+P" in shown
        await pilot.press("escape")

        # The same breakpoint hit again says so on the status line.
        assert "(hit" not in app.status.render().plain
        await pilot.press("f5")
        await wait_until(pilot, lambda: "(hit 2)" in app.status.render().plain, what="hit 2")

        # `/` finds as you type, from the cursor; n / N walk the matches; a find is not a step.
        source = app.source
        await pilot.press("slash")
        prompt = app.query_one(SourcePrompt)
        await wait_until(pilot, lambda: app.focused is prompt, what="the find prompt focused")
        await pilot.press(*"restock")
        await wait_until(pilot, lambda: source.find_text == "restock", what="the find")
        assert source.cursor_line == CALL_RESTOCK  # the first match at or after the cursor
        assert "1 of" not in (source.border_subtitle or "") or source.cursor_line >= CALL_RESTOCK
        await pilot.press("enter")
        assert app.focused is source
        matches = [m[0] for m in source._match_order]  # noqa: SLF001
        assert DEF_RESTOCK in matches and CALL_RESTOCK in matches
        await pilot.press("n")
        after = matches[matches.index(CALL_RESTOCK) + 1]
        assert source.cursor_line == after
        assert app.state == "stopped" and source.location_line == CALL_RESTOCK  # no step
        await pilot.press("N", "N")
        assert source.cursor_line == matches[matches.index(CALL_RESTOCK) - 1]
        assert "restock" in source.border_subtitle
        row = source.render_line(source.cursor_line - 1 - source.scroll_offset.y)
        assert any(seg.style and seg.style.bgcolor for seg in row if "restock" in seg.text)
        await pilot.press("escape")  # ends the find: n steps over again
        assert not source.find_text and source.border_subtitle == ROOM_HINT
        await pilot.press("n")
        await stopped_at(pilot, IF_ADDED, "n to step over after the find")

        # Ctrl+G goes to a line.
        await pilot.press("ctrl+g", *str(DEF_RESTOCK), "enter")
        assert source.cursor_line == DEF_RESTOCK and app.focused is source

        # Shift+F9 on a line with no breakpoint: a new one, the condition focused.
        await pilot.press("ctrl+g", *str(MISSING), "enter", "shift+f9")
        await wait_until(pilot, lambda: isinstance(app.screen, BreakpointDialog), what="the dialog")
        dialog = app.screen
        assert app.screen.focused.id == "bp-condition"
        text = screen_text(app)
        assert "New breakpoint at examples/inventory.py" in text
        assert "debug_breakpoint_list" not in text and "breakpoint id" not in text
        await pilot.press(*"x", "backspace")
        dialog.focused.value = "item.quantity < 3"
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(b.spec.condition == "item.quantity < 3"
                                            for b in app.breakpoints), what="the new breakpoint")
        assert "◆" in source_row(app, MISSING)
        # Shift+F9 again edits it (and can remove it).
        await pilot.press("shift+f9")
        await wait_until(pilot, lambda: isinstance(app.screen, BreakpointDialog), what="the edit")
        assert app.screen.focused.value == "item.quantity < 3"
        await pilot.click("#bp-remove")
        await wait_until(pilot, lambda: len(app.breakpoints) == 1, what="the removal")

        # `e` in the Breakpoints pane opens the same dialog.
        await pilot.press("alt+p", "e")
        await wait_until(pilot, lambda: isinstance(app.screen, BreakpointDialog), what="e")
        assert app.screen.focused.id == "bp-condition"
        await pilot.press("escape")

        # Ctrl+O: a fuzzy opener over the program's directory and the stack's files.
        await pilot.press("alt+s", "ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, OpenFileDialog), what="the opener")
        await pilot.press(*"invc")
        await pilot.press("enter")
        await wait_until(pilot, lambda: source.file and source.file.path.endswith("inventory.c"),
                         what="inventory.c")
        assert source.location_line is None
        await pilot.press("period")  # back to where the program is
        assert source.file.path.endswith("inventory.py") and source.location_line == IF_ADDED

        # The program ends: no current line, no stack, no threads left on screen.
        await app.link.call("breakpoint_remove", {"all": True})
        await pilot.press("f5")
        await wait_until(pilot, lambda: app.state == "terminated", what="the end")
        await wait_until(pilot, lambda: app.source.location_line is None, what="no ▶")
        assert app.query_one(StackPane).row_count == 0
        assert app.query_one(ThreadsPane).row_count == 0
        rows = ["".join(seg.text for seg in source.render_line(y)) for y in range(source.size.height)]
        assert not any("▶" in row for row in rows)
        await app.action_quit()


THREADS = textwrap.dedent("""\
    import threading
    import time

    ready = threading.Event()


    def worker():
        ready.set()
        while True:
            time.sleep(0.05)  # the worker waits here


    threading.Thread(target=worker, name="bg-worker", daemon=True).start()
    ready.wait()
    print("main here")  # break
""")


async def test_selecting_a_thread_moves_the_source(tmp_path):
    app, brk = launch_at(tmp_path, "threads.py", THREADS, "break")
    wait_line = next(i for i, t in enumerate(THREADS.splitlines(), 1) if "the worker waits" in t)
    async with app.run_test(size=(120, 40)) as pilot:
        await stopped_at(pilot, brk)
        threads = app.query_one(ThreadsPane)
        # Shown first: a hidden Threads pane is read again only when it is shown
        # (a stop fetches the threads while they are on screen), so the pause
        # below, if it came after the stop's own fetch, would wait for the tab.
        await pilot.press("alt+h")
        await wait_until(pilot, lambda: threads.row_count >= 2, what="two threads")

        def states() -> dict[str, str]:
            return {str(threads.get_row_at(r)[1]): str(threads.get_row_at(r)[2])
                    for r in range(threads.row_count)}

        # The other thread's pause (all-stop) comes after the breakpoint's stop,
        # and the pane follows it as it comes.
        await wait_until(pilot, lambda: states().get("bg-worker") == "stopped",
                         what="the worker paused beside the stop")
        assert states()["MainThread"] == "stopped: breakpoint", states()
        row = next(r for r in range(threads.row_count) if str(threads.get_row_at(r)[1]) == "bg-worker")
        threads.move_cursor(row=row)
        await pilot.press("enter")
        # The worker is in its loop: on the `while` or the sleep.
        await wait_until(pilot, lambda: app.source.location_line in (wait_line - 1, wait_line),
                         what="the source at the worker's line")
        assert "▶" in source_row(app, app.source.location_line)
        stack = app.query_one(StackPane)
        await wait_until(pilot, lambda: stack.frames and stack.frames[0].name == "worker",
                         what="the worker's stack")
        assert stack.frames[0].line == app.source.location_line
        await app.action_quit()


HANDLED = (PROGRAMS / "py_handled.py").read_text()


async def test_set_a_value_console_assignment_and_exception_filters(tmp_path):
    from tests.support.tui import find_node, tree_labels
    from tui_debugger.tui.widgets.console_pane import ConsoleInput
    from tui_debugger.tui.widgets.exception_dialog import ExceptionDialog
    from tui_debugger.tui.widgets.value_dialog import ValueDialog

    app, at_sum = launch_at(tmp_path, "handled.py", HANDLED, "@sum")
    async with app.run_test(size=(120, 40)) as pilot:
        await stopped_at(pilot, at_sum)
        tree = app.variables
        await wait_until(pilot, lambda: find_node(tree, "total") is not None, what="locals")

        # `e` on a value asks for the new one (Enter does not: it opens and closes
        # values, and one row off it opened an editor); Locals show it at once.
        await pilot.press("alt+v")
        tree.move_cursor(find_node(tree, "total"))
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, ValueDialog)
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, ValueDialog), what="the value dialog")
        assert app.screen.focused.value == "6"
        app.screen.focused.value = "40"
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("total = 40" in label for label in tree_labels(tree)),
                         what="total = 40 in Locals")

        # An assignment in the console refreshes Locals too.
        await pilot.press("alt+c")
        assert isinstance(app.focused, ConsoleInput)
        # Tab completes a name of the frame: a local, then a global.
        app.focused.value = "item"  # (`ite` could be `iter` too)
        app.focused.cursor_position = 4
        await pilot.press("tab")
        await wait_until(pilot, lambda: app.focused.value == "items", what="items completed")
        app.focused.value = "wor"
        app.focused.cursor_position = 3
        await pilot.press("tab")
        await wait_until(pilot, lambda: app.focused.value == "work", what="a global completed")
        # debugpy proposes (DAP completions) what the frame's names cannot: a list's
        # methods, a builtin; the text after the cursor stays.
        app.focused.value = "items.app(4)"
        app.focused.cursor_position = 9
        await pilot.press("tab")
        await wait_until(pilot, lambda: app.focused.value == "items.append(4)",
                         what="a method completed")
        assert app.focused.cursor_position == len("items.append")
        app.focused.value = "isinst"
        app.focused.cursor_position = 6
        await pilot.press("tab")
        await wait_until(pilot, lambda: app.focused.value == "isinstance", what="a builtin completed")
        app.focused.value = "items[0] = 100"
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("100" in label and "items" in label
                                            for label in tree_labels(tree)), what="items refreshed")

        # Exception breakpoints from the palette: a checklist of the debugger's filters.
        await pilot.press("ctrl+p")
        await pilot.press(*"exception_breakpoints")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ExceptionDialog), what="the checklist")
        assert [f.id for f in app.screen.filters] == ["raised", "uncaught", "userUnhandled"]
        assert app.focused.id == "exc-0"  # "raised"
        await pilot.press("space")
        await pilot.click("#exc-save")
        # The session lives in its host: ask it, as any client would.
        for _ in range(100):
            listed = await app.link.call("exception_breakpoints")
            if [f.id for f in listed.filters if f.enabled] == ["raised", "uncaught"]:
                break
            await pilot.pause(0.05)
        assert [f.id for f in listed.filters if f.enabled] == ["raised", "uncaught"], listed
        await pilot.press("f5")
        await wait_until(pilot, lambda: app.state == "stopped" and app.stop_info is not None
                         and app.stop_info.reason == "exception", what="the handled exception stop")
        assert "handled on purpose" in app.status.render().plain

        # The exception in a tab of its own, in front: type, message, traceback.
        from tui_debugger.tui.widgets.exception_pane import ExceptionPane

        await wait_until(pilot, lambda: app.query_one("#io-tabs").active == "tab-exception",
                         what="the Exception tab in front")
        shown = str(app.query_one("#exception-text").render())
        assert "ValueError" in shown and "handled on purpose" in shown, shown
        assert "handled.py" in shown and "line" in shown, shown  # the traceback
        await pilot.press("f5")
        await wait_until(pilot, lambda: not app.query(ExceptionPane), what="the tab gone on resume")
        await app.action_quit()


STRUCTURED = textwrap.dedent("""\
    def main():
        config = {"name": "demo", "sizes": [1, 2, 3], "limits": {"low": 0}}
        many = list(range(250))
        return config, many  # @here


    main()
""")


async def test_console_results_open_like_variables(tmp_path):
    from tests.support.tui import tree_labels
    from tui_debugger.tui.widgets.console_results import ConsoleResults

    app, here = launch_at(tmp_path, "structured.py", STRUCTURED, "@here")
    async with app.run_test(size=(120, 40)) as pilot:
        await stopped_at(pilot, here)
        results = app.query_one(ConsoleResults)
        assert not results.display  # nothing structured yet: no room taken
        await pilot.press("alt+c")
        app.focused.value = "config"
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(results.root.children) == 1, what="the dict result")
        node = results.root.children[0]
        assert results.display and node.label.plain.startswith(">>> config = {")
        # From the expression line, Shift+Tab reaches the results (Tab completes).
        await pilot.press("shift+tab")
        assert app.focused is results
        app.query_one("#console-input").focus()
        # Its first level came with the answer; a nested value loads when opened.
        node.expand()
        await pilot.pause()
        assert any(label.strip().startswith("'sizes' = [1, 2, 3]") for label in tree_labels(results))
        # debugpy's groups (special/function variables) no expression reaches: left out.
        assert not any("variables" in label for label in tree_labels(results))
        sizes = next(c for c in node.children if c.label.plain.startswith("'sizes'"))
        assert sizes.data.expression == "config['sizes']"
        sizes.expand()
        await wait_until(pilot, lambda: [c.label.plain.split("  ")[0] for c in sizes.children
                                         if c.data.kind == "value"][:3] == ["0 = 1", "1 = 2", "2 = 3"],
                         what="the nested list's items")

        # A long list: a page of 100 children, then Enter on "… more" loads the
        # next (debugpy lists a big container's first 100 items, its groups and len()).
        app.focused.value = "many"
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(results.root.children) == 2, what="the list result")
        listed = results.root.children[1]
        listed.expand()
        await pilot.pause()
        def values():
            return [int(c.label.plain.split(" = ")[1].split()[0]) for c in listed.children
                    if c.data.kind == "value" and c.label.plain[0].isdigit()]

        # (a page counts debugpy's groups and the list's methods too, as in the
        # Variables pane: its function variables are inline, the methods left out)
        first = values()
        assert 85 <= len(first) <= 100 and first == list(range(len(first)))
        more = next(c for c in listed.children if c.data.kind == "more")
        assert re.match(r"… \d+ more", more.label.plain), more.label.plain
        results.focus()
        results.move_cursor(more, animate=False)
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(values()) > len(first), what="the second page")
        assert values() == list(range(100))
        assert not any(c.data.kind in ("more", "loading") for c in listed.children)
