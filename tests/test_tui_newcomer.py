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
