"""The hub: the sessions a process hosts, each served on its socket; and, for
now, the dispatcher every front end calls. A command runs in the process that
hosts its session (execute.py); a front end in another process reaches it
through the session's socket, transparently.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any


from backends.errors import InvalidInput

from . import paths
from .client import RemoteSession
from .commands import registry
from .commands.registry import Args, Command, Result
from .config import settings
from .execute import execute, validate_args
from .server import SessionServer
from .models import SessionState
from .session import Session


class Hub:
    """Sessions hosted by this process. Each is served on its socket."""

    def __init__(self, serve: bool = True):
        self.serve = serve
        self.sessions: dict[str, Session] = {}
        self.servers: dict[str, SessionServer] = {}
        self.current: str | None = None
        self._on_session_created: list = []

    def on_session_created(self, callback) -> None:
        self._on_session_created.append(callback)

    async def create_session(self, name: str | None, hint: str = "session") -> Session:
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
        self.current = name
        if self.serve:
            server = SessionServer(self, session)
            await server.start()
            self.servers[name] = server
            paths.write_meta(name, {
                "pid": os.getpid(), "created_at": time.time(), "program": None, "adapter": None,
            })
        for cb in self._on_session_created:
            cb(session)
        return session

    def update_meta(self, session: Session) -> None:
        if self.serve and session.name in self.servers:
            paths.write_meta(session.name, {
                "pid": os.getpid(), "created_at": session.created_at,
                "program": session.program, "adapter": session.adapter,
            })

    async def close_session(self, name: str) -> None:
        session = self.sessions.pop(name, None)
        server = self.servers.pop(name, None)
        if session is not None:
            await session.close()
        if server is not None:
            await server.close()
            paths.remove_files(name)
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


async def call_remote(remote: RemoteSession, cmd: Command, args: Any, cwd: str | None = None) -> Result:
    """Run `cmd` in the process hosting `remote`'s session. Arguments are checked
    here first, so a mistake is reported without a round trip."""
    raw = await remote.call(cmd.id, validate_args(cmd, args).model_dump(
        mode="json", by_alias=True, exclude_unset=True), cwd=cwd or os.getcwd())
    return cmd.result.model_validate(raw)


def raw_args(args: Any) -> dict[str, Any]:
    if isinstance(args, Args):
        return args.model_dump(by_alias=True, exclude_unset=True)
    return args or {}


class Dispatcher:
    """What a front end calls. Routes to a session hosted here or, through its
    socket, to a session hosted by another process."""

    def __init__(self, hub: Hub, origin: str, join_remote: bool = True):
        self.hub = hub
        self.origin = origin
        self.join_remote = join_remote
        self._remotes: dict[str, RemoteSession] = {}
        self._default_remote: str | None = None  # the live session `None` resolved to
        self.default_session: str | None = None

    async def call(self, command_id: str, args: Any = None, *, session: str | None = None,
                   cwd: str | None = None) -> Result:
        cmd = registry.get(command_id)
        args = raw_args(args)
        name = session or self.default_session
        if not cmd.needs_session:
            return await execute(self.hub, command_id, args, origin=self.origin,
                                 client_cwd=cwd, session_name=name)
        local = self.hub.local(name)
        if local is not None:
            return await execute(self.hub, command_id, args, origin=self.origin,
                                 session=local, client_cwd=cwd)
        if not self.join_remote:
            return await execute(self.hub, command_id, args, origin=self.origin,
                                 client_cwd=cwd, session_name=name)
        return await call_remote(await self.remote(name), cmd, args, cwd)

    async def remote(self, name: str | None) -> RemoteSession:
        # An open connection answers for itself: scanning the runtime directory
        # (and probing every socket in it) at each call cost more than the call.
        key = name if name is not None else self._default_remote
        existing = self._remotes.get(key) if key is not None else None
        if existing is not None and not existing.closed:
            return existing
        target = resolve_live(name)
        existing = self._remotes.get(target)
        if existing is None or existing.closed:
            existing = await RemoteSession.connect(target, self.origin)
            self._remotes[target] = existing
        if name is None:
            self._default_remote = target
        return existing

    async def close(self) -> None:
        for remote in self._remotes.values():
            await remote.close()
        self._remotes.clear()


def resolve_live(name: str | None) -> str:
    """The live session to join: the one named, else the only one, else the newest."""
    live = paths.live_sessions()
    if name is not None:
        if any(s.name == name for s in live):
            return name
        names = ", ".join(s.name for s in live) or "none"
        raise InvalidInput(
            f"No live session named {name!r}. Live sessions: {names}. "
            "Start one with `tui-debugger start PROGRAM`."
        )
    if not live:
        raise InvalidInput(
            "No live session. Start one: `tui-debugger start PROGRAM` (MCP: debug_launch)."
        )
    return live[-1].name


class SessionLink:
    """A front end's handle on one session, wherever it lives: call commands and
    receive every event. The TUI and the MCP server use this for both cases."""

    def __init__(self, name: str, origin: str, hub: Hub | None = None,
                 session: Session | None = None, remote: RemoteSession | None = None):
        self.name = name
        self.origin = origin
        self.hub = hub
        self.session = session  # set when the session lives in this process
        self.remote = remote

    @property
    def is_local(self) -> bool:
        return self.session is not None

    @classmethod
    def local(cls, hub: Hub, session: Session, origin: str) -> "SessionLink":
        return cls(session.name, origin, hub=hub, session=session)

    @classmethod
    async def join(cls, name: str | None, origin: str, register: bool = True) -> "SessionLink":
        target = resolve_live(name)
        remote = await RemoteSession.connect(target, origin, subscribe=True, register=register)
        return cls(target, origin, remote=remote)

    async def call(self, command_id: str, args: Any = None, cwd: str | None = None) -> Result:
        cmd = registry.get(command_id)
        args = raw_args(args)
        if self.session is not None:
            assert self.hub is not None
            return await execute(self.hub, command_id, args, origin=self.origin,
                                 session=self.session if cmd.needs_session else None,
                                 client_cwd=cwd)
        assert self.remote is not None
        if not cmd.needs_session:
            return await execute(Hub(serve=False), command_id, args, origin=self.origin,
                                 client_cwd=cwd)
        return await call_remote(self.remote, cmd, args, cwd)

    async def events(self):
        """Every SessionEvent from now on, until the session's host goes away."""
        if self.session is not None:
            sub = self.session.subscribe()
            try:
                async for event in sub:
                    yield event
            finally:
                sub.close()
        else:
            assert self.remote is not None
            async for event in self.remote.events():
                yield event

    async def close(self) -> None:
        if self.remote is not None:
            await self.remote.close()
