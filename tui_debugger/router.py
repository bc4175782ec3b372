"""Routing: which session a front end's call addresses, and the one way to
reach it. The CLI, the MCP server and the TUI all call through a `Router`.

A `SessionHandle` is a front end's hold on one session: `call` a command,
iterate its `events`, `close` it. `LocalHandle` is a session hosted by this
process (the MCP server's own launches); `RemoteHandle` one hosted elsewhere,
reached through its socket. The router resolves a session (hosted here first,
else a live one, over a connection it keeps open), looks the command up once
and validates its arguments once; the host validates once more on its side of
the socket, since it trusts no client.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any, AsyncIterator

from backends.errors import DebuggerError, InvalidInput

from . import paths
from .client import RemoteSession
from .commands import registry
from .commands.registry import Command, Result
from .commands.render import agent_answer
from .execute import execute, validate_args
from .hub import Hub
from .models import ClientInfo, SessionEvent, client_id

if TYPE_CHECKING:
    from .session import Session


def lookup(command: str | Command) -> Command:
    return command if isinstance(command, Command) else registry.get(command)


class SessionHandle:
    """One session, wherever it lives."""

    name: str

    async def call(self, command: str | Command, args: Any = None, cwd: str | None = None) -> Result:
        raise NotImplementedError

    async def call_for_agent(self, command: str | Command, args: Any = None,
                             cwd: str | None = None) -> tuple[dict[str, Any], str]:
        """What an agent reads of the result: the lean structured answer and its text."""
        cmd = lookup(command)
        return agent_answer(cmd.id, await self.call(cmd, args, cwd))

    def events(self) -> AsyncIterator[SessionEvent]:
        """Every SessionEvent from now on, until the session's host goes away."""
        raise NotImplementedError

    @property
    def closed(self) -> bool:
        return False

    async def close(self) -> None:
        """Let go of the session (it keeps running)."""


class LocalHandle(SessionHandle):
    """A session hosted by this process: calls run here, events come from its
    subscriber queue."""

    def __init__(self, hub: Hub, session: "Session", origin: str):
        self.hub = hub
        self.session = session
        self.origin = origin
        self.name = session.name
        # The front end hosting the session is one of its clients too.
        if client_id(origin) not in session.clients:
            session.add_client(ClientInfo(id=client_id(origin), origin=origin))

    async def call(self, command: str | Command, args: Any = None, cwd: str | None = None) -> Result:
        cmd = lookup(command)
        return await execute(self.hub, cmd, args, origin=self.origin,
                             session=self.session if cmd.needs_session else None,
                             client_cwd=cwd)

    async def events(self) -> AsyncIterator[SessionEvent]:
        subscription = self.session.subscribe()
        try:
            async for event in subscription:
                yield event
        finally:
            subscription.close()

    async def close(self) -> None:
        self.session.remove_client(client_id(self.origin))


class RemoteHandle(SessionHandle):
    """A session hosted by another process, through its socket. Arguments are
    checked here first, so a mistake is reported without a round trip."""

    def __init__(self, remote: RemoteSession):
        self.remote = remote
        self.name = remote.name

    @classmethod
    async def connect(cls, name: str, origin: str, *, subscribe: bool = False,
                      register: bool = True) -> "RemoteHandle":
        return cls(await RemoteSession.connect(name, origin, subscribe=subscribe, register=register))

    @property
    def host_pid(self) -> int | None:
        return self.remote.host_pid

    @property
    def closed(self) -> bool:
        return self.remote.closed

    async def call(self, command: str | Command, args: Any = None, cwd: str | None = None) -> Result:
        cmd = lookup(command)
        wire_args = validate_args(cmd, args).model_dump(mode="json", by_alias=True, exclude_unset=True)
        raw = await self.remote.call(cmd.id, wire_args, cwd=cwd or os.getcwd())
        return cmd.result.model_validate(raw)

    async def call_for_agent(self, command: str | Command, args: Any = None,
                             cwd: str | None = None) -> tuple[dict[str, Any], str]:
        # The host makes the agent's answer from the result it holds, so it
        # crosses the socket once and is neither validated nor dumped again here.
        cmd = lookup(command)
        wire_args = validate_args(cmd, args).model_dump(mode="json", by_alias=True, exclude_unset=True)
        raw = await self.remote.call(cmd.id, wire_args, cwd=cwd or os.getcwd(), answer="agent")
        if "structured" in raw and "text" in raw:
            return raw["structured"], raw["text"]
        return agent_answer(cmd.id, cmd.result.model_validate(raw))  # a host of an older version

    def events(self) -> AsyncIterator[SessionEvent]:
        return self.remote.events()

    async def close(self) -> None:
        await self.remote.close()


async def join(name: str | None, origin: str, *, subscribe: bool = True,
               register: bool = True, cwd: str | None = None) -> RemoteHandle:
    """A handle on a live session hosted by another process (default: the one
    of this project, see resolve_live), receiving its events."""
    return await RemoteHandle.connect(await resolve_live(name, cwd=cwd), origin,
                                      subscribe=subscribe, register=register)


HOW_TO_NAME = ("Name one with --session NAME (MCP: debugSessionId; a whole shell: "
               f"{paths.ENV_SESSION}=NAME).")


async def resolve_live(name: str | None, *, cwd: str | None = None) -> str:
    """The live session a client reaches: the one named, else the one live
    session started from the client's project (paths.project_of its working
    directory). None there, or several, is an error that lists the live
    sessions: never another project's session by accident."""
    live = paths.live_sessions()
    if name is not None:
        if any(s.name == name for s in live):
            return name
        names = ", ".join(s.name for s in live) or "none"
        pinned = (f" ({paths.ENV_SESSION} names it)"
                  if name == os.environ.get(paths.ENV_SESSION, "").strip() else "")
        raise InvalidInput(
            f"No live session named {name!r}{pinned}. Live sessions: {names}. "
            "Start one with `tui-debugger start PROGRAM`."
        )
    if not live:
        raise InvalidInput(
            "No live session. Start one: `tui-debugger start PROGRAM` (MCP: debug_launch)."
        )
    project = paths.project_of(cwd)
    mine = [s for s in live if s.project == project]
    if len(mine) == 1:
        return mine[0].name
    listed = await describe_live(live)
    lines = "\n".join(f"  {d['name']}  {d['state']}  {d['program'] or '-'}  project "
                      f"{d['project'] or '?'}  started by {d['startedBy'] or '?'}" for d in listed)
    if mine:
        head = f"{len(mine)} sessions are live in this project ({project}). {HOW_TO_NAME}"
    else:
        head = (f"No live session was started from this project ({project}); "
                f"{'one is' if len(live) == 1 else f'{len(live)} are'} live elsewhere. "
                f"{HOW_TO_NAME} Or start one here: `tui-debugger start PROGRAM` "
                "(MCP: debug_launch).")
    raise InvalidInput(f"{head}\n{lines}", project=project, sessions=listed)


async def describe_live(live: list[paths.LiveSession]) -> list[dict[str, Any]]:
    """Name, project, program, state and who started it, for each live session
    (its state asked of its host, at once for all)."""

    async def state_of(name: str) -> str:
        try:
            remote = await RemoteSession.connect(name, "cli", register=False, timeout=2.0)
        except DebuggerError:
            return "not answering"
        try:
            return str((await asyncio.wait_for(remote.call("status", {}), 2.0)).get("state"))
        except (DebuggerError, asyncio.TimeoutError):
            return "unknown"
        finally:
            await remote.close()

    states = await asyncio.gather(*(state_of(s.name) for s in live))
    return [{"name": s.name, "project": s.project, "program": s.program, "state": state,
             "startedBy": s.started_by} for s, state in zip(live, states)]


def label(text: str, session: str) -> str:
    """An answer's text, naming the session it acted on."""
    return f"[session {session}] {text}"


class Router:
    """What a front end calls. A command that needs a session runs where that
    session lives: hosted here, or behind its socket (the connection is kept
    for the next call). One that needs none (launch, sessions, doctor) runs in
    this process's hub, which hosts whatever it creates."""

    def __init__(self, origin: str, *, hub: Hub | None = None, session: str | None = None,
                 register: bool = True, cwd: str | None = None):
        self.origin = origin
        self.hub = hub if hub is not None else Hub(serve=False)
        self.default_session = session or paths.pinned_session()
        self.cwd = cwd  # its project is this client's (default: the working directory's)
        self.register = register
        self._remotes: dict[str, RemoteHandle] = {}
        self._default_remote: str | None = None  # the live session `None` resolved to

    async def call(self, command: str | Command, args: Any = None, *, session: str | None = None,
                   cwd: str | None = None) -> Result:
        cmd = lookup(command)
        validated = validate_args(cmd, args)
        name = session or self.default_session
        if not cmd.needs_session:
            return await execute(self.hub, cmd, validated, origin=self.origin,
                                 client_cwd=cwd, session_name=name or self._default_remote)
        handle = await self.handle(name)
        return await handle.call(cmd, validated, cwd)

    async def call_for_agent(self, command: str | Command, args: Any = None, *,
                             session: str | None = None,
                             cwd: str | None = None) -> tuple[dict[str, Any], str]:
        """`call`, answered as an agent reads it (see SessionHandle.call_for_agent)."""
        cmd = lookup(command)
        validated = validate_args(cmd, args)
        name = session or self.default_session
        if not cmd.needs_session:
            result = await execute(self.hub, cmd, validated, origin=self.origin,
                                   client_cwd=cwd, session_name=name or self._default_remote)
            return agent_answer(cmd.id, result)
        handle = await self.handle(name)
        structured, text = await handle.call_for_agent(cmd, validated, cwd)
        if paths.several_live():
            # With more than one session about, every answer says which it acted on.
            structured.setdefault("session", handle.name)
            text = label(text, handle.name)
        return structured, text

    async def handle(self, name: str | None = None) -> SessionHandle:
        """The session `name` (default: this router's, else the current one
        hosted here, else the one it reached before, else the one of this
        client's project)."""
        name = name or self.default_session
        local = self.hub.local(name)
        if local is not None:
            return LocalHandle(self.hub, local, self.origin)
        # An open connection answers for itself: scanning the runtime directory
        # (and probing every socket in it) at each call costs more than the call.
        key = name if name is not None else self._default_remote
        existing = self._remotes.get(key) if key is not None else None
        if existing is not None and not existing.closed:
            return existing
        target = await resolve_live(name, cwd=self.cwd)
        existing = self._remotes.get(target)
        if existing is None or existing.closed:
            existing = await RemoteHandle.connect(target, self.origin, register=self.register)
            self._remotes[target] = existing
        if name is None:
            self._default_remote = target
        return existing

    async def close(self) -> None:
        for remote in self._remotes.values():
            await remote.close()
        self._remotes.clear()
