"""Client side of the session socket: how the CLI, the MCP server and a joining
TUI drive a session that lives in another process."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from pathlib import Path
from typing import Any, AsyncIterator

from backends.errors import BackendDied, DebuggerError, ErrorCode, InvalidInput, ResourceBusy

from .. import paths
from ..host import wire
from ..events import SessionEvent


class RemoteSession:
    def __init__(self, name: str, path: Path, origin: str):
        self.name = name
        self.path = path
        self.origin = origin
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._ids = itertools.count(1)
        self._pending: dict[wire.CallId, asyncio.Future[wire.Result]] = {}
        self._events: asyncio.Queue[SessionEvent | None] = asyncio.Queue()
        self._read_task: asyncio.Task[None] | None = None
        self._welcome: asyncio.Future[wire.Welcome] | None = None
        self.closed = False
        self.host_pid: int | None = None
        self.state_at_join: str | None = None

    @classmethod
    async def connect(
        cls, name: str, origin: str, *, subscribe: bool = False, client_id: str | None = None,
        register: bool = True, timeout: float = 5.0,
    ) -> "RemoteSession":
        path = paths.socket_path(name)
        self = cls(name, path, origin)
        try:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_unix_connection(str(path), limit=wire.MAX_LINE), timeout
            )
        except (OSError, asyncio.TimeoutError) as exc:
            paths.live_sessions(clean_stale=True)
            raise DebuggerError(
                f"Session {name!r} is not answering (its host process may have died). "
                "See `tui-debugger sessions`, or start a new one with `tui-debugger start PROGRAM`.",
                ErrorCode.stale_default,
            ) from exc
        loop = asyncio.get_running_loop()
        self._welcome = loop.create_future()
        self._read_task = loop.create_task(self._read_loop())
        try:
            await self._send(wire.Hello(
                origin=origin, subscribe=subscribe, registered=register,
                # Each CLI command is a process of its own, but one front end (the
                # person's shell): its calls share one id.
                client=client_id or (origin if origin == "cli" else f"{origin}-{os.getpid()}"),
            ))
            welcome = await asyncio.wait_for(self._welcome, timeout)
        except asyncio.TimeoutError:
            await self.close()
            raise ResourceBusy(
                f"Session {name!r} is busy: its host accepted the connection but did not answer "
                f"within {timeout:g} s. Try again in a moment; if it stays busy, see "
                "`tui-debugger sessions` or stop it with `tui-debugger stop`.",
                session=name,
            ) from None
        except BaseException:
            # Cancelled (a TUI's switch as the app closes) or refused half-way:
            # a connection left open is a client the host waits for, and it
            # kept a stopped session's host alive.
            await self.close()
            raise
        self.host_pid = welcome.pid
        #: the session's state when this client subscribed (None: an older host)
        self.state_at_join = welcome.state
        return self

    async def _send(self, message: wire.Message | bytes) -> None:
        if self._writer is None or self.closed:
            raise self._died()
        try:
            self._writer.write(message if isinstance(message, bytes) else wire.encode(message))
            await self._writer.drain()
        except (ConnectionError, OSError):
            raise self._died() from None

    def _died(self) -> DebuggerError:
        return BackendDied(
            f"Lost the connection to session {self.name!r}: its host process exited. "
            "See `tui-debugger sessions`, or start a new one with `tui-debugger start PROGRAM`."
        )

    async def _read_loop(self) -> None:
        assert self._reader is not None
        try:
            while True:
                line = await self._reader.readline()
                if not line:
                    break
                try:
                    message = wire.parse_reply_line(line)
                except ValueError:
                    continue  # not a message of this protocol (a newer host's): skipped
                self._REPLY_HANDLERS[type(message)](self, message)
        except (ConnectionError, ValueError, asyncio.IncompleteReadError):
            pass
        finally:
            self.closed = True
            err = self._died()
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(err)
            self._pending.clear()
            if self._welcome and not self._welcome.done():
                self._welcome.set_exception(err)
            self._events.put_nowait(None)

    def _on_result(self, message: wire.Result) -> None:
        fut = self._pending.pop(message.id, None)
        if fut is not None and not fut.done():
            fut.set_result(message)

    def _on_event(self, message: wire.EventMessage) -> None:
        self._events.put_nowait(message.event)

    def _on_welcome(self, message: wire.Welcome) -> None:
        if self._welcome and not self._welcome.done():
            self._welcome.set_result(message)

    #: what each kind of reply does (_read_loop)
    _REPLY_HANDLERS: dict[type, Any] = {
        wire.Result: _on_result, wire.EventMessage: _on_event, wire.Welcome: _on_welcome,
    }

    async def call(self, command: str, args: dict[str, Any], cwd: str | None = None,
                   origin: str | None = None, answer: str | None = None,
                   view: dict[str, Any] | None = None, named: bool = False) -> dict[str, Any]:
        """The result by alias; with answer="agent", what an agent reads of it
        instead ({"structured", "text"}, made by the host). `named`: the caller
        named this session (else the host may act on the process of its tree
        the caller is focused on)."""
        call_id = next(self._ids)
        data = wire.encode(wire.Call(id=call_id, command=command, args=args,
                                     cwd=cwd or os.getcwd(), origin=origin or self.origin,
                                     answer=answer, view=view or None, named=named))
        # once: its size is checked, then it is sent
        if len(data) > wire.MAX_REQUEST:
            raise InvalidInput(
                f"The arguments of {command} are over {wire.MAX_REQUEST:,} bytes; send less "
                "(a shorter expression or command).")
        fut: asyncio.Future[wire.Result] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = fut
        await self._send(data)
        reply = await fut
        if reply.ok:
            if answer is not None and reply.agent is not None:
                # as it was parsed: what model_dump would copy
                return {"structured": reply.agent.structured, "text": reply.agent.text}
            return reply.result or {}
        error = reply.error or wire.ErrorBody()
        try:
            code = ErrorCode(error.code)
        except ValueError:
            code = ErrorCode.internal_error
        raise DebuggerError(error.message, code, **(error.details or {}))

    @property
    def events_waiting(self) -> int:
        """Events read from the socket that `events` has not handed out yet."""
        return self._events.qsize()

    async def events(self) -> AsyncIterator[SessionEvent]:
        while True:
            event = await self._events.get()
            if event is None:
                return
            yield event

    async def close(self) -> None:
        self.closed = True
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
        if self._read_task is not None:
            self._read_task.cancel()
            with contextlib.suppress(BaseException):
                await self._read_task
