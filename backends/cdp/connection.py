"""The Chrome DevTools Protocol over a websocket: requests matched by id, events
handed to one callback in arrival order, and every pending request failed at
once when the socket closes.

Node's inspector answers over a socket that waits on the client's delayed
ACKs: each round trip stalls for the kernel's delayed-ACK timer (about 40 ms on
Linux). Re-arming TCP_QUICKACK before each send and on each receive makes the
client acknowledge at once; see benchmarks/cdp_roundtrip.py and
docs/backends/cdp.md for the figures measured here.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
from typing import Any, Callable
from urllib.parse import urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from ..errors import BackendDied, CommandFailed, Timeout

#: socket.TCP_QUICKACK exists only on Linux; elsewhere re-arming is a no-op.
TCP_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)

DEFAULT_REQUEST_TIMEOUT = 10.0

EventHandler = Callable[[str, dict[str, Any]], None]


def arm_quickack(sock: Any) -> None:
    """Ask the kernel to ACK the next segments at once. Linux clears the flag
    after a while on its own, so callers re-arm it around every exchange."""
    if TCP_QUICKACK is None or sock is None:
        return
    with contextlib.suppress(OSError, AttributeError, ValueError):
        sock.setsockopt(socket.IPPROTO_TCP, TCP_QUICKACK, 1)


class QuickAckClientConnection(ClientConnection):
    """A websockets client connection that re-arms TCP_QUICKACK whenever bytes
    arrive, so the rest of a multi-segment answer is acknowledged without delay."""

    quickack = True

    def data_received(self, data: bytes) -> None:
        if self.quickack:
            arm_quickack(self.transport.get_extra_info("socket"))
        super().data_received(data)


class PlainClientConnection(QuickAckClientConnection):
    """The same connection without the re-arming, for the benchmark's baseline."""

    quickack = False


class CdpConnection:
    """One inspector session. `on_event(method, params)` is called from the
    reader task for every event, in order; it must not block."""

    def __init__(self, ws: ClientConnection, on_event: EventHandler, quickack: bool = True):
        self._ws = ws
        self._on_event = on_event
        self._quickack = quickack
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._closed_reason: str | None = None
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())
        self.closed = asyncio.Event()

    @classmethod
    async def open(
        cls,
        url: str,
        on_event: EventHandler,
        *,
        quickack: bool = True,
        timeout: float = 10.0,
    ) -> "CdpConnection":
        connection_class = QuickAckClientConnection if quickack else PlainClientConnection
        try:
            ws = await asyncio.wait_for(
                connect(
                    url,
                    create_connection=connection_class,
                    # The inspector speaks no permessage-deflate and answers no pings
                    # while the program is paused; neither may end the session.
                    compression=None,
                    ping_interval=None,
                    max_size=None,
                    max_queue=None,
                    open_timeout=timeout,
                    close_timeout=2,
                    # A system proxy must never see a local inspector's traffic.
                    proxy=None,
                    user_agent_header=None,
                ),
                timeout,
            )
        except (OSError, InvalidHandshake, InvalidURI, asyncio.TimeoutError) as exc:
            raise CommandFailed(
                f"Cannot connect to the Node inspector at {url}: {exc or type(exc).__name__}. "
                "Check that node runs with --inspect or --inspect-brk and that the port is "
                "reachable.",
                url=url,
            ) from exc
        return cls(ws, on_event, quickack=quickack)

    @property
    def is_closed(self) -> bool:
        return self._closed_reason is not None

    def _socket(self) -> Any:
        return self._ws.transport.get_extra_info("socket") if self._ws.transport else None

    async def request(
        self, method: str, params: dict[str, Any] | None = None,
        timeout: float = DEFAULT_REQUEST_TIMEOUT,
    ) -> dict[str, Any]:
        """Send one command and return its `result`; a protocol error is a
        CommandFailed carrying the inspector's own message."""
        if self._closed_reason is not None:
            raise BackendDied(
                f"The Node inspector connection is closed ({self._closed_reason}); "
                "start a new session."
            )
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message = json.dumps({"id": request_id, "method": method, "params": params or {}})
        try:
            if self._quickack:
                arm_quickack(self._socket())
            await self._ws.send(message)
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise Timeout(
                f"The Node inspector did not answer {method} within {timeout:g} s; the program "
                "may be blocked in native code. Try pause, or stop the session.",
                method=method,
            ) from None
        except ConnectionClosed as exc:
            raise BackendDied(
                f"The Node inspector closed the connection during {method}; the program has "
                "probably exited. Start a new session."
            ) from exc
        finally:
            self._pending.pop(request_id, None)

    async def _read_loop(self) -> None:
        reason = "closed by the inspector"
        try:
            async for raw in self._ws:
                if self._quickack:
                    arm_quickack(self._socket())
                try:
                    message = json.loads(raw)
                except ValueError:
                    continue
                if "id" in message:
                    future = self._pending.get(message["id"])
                    if future is None or future.done():
                        continue
                    if "error" in message:
                        error = message["error"]
                        future.set_exception(
                            CommandFailed(
                                str(error.get("message") or error),
                                inspector_error=error,
                            )
                        )
                    else:
                        future.set_result(message.get("result") or {})
                elif "method" in message:
                    try:
                        self._on_event(message["method"], message.get("params") or {})
                    except Exception:  # a faulty handler must not end the session
                        pass
        except ConnectionClosed:
            pass
        except Exception as exc:  # noqa: BLE001 - the reader must always fail pending requests
            reason = f"read error: {exc}"
        finally:
            self._fail_all(reason)

    def _fail_all(self, reason: str) -> None:
        if self._closed_reason is None:
            self._closed_reason = reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(
                    BackendDied(
                        f"The Node inspector connection ended ({reason}); the program has "
                        "probably exited. Start a new session."
                    )
                )
        self._pending.clear()
        self.closed.set()
        with contextlib.suppress(Exception):
            self._on_event("__closed__", {"reason": reason})

    async def close(self) -> None:
        """Close the socket and wait for the reader; never raises."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._ws.close(), 2)
        with contextlib.suppress(Exception):
            self._ws.transport.abort()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self._reader), 2)
        if not self._reader.done():
            self._reader.cancel()
        self._fail_all("closed by the debugger")


# --------------------------------------------------------------------------- discovery


async def http_get_json(host: str, port: int, path: str, timeout: float = 5.0) -> Any:
    """GET a JSON document from the inspector's HTTP endpoint. Written on raw
    asyncio streams so no proxy setting can reroute it."""

    async def fetch() -> tuple[bytes, bytes]:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            host_header = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            writer.write(
                f"GET {path} HTTP/1.1\r\nHost: {host_header}\r\nConnection: close\r\n"
                "Accept: application/json\r\n\r\n".encode()
            )
            await writer.drain()
            # Node's inspector keeps the connection open after answering, so
            # the body is read by its length, not to end of stream.
            head = await reader.readuntil(b"\r\n\r\n")
            length = None
            for header in head.split(b"\r\n")[1:]:
                name, _, value = header.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            body = await reader.readexactly(length) if length is not None else await reader.read()
            return head, body
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    try:
        head, body = await asyncio.wait_for(fetch(), timeout)
    except asyncio.IncompleteReadError as exc:
        raise CommandFailed(f"The inspector at {host}:{port} closed the connection mid-answer.") from exc
    status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
    if " 200 " not in status_line + " ":
        raise CommandFailed(
            f"The inspector at {host}:{port} answered {status_line!r} for {path}.",
        )
    if b"transfer-encoding: chunked" in head.lower():
        body = _dechunk(body)
    return json.loads(body.decode("utf-8"))


def _dechunk(body: bytes) -> bytes:
    out = bytearray()
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        body = rest[size + 2:]
    return bytes(out)


def resolve_host(host: str) -> str:
    """The inspector refuses a Host header that is neither an IP address nor
    localhost (a DNS-rebinding guard), so a remote name is resolved first."""
    if host in ("localhost",):
        return "127.0.0.1"
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
        return host
    except OSError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        raise CommandFailed(f"Cannot resolve {host!r}: {exc}. Check the host name.") from exc
    return str(infos[0][4][0])


async def discover_websocket_url(host: str, port: int, timeout: float = 5.0) -> str:
    """The websocket URL of the first Node target listening at host:port."""
    address = resolve_host(host)
    try:
        targets = await http_get_json(address, port, "/json/list", timeout)
    except (OSError, asyncio.TimeoutError, ValueError) as exc:
        raise CommandFailed(
            f"No Node inspector answers at {host}:{port} ({exc or type(exc).__name__}). "
            "Start the program with node --inspect=HOST:PORT (or --inspect-brk) and try again.",
            host=host, port=port,
        ) from exc
    if not isinstance(targets, list) or not targets:
        raise CommandFailed(
            f"The inspector at {host}:{port} lists no debug targets; is the program still "
            "running?",
        )
    target = next((t for t in targets if t.get("type") == "node"), targets[0])
    ws_url = target.get("webSocketDebuggerUrl")
    if not ws_url:
        raise CommandFailed(
            f"The target at {host}:{port} already has a debugger attached (no websocket URL "
            "offered). Close the other debugger and try again.",
        )
    # The URL names the host as the target saw it (0.0.0.0 for a wildcard bind);
    # connect to the address that answered instead.
    parts = urlsplit(ws_url)
    netloc = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
