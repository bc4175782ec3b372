"""The MCP server's streamable HTTP transport: a bearer token, exact
Host/Origin checks, a deadline per request and a cap on connections. It serves
a front end (`server.McpFrontEnd`) it is given; nothing here knows the tools."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from typing import Any

from backends.errors import DebuggerError, ErrorCode, InvalidInput

from .. import paths

#: Who may use the HTTP transport: whoever holds this token. Any local user can
#: reach a loopback port, and a tool call runs code as us (debug_evaluate,
#: debug_launch), so every request must carry it.
TOKEN_FILE = "mcp-http.token"


def http_token(file: str = TOKEN_FILE) -> tuple[str, str, bool]:
    """(token, file, new): the bearer token of the HTTP transport (or of
    another endpoint's `file`), kept in the per-user runtime directory (0700)
    in a 0600 file, made on first use."""
    import secrets

    path = paths.runtime_dir() / file
    try:
        st = path.stat()
        if st.st_uid == os.getuid() and not st.st_mode & 0o077:
            token = path.read_text().strip()
            if len(token) >= 32:
                return token, str(path), False
    except OSError:
        pass
    token = secrets.token_urlsafe(32)
    with contextlib.suppress(OSError):
        path.unlink()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(token + "\n")
    except OSError as exc:
        # A full disk: no empty token file left for the next start to trip on.
        with contextlib.suppress(OSError):
            path.unlink()
        raise DebuggerError(f"Cannot write the token to {path}: {exc.strerror or exc}. "
                            "Free space there, or set TUI_DEBUGGER_RUNTIME_DIR to another "
                            "directory.", ErrorCode.command_failed) from None
    return token, str(path), True


class BearerAuth:
    """ASGI middleware, in front of the MCP app: a request whose `Host` is not
    exactly one of this server's names with its port, or whose `Origin` (a web
    page's) is not one of them, is refused (DNS rebinding); then one without
    `Authorization: Bearer <token>` is answered 401.

    Exact comparison, not the SDK's `127.0.0.1:*` wildcards, which accepted
    `Host: 127.0.0.1:PORT@evil.com` and `Origin: http://127.0.0.1:1.evil.com`."""

    def __init__(self, app: Any, token: str, hosts: set[str] | None = None) -> None:
        self.app = app
        self.token = token.encode()
        self.hosts = {h.lower().encode() for h in hosts} if hosts is not None else None
        self.origins = ({b"http://" + h for h in self.hosts} if self.hosts is not None
                        else None)

    async def _refuse(self, send: Any, status: int, message: str,
                      extra: list[tuple[bytes, bytes]] = ()) -> None:
        body = json.dumps({"error": message, "code": "invalid_input"}).encode()
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()), *extra]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            import hmac

            headers: dict[bytes, bytes] = {}
            for key, value in scope.get("headers", []):
                headers.setdefault(key, value)  # the first of each; no merging
            if self.hosts is not None:
                if headers.get(b"host", b"").lower() not in self.hosts:
                    await self._refuse(send, 421, "Invalid Host header: use the address the "
                                       "server printed when it started.")
                    return
                origin = headers.get(b"origin")
                if origin is not None and origin.lower() not in self.origins:
                    await self._refuse(send, 403, "Invalid Origin header: this server answers "
                                       "no web page but its own.")
                    return
            scheme, _, given = headers.get(b"authorization", b"").partition(b" ")
            if scheme.lower() != b"bearer":
                given = b""
            if not hmac.compare_digest(given.strip(), self.token):
                await self._refuse(
                    send, 401, "Send the token of this server as `Authorization: Bearer TOKEN`; "
                    "it is in the file the server named when it started.",
                    [(b"www-authenticate", b'Bearer realm="tui-debugger"')])
                return
        await self.app(scope, receive, send)


def bind_http(host: str, port: int) -> Any:
    """The HTTP transport's listening socket, bound before anything is printed
    or a token is made or read: if another user holds the port, the start fails
    here, and no client is told to send the token there."""
    import errno
    import socket

    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (OSError, UnicodeError) as exc:
        raise InvalidInput(f"Cannot listen on {host}: {exc}. Pass --host 127.0.0.1 (the "
                           "default).") from None
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        # Lets a restart bind while the last run's connections linger in TIME_WAIT;
        # on Linux it never lets two sockets listen on one address.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise DebuggerError(
                f"Port {port} on {host} is already in use (perhaps by another user): not "
                "listening, and no token was shown. Pick another port with --port.",
                ErrorCode.resource_busy) from None
        raise DebuggerError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.",
                            ErrorCode.resource_busy) from None
    sock.setblocking(False)
    return sock


#: Open HTTP connections at most, whatever their state: under a 1,024-file limit,
#: 1,021 slow connections of another user made every request of the token holder
#: time out. A quarter of the file limit leaves the sessions theirs.
MAX_HTTP_CONNECTIONS = 128
#: A request must arrive whole (headers and body) within this many seconds of
#: the connection, or of the end of the previous answer.
HTTP_REQUEST_TIMEOUT_S = 10.0
#: An idle keep-alive connection is closed after this many seconds.
HTTP_IDLE_TIMEOUT_S = 5.0


#: How many connections asyncio accepts in one turn of the loop (uvicorn's
#: backlog is also that batch): the cap is enforced only after a batch, so a
#: batch of 2,048 (uvicorn's default) ran the process out of descriptors, and
#: asyncio then retries every accept of the batch, each with a logged error.
HTTP_ACCEPT_BATCH = 32


def http_connection_limit() -> int:
    """The cap, under the file limit: a quarter of what is left after one accept
    batch, so a full cap and a full batch leave most descriptors to the sessions."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_HTTP_CONNECTIONS
    return max(8, min(MAX_HTTP_CONNECTIONS, (soft - HTTP_ACCEPT_BATCH) // 4))


def _rate_limit_accept_errors(loop: asyncio.AbstractEventLoop, every_s: float = 60.0) -> None:
    """Out of descriptors anyway (the sessions hold them), asyncio logs a whole
    traceback for every failed accept: once a minute is enough to say so."""
    previous = loop.get_exception_handler()
    last = [float("-inf")]

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if str(context.get("message", "")).startswith("socket.accept() out of system"):
            if loop.time() - last[0] < every_s:
                return
            last[0] = loop.time()
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


def guarded_http_protocol(limit: int, request_timeout: float = HTTP_REQUEST_TIMEOUT_S) -> Any:
    """uvicorn's h11 protocol with what it lacks against slow clients: a
    deadline for each request to arrive whole (uvicorn waits for ever for the
    first one), and a cap on open connections; past the cap the oldest
    connection still waiting for its request is closed (an answered client
    never is), else the new one."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    waiting: dict[Any, float] = {}  # connection -> when it began waiting for a request

    class GuardedH11(H11Protocol):
        _deadline: Any = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            # Closed connections leave `connections` a loop turn later: count the
            # ones not closing (asyncio accepts a whole backlog in one turn).
            if sum(not c.transport.is_closing() for c in self.connections) > limit:
                oldest = min(waiting, key=waiting.__getitem__, default=None)
                if oldest is None:
                    transport.close()
                    return
                oldest._disarm()
                oldest.transport.close()
            self._arm()

        def _arm(self) -> None:
            if self._deadline is None:
                waiting[self] = self.loop.time()
                self._deadline = self.loop.call_later(request_timeout, self._too_slow)

        def _disarm(self) -> None:
            waiting.pop(self, None)
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            waiting.pop(self, None)
            if self.conn.their_state is not h11.DONE:
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is h11.DONE:
                self._disarm()  # the request is in: the answer may take its time
            elif not self.transport.is_closing():
                self._arm()  # a (next) request has begun to arrive

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return GuardedH11


async def serve_http(front: Any, host: str, port: int) -> None:
    """Streamable HTTP with a bearer token, and exact Host/Origin checks against
    DNS rebinding (a web page in the user's browser posting to localhost)."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    sock = bind_http(host, port)  # before any word or token: see bind_http
    try:
        port = sock.getsockname()[1]
        token, token_file, new = http_token()
    except BaseException:
        sock.close()
        raise
    bound = f"[{host}]" if ":" in host else host
    names = {bound, "127.0.0.1", "localhost", "[::1]"}
    # Checked by BearerAuth, exactly; the SDK's own check takes wildcards only.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = BearerAuth(front.server.streamable_http_app(transport_security=security, host=host),
                     token, hosts={f"{name}:{port}" for name in names})
    url = f"http://{bound}:{port}/mcp"
    if new:
        print(f"MCP over HTTP at {url}. Send `Authorization: Bearer {token}` with every "
              f"request (shown once; kept in {token_file}, readable by you only).",
              file=sys.stderr, flush=True)
    else:
        print(f"MCP over HTTP at {url}. Send `Authorization: Bearer TOKEN`, TOKEN from "
              f"{token_file}.", file=sys.stderr, flush=True)
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: listening on {host}, not loopback only: anyone who can reach it and "
              "holds the token runs code as you.", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", http=guarded_http_protocol(
        http_connection_limit()), timeout_keep_alive=int(HTTP_IDLE_TIMEOUT_S),
        backlog=HTTP_ACCEPT_BATCH)
    _rate_limit_accept_errors(asyncio.get_running_loop())
    await uvicorn.Server(config).serve(sockets=[sock])
