"""Serves one session on its Unix socket so that every other front end (a CLI
command, `tui-debugger mcp`, a second TUI) drives the same live session."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from collections.abc import Callable

from backends.errors import DebuggerError, InternalError, InvalidInput

from .. import paths
from . import wire
from ..commands.registry import SessionHost, View
from ..commands.agent import agent_answer
from ..execute import execute
from ..models import ClientInfo
from ..session import Session


_client_ids = itertools.count(1)


class SessionServer:
    def __init__(self, hub: SessionHost, session: Session):
        self.hub = hub
        self.session = session
        self.path = paths.socket_path(session.name)
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[asyncio.Task[None]] = set()
        #: (st_dev, st_ino) of the socket file this server made
        self._made: tuple[int, int] | None = None
        #: calls (and command lines) running or not yet answered, every client's
        self.calls_running = 0
        #: called after each call's answer is written and each client's leaving
        #: (the host's loop wakes on it)
        self.on_change: Callable[[], None] | None = None

    async def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        old_umask = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(
                self._serve, path=str(self.path), limit=wire.MAX_REQUEST
            )
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)
        self._made = paths.file_identity(self.path)

    def reachable(self) -> bool:
        """Whether a client can still find this server: its socket file is
        where it was made (paths.still_made; another file stands there when a
        session of the same name was started since)."""
        return paths.still_made(self.path, self._made)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1)
        for task in list(self._connections):
            task.cancel()
        if self.reachable():  # never another session's socket of the same name
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        # A client reached this socket: the session's file must say it too.
        self.hub.heal_meta(self.session.name)
        client_id = f"client-{next(_client_ids)}"
        origin = "cli"
        subscription = None
        forward: asyncio.Task[None] | None = None
        calls: set[asyncio.Task[None]] = set()
        write_lock = asyncio.Lock()

        async def send(message: wire.Message) -> None:
            async with write_lock:
                writer.write(wire.encode(message))
                await writer.drain()

        async def forward_events() -> None:
            assert subscription is not None
            async for event in subscription:
                await send(wire.EventMessage(event=event))

        async def refuse(call_id: wire.CallId, err: DebuggerError) -> None:
            with contextlib.suppress(Exception):
                await send(wire.Result(id=call_id, ok=False, error=err.to_dict()))

        async def on_hello(message: wire.Hello) -> None:
            nonlocal origin, client_id, subscription, forward
            origin = message.origin or "cli"
            client_id = message.client or client_id
            if message.registered:
                self.session.add_client(ClientInfo(id=client_id, origin=origin))
            if message.subscribe and subscription is None:
                subscription = self.session.subscribe()
                forward = asyncio.create_task(forward_events())
            await send(wire.Welcome(session=self.session.name, pid=os.getpid(),
                                    state=self.session.state.value))

        async def run_call(message: wire.Call) -> None:
            try:
                result = await execute(
                    self.hub, message.command, message.args or {},
                    origin=message.origin or origin, session=self.session,
                    client_cwd=message.cwd, client=client_id,
                    view=View.from_wire(message.view), named=message.named,
                )
                if message.answer == "agent":
                    structured, text = agent_answer(message.command, result, cwd=message.cwd)
                    payload = wire.Result(id=message.id, ok=True, agent=wire.AgentAnswer(
                        structured=structured, text=text))
                else:
                    payload = wire.Result(id=message.id, ok=True,
                                          result=result.model_dump(mode="json", by_alias=True))
            except DebuggerError as exc:
                payload = wire.Result(id=message.id, ok=False, error=exc.to_dict())
            except Exception as exc:  # the host keeps serving whatever one call does
                err = InternalError(f"Internal error in {message.command}: {exc}")
                payload = wire.Result(id=message.id, ok=False, error=err.to_dict())
            with contextlib.suppress(Exception):
                await send(payload)

        async def run_command_line(message: wire.CommandLine) -> None:
            # A CLI command's whole line, parsed, run and rendered here (cli.py's
            # quick client imports none of the registry, the models or pydantic).
            from ..cli.parse import run_on_host

            try:
                answer = await run_on_host(self.hub, self.session, message, client_id)
            except Exception as exc:  # the host keeps serving whatever one call does
                err = InternalError(f"Internal error in `{' '.join(message.argv)}`: {exc}")
                answer = {"stdout": "", "stderr": f"error: {err.message}\n", "rc": 1}
            with contextlib.suppress(Exception):
                await send(wire.Result(id=message.id, ok=True, cli=answer))

        def start_call(message: wire.Call | wire.CommandLine) -> None:
            # Calls run side by side: a long `await` does not hold up a `pause`.
            t = asyncio.create_task(run_call(message) if isinstance(message, wire.Call)
                                    else run_command_line(message))
            calls.add(t)
            self.calls_running += 1
            t.add_done_callback(call_done)

        def call_done(t: asyncio.Task[None]) -> None:
            # After its answer was written (or the client went): a host whose
            # session was told to end may go now.
            calls.discard(t)
            self.calls_running -= 1
            if self.on_change is not None:
                self.on_change()

        async def on_call(message: wire.Call | wire.CommandLine) -> None:
            start_call(message)

        #: what each kind of request does (a hello is answered before the next line is read)
        handlers = {wire.Hello: on_hello, wire.Call: on_call, wire.CommandLine: on_call}

        try:
            while True:
                try:
                    line = await reader.readline()
                except ValueError:  # a line over wire.MAX_REQUEST: answer, then hang up
                    await refuse(None, InvalidInput(
                        f"A request over {wire.MAX_REQUEST:,} bytes; send less."))
                    break
                if not line:
                    break
                try:
                    decoded = wire.decode(line, wire.MAX_DEPTH)
                except ValueError as exc:
                    # Answered, so a client waiting on this call hears why; the
                    # connection goes on.
                    text = line.decode(errors="replace")
                    await refuse(wire.message_id(text),
                                 InvalidInput(f"Not a message of this protocol: {exc}."))
                    continue
                if not isinstance(decoded, dict) or decoded.get("type") not in wire.REQUEST_TYPES:
                    continue  # not a message of ours; the connection goes on
                try:
                    message = wire.parse_request(decoded)
                except ValueError as exc:
                    call_id = decoded.get("id")
                    await refuse(call_id if isinstance(call_id, (int, str)) else None,
                                 InvalidInput(f"Not a message of this protocol: {exc}."))
                    continue
                await handlers[type(message)](message)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self.session.remove_client(client_id)
            if self.on_change is not None:
                self.on_change()
            if subscription is not None:
                subscription.close()
            if forward is not None:
                forward.cancel()
            for t in calls:
                t.cancel()
            with contextlib.suppress(Exception):
                writer.close()
            self._connections.discard(task)
