"""The TUI beyond Python launches: breakpoints that persist from one TUI session
to the next, Node.js (and TypeScript through source maps) end to end, and the
attach dialog (a listening debugpy, and an iOS simulator app through the fake
xcrun). Pilot against the real debuggers, through the CLI's factory."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backends.process import pid_alive
from tests.support.node import APP_TS, mark
from tests.support.simctl import APP_SOURCE, BREAK_LINE, BUNDLE, IPHONE_15, wait_until_released
from tests.support.tui import find_node, source_row, tree_labels, wait_until
from tui_debugger import paths, persist
from tui_debugger.client.router import join
from tui_debugger.tui.app import create_app
from tui_debugger.tui.widgets.attach_dialog import (
    AttachDialog,
    launch_request,
    process_request,
    simulator_request,
)
from tui_debugger.tui.widgets.breakpoints_pane import BreakpointsPane
from tui_debugger.tui.widgets.breakpoint_dialog import BreakpointDialog
from tui_debugger.tui.widgets.command_form import CommandForm
from tui_debugger.tui.widgets.console_pane import ConsoleInput
from tui_debugger.tui.widgets.help_screen import HelpScreen
from tui_debugger.tui.widgets.output_pane import OutputPane
from tui_debugger.tui.widgets.stack_pane import StackPane

SIZE = (120, 40)


async def stopped_at(pilot, line: int, path: str | None = None, timeout: float = 15.0) -> None:
    tui = pilot.app
    await wait_until(pilot, lambda: tui.state == "stopped" and tui.source.location_line == line
                     and (path is None or (tui.source.file and tui.source.file.path == path)),
                     timeout=timeout, what=f"a stop at line {line}")


async def palette(pilot, text: str) -> None:
    """Ctrl+P, type, Enter: run the first match, as a person would."""
    tui = pilot.app
    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: type(tui.screen).__name__ == "CommandPalette", what="the palette")
    from textual.command import CommandList
    from textual.widgets import Input

    tui.screen.query_one(Input).value = text  # typed at once: Pilot types a key per frame
    hits = tui.screen.query_one(CommandList)

    def first_hit() -> str:
        return str(hits.get_option_at_index(0).prompt) if hits.option_count else ""

    # The search runs in the background: wait for its best hit, then choose it.
    await wait_until(pilot, lambda: first_hit().startswith(text), what=f"{text!r} in the palette")
    if hits.highlighted is None:
        await pilot.press("down")
    await pilot.press("enter")


# ---------------------------------------------------------------------------- persistence

COUNTER = """\
def main():
    total = 0
    for step in range(5):
        total += step
    print("total", total)


main()
"""
LOOP_BODY = 4


@pytest.mark.slow
async def test_breakpoints_persist_from_one_tui_session_to_the_next(tmp_path, no_leftover_processes):
    program = tmp_path / "counter.py"
    program.write_text(COUNTER)

    def session(**extra):
        return create_app("launch", {"program": str(program), **extra}, None, cwd=str(tmp_path))

    # First session: F9 on the loop body, then a condition through the breakpoints pane.
    tui = session(stop_on_entry=True)
    async with tui.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: tui.state == "stopped", what="the entry stop")
        tui.source.focus()
        await pilot.press("home", *["down"] * (LOOP_BODY - 1), "f9")
        await wait_until(pilot, lambda: len(tui.breakpoints) == 1, what="the breakpoint")
        tui.query_one("#nav-tabs").active = "tab-breakpoints"
        tui.query_one(BreakpointsPane).focus()
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(tui.screen, BreakpointDialog), what="the edit form")
        assert tui.screen.focused.id == "bp-condition"  # typing goes to the condition
        tui.screen.focused.value = "step == 3"
        await pilot.press("enter")
        await wait_until(pilot, lambda: tui.breakpoints[0].spec.condition == "step == 3",
                         what="the condition")
        await tui.action_quit()
    saved = persist.load(str(tmp_path), str(program))
    assert [(s.line, s.condition) for s in saved] == [(LOOP_BODY, "step == 3")]

    # Second session of the same program in the same directory: it is back, and it stops.
    tui = session()
    async with tui.run_test(size=SIZE) as pilot:
        await stopped_at(pilot, LOOP_BODY)
        assert "◆R" in source_row(tui, LOOP_BODY)  # a condition, restored from the last run
        pane = tui.query_one(BreakpointsPane)
        # The pane is redrawn when the adapter's verification is heard, which
        # on a busy machine can come after the stop is shown.
        def row() -> list[str]:
            return [str(cell) for cell in pane.get_row_at(0)] if pane.row_count == 1 else []

        await wait_until(pilot, lambda: "if step == 3" in row() and "restored" in row(),
                         what="the restored breakpoint in the pane, as the CLI says")
        await wait_until(pilot, lambda: any("step = 3" in label for label in tree_labels(tui.variables)),
                         what="step = 3 in the variables")
        # Clear them all from the TUI: the palette's breakpoint_remove, "all" ticked.
        await palette(pilot, "breakpoint_remove")
        await wait_until(pilot, lambda: isinstance(tui.screen, CommandForm), what="the remove form")
        await pilot.click("#field-all")
        await pilot.click("#form-ok")
        await wait_until(pilot, lambda: not tui.breakpoints, what="no breakpoints")
        assert "◆" not in source_row(tui, LOOP_BODY)
        await tui.action_quit()
    assert persist.load(str(tmp_path), str(program)) == []

    # Third session: nothing restored, the program runs to its end.
    tui = session()
    async with tui.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: tui.state == "terminated", what="the end")
        assert tui.breakpoints == []
        output = tui.query_one(OutputPane)
        await wait_until(pilot, lambda: any("total 10" in line for _, line in output.lines),
                         what="the output")
        assert not any("Restored" in line for _, line in output.lines)
        await tui.action_quit()


# ---------------------------------------------------------------------------- Node.js

ORDERS_JS = """\
"use strict";
function makeOrder(id, qty) {
  const order = { id, qty, lines: [{ sku: "TEA", n: qty }], customer: { name: "Ada", vip: true } };
  return order; // @order
}

function total(orders) {
  let sum = 0;
  for (const o of orders) {
    const weight = o.qty * 2;
    sum += weight; // @sum
  }
  return sum;
}

const orders = [makeOrder(1, 2), makeOrder(2, 5)]; // @caller
console.log("total", total(orders));
process.exitCode = 3;
"""


def js_line(marker: str) -> int:
    return next(n for n, text in enumerate(ORDERS_JS.splitlines(), 1) if f"@{marker}" in text)


@pytest.mark.slow
async def test_node_session_through_the_tui(tmp_path, node, no_leftover_processes):
    program = tmp_path / "orders.js"
    program.write_text(ORDERS_JS)
    order_line, sum_line = js_line("order"), js_line("sum")
    tui = create_app("launch", {"program": str(program), "breakpoints": [f"{program}:{order_line}"]},
                     None, cwd=str(tmp_path))
    async with tui.run_test(size=SIZE) as pilot:
        await stopped_at(pilot, order_line, str(program))
        # (the stop is painted from its event; the status, with the adapter, may follow)
        await wait_until(pilot, lambda: tui.status.adapter == "node", what="the adapter named")
        assert "▶" in source_row(tui, order_line)
        # The breakpoint's mark comes with the session's list, which may answer a
        # moment after the first stop's event.
        await wait_until(pilot, lambda: "●" in source_row(tui, order_line), what="the mark")
        assert tui.source.border_title == "orders.js"
        stack = tui.query_one(StackPane)
        await wait_until(pilot, lambda: stack.row_count >= 3, what="the stack")
        assert [f.name for f in stack.frames[:2]] == ["makeOrder", "(anonymous)"]
        assert stack.frames[1].line == js_line("caller")

        # Variables: V8's scope names; the local object opens, then a nested one.
        tree = tui.variables
        await wait_until(pilot, lambda: tree.filled > 0, what="variables")
        scopes = [node_.data.scope for node_ in tree.root.children]
        assert scopes[0] == "Local" and "Global" in scopes, scopes
        assert not find_node(tree, "order").is_expanded
        tree.focus()
        for path in ("order", "order.customer"):
            tree.move_cursor(find_node(tree, path))
            await pilot.press("space")
            await wait_until(pilot, lambda p=path: any(
                c.data.kind == "var" for c in find_node(tree, p).children), what=f"{path} children")
        labels = tree_labels(tree)
        assert any('name = "Ada"' in label for label in labels), labels
        assert any("qty = 2" in label for label in labels), labels

        # Node's backend does not complete (no DAP completions): `complete` (and so
        # Tab) answers from the frame's names instead, and a member after a dot.
        proposed = await tui.link.call("complete", {"text": "ord"})
        assert not proposed.supported
        assert [item.label for item in proposed.items] == ["order"], proposed.items
        members = await tui.link.call("complete", {"text": "order.cu"})
        assert [(item.label, item.start, item.length) for item in members.items] == [("customer", 6, 2)]
        box = tui.query_one("#console-input")
        box.focus()
        for typed, whole in (("ord", "order"), ("order.cus", "order.customer")):
            box.value = typed
            box.cursor_position = len(typed)
            await pilot.press("tab")
            await wait_until(pilot, lambda w=whole: box.value == w, what=f"{whole} completed")

        # A frame of Node's own (no source file): said plainly, not a stale file.
        internal = next(f for f in stack.frames if not f.file)
        await tui.link.call("frame", {"index": internal.index})
        await wait_until(pilot, lambda: tui.source.file is None, what="the sourceless frame")
        assert "node:internal" in tui.source.border_title
        assert "No source file for node:internal" in source_text(tui)
        await tui.link.call("frame", {"index": 0})
        await wait_until(pilot, lambda: tui.source.location_line == order_line, what="frame 0 again")

        # Step: out of makeOrder, back in the caller's line.
        tui.source.focus()
        await pilot.press("shift+f11")
        await wait_until(pilot, lambda: tui.state == "stopped" and tui.stop_info is not None
                         and tui.source.location_line == js_line("caller"), what="the step out")

        # Nested block scopes keep their own names (and values).
        await tui.link.call("breakpoint_add", {"file": str(program), "line": sum_line})
        await tui.link.call("breakpoint_remove", {"breakpoint_id": tui.breakpoints[0].id})
        await pilot.press("f5")
        await stopped_at(pilot, sum_line)
        await wait_until(pilot, lambda: any("weight = 4" in label for label in tree_labels(tree)),
                         what="weight in the first block")
        scopes = [node_.data.scope for node_ in tree.root.children]
        assert len(scopes) == len(set(scopes)), scopes

        # The console evaluates in the selected frame.
        await pilot.press("f7")
        assert isinstance(tui.focused, ConsoleInput)
        await pilot.press(*"o.qty * 10", "enter")
        log = tui.query_one("#console-log")
        await wait_until(pilot, lambda: any("20" in str(line.text) and ">>>" not in str(line.text)
                                            for line in log.lines), what="the console answer")

        # Run to the end: the second stop, then the exit code.
        await tui.link.call("breakpoint_remove", {"all": True})
        tui.source.focus()
        await pilot.press("f5")
        await wait_until(pilot, lambda: tui.state == "terminated", what="the end")
        output = tui.query_one(OutputPane)
        await wait_until(pilot, lambda: any("total 14" in line for _, line in output.lines),
                         what="the output")
        await wait_until(pilot, lambda: "exit code 3" in tui.status.render().plain, what="the exit code")
        await tui.action_quit()


def source_text(tui) -> str:
    return "\n".join("".join(seg.text for seg in tui.source.render_line(y)) for y in range(2))


async def test_typescript_through_source_maps_in_the_tui(ts_builds, no_leftover_processes):
    greet = mark(APP_TS, "greet-body")
    program = ts_builds["map"] / "app.js"
    tui = create_app("launch", {"program": str(program), "breakpoints": [f"{APP_TS}:{greet}"]},
                     None, cwd=str(APP_TS.parent))
    async with tui.run_test(size=SIZE) as pilot:
        await stopped_at(pilot, greet, str(APP_TS))
        assert tui.source.border_title == "app.ts"
        assert "▶" in source_row(tui, greet)
        stack = tui.query_one(StackPane)
        await wait_until(pilot, lambda: stack.row_count >= 2, what="the stack")
        assert stack.frames[0].name == "greet" and stack.frames[0].file == str(APP_TS)
        result = await tui.link.call("evaluate", {"expression": "person.name"})
        assert result.value == '"Ada"'
        await tui.action_quit()


# ---------------------------------------------------------------------------- the attach dialog


def test_dialog_fields_make_the_registry_commands_arguments():
    assert process_request("4242") == ("attach", {"pid": 4242})
    assert process_request(" 127.0.0.1:5678 ", "debugpy") == (
        "attach", {"host": "127.0.0.1", "port": 5678, "adapter": "debugpy"})
    assert process_request(":9229") == ("attach", {"host": "127.0.0.1", "port": 9229})
    assert simulator_request("iPhone 15", BUNDLE, True) == (
        "attach_sim", {"simulator_name": "iPhone 15", "bundle_id": BUNDLE, "wait_for": True})
    assert simulator_request(IPHONE_15.lower(), "4242", False) == (
        "attach_sim", {"simulator_id": IPHONE_15.lower(), "pid": 4242})
    assert simulator_request("", "", False) == ("attach_sim", {})  # the remembered defaults
    assert launch_request("app.py", "--n '2 3'", True) == (
        "launch", {"program": "app.py", "args": ["--n", "2 3"], "stop_on_entry": True})
    from backends.errors import InvalidInput

    for bad in (lambda: process_request(""), lambda: process_request("host:port"),
                lambda: process_request("myhost"), lambda: simulator_request("x", "42", True),
                lambda: launch_request(" ", "", False), lambda: launch_request("a.py", "'open", False)):
        with pytest.raises(InvalidInput):
            bad()


WORKER = """\
import time

count = 0
while True:
    count += 1
    time.sleep(0.02)
"""
WORKER_LOOP = 5

HOME = """\
value = 41
value += 1
print(value)
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def listening(port: int, timeout: float = 15.0) -> None:
    # The kernel's socket table: a probe connection would be taken for the debugger.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":
                return
        await asyncio.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port}")


def end_listener(proc: subprocess.Popen, port: int) -> None:
    """The program, and the adapter `debugpy --listen` started detached for it."""
    with contextlib_suppress():
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--for-server" in argv and str(port).encode() in argv:
            with contextlib_suppress():
                os.kill(int(entry.name), signal.SIGKILL)


def contextlib_suppress():
    import contextlib

    return contextlib.suppress(OSError)


@pytest.mark.slow
async def test_attach_dialog_switches_to_a_new_session_and_the_old_one_keeps_running(
        tmp_path, no_leftover_processes):
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    home = tmp_path / "home.py"
    home.write_text(HOME)
    port = free_port()
    listener = subprocess.Popen(
        [sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}", "--wait-for-client",
         str(worker)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True, cwd=tmp_path)
    try:
        await listening(port)
        tui = create_app("launch", {"program": str(home), "breakpoints": [f"{home}:2"]}, None,
                         cwd=str(tmp_path))
        async with tui.run_test(size=SIZE) as pilot:
            await stopped_at(pilot, 2, str(home))
            first = tui.link.name

            # Ctrl+A is listed in `?`, and opens the dialog on the Process tab.
            await pilot.press("question_mark")
            await wait_until(pilot, lambda: isinstance(tui.screen, HelpScreen), what="help")
            rows = [row for _, rows in tui.screen.sections for row in rows]
            assert ("Ctrl+A", "Attach / launch (a new session)") in rows
            await pilot.press("escape")
            await pilot.press("ctrl+a")
            await wait_until(pilot, lambda: isinstance(tui.screen, AttachDialog), what="the dialog")
            dialog = tui.screen
            assert dialog.active_tab == "process"

            # A mistake is said in the dialog, which stays open.
            target = dialog.query_one("#attach-target")
            assert tui.focused is target
            target.value = "nowhere"
            await pilot.press("enter")
            await wait_until(pilot, lambda: "HOST:PORT" in str(dialog.query_one("#attach-error").render()),
                             what="the error")
            assert isinstance(tui.screen, AttachDialog)
            # Escape while it attaches (nobody listens there) stops it; nothing changes.
            target.value = f"127.0.0.1:{free_port()}"
            await pilot.press("enter")
            # The attach runs in a host of its own, which serves its session at once.
            await wait_until(pilot, lambda: len(paths.live_sessions()) == 2,
                             what="the attach under way")
            assert dialog.busy
            await pilot.press("escape")
            await wait_until(pilot, lambda: [s.name for s in paths.live_sessions()] == [first],
                             what="the cancelled attach's host gone")
            assert tui.link.name == first and tui.source.location_line == 2

            await pilot.press("ctrl+a")
            await wait_until(pilot, lambda: isinstance(tui.screen, AttachDialog), what="the dialog again")
            tui.screen.query_one("#attach-target").value = f"127.0.0.1:{port}"
            await pilot.press("enter")
            await wait_until(pilot, lambda: not isinstance(tui.screen, AttachDialog)
                             and tui.link is not None and tui.link.name != first,
                             timeout=20, what="the switch to the attached session")
            await wait_until(pilot, lambda: tui.state == "running", what="running")
            assert tui.status.adapter == "debugpy"
            assert tui.breakpoints == [] and tui.source.file is None  # fresh panes

            # The first session keeps running in its host, joinable by name.
            other = await join(first, "cli")
            try:
                assert (await other.call("status")).state == "stopped"
            finally:
                await other.close()

            # Pause, F9 on the loop, continue: the attached process stops there.
            await pilot.press("f6")
            await wait_until(pilot, lambda: tui.state == "stopped" and tui.source.file is not None
                             and tui.source.file.path == str(worker), what="the pause")
            tui.source.focus()
            await pilot.press("home", *["down"] * (WORKER_LOOP - 1), "f9")
            await wait_until(pilot, lambda: len(tui.breakpoints) == 1, what="the breakpoint")
            await pilot.press("f5")
            await wait_until(pilot, lambda: tui.stop_info is not None
                             and tui.stop_info.reason == "breakpoint", what="the breakpoint's stop")
            await stopped_at(pilot, WORKER_LOOP, str(worker))
            assert "▶" in source_row(tui, WORKER_LOOP) and "●" in source_row(tui, WORKER_LOOP)

            # Detach from the palette: the process runs on.
            await palette(pilot, "detach")
            await wait_until(pilot, lambda: tui.state == "terminated", what="the detach")
            assert listener.poll() is None

            # Back to the first session from the palette; quitting ends it.
            await palette(pilot, "switch")
            await wait_until(pilot, lambda: tui.link.name == first and tui.state == "stopped"
                             and tui.source.location_line == 2, what="the first session again")
            await tui.action_quit()
        await asyncio.sleep(0.3)
        assert listener.poll() is None  # an attached program is not ours to end
    finally:
        end_listener(listener, port)


async def test_ui_without_a_session_attaches_to_a_simulator_app(sims, sim_app):
    proc = sim_app.start()
    sims.set_app(IPHONE_15, BUNDLE, proc.pid, appPath=str(sim_app.bundle))
    tui = create_app("join", {}, None)
    async with tui.run_test(size=SIZE) as pilot:
        # Nothing to join: the dialog opens instead of a failure.
        await wait_until(pilot, lambda: isinstance(tui.screen, AttachDialog), what="the dialog")
        assert tui.error_message is None and tui.state == "idle"
        dialog = tui.screen
        await pilot.click("#attach-tabs Tab#--content-tab-attach-sim")
        await wait_until(pilot, lambda: dialog.active_tab == "simulator", what="the simulator tab")
        # The tab's activation message focuses its first field after the click
        # focused the tab strip: the order of the two is the event loop's.
        await wait_until(pilot, lambda: tui.focused is dialog.query_one("#sim-device"),
                         what="the simulator field focused")
        await pilot.press(*"iPhone 15", "tab")
        dialog.query_one("#sim-app").value = BUNDLE
        await pilot.click("#attach-ok")
        await wait_until(pilot, lambda: not isinstance(tui.screen, AttachDialog) and tui.link is not None,
                         timeout=30, what="the attach")
        await wait_until(pilot, lambda: tui.state == "running", what="running")
        assert tui.status.adapter == "lldb-cli"

        # A breakpoint from the palette's form; the stand-in app stops there.
        await palette(pilot, "breakpoint_add")
        await wait_until(pilot, lambda: isinstance(tui.screen, CommandForm), what="the form")
        tui.screen.query_one("#field-file").value = str(APP_SOURCE)
        tui.screen.query_one("#field-line").value = str(BREAK_LINE)
        await pilot.click("#form-ok")
        await stopped_at(pilot, BREAK_LINE, str(APP_SOURCE), timeout=30)
        assert "▶" in source_row(tui, BREAK_LINE)
        assert "draw_frame" in tui.status.render().plain

        await palette(pilot, "detach")
        await wait_until(pilot, lambda: tui.state == "terminated", timeout=20, what="the detach")
        await tui.action_quit()
    assert pid_alive(proc.pid)
    tracer, state = await wait_until_released(proc.pid)
    assert tracer == 0 and state != "t", (tracer, state)
