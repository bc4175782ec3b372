"""Snapshots of each pane and of the whole screen, at 80x24 and 160x45.

One headless session (`tui-debugger start`, real debugpy) stopped at a
breakpoint in examples/inventory.py serves every scene; each scene is a TUI
joining it (`tui-debugger ui`). Scenes only read, so they do not disturb one
another, except the console scene, which evaluates and so comes last.

Regenerate after an intended change: pytest tests/test_tui_snapshots.py --snapshot-update
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support import runtime_dirs
from tests.support.tui import ROOT, example_line, find_node, wait_until
from tui_debugger.tui.app import create_app

# The scenes share one live session, started before any of them: one runtime
# directory for the module (tests/conftest.py's isolation honours it).
SHARED_RUNTIME = Path(tempfile.mkdtemp(prefix="tuid-"))
SESSION = "inventory"
STOP_LINE = example_line('summary["after"] =')
SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 45), id="160x45")]


@pytest.fixture(scope="module")
def live_session():
    """A headless session stopped at STOP_LINE, after the loop printed its lines.
    (Warm hosts off, as conftest.py's isolation turns them off for each test:
    this module fixture runs before it, and its host stayed warm after `stop`.)"""
    env = {**os.environ, **runtime_dirs(SHARED_RUNTIME), "TUI_DEBUGGER_WARM": "0"}
    cli = [sys.executable, "-m", "tui_debugger"]
    subprocess.run([*cli, "stop", "--session", SESSION], env=env, cwd=ROOT,
                   capture_output=True, timeout=30)
    started = subprocess.run(
        [*cli, "start", "--session", SESSION, "--break", f"examples/inventory.py:{STOP_LINE}",
         "examples/inventory.py"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=90)
    assert started.returncode == 0, started.stderr
    waited = subprocess.run([*cli, "await", "--session", SESSION, "--timeout", "30"], env=env,
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "stopped" in waited.stdout.lower(), waited.stdout + waited.stderr
    yield SESSION
    subprocess.run([*cli, "stop", "--session", SESSION], env=env, cwd=ROOT,
                   capture_output=True, timeout=30)


def joined():
    return create_app("join", {}, SESSION, cwd=str(ROOT))


async def loaded(pilot) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: app.state == "stopped" and app.variables.filled > 0
                     and app.query_one("#stack").row_count > 0
                     and app.query_one("#threads").row_count > 0, what="a filled screen")
    await wait_until(pilot, lambda: app.source.painted_location is not None, what="the source")


def maximized(pane_id: str, tabs: tuple[str, str] | None = None, before=None):
    async def scene(pilot) -> None:
        await loaded(pilot)
        app = pilot.app
        if tabs:
            app.query_one(f"#{tabs[0]}").active = tabs[1]
        if before is not None:
            await before(pilot)
        widget = app.query_one(f"#{pane_id}")
        widget.focus()
        app.screen.maximize(widget)
        await pilot.pause(0.1)

    return scene


async def expand_warehouse(pilot) -> None:
    app = pilot.app
    tree = app.variables
    for path in ("warehouse", "warehouse.shelves", "warehouse.shelves['A1']"):
        node = find_node(tree, path)
        assert node is not None, path
        node.expand()
        await wait_until(pilot, lambda p=path: any(c.data.kind == "var" for c in find_node(tree, p).children),
                         what=f"{path} children")
    tree.move_cursor(find_node(tree, "warehouse.shelves['A1']"))


async def evaluate_some(pilot) -> None:
    app = pilot.app
    box = app.query_one("#console-input")
    for expression in ("warehouse.city", "summary['restocked']", "len(list(warehouse.items()))"):
        box.value = expression
        box.focus()
        await pilot.press("enter")
    await wait_until(pilot, lambda: len(app.query_one("#console-log").lines) >= 6, what="answers")


async def add_watches(pilot) -> None:
    app = pilot.app
    box = app.query_one("#watch-input")
    box.focus()
    for expression in ("item.sku", "warehouse.restocked", "summary.get('after')"):
        box.value = expression
        await pilot.press("enter")
    watches = app.query_one("#watches")
    await wait_until(pilot, lambda: len(watches.values) == 3, what="watch values")


SCENES = {
    "source": maximized("source"),
    "variables": maximized("variables", before=expand_warehouse),
    "stack": maximized("stack"),
    "threads": maximized("threads", ("nav-tabs", "tab-threads")),
    "breakpoints": maximized("breakpoints", ("nav-tabs", "tab-breakpoints")),
    "output": maximized("output", ("io-tabs", "tab-output")),
    "activity": maximized("activity", ("io-tabs", "tab-activity")),
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.slow
def test_whole_screen(live_session, snap_compare, size):
    assert snap_compare(joined(), terminal_size=size, run_before=loaded)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("pane", list(SCENES))
def test_pane(live_session, snap_compare, pane, size):
    assert snap_compare(joined(), terminal_size=size, run_before=SCENES[pane])


def test_help_screen(live_session, snap_compare):
    async def scene(pilot):
        await loaded(pilot)
        await pilot.press("question_mark")

    assert snap_compare(joined(), terminal_size=(80, 24), run_before=scene)


# Last: these evaluate in the shared session (and so add to its activity log).
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.slow
def test_watches_and_console(live_session, snap_compare, size):
    watches = maximized("watches", ("data-tabs", "tab-watches"), before=add_watches)
    console = maximized("console", ("io-tabs", "tab-console"), before=evaluate_some)
    assert snap_compare(joined(), terminal_size=size, run_before=watches)
    assert snap_compare(joined(), terminal_size=size, run_before=console)


def test_the_session_outlived_every_scene(live_session):
    """Joining and leaving never ends the session the scenes shared."""
    env = {**os.environ, **runtime_dirs(SHARED_RUNTIME), "TUI_DEBUGGER_WARM": "0"}
    status = subprocess.run([sys.executable, "-m", "tui_debugger", "status", "--session", SESSION],
                            env=env, cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert "stopped" in status.stdout.lower(), status.stdout + status.stderr
