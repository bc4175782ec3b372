"""A session tree: a program's child processes, each a session of its own in the
same host as its parent's (docs/architecture.md, "Child processes").

debugpy announces a child Python (multiprocessing, subprocess, os.fork) with a
`startDebugging` reverse request, and a child Node process announces itself to
the CDP backend (backends/cdp/follow_children.js); the backend turns it into a ChildProcessEvent
and the hub calls `start_child`, which makes the child's session, gives it the
tree's breakpoints and exception filters, and attaches it. The child waits for
that attach (its configurationDone) before it runs any of its code, so its
breakpoints are set before its first line.

What the tree shares:
- breakpoints: a change on any session of the tree is mirrored to the others;
- stops and ends: every session of the tree publishes a `process` event for a
  stop, start or end in any of them, so a client of one follows the others;
- its end: ending a session ends its children (Hub.close_session).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import Any

from backends.errors import DebuggerError
from backends.models import ChildProcessEvent

from . import events
from .events import SessionEvent
from .models import SessionState
from .session import Session

log = logging.getLogger("tui_debugger.tree")

#: origins of a breakpoint change the tree mirrors (its own changes are "session")
_USER_ORIGINS = {"tui", "cli", "mcp", "user"}
#: an ended child's session stays this long, so its end can be read
ENDED_CHILD_LINGER_S = 2.0

_tasks: set[asyncio.Task[Any]] = set()


def root_of(hub, session: Session) -> Session:
    seen = set()
    while session.parent and session.parent in hub.sessions and session.name not in seen:
        seen.add(session.name)
        session = hub.sessions[session.parent]
    return session


def tree_of(hub, session: Session) -> list[Session]:
    """Every session of `session`'s tree, the root first."""
    root = root_of(hub, session)
    return [root, *[s for s in hub.sessions.values()
                    if s is not root and root_of(hub, s) is root]]


def _spawn(coro) -> None:
    task = asyncio.get_running_loop().create_task(coro)
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


def start_child(hub, parent: Session, event: ChildProcessEvent) -> None:
    _spawn(_start_child(hub, parent, event))


async def _start_child(hub, parent: Session, event: ChildProcessEvent) -> None:
    root = root_of(hub, parent)
    if parent.name not in hub.sessions or parent.state == SessionState.terminated:
        return
    if event.parent_pid:  # a grandchild, announced to the root (Node): under its parent
        parent = next((s for s in tree_of(hub, root)
                       if s.metadata.get("pid") == event.parent_pid
                       and s.state != SessionState.terminated), parent)
    pid = event.pid
    name = f"{root.name[:30]}.{pid}" if pid else None
    try:
        child = await hub.create_session(name, hint=f"{root.name}.child", parent=parent)
    except DebuggerError as exc:
        log.warning("no session for child process %s: %s", pid, exc)
        return
    child.cwd = parent.cwd
    child.metadata.update({k: v for k, v in parent.metadata.items() if k.startswith("python")})
    if pid:
        child.metadata["pid"] = pid
    for bp in list(root.breakpoints.values()):
        if bp.id != root.entry_breakpoint_id:
            with contextlib.suppress(DebuggerError):
                await child.add_breakpoint(bp.spec, "session")
    child.exception_filters = root.exception_filters if root.exception_filters is not None \
        else parent.enabled_exception_filters() or None
    # debugpy reads no program from an attach: it names the session's program only.
    followed = event.attach.extra.get("followedChild")  # Node: it said what it runs
    program = (event.attach.program or f"{root.program} (child process)") if followed \
        else _child_program(pid, root.program)
    request = event.attach.model_copy(update={"program": program})
    child.program = request.program
    hub.update_meta(child)
    _publish(hub, child, "started")
    try:
        await child.attach(request, parent.adapter or "debugpy", origin="session")
    except DebuggerError as exc:
        log.warning("attaching to child process %s failed: %s", pid, exc)
        _publish(hub, child, "ended", reason=exc.message)
        with contextlib.suppress(Exception):
            await hub.close_session(child.name)
        return
    hub.update_meta(child)


def _child_program(pid: int | None, root_program: str | None) -> str:
    """What the child runs, in words: its script, or the multiprocessing role it
    plays (pydevd's bootstrap line carries an access token: never shown)."""
    import re

    from backends import probe

    text = (probe.process_program(pid) if pid else None) or ""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = [a.decode(errors="replace") for a in handle.read().split(b"\0") if a]
    except (OSError, TypeError):
        argv = []
    if "--file" in argv:  # a Python started by the program, under pydevd: what it runs
        return " ".join(argv[argv.index("--file") + 1:])
    if "--connect" in argv:  # forked from a process debugpy started: the same program
        i = argv.index("--connect") + 2
        while i < len(argv) and argv[i].startswith("--"):
            i += 1 if argv[i] in ("--wait-for-client", "--log-to-stderr") else 2
        rest = argv[i:]
        if rest[:1] in (["-m"], ["-c"]):
            rest = [" ".join(rest[:2]), *rest[2:]]
        return " ".join(os.path.basename(a) if n == 0 else a for n, a in enumerate(rest)) \
            or f"{root_program or 'python'} (child process)"
    # the role is in the -c code, whatever process_program took for a script
    role = re.search(r"from multiprocessing\.(\w+) import (\w+)", " ".join(argv) or text)
    if role:
        what = {"resource_tracker": "resource tracker", "forkserver": "fork server"}.get(
            role.group(1), "worker")
        return f"{root_program or 'python'} (multiprocessing {what})"
    if not text or "pydevd" in text or "access_token" in text:
        return f"{root_program or 'python'} (child process)"
    return text


def watch(hub, session: Session) -> None:
    """Mirror the session's breakpoint changes to its tree; tell the tree of its
    stops and end when it is a child."""
    session.add_listener(lambda e: _on_event(hub, session, e))


def _on_event(hub, session: Session, event: SessionEvent) -> None:
    handler = _TREE_HANDLERS.get(type(event))
    if handler is not None and session.name in hub.sessions:
        handler(hub, session, event)


def _on_breakpoints(hub, session: Session, event: events.Breakpoints) -> None:
    if event.origin in _USER_ORIGINS:
        _spawn(_mirror_breakpoints(hub, session))


def _on_stopped(hub, session: Session, event: events.Stopped) -> None:
    if session.parent:
        _publish(hub, session, "stopped", reason=event.stop.reason,
                 location=event.stop.location, function=event.stop.function)


def _on_terminated(hub, session: Session, event: events.Terminated) -> None:
    # Its child processes end with it, whoever ended it.
    for child in [s for s in hub.sessions.values() if s.parent == session.name]:
        _spawn(hub.close_session(child.name))
    if session.parent:
        _publish(hub, session, "ended", exit_code=event.exit_code)
        _spawn(_forget_later(hub, session))


#: what a session's event means to its tree (_on_event)
_TREE_HANDLERS: dict[type, Any] = {
    events.Breakpoints: _on_breakpoints,
    events.Stopped: _on_stopped,
    events.Terminated: _on_terminated,
}


def _publish(hub, child: Session, what: str, **details: Any) -> None:
    for member in tree_of(hub, child):
        # One event per member: publishing numbers it in that session's sequence.
        member.publish(events.Process(session=child.name, parent=child.parent,
                                      pid=child.metadata.get("pid"), event=what, **details))


async def _forget_later(hub, child: Session) -> None:
    await asyncio.sleep(ENDED_CHILD_LINGER_S)
    if hub.sessions.get(child.name) is child and child.state == SessionState.terminated:
        with contextlib.suppress(Exception):
            await hub.close_session(child.name)


async def _mirror_breakpoints(hub, source: Session) -> None:
    """Make every other session of the tree hold `source`'s breakpoints."""
    wanted = [bp.spec for bp in source.breakpoints.values()
              if bp.id != source.entry_breakpoint_id]
    for member in tree_of(hub, source):
        if member is source or member.state == SessionState.terminated:
            continue
        have = {bp.id: bp.spec for bp in member.breakpoints.values()
                if bp.id != member.entry_breakpoint_id}
        with contextlib.suppress(DebuggerError):
            gone = [i for i, spec in have.items() if spec not in wanted]
            if gone:
                await member.remove_breakpoints(gone, "session")
            for spec in wanted:
                if spec not in have.values():
                    await member.add_breakpoint(spec, "session")
