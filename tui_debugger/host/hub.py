"""Hosting: the sessions a process hosts, each served on its socket with a
<name>.json beside it. Only hosts have a serving hub: the daemon behind
`tui-debugger start`, the MCP server, and a TUI for the sessions it launches.
Running a command is execute.py's job; reaching a session from a front end is
router.py's.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
from typing import Callable

from backends.errors import DebuggerError, ErrorCode, InvalidInput

from .. import paths
from ..config import settings
from ..events import State
from ..models import SessionState
from .server import SessionServer
from ..session import Session

#: A step takes the state from stopped to running and back within milliseconds.
#: Running after stopped is written once it has held this long, and not at all
#: when the session stopped again by then (update_meta); a stop is written at once.
META_SETTLE_S = 0.15


class Hub:
    """Sessions hosted by this process. Each is served on its socket."""

    def __init__(self, serve: bool = True):
        self.serve = serve
        self.sessions: dict[str, Session] = {}
        self.servers: dict[str, SessionServer] = {}
        self.current: str | None = None
        #: what <name>.json says of each session beyond its state: the project it
        #: was started from and who started it (tui / cli / mcp)
        self.origins: dict[str, dict[str, str]] = {}
        #: what each session's <name>.json is to say next, waiting for the writer
        #: thread (update_meta); written once however often it changed meanwhile
        self._meta_next: dict[str, dict[str, object]] = {}
        #: what each session's <name>.json says now (written by this process)
        self._meta_written: dict[str, dict[str, object]] = {}
        #: per session, running after a stop settling before it is written
        self._meta_timers: dict[str, asyncio.TimerHandle] = {}
        self._meta_writer: concurrent.futures.ThreadPoolExecutor | None = None
        #: called once, with its name, when the first session of no parent is
        #: served (daemon.serve tells its starter, who may join it at once)
        self.on_served: Callable[[str], None] | None = None

    async def create_session(self, name: str | None, hint: str = "session",
                             parent: Session | None = None, *,
                             cwd: str | None = None, origin: str | None = None) -> Session:
        """A new session, served on its socket. `cwd`: the directory the client
        that asked for it works in, whose project (paths.project_of) the
        session belongs to; `origin`: who asked; `parent`: the session of the
        process that started this one's (a child process's)."""
        if name:
            paths.validate_name(name)
            if name in self.sessions and self.sessions[name].state != SessionState.terminated:
                raise InvalidInput(f"A session named {name!r} is already running here; pick another name.")
            if any(s.name == name for s in paths.live_sessions()) and name not in self.sessions:
                raise InvalidInput(
                    f"A session named {name!r} is already live; pick another name or stop it "
                    f"(`tui-debugger stop --session {name}`)."
                )
            if name in self.sessions:
                await self.close_session(name)
        else:
            base = os.path.splitext(os.path.basename(hint.rstrip("/")))[0] or "session"
            name = paths.unique_name(base, set(self.sessions))
        cfg = settings()  # output buffer limits: docs/configuration.md
        session = Session(name, output_max_entries=cfg.output_max_entries,
                          output_max_bytes=cfg.output_max_bytes)
        self.sessions[name] = session
        session.on_child = self._child_started
        from ..tree import watch

        watch(self, session)
        if parent is not None:
            session.parent = parent.name  # a child process's: the root stays current
            # It belongs to its parent's project, and to whoever started the tree.
            self.origins[name] = dict(self.origins.get(parent.name, {}))
        else:
            self.current = name
            self.origins[name] = {"project": paths.project_of(cwd), "started_by": origin or "cli"}
        if self.serve:
            server = SessionServer(self, session)
            self.servers[name] = server
            try:
                await server.start()
                info = self._meta_of(session)
                paths.write_meta(name, info)  # a full disk is said here
                self._meta_written[name] = info
            except BaseException as exc:
                # Not served (a full disk): no session left behind that nobody can reach.
                with contextlib.suppress(Exception):
                    await self.close_session(name)
                if isinstance(exc, OSError):
                    raise DebuggerError(
                        f"Cannot serve the session {name} in {paths.runtime_dir()}: "
                        f"{exc.strerror or exc}. Free space there, or set "
                        "TUI_DEBUGGER_RUNTIME_DIR to another directory.",
                        ErrorCode.command_failed) from None
                raise
            # `sessions` in another process reads the state and the program's pid here.
            session.add_listener(lambda event, s=session: isinstance(event, State) and
                                 self.update_meta(s))
            if parent is None and self.on_served is not None:
                served, self.on_served = self.on_served, None
                served(name)
        return session

    def _meta_of(self, session: Session) -> dict[str, object]:
        backend = session.backend
        return {
            "pid": os.getpid(), "created_at": session.created_at,
            "program": session.program, "adapter": session.adapter,
            "state": session.state.value,
            "program_pid": backend.debuggee_pid if backend is not None else None,
            "parent": session.parent,
            **self.origins.get(session.name, {}),
        }

    def heal_meta(self, name: str) -> None:
        """<name>.json written again when it no longer reads as a session's
        file (truncated, garbage, removed) while this host serves `name` at its
        socket: a client that found the socket (paths.live_sessions) then finds
        the session. A file of another session is left as it is."""
        server = self.servers.get(name)
        session = self.sessions.get(name)
        if not self.serve or server is None or session is None or not server.reachable():
            return
        try:
            text = paths.meta_path(name).read_text()
            info = json.loads(text)
        except FileNotFoundError:
            info = None
        except (OSError, ValueError, RecursionError):
            info = None
        if isinstance(info, dict) and info.get("kind") == paths.META_KIND:
            return
        info = self._meta_of(session)
        with contextlib.suppress(DebuggerError):
            paths.write_meta(name, info)
            self._meta_written[name] = info

    def update_meta(self, session: Session) -> None:
        """<name>.json says the session as it is now, written by a thread of its
        own: each write-and-rename cost 0.5-1 ms on the test machine's disk,
        several under I/O load, with the event loop blocked (py-spy: half the
        host's CPU in a step, then three quarters once deferred to the loop's
        next turn). One writer keeps the writes in order; what changed while
        one was on its way is written once, as it is then. A step changes the
        state twice on its way to the answer (running, then stopped again), and
        even on a thread those two writes were a third of the host's time in an
        agent's step (py-spy, the disk's rename), each one making every client
        that counts the live sessions (paths.several_live) list the directory
        again: so running after stopped is handed to the writer once it has held
        META_SETTLE_S, a timer of its session's on the loop; a stop, or anything else, at once
        (a client listing the sessions right after a stop reads it stopped); and
        the writer leaves a file that says it already as it is. A step writes
        nothing."""
        name = session.name
        if not (self.serve and name in self.servers):
            return
        info = self._meta_of(session)
        self._meta_next[name] = info  # the writer takes the latest
        written = self._meta_written.get(name)
        if (written is not None and written.get("state") == SessionState.stopped.value
                and info["state"] == SessionState.running.value):
            if name not in self._meta_timers:
                self._meta_timers[name] = asyncio.get_running_loop().call_later(
                    META_SETTLE_S, self._submit_meta, name)
            return
        self._submit_meta(name)  # a stop (or an end) is told at once

    def _submit_meta(self, name: str) -> None:
        timer = self._meta_timers.pop(name, None)
        if timer is not None:
            timer.cancel()
        if self._meta_writer is None:
            self._meta_writer = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="session-meta")
        self._meta_writer.submit(self._write_next_meta, name)

    def _write_next_meta(self, name: str) -> None:
        """On the writer thread. A failure (a full disk) was said when the
        session was made, the first write; later ones keep the last good file."""
        info = self._meta_next.pop(name, None)
        server = self.servers.get(name)
        if server is not None and not server.reachable():
            return  # its files are gone, or another session's of the same name
        previous = self._meta_written.get(name)
        if info is not None and info != previous:
            # Noted before the rename makes it visible: whoever reads the file
            # saying it (a client, update_meta deciding whether running after
            # this stop is to settle) finds it noted. Noted after, a step taken
            # right after a stop's write could see the state before it, write
            # its running at once and then its stop again (a loaded test saw it).
            self._meta_written[name] = info
            try:
                paths.write_meta(name, info)
            except DebuggerError:
                if previous is None:
                    self._meta_written.pop(name, None)
                else:
                    self._meta_written[name] = previous

    async def meta_written(self) -> None:
        """Until every <name>.json write asked for so far is done, none held
        back to settle: a session ended is listed as ended (`sessions` reads the
        files) once the call that ended it has answered."""
        for name in list(self._meta_timers):
            self._submit_meta(name)
        if self._meta_writer is not None:
            await asyncio.wrap_future(self._meta_writer.submit(lambda: None))

    async def close_session(self, name: str) -> None:
        # A session's child processes end with it (their sessions first).
        for child in [n for n, s in self.sessions.items() if s.parent == name]:
            with contextlib.suppress(Exception):
                await self.close_session(child)
        session = self.sessions.pop(name, None)
        server = self.servers.pop(name, None)
        self._meta_next.pop(name, None)
        timer = self._meta_timers.pop(name, None)
        if timer is not None:
            timer.cancel()
        self.origins.pop(name, None)
        if session is not None:
            await session.close()
        if server is not None:
            await server.close()
            await self.meta_written()  # none may come back after the files go
            paths.remove_files(name, host_pid=os.getpid())  # the socket went with the server
        self._meta_written.pop(name, None)
        if self.current == name:
            self.current = next(reversed(self.sessions), None) if self.sessions else None

    async def close_all(self) -> None:
        for name in list(self.sessions):
            with contextlib.suppress(Exception):
                await self.close_session(name)

    def local(self, name: str | None) -> Session | None:
        if name is not None:
            return self.sessions.get(name)
        if self.current and self.current in self.sessions:
            return self.sessions[self.current]
        return None

    # ------------------------------------------------------------ child processes
    # (tree.py: what a session tree shares; here only where its sessions live)

    def _child_started(self, parent: Session, event) -> None:
        from ..tree import start_child

        start_child(self, parent, event)
