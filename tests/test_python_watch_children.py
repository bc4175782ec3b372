"""Python watches in child processes: a forked child (os.fork, a multiprocessing
Pool or a ProcessPoolExecutor with the fork start method) holds a copy of the
watch and stops at the line that changed its copy, in its own session, with
old and new; a process started afresh is said not to be watched. Through MCP,
the CLI and the TUI, on real debugpy and CPython 3.11 and 3.12."""

from __future__ import annotations

import json

import pytest

from tests.support.mcp import call, in_process_client
from tests.support.native_build import line_of, source_path
from tests.support.pyenvs import base_python

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

FORKS = source_path("py_watch_forks.py")
SPEND = f"py_watch_forks.py:{line_of('py_watch_forks.py', 'spend')}"
AFTER = f"py_watch_forks.py:{line_of('py_watch_forks.py', 'after')}"


async def launch(client, kind: str, version: str) -> str:
    """The root session's name, stopped where the account is opened."""
    opened = line_of("py_watch_forks.py", "opened")
    launched = await call(client, "debug_launch", {"program": FORKS, "args": [kind],
                                                   "python": base_python(version),
                                                   "breakpoints": [f"{FORKS}:{opened}"]})
    stop = await call(client, "debug_wait", {"timeoutMs": 30000})
    assert stop["stop"]["location"]["line"] == opened, stop
    return launched["session"]


async def a_child(client) -> dict:
    """The first child session, once the tree has one (it is announced after the fork)."""
    import asyncio

    for _ in range(300):
        listed = (await call(client, "debug_sessions", {}))["sessions"]
        found = [s for s in listed if s.get("parent")]
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no child session: {listed}")


async def copies_known(client, name: str) -> None:
    """Until session `name` lists the copy of watch #1 it forked with."""
    import asyncio

    for _ in range(300):
        listed = await call(client, "debug_watch", {"debugSessionId": name})
        if any(w.get("id") == 1 for w in listed.get("watches") or []):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name} never listed its copy of watch #1: {listed.data}")


def change_of(answer) -> tuple:
    stop = answer["stop"]
    assert stop["reason"] == "data breakpoint", answer.data
    change = stop["watch_changes"][0]
    return change["old"], change["new"], change["at"]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("version", ["3.11", "3.12", "3.13"])
@pytest.mark.parametrize("kind", ["fork", "pool", "executor"])
async def test_a_forked_child_stops_where_it_changes_its_copy(mcp_env, kind, version):
    async with in_process_client() as client:
        await launch(client, kind, version)
        watched = await call(client, "debug_watch", {"expression": "acct.balance"})
        assert "processes it forks" in watched["message"] and "spawn" in watched["message"]
        await call(client, "debug_breakpoint_remove", {"all": True})
        root = watched["watches"][0]
        first = await call(client, "debug_continue", {"waitMs": 60000})
        child = first["process"]["session"]
        assert change_of(first) == ("100", "70", SPEND), first.data
        assert f"acct.balance: 100 -> 70 at {SPEND}" in first.text
        # The child's session lists the copy as its own.
        listed = await call(client, "debug_watch", {})
        assert listed["process"]["session"] == child, listed.data
        copy = listed["watches"][0]
        assert (copy["id"], copy["expression"]) == (root["id"], "acct.balance")
        second = await call(client, "debug_continue", {"waitMs": 60000})
        assert second["process"]["session"] == child, second.data
        assert change_of(second) == ("70", "65", SPEND)
        # The parent's copy was never changed by the child's.
        third = await call(client, "debug_continue", {"waitMs": 60000})
        assert (third.data.get("process") or {}).get("session") != child, third.data
        assert change_of(third) == ("100", "105", AFTER), third.data
        ended = await call(client, "debug_continue", {"waitMs": 60000})
        assert ended["status"] == "terminated", ended.data


@pytest.mark.timeout(180)
@pytest.mark.parametrize("kind", ["spawn", "forkserver", "subprocess"])
async def test_a_process_started_afresh_is_said_not_to_be_watched(mcp_env, kind):
    async with in_process_client() as client:
        root = await launch(client, kind, "3.12")
        await call(client, "debug_watch", {"expression": "acct.balance"})
        await call(client, "debug_breakpoint_remove", {"all": True})
        # The child changes a balance of its own, unwatched: the next stop is the
        # parent's own change.
        hit = await call(client, "debug_continue", {"waitMs": 60000})
        assert hit["process"]["session"] == root, hit.data
        assert change_of(hit) == ("100", "105", AFTER), hit.data
        activity = json.dumps((await call(client, "debug_activity", {})).data)
        assert ": the watches of py_watch_forks (pid" in activity, activity
        assert "do not reach it" in activity, activity
        if kind == "forkserver":  # its worker is a fork, of the server, which has none
            assert "forked from a process with no watch" in activity, activity
        ended = await call(client, "debug_continue", {"waitMs": 60000})
        assert ended["status"] == "terminated", ended.data


@pytest.mark.timeout(180)
@pytest.mark.parametrize("version", ["3.11", "3.12"])
async def test_a_childs_copy_keeps_its_condition_hit_count_and_log(mcp_env, version):
    async with in_process_client() as client:
        await launch(client, "fork", version)
        await call(client, "debug_watch", {"expression": "acct.balance", "log": True})
        await call(client, "debug_watch", {"expression": "acct.balance",
                                           "condition": "new < 68"})
        await call(client, "debug_watch", {"expression": "acct.balance", "hitCount": 2})
        await call(client, "debug_breakpoint_remove", {"all": True})
        hit = await call(client, "debug_continue", {"waitMs": 60000})
        child = hit["process"]
        stopping = [(c["watch_id"], c["old"], c["new"]) for c in hit["stop"]["watch_changes"]
                    if c.get("stopped", True)]
        # 70 is not < 68 and the first change; 65 stops both; the log never stops.
        assert stopping == [(2, "70", "65"), (3, "70", "65")], hit.data
        # In the parent, 105 is neither below 68 nor the 2nd change: no stop.
        ended = await call(client, "debug_continue", {"waitMs": 60000})
        assert ended["status"] == "terminated", ended.data
        listed = await call(client, "debug_watch", {})
        log = next(w for w in listed["watches"] if w.get("log_only"))
        name = f"{child['session']} (pid {child['pid']})"
        assert [(c["new"], c["at"], c.get("process")) for c in log["history"]] == [
            ("70", SPEND, name), ("65", SPEND, name), ("105", AFTER, None)], log
        assert all(c["stopped"] is False for c in log["history"])


@pytest.mark.timeout(180)
async def test_a_watch_set_or_removed_while_a_child_runs_says_which_processes_it_covers(
        mcp_env):
    forked = line_of("py_watch_forks.py", "forked")
    async with in_process_client() as client:
        await launch(client, "held", "3.12")
        await call(client, "debug_watch", {"expression": "acct.balance"})
        await call(client, "debug_breakpoint_add", {"file": FORKS, "line": forked})
        stop = await call(client, "debug_continue", {"waitMs": 60000})
        assert stop["stop"]["location"]["line"] == forked, stop.data
        child = await a_child(client)
        # A watch set now is the parent's alone; the child keeps its copy of #1.
        second = await call(client, "debug_watch", {"expression": "acct.balance"})
        assert f"not watched by this one: {child['name']}" in second["message"], second.data
        # The child's copies are known once it says so (WatchesCopiedEvent),
        # which on a busy machine comes after its session is announced.
        await copies_known(client, child["name"])
        removed = await call(client, "debug_watch", {"remove": [1]})
        assert f"keep their copies: {child['name']}" in removed.get("message", ""), removed.data
        await call(client, "debug_breakpoint_remove", {"all": True})
        hit = await call(client, "debug_continue", {"waitMs": 60000})
        assert hit["process"]["session"] == child["name"], hit.data
        assert [(c["watch_id"], c["new"]) for c in hit["stop"]["watch_changes"]] == [(1, "70")]
        # The child removes its copy; it ends; the parent's own watch stops it.
        gone = await call(client, "debug_watch", {"remove": [1]})
        assert gone["process"]["session"] == child["name"] and not gone.get("watches")
        last = await call(client, "debug_continue", {"waitMs": 60000})
        assert [(c["watch_id"], c["new"]) for c in last["stop"]["watch_changes"]] == [(2, "105")]
        ended = await call(client, "debug_continue", {"waitMs": 60000})
        assert ended["status"] == "terminated", ended.data


def test_the_cli_continue_answers_with_the_childs_change(isolated_runtime):
    import os
    import subprocess

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["tui-debugger", *args], capture_output=True, text=True,
                              timeout=60, env=os.environ.copy())

    opened = line_of("py_watch_forks.py", "opened")
    try:
        started = cli("start", "--python", base_python("3.12"), "--break",
                      f"{FORKS}:{opened}", FORKS, "fork")
        assert started.returncode == 0, started.stderr
        assert cli("await").returncode == 0
        watched = cli("watch", "acct.balance")
        assert watched.returncode == 0 and "processes it forks" in watched.stdout, watched.stderr
        assert cli("break", "remove", "--all").returncode == 0
        went = cli("continue")
        assert went.returncode == 0, went.stderr
        assert "In process py_watch_forks." in went.stdout, went.stdout
        assert "Stopped (data breakpoint)" in went.stdout, went.stdout
        assert f"acct.balance: 100 -> 70 at {SPEND} (spend)" in went.stdout, went.stdout
        listed = cli("watch")  # the child's: its copy
        assert "forked with it from pid" in listed.stdout, listed.stdout
        went = cli("continue")
        assert f"acct.balance: 70 -> 65 at {SPEND}" in went.stdout, went.stdout
        went = cli("continue")
        assert f"acct.balance: 100 -> 105 at {AFTER} (main)" in went.stdout, went.stdout
        assert "In process py_watch_forks." not in went.stdout
    finally:
        cli("stop")


async def test_the_tui_follows_the_childs_change_and_shows_old_and_new():
    from tests.support.tui import wait_until
    from tui_debugger.tui.app import create_app

    opened = line_of("py_watch_forks.py", "opened")
    app = create_app("launch", {"program": FORKS, "args": ["fork"],
                                "python": base_python("3.12"),
                                "breakpoints": [f"{FORKS}:{opened}"]}, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state == "stopped", timeout=30,
                         what="the stop where the account is opened")
        root = app.link.name
        await app.link.call("watch", {"expression": "acct.balance"})
        await app.link.call("breakpoint_remove", {"all": True})
        await pilot.press("f5")
        await wait_until(pilot, lambda: app.link.name != root and app.state == "stopped"
                         and app.stop_info is not None and app.stop_info.watch_changes,
                         timeout=30, what="the child's stop at its change, shown")
        change = app.stop_info.watch_changes[0]
        assert (change.old, change.new, change.at) == ("100", "70", SPEND)
        shown = f"acct.balance: 100 → 70 at {SPEND}"
        await wait_until(pilot, lambda: any(shown in str(n.message) for n in app._notifications),
                         what="old → new on screen")
        assert app.source.location_line == int(SPEND.rsplit(":", 1)[1]) + 1
        copies = (await app.link.call("watch", {})).watches
        assert [(w.expression, w.copied_from_pid is not None) for w in copies] == [
            ("acct.balance", True)]
        await app.action_quit()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("version", ["3.11", "3.12"])
async def test_a_watch_set_in_a_forked_child_stops_it(mcp_env, version):
    """The agent was loaded and emptied before the fork: a watch set in the
    child still works under the child's own debugger."""
    async with in_process_client() as client:
        root = await launch(client, "fork", version)
        await call(client, "debug_watch", {"expression": "acct.balance"})
        await call(client, "debug_watch", {"all": True})
        await call(client, "debug_breakpoint_add", {"file": FORKS, "line": line_of(
            "py_watch_forks.py", "child")})
        at = await call(client, "debug_continue", {"waitMs": 60000})
        assert at["process"]["session"] != root and at["stop"]["reason"] == "breakpoint"
        set_here = await call(client, "debug_watch", {"expression": "acct.balance"})
        assert set_here["process"]["session"] == at["process"]["session"]
        assert set_here["watches"][0]["value"] == "100"
        await call(client, "debug_breakpoint_remove", {"all": True})
        assert change_of(await call(client, "debug_continue", {"waitMs": 60000})) == (
            "100", "70", SPEND)
        assert change_of(await call(client, "debug_continue", {"waitMs": 60000})) == (
            "70", "65", SPEND)
        ended = await call(client, "debug_continue", {"waitMs": 60000})
        assert ended["status"] == "terminated", ended.data
