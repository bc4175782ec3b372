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
- its end: ending a session ends its children (Hub.close_session);
- its stops: a call that waits for a stop on any session of the tree answers
  with the first one in any of them (next_stop), and each client acts on the
  process it was last answered a stop of (focused), told of the others'
  stops meanwhile (meanwhile).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
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


def _spawn(coro) -> asyncio.Task:
    task = asyncio.get_running_loop().create_task(coro)
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return task


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
    child.watch_relay = lambda watch, change: _relay_watch_change(hub, child, watch, change)
    hub.update_meta(child)
    _publish(hub, child, "started")
    _tell_unwatched(hub, parent, child, pid)
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
    if any(a.endswith("spare_debuggee.py") for a in argv[:6]):
        # forked from a program that ran in a warm host's spare process
        # (backends/spare_program.py): its command line is the spare's
        return f"{root_program or 'python'} (child process)"
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


def pid_of(member: Session) -> int | None:
    return member.metadata.get("pid") or (member.backend.debuggee_pid if member.backend else None)


def _relay_watch_change(hub, child: Session, watch, change) -> None:
    """A change of a forked child's copy of a watch: in the history of the
    watch in the process it was set in, naming the child."""
    origin = next((m for m in tree_of(hub, child)
                   if m is not child and pid_of(m) == watch.copied_from_pid), None)
    if origin is not None:
        origin.add_relayed_change(watch.id, watch.expression,
                                  change.model_copy(update={"process": describe(child)}))


def _forked_from(pid: int | None, parent_pid: int | None) -> bool | None:
    """Whether process `pid` is a fork of `parent_pid` (the same command line:
    an exec or a spawn has its own); None where that cannot be read."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as mine, \
                open(f"/proc/{parent_pid}/cmdline", "rb") as theirs:
            return mine.read() == theirs.read()
    except (OSError, TypeError):
        return None


def _tell_unwatched(hub, parent: Session, child: Session, pid: int | None) -> None:
    """Python watches reach a child forked from a process that holds them (a
    copy of the process, watches and all); a process started afresh
    (subprocess, multiprocessing spawn) or forked from one with none (a
    forkserver's worker) has none: said, never missed in silence."""
    forked = _forked_from(pid, pid_of(parent))
    if forked is True and any(w.kind is not None for w in parent.watches.values()):
        return  # it holds copies, and its session is told which (WatchesCopiedEvent)
    watched = [m for m in tree_of(hub, parent) if m is not child
               and any(w.kind is not None for w in m.watches.values())]
    if not watched or forked is None:
        return  # nothing to miss, or nothing known of how it started
    child.metadata["unwatched"] = True
    names = ", ".join(describe(m) for m in watched)
    how = ("forked from a process with no watch" if forked
           else "was started afresh, not forked")
    text = (f"{describe(child)} {how}: the watches of {names} do not reach it. Set them "
            f"there when it stops (--session / debugSessionId {child.name}).")
    for member in watched:
        member.record_activity("session", "not watched", text)
        member.publish(events.Notice(text=text, title="Not watched"))


def watch(hub, session: Session) -> None:
    """Mirror the session's breakpoint changes to its tree; tell the tree of its
    stops and end when it is a child."""
    session.add_listener(lambda e: _on_event(hub, session, e))


def _on_event(hub, session: Session, event: SessionEvent) -> None:
    handler = _TREE_HANDLERS.get(type(event))
    if handler is not None and session.name in hub.sessions:
        handler(hub, session, event)


#: root's name -> the latest mirroring of a breakpoint change to its tree; each
#: waits for the one before, so two changes never add the same breakpoint twice
_mirrors: dict[str, asyncio.Task] = {}


def _on_breakpoints(hub, session: Session, event: events.Breakpoints) -> None:
    if event.origin in _USER_ORIGINS:
        key = root_of(hub, session).name
        before = _mirrors.get(key)

        async def mirror() -> None:
            if before is not None and not before.done():
                with contextlib.suppress(BaseException):
                    await before
            await _mirror_breakpoints(hub, session)

        task = _mirrors[key] = _spawn(mirror())
        task.add_done_callback(lambda done: _mirrors.get(key) is done and _mirrors.pop(key))


async def breakpoints_settled(hub, session: Session, timeout: float = 5.0) -> None:
    """Wait until the tree holds the breakpoints set so far: a continue or step
    right after `break add` must not run a process past a line whose breakpoint
    is still on its way to it."""
    if hub is None or session.name not in hub.sessions:
        return
    task = _mirrors.get(root_of(hub, session).name)
    if task is not None and not task.done():
        with contextlib.suppress(Exception, asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(task), timeout)


def _on_stopped(hub, session: Session, event: events.Stopped) -> None:
    _stop_serial[session.name] = next(_serials)
    if session.parent:
        root_of(hub, session).child_stopped = True
    if session.parent or has_children(hub, session):
        _publish(hub, session, "stopped", reason=event.stop.reason,
                 location=event.stop.location, function=event.stop.function)


def _on_continued(hub, session: Session, event: events.Continued) -> None:
    # The tree's clients show each process's state as it is (the Threads pane).
    if session.parent or has_children(hub, session):
        _publish(hub, session, "running")


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
    events.Continued: _on_continued,
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
        _forget_stops(child.name)


def _forget_stops(name: str) -> None:
    """An ended child's stops and focus (a pool's workers come and go)."""
    _stop_serial.pop(name, None)
    for table in (_seen, _told, _focus):
        for key in [k for k, v in table.items() if name in (k[1], v)]:
            table.pop(key, None)


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


# ---------------------------------------------------------------- stops and focus
# A program of many processes is one thing to its clients: a call that waits
# for a stop answers with the first one in any process of the tree, and a call
# that names no session acts on the process this client was last answered a
# stop of (as VS Code focuses a child debug session, gdb switches inferior).
# Each client (the person's TUI, an agent's MCP server, the CLI) has its own.

_serials = itertools.count(1)
#: each session's last stop, numbered in the order the tree's stops came
_stop_serial: dict[str, int] = {}
#: (client, session): the number of its last stop that client was answered
_seen: dict[tuple[str, str], int] = {}
#: (client, session): the number of its last stop that client was told of beside an answer
_told: dict[tuple[str, str], int] = {}
#: (client, root): the session that client acts on
_focus: dict[tuple[str, str], str] = {}

#: the commands that act on one process, so on the client's focused one when
#: the call names no session (the others are the tree's: its breakpoints, its
#: end, its restart, its output and input)
FOCUSED_COMMANDS = frozenset({
    "continue", "next", "step", "finish", "stepi", "nexti", "pause", "until", "await",
    "trace", "context", "stack", "variables", "complete", "evaluate", "set_variable",
    "threads", "thread_select", "frame", "disassemble", "memory_read", "watch",
})


def has_children(hub, session: Session) -> bool:
    return hub is not None and len(tree_of(hub, session)) > 1


def _stopped(members: list[Session]) -> list[Session]:
    """The members stopped at a stop, in the order they stopped."""
    return sorted((m for m in members if m.state == SessionState.stopped and m.stop is not None),
                  key=lambda m: _stop_serial.get(m.name, 0))


def focused(hub, session: Session, client: str | None) -> Session:
    """The process a call of `client` that names none acts on: the one it was
    last answered a stop of while it is stopped, else the one that stopped
    last, else the one it acted on while it lives, else the root."""
    if hub is None or client is None or session.name not in hub.sessions:
        return session
    members = tree_of(hub, session)
    if len(members) == 1:
        return session
    root = members[0]
    chosen = hub.sessions.get(_focus.get((client, root.name), ""))
    if chosen is not None and chosen.state == SessionState.stopped:
        return chosen
    if chosen is None and root.backend is None:
        # A root that runs no program (a Ray cluster's, whose tasks paused before
        # anyone attached): no stop was this client's, so none is chosen for it;
        # the root's answer names its processes.
        return root
    stopped = _stopped(members)
    if stopped:
        return stopped[-1]
    if chosen is not None and chosen.state != SessionState.terminated:
        return chosen
    return root


def answered(hub, member: Session, client: str | None) -> None:
    """`client` was answered `member`'s stop (or acted on it): its focus."""
    if hub is None or client is None or member.name not in hub.sessions:
        return
    _focus[(client, root_of(hub, member).name)] = member.name
    if member.state == SessionState.stopped:
        _seen[(client, member.name)] = _told[(client, member.name)] = \
            _stop_serial.get(member.name, 0)


def unseen(hub, session: Session, client: str | None, newer_than: int = 0,
           untold: bool = False) -> list[Session]:
    """The processes of the tree stopped at a stop `client` was not answered
    (numbered above `newer_than`), the first stopped first; `untold`: only those
    it was not told of beside an answer either (`meanwhile`)."""
    key = client or ""
    return [m for m in _stopped(tree_of(hub, session))
            if _stop_serial.get(m.name, 0) > max(newer_than, _seen.get((key, m.name), 0),
                                                 _told.get((key, m.name), 0) if untold else 0)]


def _any_running(hub, session: Session) -> bool:
    """A process of the tree that may still stop: one that runs or starts."""
    return any(m.state in (SessionState.running, SessionState.starting)
               for m in tree_of(hub, session))


def last_serial() -> int:
    """The number of the tree's latest stop: a step waits for a stop after it."""
    return max(_stop_serial.values(), default=0)


async def next_stop(hub, session: Session, client: str | None, timeout: float,
                    newer_than: int = 0) -> Session | None:
    """The first process of `session`'s tree stopped at a stop `client` was not
    answered (numbered above `newer_than`), waiting up to `timeout` for one;
    None when none came or the tree ended. Children started meanwhile count:
    every session of the tree hears of its members' starts and stops.

    A stop the client was only told of (`meanwhile`: another worker held at
    the same breakpoint) comes after a new one: a continue of one worker
    answers with that worker's next stop (or any other new one), and the held
    worker's once nothing else of the tree runs, or the wait is over. So the
    answer to a continue is what the continue led to, and a held process is
    never forgotten."""
    root = root_of(hub, session)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(timeout, 0.0)
    # A stop that comes while this call waits is its answer, even when another
    # call of the same client was answered it first (a pause beside a wait).
    begun = max(last_serial(), newer_than)

    def answers() -> list[Session]:
        # new to this client, else new since the call began (a held stop is
        # the caller's fallback)
        return unseen(hub, root, client, newer_than, untold=True) or [
            m for m in _stopped(tree_of(hub, root)) if _stop_serial.get(m.name, 0) > begun]

    subscription = root.subscribe()
    waiting = [m.answering_stop() for m in tree_of(hub, root)]
    for w in waiting:  # a stop read meanwhile reads its locals at once
        w.__enter__()
    try:
        events_of = subscription.__aiter__()
        while True:
            fresh = answers()
            if fresh:
                return fresh[0]
            held = unseen(hub, root, client, newer_than)
            if held and not _any_running(hub, root):
                return held[0]
            if root.state == SessionState.terminated or session.name not in hub.sessions:
                return held[0] if held else None
            remaining = deadline - loop.time()
            if remaining <= 0:
                return held[0] if held else None
            try:
                await asyncio.wait_for(events_of.__anext__(), remaining)
            except (asyncio.TimeoutError, StopAsyncIteration):
                found = answers() or unseen(hub, root, client, newer_than)
                return found[0] if found else None
    finally:
        for w in waiting:
            w.__exit__(None, None, None)
        subscription.close()


def describe(member: Session) -> str:
    """A process in words: "worker calc.25154 (pid 25154)"."""
    pid = pid_of(member)
    return f"{member.name}" + (f" (pid {pid})" if pid else "")


def meanwhile(hub, acted: Session, client: str | None) -> list[str]:
    """The stops elsewhere in the tree `client` was neither answered nor told
    of: told now, once each ("calc.25154 (pid 25154) stopped at calc.py:5")."""
    if hub is None or client is None or not has_children(hub, acted):
        return []
    notes = []
    for member in _stopped(tree_of(hub, acted)):
        serial = _stop_serial.get(member.name, 0)
        key = (client, member.name)
        if member is acted or serial <= max(_seen.get(key, 0), _told.get(key, 0)):
            continue
        _told[key] = serial
        loc = member.stop.location if member.stop else None
        where = f" at {os.path.basename(loc.path or '')}:{loc.line}" if loc and loc.path else ""
        notes.append(f"{describe(member)} stopped{where}"
                     + (f" ({member.stop.reason})" if member.stop and member.stop.reason else ""))
    return notes
