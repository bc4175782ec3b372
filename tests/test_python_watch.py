"""Watchpoints on Python (debugpy has no data breakpoints): a watch on an
attribute, a local, a global or an item stops the program where the value
changed, in any function or thread, with old and new; conditions, hit counts,
log-only watches and their history; a watch whose frame returned ends. Each
through the front end an agent or a person uses, on real CPython 3.11-3.13."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.support.native_build import line_of, source_path
from tests.support.mcp import call, fails, in_process_client
from tests.support.pyenvs import base_python

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

BANK = source_path("py_bank.py")
KINDS = source_path("py_watch_kinds.py")
VERSIONS = ["3.11", "3.12", "3.13"]


def changing_lines() -> list[int]:
    return [line_of("py_bank.py", m) for m in ("withdraw", "bonus", "deposit")]


async def launch(client, program: str, version: str, line: int) -> None:
    await call(client, "debug_launch", {"program": program, "python": base_python(version),
                                        "breakpoints": [f"{program}:{line}"]})
    stop = await call(client, "debug_wait", {"timeoutMs": 30000})
    assert stop["stop"]["location"]["line"] == line, stop


@pytest.mark.parametrize("version", VERSIONS)
async def test_an_attribute_changed_in_a_callback_a_thread_and_its_owner(mcp_env, version):
    async with in_process_client() as client:
        await launch(client, BANK, version, line_of("py_bank.py", "opened"))
        watched = await call(client, "debug_watch", {"expression": "acct.balance"})
        assert watched["watches"][0]["value"] == "100"
        assert watched["watches"][0]["kind"] == "attribute"
        await call(client, "debug_breakpoint_remove", {"all": True})
        seen = []
        for _ in range(3):
            hit = await call(client, "debug_continue", {"waitMs": 30000})
            stop = hit["stop"]
            assert stop["reason"] == "data breakpoint", hit
            change = stop["watch_changes"][0]
            seen.append((change["old"], change["new"], change["at"], change["function"]))
            assert f"acct.balance: {change['old']} -> {change['new']} at" in hit.text
        lines = changing_lines()
        assert seen == [("100", "-20", f"py_bank.py:{lines[0]}", "withdraw"),
                        ("-20", "-40", f"py_bank.py:{lines[1]}", "bonus"),
                        ("-40", "-35", f"py_bank.py:{lines[2]}", "main")]
        ended = await call(client, "debug_continue", {"waitMs": 30000})
        assert ended["status"] == "terminated"


async def test_condition_hit_count_and_a_log_only_history(mcp_env):
    async with in_process_client() as client:
        await launch(client, BANK, "3.12", line_of("py_bank.py", "opened"))
        await call(client, "debug_watch", {"expression": "acct.balance", "log": True})
        await call(client, "debug_watch", {"expression": "acct.balance",
                                           "condition": "new < -35"})
        await call(client, "debug_watch", {"expression": "acct.balance", "hitCount": 3})
        await call(client, "debug_breakpoint_remove", {"all": True})
        first = await call(client, "debug_continue", {"waitMs": 30000})
        stopped = [c for c in first["stop"]["watch_changes"] if c.get("stopped", True)]
        assert [(c["watch_id"], c["new"]) for c in stopped] == [(2, "-40")], first
        second = await call(client, "debug_continue", {"waitMs": 30000})
        ids = sorted(c["watch_id"] for c in second["stop"]["watch_changes"]
                     if c.get("stopped", True))
        assert ids == [3], second  # -35 is not < -35; the third change is watch 3's
        ended = await call(client, "debug_continue", {"waitMs": 30000})
        assert ended["status"] == "terminated"
        listed = await call(client, "debug_watch", {})
        log = next(w for w in listed["watches"] if w.get("log_only"))
        assert [(c["new"], c["at"]) for c in log["history"]] == [
            ("-20", f"py_bank.py:{changing_lines()[0]}"),
            ("-40", f"py_bank.py:{changing_lines()[1]}"),
            ("-35", f"py_bank.py:{changing_lines()[2]}")]
        assert all(c["stopped"] is False for c in log["history"])  # it never stopped


async def test_a_restart_ends_the_watches_the_program_kept(mcp_env):
    async with in_process_client() as client:
        await launch(client, BANK, "3.12", line_of("py_bank.py", "opened"))
        await call(client, "debug_watch", {"expression": "acct.balance"})
        await fails(client, "debug_watch", {"expression": "acct.balance", "access": "read"},
                    "invalid_input", "changes")
        await fails(client, "debug_watch", {"expression": "nosuch.balance"}, "invalid_input",
                    "nosuch")
        # An attribute not set yet is watched for when it is.
        later = await call(client, "debug_watch", {"expression": "acct.later"})
        assert later["watches"][-1]["value"] == "<unbound>"
        await call(client, "debug_restart", {})
        await call(client, "debug_wait", {"timeoutMs": 30000})
        assert not (await call(client, "debug_watch", {})).get("watches")
        activity = await call(client, "debug_activity", {})
        assert "ended with the program" in json.dumps(activity.data)
        await call(client, "debug_terminate", {})


@pytest.mark.parametrize("version", VERSIONS)
async def test_items_in_place_a_global_and_a_local_whose_frame_returns(mcp_env, version):
    async with in_process_client() as client:
        await launch(client, KINDS, version, line_of("py_watch_kinds.py", "calls"))
        for expression in ('cart["items"]', 'cart["total"]', "TOTAL", "rows[3]"):
            await call(client, "debug_watch", {"expression": expression})
        await fails(client, "debug_watch", {"expression": "cart.get('x') + 1"}, "invalid_input",
                    "attribute")
        await call(client, "debug_breakpoint_remove", {"all": True})
        expected = [('cart["items"]', "[]", "['pen']", "append"),
                    ('cart["total"]', "0", "3", "item"),
                    ("TOTAL", "0", "3", "global"),
                    ("rows[3]", "0", "7", "row")]
        for expression, old, new, marker in expected:
            hit = await call(client, "debug_continue", {"waitMs": 30000})
            change = hit["stop"]["watch_changes"][0]
            assert (change["expression"], change["old"], change["new"], change["at"]) == (
                expression, old, new, f"py_watch_kinds.py:{line_of('py_watch_kinds.py', marker)}"
            ), hit
        await call(client, "debug_watch", {"all": True})
        await call(client, "debug_breakpoint_add", {
            "file": KINDS, "line": line_of("py_watch_kinds.py", "count_start")})
        await call(client, "debug_continue", {"waitMs": 30000})
        await call(client, "debug_breakpoint_remove", {"all": True})
        await call(client, "debug_watch", {"expression": "n", "hitCount": 2})
        news = []
        while True:  # from the 2nd change on (<unbound> -> 0 was the first)
            hit = await call(client, "debug_continue", {"waitMs": 30000})
            if hit.get("status") == "terminated":
                break
            change = hit["stop"]["watch_changes"][0]
            news.append((change["old"], change["new"]))
            assert change["at"] == f"py_watch_kinds.py:{line_of('py_watch_kinds.py', 'local')}"
        assert news == [("0", "1"), ("1", "2"), ("2", "3")]
        # count() returned: its local's watch ended, and said so
        activity = await call(client, "debug_activity", {})
        assert "the frame it lived in returned" in json.dumps(activity.data)
        assert not (await call(client, "debug_watch", {})).get("watches")


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["tui-debugger", *args], capture_output=True, text=True,
                          timeout=timeout, env=os.environ.copy())


@pytest.mark.parametrize("version", ["3.11", "3.12"])
def test_the_cli_stops_at_each_changing_line(isolated_runtime, version):
    opened = line_of("py_bank.py", "opened")
    try:
        started = cli("start", "--python", base_python(version), "--break",
                      f"{BANK}:{opened}", BANK)
        assert started.returncode == 0, started.stderr
        waited = cli("await", "--json")
        assert waited.returncode == 0, waited.stderr
        watched = cli("watch", "acct.balance")
        assert watched.returncode == 0 and "= 100" in watched.stdout, watched.stderr
        lines = changing_lines()
        texts = []
        for _ in range(3):
            went = cli("continue")
            assert went.returncode == 0, went.stderr
            texts.append(went.stdout)
        assert "acct.balance: 100 -> -20 at py_bank.py:%d (withdraw)" % lines[0] in texts[0]
        assert "acct.balance: -20 -> -40 at py_bank.py:%d (bonus)" % lines[1] in texts[1]
        assert "acct.balance: -40 -> -35 at py_bank.py:%d (main)" % lines[2] in texts[2]
        assert all("Stopped (data breakpoint)" in t for t in texts)
    finally:
        cli("stop")


async def test_the_tui_watches_from_variables_and_shows_old_and_new():
    from tests.support.tui import find_node, wait_until
    from tui_debugger.tui.app import create_app

    opened = line_of("py_bank.py", "opened")
    app = create_app("launch", {"program": BANK, "python": base_python("3.12"),
                                "breakpoints": [f"{BANK}:{opened}"]}, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state == "stopped" and app.variables.filled > 0,
                         timeout=30, what="the stop where the account is opened")
        tree = app.variables
        tree.focus()
        tree.move_cursor(find_node(tree, "acct"))
        await pilot.press("space")  # open acct: its balance
        await wait_until(pilot, lambda: find_node(tree, "acct.balance") is not None,
                         what="acct's attributes")
        tree.move_cursor(find_node(tree, "acct.balance"))
        await pilot.press("w")
        watches: list = []
        while not watches:
            watches[:] = (await app.link.call("watch", {})).watches
            await pilot.pause(0.05)
        assert (watches[0].expression, watches[0].value) == ("acct.balance", "100")
        await app.link.call("breakpoint_remove", {"all": True})
        await pilot.press("f5")
        await wait_until(pilot, lambda: app.state == "stopped" and app.stop_info is not None
                         and app.stop_info.watch_changes, timeout=30, what="the watch's stop")
        change = app.stop_info.watch_changes[0]
        shown = f"acct.balance: 100 → -20 at py_bank.py:{changing_lines()[0]}"
        assert (change.old, change.new) == ("100", "-20")
        await wait_until(pilot, lambda: any(shown in str(n.message) for n in app._notifications),
                         what="old → new on screen")
        assert app.source.location_line == changing_lines()[0]
        await app.action_quit()


def test_the_cli_marks_the_line_a_watched_value_changed_at():
    """The stop is just after the changing line, often lines below it (on the
    function's return): the excerpt marks that line `W`."""
    from types import SimpleNamespace as NS

    from tui_debugger.commands import render

    stop = NS(location=NS(path="/venv/toolz/dicttoolz.py", line=300),
              watch_changes=[NS(at="dicttoolz.py:297")])
    source = [NS(line=n, text=f"line {n}", current=n == 300, breakpoint=False)
              for n in (297, 298, 299, 300)]
    shown = render.source_lines(source, render._changed_lines(stop))
    assert shown[0].startswith(" W 297 |") and shown[3].startswith("-> 300 |"), shown
    other = NS(location=NS(path="/app/bank.py", line=9), watch_changes=[NS(at="dicttoolz.py:297")])
    assert render._changed_lines(other) == set()
