"""How an editor reaches the adapter: on this process's stdin and stdout (the
editor started it: VS Code's executable adapter, nvim-dap's `executable`), or
with `--listen PORT` on loopback, one editor per connection (VS Code's
`debugServer`, nvim-dap's `server`, dape's `port`).

A port on loopback is open to every local user, and a session runs code as
us (evaluate, launch), so a listening adapter answers nothing of a session
until the editor's attach or launch carries its token (`"token"` in the
configuration): made on first use and kept in a 0600 file of the per-user
runtime directory, or TUI_DEBUGGER_DAP_TOKEN. DAP has no header for it; the
configuration is where every client lets a user put one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from typing import Any

from backends.dap.framing import Decoder, FramingError, encode
from backends.errors import DebuggerError, InvalidInput

from .. import paths
from .adapter import DapAdapter

TOKEN_FILE = "dap-{port}.token"
ENV_TOKEN = "TUI_DEBUGGER_DAP_TOKEN"


def _decode(decoder: Decoder, chunk: bytes) -> list[dict[str, Any]]:
    """The messages `chunk` completes; a bad frame is dropped (and said on
    stderr), and what followed it is decoded all the same."""
    messages: list[dict[str, Any]] = []
    while True:
        try:
            return messages + decoder.feed(chunk)
        except FramingError as exc:
            messages += exc.messages
            print(f"tui-debugger dap: {exc}", file=sys.stderr, flush=True)
            chunk = b""


async def _serve_stream(adapter: DapAdapter, reader: asyncio.StreamReader) -> None:
    """Decode the editor's messages into the adapter until it closes the stream."""
    runner = asyncio.ensure_future(adapter.run())
    decoder = Decoder()
    try:
        while not adapter.closed.is_set():
            chunk = await reader.read(65536)
            if not chunk:
                break
            for message in _decode(decoder, chunk):
                adapter.receive(message)
    finally:
        adapter.editor_gone()
        with contextlib.suppress(BaseException):
            await runner


async def serve_stdio(session: str | None) -> None:
    loop = asyncio.get_running_loop()
    # DAP owns stdout: whatever else would print there (a library's warning)
    # goes to stderr, and the messages are written on a copy of the real one.
    out_fd = os.dup(1)
    os.dup2(2, 1)
    out = os.fdopen(out_fd, "wb", buffering=0)
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                 os.fdopen(os.dup(0), "rb", buffering=0))
    lock = asyncio.Lock()

    async def send(message: dict[str, Any]) -> None:
        data = encode(message)
        async with lock:
            await asyncio.to_thread(out.write, data)

    await _serve_stream(DapAdapter(send, session=session), reader)


def dap_token(port: int) -> tuple[str, str]:
    """(token, where it is kept) for a listening adapter on `port`."""
    from ..mcp.http import http_token

    given = os.environ.get(ENV_TOKEN, "").strip()
    if given:
        if len(given) < 16:
            raise InvalidInput(f"{ENV_TOKEN} is too short: use 16 characters or more, or "
                               "unset it to have one made.")
        return given, ENV_TOKEN
    return http_token(TOKEN_FILE.format(port=port))[:2]


async def serve_listen(session: str | None, port: int, host: str = "127.0.0.1") -> None:
    from ..mcp.http import bind_http

    sock = bind_http(host, port)  # before the token is made or said: see bind_http
    bound = sock.getsockname()[1]
    token, where = dap_token(bound)

    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        lock = asyncio.Lock()

        async def send(message: dict[str, Any]) -> None:
            async with lock:
                writer.write(encode(message))
                await writer.drain()

        try:
            await _serve_stream(DapAdapter(send, session=session, token=token), reader)
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    server = await asyncio.start_server(connected, sock=sock)
    print(f"DAP adapter on {host}:{bound}. Attach or launch with \"token\": \"{token}\" in the "
          f"configuration (kept in {where}, readable by you only).", file=sys.stderr, flush=True)
    async with server:
        await server.serve_forever()


def run_dap(session: str | None = None, listen: int | None = None) -> int:
    try:
        if session is not None:
            paths.validate_name(session)
        paths.runtime_dir()  # an unsafe runtime directory is refused now, with what to do
        loop = asyncio.new_event_loop()
        main = loop.create_task(serve_stdio(session) if listen is None
                                else serve_listen(session, listen))
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, main.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(main)
        loop.close()
    except DebuggerError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
