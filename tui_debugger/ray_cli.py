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
        if not chosen:
            raise InvalidInput(f"No task or actor of the Ray cluster at {dashboard} waits for a "
                               "debugger: a `breakpoint()` in a @ray.remote function pauses one.")
        results = asyncio.run(_attach_all(address or "", chosen))
    except DebuggerError as exc:
        if getattr(ns, "json", False):
            print(json.dumps({"error": exc.to_dict()}, indent=2))
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    failed = [r for r in results if isinstance(r, DebuggerError)]
    sessions = [r for r in results if not isinstance(r, DebuggerError)]
    if ns.json:
        print(json.dumps({"sessions": sessions, "errors": [e.to_dict() for e in failed]}, indent=2))
    else:
        for raw in sessions:
            stop = raw.get("stop") or {}
            where = (stop.get("location") or {})
            place = f" at {where.get('path')}:{where.get('line')}" if where.get("path") else ""
            print(f"Session {raw['session']}: {raw['state']}{place}")
        for exc in failed:
            print(f"error: {exc.message}", file=sys.stderr)
        if sessions and not ns.ui:
            print("Each is a session: `tui-debugger ui --session NAME`, or `--session NAME` on "
                  "any command (`locals`, `next`, `continue`).")
    if ns.ui and sessions:
        return _open_tui([raw["session"] for raw in sessions])
    return 1 if failed and not sessions else 0


async def _attach_all(address: str, tasks: list[Any]) -> list[Any]:
    from .commands.ray import session_name_for
    from .host import start_host

    async def one(task: Any) -> Any:
        try:
            raw = await start_host("attach", {"ray": address, "pid": task.pid,
                                              "session_name": session_name_for(task)})
        except DebuggerError as exc:
            return exc
        raw.pop("_log", None)
        return raw

    return list(await asyncio.gather(*(one(t) for t in tasks)))


def _print_list(dashboard: str, tasks: list[Any], as_json: bool) -> int:
    if as_json:
        print(json.dumps({"dashboard": dashboard,
                          "paused": [t.model_dump(mode="json", by_alias=True) for t in tasks]},
                         indent=2))
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
    print("Attach: `tui-debugger ray attach [TASK…|--all]`, or `tui-debugger ray --ui`.")
    return 0


def _open_tui(names: list[str]) -> int:
    """The TUI on the first attached task; the others are a Ctrl+P "switch"
    away. They are this TUI's: quitting detaches from each (the tasks run on,
    the cluster with them), as quitting `tui-debugger attach` does."""
    from .tui.app import create_app

    app = create_app("join", {}, names[0])
    app.owned.update({name: "detach" for name in names})
    code = app.run()
    if app.error_message:
        print(f"error: {app.error_message}", file=sys.stderr)
        return 1
    return int(code or 0)
