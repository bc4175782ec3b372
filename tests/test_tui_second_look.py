"""The TUI as a pudb or VS Code user meets it (Pilot, real debugpy): Variables
that open on a value's own fields (debugpy's groups last), Enter that opens and
never edits, pudb's r / s / t and *, pytest's @py_ temporaries left out, values
inline in the source, a console line of statements answered as a REPL does,
`?` with pudb's keys beside ours, and 80x24 with nothing cut that matters."""

from __future__ import annotations

import pytest

from tests.support.tui import example_line, find_node, screen_text, source_row, tree_labels, wait_until
from tui_debugger.tui.app import create_app
from tui_debugger.tui.repl import split

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

LOOP_END = example_line('summary["after"] =')
MAIN_START = example_line('warehouse = Warehouse("Central", "Lyon")')


def at_loop_end():
    return create_app("launch", {"program": "examples/inventory.py",
                                 "breakpoints": [f"examples/inventory.py:{LOOP_END}"]})


async def stopped(pilot, line: int) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: app.state == "stopped" and app.source.location_line == line
                     and find_node(app.variables, "warehouse") is not None,
                     timeout=30, what=f"a stop at line {line} with its locals")


async def opened(pilot, path: str) -> None:
    tree = pilot.app.variables
    find_node(tree, path).expand()
    await wait_until(pilot, lambda: any(c.data.kind == "var" for c in find_node(tree, path).children),
                     what=f"{path}'s children")


async def test_variables_open_on_fields_enter_never_edits_and_pudb_display_keys():
    from tui_debugger.tui.widgets.value_dialog import ValueDialog

    app = at_loop_end()
    async with app.run_test(size=(120, 40)) as pilot:
        await stopped(pilot, LOOP_END)
        tree = app.variables
        await opened(pilot, "warehouse")
        fields = [c.label.plain.strip() for c in find_node(tree, "warehouse").children]
        # The value's own fields first; debugpy's group after them, as VS Code shows it.
        assert fields[0].startswith("city = ") and fields[-1] == "special variables", fields

        # Enter on a plain value does nothing to it; `e` asks for a new one.
        await pilot.press("alt+v")
        tree.move_cursor(find_node(tree, "added"))
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert not isinstance(app.screen, ValueDialog)
        # Enter on a value with children opens and closes it.
        tree.move_cursor(find_node(tree, "item"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: find_node(tree, "item.sku") is not None, what="item open")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not find_node(tree, "item").is_expanded, what="item closed")
        tree.move_cursor(find_node(tree, "added"))
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, ValueDialog), what="the value dialog")
        await pilot.press("escape")
        assert "Edit" in screen_text(app)  # the footer says which key edits

        # pudb's t / s / r: the type alone, the str(), the repr again.
        tree.move_cursor(find_node(tree, "warehouse"))
        await pilot.press("t")
        assert find_node(tree, "warehouse").label.plain.strip() == "warehouse: Warehouse"
        tree.move_cursor(find_node(tree, "item.sku") or find_node(tree, "warehouse.city"))
        city = find_node(tree, "warehouse.city")
        tree.move_cursor(city)
        await pilot.press("s")
        await wait_until(pilot, lambda: find_node(tree, "warehouse.city").label.plain.strip()
                         == "city = Lyon  str", what="city's str()")
        # kept across a step (evaluated again at the stop)
        await pilot.press("f10")
        await wait_until(pilot, lambda: app.state == "stopped" and app.source.location_line
                         == LOOP_END + 1 and app.variables.filled > 1, what="the step")
        await wait_until(pilot, lambda: (find_node(tree, "warehouse.city") is not None and
                                         find_node(tree, "warehouse.city").label.plain.strip()
                                         == "city = Lyon  str"), what="city's str() after a step")
        assert find_node(tree, "warehouse").label.plain.strip() == "warehouse: Warehouse"
        tree.move_cursor(find_node(tree, "warehouse"))
        await pilot.press("r")
        assert find_node(tree, "warehouse").label.plain.strip().startswith("warehouse = Warehouse(")

        # `*` cycles the names shown: public only hides _private ones (debugpy's
        # group too), then every name.
        await opened(pilot, "item")
        await pilot.press("asterisk")
        assert tree.name_filter == "public"
        names = [c.label.plain.strip() for c in find_node(tree, "warehouse").children]
        assert names and not any(n.startswith("_") for n in names), names
        await pilot.press("asterisk")
        await pilot.press("asterisk")
        assert tree.name_filter == "default"
        await pilot.press("f5")  # to the end
        await wait_until(pilot, lambda: app.state == "terminated", timeout=30, what="the end")


PYTEST_FILE = '''
def test_total():
    prices = {"tea": 4.5, "mug": 7.0}
    _discount = 1
    assert sum(prices.values()) - _discount == 12
'''


async def test_a_failing_pytest_assertion_shows_the_tests_locals_not_pytests(tmp_path):
    (tmp_path / "test_shop.py").write_text(PYTEST_FILE)
    app = create_app("launch", {"module": "pytest", "cwd": str(tmp_path),
                                "args": ["-q", "-p", "no:cacheprovider", "test_shop.py"]})
    async with app.run_test(size=(120, 40)) as pilot:
        tree = app.variables
        await wait_until(pilot, lambda: app.state == "stopped"
                         and find_node(tree, "prices") is not None, timeout=60,
                         what="the stop at the failing assertion")
        labels = tree_labels(tree)
        assert any("_discount = 1" in label for label in labels), labels
        assert not any("@py_" in label for label in labels), labels  # pytest's, not the test's
        await pilot.press("alt+v")
        for _ in range(2):
            await pilot.press("asterisk")
        assert tree.name_filter == "all"
        assert any("@py_" in label for label in tree_labels(tree)), tree_labels(tree)
        await pilot.press("shift+f5")
        await wait_until(pilot, lambda: app.state == "terminated", timeout=30, what="the end")


async def test_inline_values_and_a_console_line_of_statements():
    app = at_loop_end()
    async with app.run_test(size=(160, 45)) as pilot:
        await stopped(pilot, LOOP_END)
        # The frame's locals after the lines of its function that use them.
        await wait_until(pilot, lambda: "added = 2" in source_row(app, example_line("if added:")),
                         what="inline values")
        assert "warehouse = Warehouse('Central'" in source_row(app, MAIN_START)
        # only the frame's function: restock's `item` is another frame's
        assert example_line("missing = minimum - item.quantity") not in app.source.inline[1]

        # A line of statements runs, and its last expression is answered; the
        # console's import is not the program's local.
        await pilot.press("alt+c")
        box = app.focused
        box.value = "import os; os.getpid() > 0"
        await pilot.press("enter")
        log = app.query_one("#console-log")
        await wait_until(pilot, lambda: any("True" in line.text for line in log.lines),
                         what="the last expression's value")
        box.value = "extra = 5"
        await pilot.press("enter")
        tree = app.variables
        await wait_until(pilot, lambda: find_node(tree, "extra") is not None, what="the assignment")
        assert find_node(tree, "os") is None, tree_labels(tree)

        # `!` where there is no terminal to hand over (headless here, as the
        # browser view): it says so and where to evaluate instead.
        await pilot.press("alt+s")
        await pilot.press("exclamation_mark")
        await wait_until(pilot, lambda: any("needs a terminal of its own" in n.message
                                            for n in app._notifications), what="the shell's note")
        await pilot.press("shift+f5")
        await wait_until(pilot, lambda: app.state == "terminated", timeout=30, what="the end")


def test_a_console_line_is_split_as_a_repl_does():
    line = split("import os, sys as system; from a.b import c; os.getpid()")
    assert line.statements == "import os, sys as system\nfrom a.b import c"
    assert line.expression == "os.getpid()" and line.imported == {"os", "system", "c"}
    assert split("x + 1").statements is None and split("x + 1").expression == "x + 1"
    assert split("x = 1").statements == "x = 1" and split("x = 1").expression is None
    assert split("p x").expression == "p x"  # not Python: as it is (lldb's, a typo)


async def test_80x24_help_with_pudbs_keys_and_pytest_and_nothing_cut():
    from tui_debugger.tui.widgets.help_screen import HelpScreen

    app = at_loop_end()
    async with app.run_test(size=(80, 24)) as pilot:
        await stopped(pilot, LOOP_END)
        await wait_until(pilot, lambda: app.query_one("#stack").row_count > 0, what="the stack")
        text = screen_text(app)
        assert "Stack  Threads  Breakpoints" in text  # the three tab titles whole
        assert "inventory.py:" + str(LOOP_END) in text  # the current frame's line number
        assert "F8 maximize" in text and app.query_one("#right").size.width == 32
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        titles = [title for title, _ in app.screen.sections]
        pudb = [row for title, rows in app.screen.sections if title.startswith("Coming from pudb")
                for row in rows]
        assert ("n", "step over", "n in Source, F10") in pudb, pudb
        assert ("_ / =", "minimize / maximize a pane", "F8") in pudb, pudb
        assert any(title.startswith("Debugging a pytest test") for title in titles), titles
        await pilot.pause(0.2)
        body = app.screen.query_one("#help-body")
        # Every row wraps in the dialog: no line of it runs past its border.
        assert body.size.width >= 70
        assert "log message on" in screen_text(app) and "the cursor line" in screen_text(app)
        await pilot.press("escape")
        await pilot.press("shift+f5")
        await wait_until(pilot, lambda: app.state == "terminated", timeout=30, what="the end")


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
def test_the_executable_in_tmux_pudbs_shell_and_the_small_screen(tmp_path, size):
    """The installed executable: the side panes' titles whole, F8 said, values
    inline, Enter in Variables not an editor, and `!` a full Python shell in the
    frame (a block of lines, the last value printed) until Ctrl+D."""
    from tests.support import require_executable
    from tests.support.tmux import finish, row_of, start
    from tests.support.tui import ROOT

    exe = require_executable("tui-debugger")
    tmux, marker = start(tmp_path, [exe, "run", "--break", f"examples/inventory.py:{LOOP_END}",
                                    "examples/inventory.py"], ROOT, size=size)
    send = lambda *keys: tmux.run("send-keys", "-t", "tui", *keys)  # noqa: E731
    try:
        screen = tmux.wait_for(lambda s: "STOPPED" in s and "added = 2" in s
                               and f"inventory.py:{LOOP_END}" in s.split("where")[-1],
                               "the stop, its locals and its stack", timeout=40)
        assert "Stack  Threads  Breakpoints" in screen and "F8 maximize" in screen
        assert "added = 2" in row_of(screen, example_line("if added:"))  # inline
        send("F3")
        send("Down")  # Locals
        send("Down")  # added
        send("Enter")  # on `added`: nothing to edit
        send("e")
        tmux.wait_for(lambda s: "Set added" in s, "e: the value's editor")
        send("Escape")
        tmux.wait_for(lambda s: "Set added" not in s, "the editor closed")
        send("F2")
        send("!")
        tmux.wait_for(lambda s: "Python shell in examples/inventory.py" in s and ">>>" in s,
                      "the shell", timeout=30)
        for line in ("def twice(n):", "    return 2 * n", ""):
            send("-l", line)
            send("Enter")
        send("-l", "import math; twice(added) + math.floor(0.5)")
        send("Enter")
        tmux.wait_for(lambda s: "\n4\n" in s, "the block's function called: 4")
        send("C-d")
        tmux.wait_for(lambda s: "STOPPED" in s and "F8 maximize" in s, "back in the debugger")
    finally:
        finish(tmux, marker)


JSON_CALLS = '''import json


def main():
    data = {"a": 1}
    first = json.dumps(data)  # @first
    second = json.dumps(data)  # @second
    return first + second


main()
'''


async def test_just_my_code_switched_live_without_a_restart(tmp_path):
    program = tmp_path / "calls.py"
    program.write_text(JSON_CALLS)
    first = JSON_CALLS.splitlines().index('    first = json.dumps(data)  # @first') + 1
    app = create_app("launch", {"program": str(program), "cwd": str(tmp_path),
                                "breakpoints": [f"{program}:{first}"]})
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state == "stopped" and app.source.location_line == first,
                         timeout=30, what="the stop at the first call")
        pid = app.stop_info.location  # the same run throughout: no restart
        await pilot.press("f11")  # just my code (the default): json is not stepped into
        await wait_until(pilot, lambda: app.state == "stopped"
                         and app.source.location_line == first + 1, what="the step over json")
        app.action_toggle_just_my_code()
        await wait_until(pilot, lambda: any(n.title == "Just my code off" for n in app._notifications),
                         what="the switch")
        await pilot.press("f11")
        await wait_until(pilot, lambda: app.state == "stopped" and app.stop_info is not None
                         and "json" in (app.stop_info.location.path or ""), what="a step into json")
        assert pid is not None and "restarted" not in screen_text(app)
        await pilot.press("shift+f5")
        await wait_until(pilot, lambda: app.state == "terminated", timeout=30, what="the end")
