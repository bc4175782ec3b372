"""Helpers of the TUI tests: read the screen, a pane's rows and a tree's labels
as a person sees them, and wait on the pilot for a condition."""

from __future__ import annotations

import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "inventory.py"

def example_line(marker: str) -> int:
    """Line number of the first line of examples/inventory.py containing `marker`."""
    for number, text in enumerate(EXAMPLE.read_text().splitlines(), 1):
        if marker in text:
            return number
    raise AssertionError(f"{marker!r} not in {EXAMPLE}")


async def wait_until(pilot, predicate, timeout: float = 15.0, what: str = "condition") -> float:
    """Pause the pilot until predicate() is true; returns the seconds it took."""
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}"
                                 f"{_where_the_app_is(pilot.app)}")
        await pilot.pause(0.02)
    return time.monotonic() - started


def _where_the_app_is(app) -> str:
    """What the debugger app showed when a wait gave up: its state, stop and
    status line, so a failure under load says whether it was slow or lost."""
    try:
        stop = getattr(app, "stop_info", None)
        where = stop.location if stop is not None else None
        return (f" (app state {getattr(app, 'state', '?')!r}, stop "
                f"{getattr(stop, 'reason', None)!r} at "
                f"{getattr(where, 'path', None)}:{getattr(where, 'line', None)}, "
                f"status {getattr(app.status, 'message', '')!r})")
    except Exception as exc:  # noqa: BLE001 - a diagnostic never hides the timeout
        return f" (app not readable: {exc!r})"


def screen_text(app) -> str:
    """The screen as plain text, row by row (what a person sees, minus colour)."""
    from textual.strip import Strip

    lines = []
    for strip in app.screen._compositor.render_strips():  # noqa: SLF001 - test introspection
        lines.append("".join(seg.text for seg in Strip(strip)))
    return "\n".join(lines)


def source_row(app, line: int) -> str:
    """The source pane's rendering of one file line (gutter included)."""
    view = app.source
    y = line - 1 - view.scroll_offset.y
    assert 0 <= y < view.size.height, f"line {line} is not on screen (top {view.scroll_offset.y})"
    return "".join(seg.text for seg in view.render_line(y))


def tree_labels(tree) -> list[str]:
    out = []

    def walk(node, depth):
        for child in node.children:
            out.append("  " * depth + child.label.plain)
            if child.is_expanded:
                walk(child, depth + 1)

    walk(tree.root, 0)
    return out


def find_node(tree, path: str):
    def walk(node):
        for child in node.children:
            if child.data is not None and child.data.path == path and child.data.kind == "var":
                return child
            found = walk(child)
            if found is not None:
                return found
        return None

    return walk(tree.root)
