"""Routing: which session a front end's call addresses, and the one way to
reach it. The CLI, the MCP server and the TUI all call through a `Router`.

Every session lives in a host process of its own (daemon.py), never in a
front end: a command that creates a session (launch, attach) starts a host
for it (host.py) exactly as `tui-debugger start` does, and then joins it. So
there is one kind of handle, `RemoteHandle`: a front end's hold on one
session through its socket (`call` a command, iterate its `events`, `close`
it). The router resolves the session a call addresses (the one named, else
the one this router started or joined, else the one of its project), keeps
the connection for the next call, looks the command up once and validates its
arguments once; the host validates once more on its side of the socket, since
it trusts no client. A front end hands the router its arguments as it got
them (the MCP server: strictly typed JSON); nothing before the router checks
them, and nothing after it on this side of the socket checks them again.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, AsyncIterator

from backends.errors import DebuggerError, InvalidInput

from .. import paths
from .remote import RemoteSession
from ..commands import registry
from ..commands.registry import Command, Result, View
from ..commands.agent import agent_answer
from ..execute import execute, validate_args
from ..events import SessionEvent

#: What an agent reads of a result: the lean structured answer and its text.
AgentAnswer = tuple[dict[str, Any], str]


def lookup(command: str | Command) -> Command:
    return command if isinstance(command, Command) else registry.get(command)


def wire_args(validated: Any) -> dict[str, Any]:
    """Validated arguments as they cross a socket or a pipe: by alias, only
    those given."""
    return validated.model_dump(mode="json", by_alias=True, exclude_unset=True)


class RemoteHandle:
    """One session, in the host process that serves it on its socket.
    Arguments a caller has not validated (the TUI's) are checked here first,
    so a mistake is reported without a round trip."""

    def __init__(self, remote: RemoteSession, view: View | None = None):
        self.remote = remote
        self.name = remote.name
        #: how this front end shows answers, sent with every call (None: its
        #: origin's, registry.View.of)
        self.view = view

    @classmethod
    async def connect(cls, name: str, origin: str, *, subscribe: bool = False,
                      register: bool = True, view: View | None = None) -> "RemoteHandle":
        return cls(await RemoteSession.connect(name, origin, subscribe=subscribe, register=register),
                   view)

    @property
    def host_pid(self) -> int | None:
        return self.remote.host_pid

    @property
    def closed(self) -> bool:
        return self.remote.closed

    @property
    def state_at_join(self) -> str | None:
        """The session's state when this handle subscribed to its events."""
        return self.remote.state_at_join

    async def call(self, command: str | Command, args: Any = None, cwd: str | None = None, *,
                   for_agent: bool = False, named: bool = True) -> Any:
        """The command's result model; `for_agent`: what an agent reads of it
        instead (AgentAnswer), made by the host from the result it holds, so it
        crosses the socket once and is neither validated nor dumped again here.
        `named`: the call is this session's (a TUI's, which shows it); else the
        router picked it for a caller that named none, and in a program of
        several processes the host acts on the caller's focused one."""
        cmd = lookup(command)
        validated = args if isinstance(args, cmd.args) else validate_args(cmd, args)
        raw = await self.remote.call(cmd.id, wire_args(validated), cwd=cwd or os.getcwd(),
                                     answer="agent" if for_agent else None,
                                     view=self.view.to_wire() if self.view else None,
                                     named=named)
        if not for_agent:
            return cmd.result.model_validate(raw)
        if "structured" in raw and "text" in raw:
            return raw["structured"], raw["text"]
        return agent_answer(cmd.id, cmd.result.model_validate(raw))  # a host of an older version

    def events(self) -> AsyncIterator[SessionEvent]:
        """Every SessionEvent from now on, until the session's host goes away."""
        return self.remote.events()

    @property
    def events_waiting(self) -> int:
        """Events already here that `events` has not handed out yet."""
        return self.remote.events_waiting

    async def close(self) -> None:
        """Let go of the session (it keeps running)."""
        await self.remote.close()


async def join(name: str | None, origin: str, *, subscribe: bool = True,
               register: bool = True, cwd: str | None = None,
               view: View | None = None) -> RemoteHandle:
    """A handle on a live session hosted by another process (default: the one
    of this project, see resolve_live), receiving its events."""
    return await RemoteHandle.connect(await resolve_live(name, cwd=cwd), origin,
                                      subscribe=subscribe, register=register, view=view)


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
    # A child process's session is reached by its name, never by default.
    mine = [s for s in live if s.project == project and not s.parent]
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
    """What a front end calls. A command that needs a session runs in the host
    of that session, through its socket (the connection is kept for the next
    call). One that creates a session (launch, attach) starts a host for it,
    and the new session becomes this router's. One that needs none (sessions,
    doctor, debug-script's one-shot run) runs here."""

    def __init__(self, origin: str, *, session: str | None = None, register: bool = True,
                 cwd: str | None = None, keep_spare: bool = False, view: View | None = None,
                 owns_started: bool = False):
        self.origin = origin
        #: how this front end shows answers (registry.View), sent with every call
        self.view = view
        #: the sessions it starts are its own: a host whose starter dies without
        #: a word (-9) ends them once no client is left (a `start` from the
        #: shell is meant to outlive the CLI process that ran it)
        self.owns_started = owns_started
        #: a long-lived front end (the MCP server) keeps a host started ahead of
        #: its next launch, so the launch does not wait for a Python start-up
        self.keep_spare = keep_spare
        self._spare: Any = None  # early_host.SpareHost
        self.default_session = session or paths.pinned_session()
        self.cwd = cwd  # its project is this client's (default: the working directory's)
        self.register = register
        self._remotes: dict[str, RemoteHandle] = {}
        self._current: str | None = None  # the session this router started or joined
        #: sessions this router started, and how to end them: "terminate" / "detach"
        self.started: dict[str, str] = {}

    async def call(self, command: str | Command, args: Any = None, *, session: str | None = None,
                   cwd: str | None = None, for_agent: bool = False, strict: bool = False,
                   prepare: Any = None) -> Any:
        """The command's result model, or with `for_agent` what an agent reads
        of it (AgentAnswer), naming the session when several are live. The
        arguments are validated here, once for this side of the socket
        (`strict`: JSON as typed, see validate_args); `prepare` may then
        complete them (the MCP server's default session name)."""
        cmd = lookup(command)
        validated = validate_args(cmd, args, strict=strict)
        if prepare is not None:
            validated = prepare(cmd, validated)
        name = session or self.default_session
        if cmd.creates_session:
            result = await self._host(cmd, validated, cwd)
        elif not cmd.needs_session:
            result = await execute(None, cmd, validated, origin=self.origin, client_cwd=cwd,
                                   session_name=name or self._current, view=self.view)
        else:
            handle = await self.handle(name)
            answer = await handle.call(cmd, validated, cwd, for_agent=for_agent,
                                       named=session is not None)
            if for_agent and paths.several_live():
                # With more than one session about, every answer says which it
                # acted on: the process of the tree the host chose says it itself.
                structured, text = answer
                process = structured.get("process")
                acted = process.get("session") if isinstance(process, dict) else None
                if acted is None:
                    structured.setdefault("session", handle.name)
                elif acted in text.split("\n", 1)[0]:
                    return structured, text  # it names its process itself
                return structured, label(text, acted or handle.name)
            return answer
        return agent_answer(cmd.id, result, cwd=cwd) if for_agent else result

    async def _host(self, cmd: Command, validated: Any, cwd: str | None) -> Result:
        """Start a host process running `cmd` (launch, attach, attach_sim) for a
        new session, and join it; it becomes this router's session."""
        from ..host.start import start_host

        if cmd.id == "attach" and getattr(validated, "ray", None) is not None:
            from ..commands.ray import join_live_root

            joined = await join_live_root(self, validated)
            if joined is not None:  # one root per cluster: the live one attaches them
                self._current = joined.session
                return joined
        from ..host.early import take_warm

        # The user's warm host, when it fits; else this front end's own spare.
        spare = await asyncio.to_thread(take_warm, cwd or self.cwd)
        if spare is None:
            spare, self._spare = self._spare, None
        try:
            raw = await start_host(cmd.id, wire_args(validated), cwd=cwd or self.cwd,
                                   origin=self.origin, spare=spare, owned=self.owns_started,
                                   view=self.view.to_wire() if self.view else None)
        finally:
            self.prepare_spare()
        raw.pop("_log", None)
        result = cmd.result.model_validate(raw)
        name = result.session
        self.started[name] = "terminate" if cmd.id == "launch" else "detach"
        handle = await RemoteHandle.connect(name, self.origin, register=self.register,
                                            view=self.view)
        self._remotes[name] = handle
        if getattr(validated, "make_current", True):
            self._current = name
        return result

    def prepare_spare(self) -> None:
        """With keep_spare, start a host for the next launch (early_host.SpareHost)."""
        if self.keep_spare and (self._spare is None or not self._spare.alive()):
            from ..host.early import SpareHost

            # With debugpy's adapter already started: a Python launch (the
            # common one) takes it, and does not wait for its start (~80 ms idle);
            # any other launch ends it (backends/early_adapter.py).
            self._spare = SpareHost(self.cwd, debugpy=True)

    async def handle(self, name: str | None = None) -> RemoteHandle:
        """The session `name` (default: this router's, else the one it started
        or joined, else the one of this client's project)."""
        name = name or self.default_session
        # An open connection answers for itself: scanning the runtime directory
        # (and probing every socket in it) at each call costs more than the call.
        key = name if name is not None else self._current
        existing = self._remotes.get(key) if key is not None else None
        if existing is not None and not existing.closed:
            return existing
        target = await resolve_live(name, cwd=self.cwd)
        existing = self._remotes.get(target)
        if existing is None or existing.closed:
            existing = await RemoteHandle.connect(target, self.origin, register=self.register,
                                                  view=self.view)
            self._remotes[target] = existing
        if name is None:
            self._current = target
        return existing

    async def end_started(self) -> None:
        """End the sessions this router started that are still live: a launch
        by terminate, an attach by detach (the program goes on)."""
        live = {s.name for s in paths.live_sessions()}
        for name, how in list(self.started.items()):
            if name in live:
                try:
                    await self.call(how, session=name)
                except DebuggerError:
                    pass
        self.started.clear()

    async def close(self) -> None:
        for remote in self._remotes.values():
            await remote.close()
        self._remotes.clear()
        spare, self._spare = self._spare, None
        if spare is not None:
            await asyncio.to_thread(spare.discard)
