"""What `tui-debugger ray`, the attach dialog's Ray tab and `debug_attach`
with `ray` make of what a person or an agent types (no cluster needed; the
cluster itself is tests/test_ray.py's)."""

from __future__ import annotations

import pytest

from backends.errors import DebuggerError, InvalidInput
from backends.ray import PausedTask, dashboard_url, list_paused
from tui_debugger.commands import registry
from tui_debugger.cli.ray import choose, split_words
from tui_debugger.tui.widgets.attach_dialog import ray_request


def task(name: str, pid: int) -> PausedTask:
    return PausedTask(name=name, function=f"mod.{name}", worker_id=f"w{pid}", pid=pid,
                      host="127.0.0.1", port=40000 + pid)


@pytest.mark.parametrize("given, env, expected", [
    (None, None, "http://127.0.0.1:8265"),
    (None, "auto", "http://127.0.0.1:8265"),
    (None, "10.0.0.5:6379", "http://127.0.0.1:8265"),  # a GCS address is not the dashboard
    (None, "http://head:8265", "http://head:8265"),
    ("head", None, "http://head:8265"),
    ("head:9000", None, "http://head:9000"),
    ("https://ray.example:443/", None, "https://ray.example:443"),
])
def test_the_dashboard_address(monkeypatch, given, env, expected):
    if env is None:
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
    else:
        monkeypatch.setenv("RAY_ADDRESS", env)
    assert dashboard_url(given) == expected


def test_addresses_that_are_not_a_dashboard_say_what_to_give():
    with pytest.raises(InvalidInput, match="dashboard"):
        dashboard_url("ray://head:10001")
    with pytest.raises(InvalidInput, match="dashboard"):
        dashboard_url("ftp://head")


def test_no_cluster_is_a_typed_error_that_says_how_to_start_one(monkeypatch):
    from tests.support.mcp import free_port

    with pytest.raises(DebuggerError) as caught:
        list_paused(f"http://127.0.0.1:{free_port()}")
    assert caught.value.code.value == "dependency_missing"
    assert "ray start --head" in caught.value.message


def test_cli_words_and_which_tasks():
    assert split_words([]) == (False, None, [])
    assert split_words(["http://h:8265"]) == (False, "http://h:8265", [])
    assert split_words(["attach", "127.0.0.1:8265", "square"]) == (True, "127.0.0.1:8265", ["square"])
    assert split_words(["attach", "square", "cube"]) == (True, None, ["square", "cube"])
    tasks = [task("square", 11), task("square", 12), task("cube", 13)]
    assert choose(tasks, [], every=True) == tasks
    assert choose(tasks, ["cube"], every=False) == [tasks[2]]
    assert choose(tasks, ["12"], every=False) == [tasks[1]]
    assert choose(tasks, ["square"], every=False) == tasks[:2]
    with pytest.raises(InvalidInput, match="--all"):
        choose(tasks, [], every=False)
    with pytest.raises(InvalidInput, match="cube \\(pid 13\\)"):
        choose(tasks, ["nothing"], every=False)


def test_the_attach_dialog_and_mcp_take_the_same_arguments():
    assert ray_request("", "") == ("attach", {"ray": ""})
    assert ray_request(" http://h:8265 ", "42") == ("attach", {"ray": "http://h:8265", "pid": 42})
    with pytest.raises(InvalidInput, match="pid"):
        ray_request("", "square")
    attach = registry.get("attach").args
    attach.model_validate({"ray": "", "pid": 42})
    with pytest.raises(ValueError, match="ray alone"):
        attach.model_validate({"ray": "", "port": 5678})


def test_workers_are_named_by_task_and_pid_and_the_root_names_them():
    from types import SimpleNamespace

    from tui_debugger.commands.ray import root_guard, session_name_for
    from tui_debugger.models import SessionState

    assert session_name_for(task("square", 11)) == "ray-square-11"
    assert session_name_for(task("Counter.add one", 12)) == "ray-add-one-12"
    root = SimpleNamespace(name="ray", parent=None)
    worker = SimpleNamespace(name="ray-square-11", parent="ray", state=SessionState.stopped,
                             stop=None)
    hub = SimpleNamespace(sessions={"ray": root, "ray-square-11": worker})
    root_guard(hub, root, "status")  # what applies to the tree, the root answers
    root_guard(hub, root, "breakpoint_add")
    with pytest.raises(InvalidInput, match="ray-square-11 stopped.*|--session"):
        root_guard(hub, root, "variables")
    # More workers for a live root: an internal command, named in no front end.
    cmd = registry.get("ray_attach")
    assert cmd.mcp is None and not cmd.cli and not cmd.tui_action
