"""`tui-debugger ray`: a Ray cluster's paused tasks and actors, listed, attached
to (one headless session each, as `start` makes), or opened in the TUI."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from typing import Any

from backends.errors import DebuggerError, InvalidInput

_ADDRESS = re.compile(r"^(https?://|localhost\b|\[|\d{1,3}(\.\d{1,3}){3}\b)|:\d+$")


def split_words(words: list[str]) -> tuple[bool, str | None, list[str]]:
    """(attach?, the dashboard address given, the tasks named)."""
    attach = words[:1] == ["attach"]
    rest = words[1:] if attach else list(words)
    address = rest.pop(0) if rest and _ADDRESS.search(rest[0]) else None
    return attach, address, rest


def choose(tasks: list[Any], names: list[str], every: bool) -> list[Any]:
    if every or not names:
        if every or len(tasks) == 1:
            return tasks
        listed = "\n".join(f"  {t.label()}" for t in tasks)
        raise InvalidInput(f"{len(tasks)} tasks are paused; name the ones to attach to (by "
                           f"task name or worker pid), or give --all:\n{listed}")
    chosen = []
    for name in names:
        match = [t for t in tasks if name in (t.name, t.function, str(t.pid))
                 or (t.function or "").endswith("." + name)]
        if not match:
            raise InvalidInput(f"No paused task is named {name!r} or has that pid. Paused: "
                               + ", ".join(f"{t.name} (pid {t.pid})" for t in tasks) + ".")
        chosen += [t for t in match if t not in chosen]
    return chosen


def run_ray(ns: argparse.Namespace) -> int:
    from backends.ray import dashboard_url, list_paused

    try:
        attach, address, names = split_words(ns.words)
        if ns.ui or ns.all:
            attach = True
        if names and not attach:
            raise InvalidInput(f"Unexpected {' '.join(names)!r}: to attach, "
                               "`tui-debugger ray attach [ADDRESS] TASK…`.")
        dashboard = dashboard_url(address)
        tasks = list_paused(dashboard)
        if not attach:
            return _print_list(dashboard, tasks, ns.json)
        chosen = choose(tasks, names, ns.all or ns.ui) if tasks else []
        if not chosen and ns.ui and _root_live():
            return _open_tui(_root_live(), owned=False)
        if not chosen:
            raise InvalidInput(f"No task or actor of the Ray cluster at {dashboard} waits for a "
                               "debugger: a `breakpoint()` in a @ray.remote function pauses one.")
        every = ns.all or ns.ui or (not names and len(chosen) == len(tasks))
        result, made = asyncio.run(_attach(address, [t.pid for t in chosen], every))
    except DebuggerError as exc:
        if getattr(ns, "json", False):
            print(json.dumps({"error": exc.to_dict()}, indent=2))
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    if ns.json:
        print(json.dumps(result.model_dump(mode="json", by_alias=True), indent=2))
    else:
        print(f"Session {result.root}: the Ray cluster at {result.dashboard}; its workers:")
        from ..commands.ray import stop_place

        for worker in result.workers:
            print(f"  {worker.session}: {worker.state}{stop_place(worker.stop)}")
        for message in result.errors:
            print(f"error: {message}", file=sys.stderr)
        if not ns.ui:
            print(f"Each worker is a session: `--session NAME` on any command (`locals`, `next`, "
                  f"`continue`); `tui-debugger ui --session {result.root}` opens them all. Tasks "
                  "that pause later are attached as they come.")
    if ns.ui:
        return _open_tui(result.root, owned=made)
    return 1 if result.errors and not result.attached else 0


async def _attach(address: str | None, pids: list[int], every: bool) -> Any:
    """Make the root `ray` (in a new host) with the first worker, or all of
    them, or join the live one; then attach the rest to it. Answers the tree,
    and whether this call made its root."""
    from ..commands.ray import ROOT_NAME
    from ..host.start import start_host
    from ..paths import live_sessions
    from ..client.router import Router

    rest = list(pids)
    made = not any(s.name == ROOT_NAME for s in live_sessions())
    if made:
        first = {} if every else {"pid": rest.pop(0)}
        await start_host("attach", {"ray": address or "", **first})
        rest = [] if every else rest
    from .parse import CLI_VIEW

    router = Router("cli", register=False, view=CLI_VIEW)
    try:
        result = await router.call("ray_attach", {"ray": address, "pids": rest,
                                                  "every": every}, session=ROOT_NAME)
    finally:
        await router.close()
    return result, made


def _print_list(dashboard: str, tasks: list[Any], as_json: bool) -> int:
    from backends.ray.discover import py_spy_hint

    hint = py_spy_hint(tasks)
    if as_json:
        print(json.dumps({"dashboard": dashboard,
                          "paused": [t.model_dump(mode="json", by_alias=True) for t in tasks],
                          **({"note": hint} if hint else {})}, indent=2))
        return 0
    if not tasks:
        print(f"Nothing paused in the Ray cluster at {dashboard}. A `breakpoint()` in a "
              "@ray.remote function or actor method pauses it there (RAY_DEBUG_POST_MORTEM=1 "
              "also pauses a task that raises).")
        return 0
    print(f"Paused in the Ray cluster at {dashboard}:")
    for task in tasks:
        kind = task.kind or "paused"
        place = task.where or "?"
        actor = f" actor {task.actor_id[:8]}" if task.actor_id else ""
        print(f"  {task.name:24} {kind:11} {place}  pid {task.pid} on {task.host}{actor}")
    if hint:
        print(hint)
    print("Attach: `tui-debugger ray attach [TASK…|--all]`, or `tui-debugger ray --ui`.")
    return 0


def _root_live() -> str | None:
    from ..commands.ray import ROOT_NAME
    from ..paths import live_sessions

    return ROOT_NAME if any(s.name == ROOT_NAME for s in live_sessions()) else None


def _open_tui(root: str, owned: bool) -> int:
    """The TUI on the root `ray`, which shows a paused worker (Ctrl+P "switch"
    for the others). A tree this call made is this TUI's: quitting detaches
    from every worker (the tasks run on, the cluster with them), as quitting
    `tui-debugger attach` does; a live tree it joined (an agent's) stays."""
    from ..tui.app import create_app

    app = create_app("join", {}, root)
    if owned:
        app.owned.update({root: "detach"})
    code = app.run()
    if app.error_message:
        print(f"error: {app.error_message}", file=sys.stderr)
        return 1
    return int(code or 0)
