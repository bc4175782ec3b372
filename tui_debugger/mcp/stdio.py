"""The MCP server's stdio transport: the event loop's own, feeding the SDK's
server, with every request answered, and the wire kept clear of stray writes.
It serves a front end (`server.McpFrontEnd`) it is given; nothing here knows
the tools. The HTTP transport is http.py's."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import Any

from ..host import wire


#: A JSON-RPC line longer than this is answered with an error, unread.
MAX_MESSAGE_BYTES = 4 * 1024 * 1024


def _lone_surrogate(value: Any) -> str | None:
    """The first string in `value` that UTF-8 cannot carry (a lone surrogate)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def inspect_line(line: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """A line of the wire, parsed once: (the message, None) when the SDK can
    take it; (None, the JSON-RPC error answer) for one the SDK would drop
    without an answer; (None, None) for one that needs none (a blank line, a
    broken notification). Lines over MAX_MESSAGE_BYTES never get here
    (`_lines` answers them unread)."""
    if not line.strip():
        return None, None

    def error(code: int, message: str, msg_id: Any = None) -> tuple[None, dict[str, Any]]:
        return None, {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}

    try:
        message = wire.decode(line, wire.MAX_DEPTH)
    except wire.TooDeep as exc:
        return error(-32600, f"Invalid Request: {exc}.", wire.message_id(line))
    except ValueError as exc:
        return error(-32700, f"Parse error: not JSON ({exc}). Send one JSON-RPC 2.0 object "
                     "per line.")
    if not isinstance(message, dict):
        return error(-32600, "Invalid Request: send one JSON-RPC 2.0 object per line "
                     "(batches and bare values are not requests).")
    msg_id = message.get("id")
    if not isinstance(msg_id, (str, int)) or isinstance(msg_id, bool):
        if "method" in message and msg_id is not None:
            # (the SDK drops it unanswered: a caller would wait for ever)
            return error(-32600, 'Invalid Request: "id" must be a string or an integer, not '
                         f"{json.dumps(msg_id)[:40]}.")
        msg_id = None
    is_request = "method" in message and "id" in message
    if message.get("jsonrpc") != "2.0":
        return error(-32600, 'Invalid Request: "jsonrpc" must be "2.0".', msg_id) \
            if is_request or "method" not in message else (None, None)
    if "method" in message:
        if not isinstance(message["method"], str):
            return error(-32600, 'Invalid Request: "method" must be a string.', msg_id)
        params = message.get("params")
        if "params" in message and not isinstance(params, dict):
            return error(-32602, 'Invalid params: "params" must be an object, e.g. '
                         '{"name": "debug_status", "arguments": {}}.', msg_id) \
                if is_request else (None, None)
        if (is_request and message["method"] == "tools/call" and isinstance(params, dict)
                and params.get("arguments") is not None
                and not isinstance(params["arguments"], dict)):
            given = params["arguments"]
            kind = "a list" if isinstance(given, list) else type(given).__name__
            return error(-32602, 'Invalid params: "arguments" must be an object of the tool\'s '
                         f'arguments, not {kind}, e.g. {{"name": "debug_status", '
                         '"arguments": {}}.', msg_id)
        bad = _lone_surrogate(message)
        if bad is not None:
            where = bad.encode("utf-8", "backslashreplace").decode()[:60]
            return error(-32602, f"Invalid params: a string holds a lone surrogate ({where!r}), "
                         "which is not valid Unicode. Send text that UTF-8 can encode.", msg_id) \
                if is_request else (None, None)
    return message, None


#: Of a line too long to read, what is kept to find its id (wire.message_id
#: looks at the first 64 KiB and the last 4 KiB).
_HEAD_BYTES, _TAIL_BYTES = 65536, 4096
#: How much the reader takes from the pipe at a time.
_READ_BYTES = 256 * 1024
#: Answers waiting for a client that does not read: past this many bytes a
#: tool's answer waits for the pipe instead of piling up in memory.
_OUT_HIGH_WATER = 1024 * 1024


def _error_line(problem: dict[str, Any]) -> bytes:
    return json.dumps(problem).encode() + b"\n"


class _WireOut:
    """The wire's stdout: whole lines, in the order they are given, written
    from the event loop. The descriptor is left blocking (O_NONBLOCK belongs
    to the open file, which a terminal or stderr may share, and would make
    their writes fail), so the loop writes at most PIPE_BUF bytes at a time,
    and only when poll says there is room: Linux and macOS call a pipe
    writable only with that much free. When there is none, the rest waits for
    the loop's writer callback."""

    def __init__(self, fd: int) -> None:
        import select

        self.fd = fd
        self.loop = asyncio.get_running_loop()
        self.pending = bytearray()
        self.broken = False  # the client closed its end: answers are dropped
        self.drained = asyncio.Event()
        self.drained.set()
        self.poller = select.poll()
        self.poller.register(fd, select.POLLOUT)
        self.chunk = select.PIPE_BUF
        self.watching = False

    def write(self, data: bytes) -> None:
        if self.broken:
            return
        busy = bool(self.pending)
        self.pending += data
        if not busy:
            self._flush()

    def _wait_for_room(self) -> None:
        if not self.watching:
            self.loop.add_writer(self.fd, self._flush)
            self.watching = True
        self.drained.clear()

    def _flush(self) -> None:
        try:
            while self.pending:
                if not self.poller.poll(0):
                    return self._wait_for_room()
                del self.pending[:os.write(self.fd, self.pending[:self.chunk])]
        except BlockingIOError:  # another holder of the pipe made it non-blocking
            return self._wait_for_room()
        except OSError:
            self.broken = True  # EPIPE: no one reads the answers any more
            self.pending.clear()
        self.close()
        self.drained.set()

    async def drain(self, limit: int = 0) -> None:
        """Wait until at most `limit` bytes are left to write."""
        while len(self.pending) > limit and not self.broken:
            await self.drained.wait()

    def close(self) -> None:
        if self.watching:
            self.loop.remove_writer(self.fd)
            self.watching = False


class _ToolCalls:
    """tools/call answered beside the SDK's dispatch instead of through it.

    The SDK serves each request through a relay task, a dispatcher task, a
    per-request session and context, its middleware, two validations of the
    params and a validation and re-dump of the result in its version's shape;
    on a two-core machine that was two fifths of the server's CPU per agent
    round, where an extra process that only copies the bytes costs next to
    nothing (docs/performance.md, "tools/call beside the SDK's dispatch").
    Here a tools/call goes straight to the front end's `call`, only once the
    SDK has settled the connection (the handshake answered and acknowledged,
    or the first request of the 2026 per-request era served) and only when
    the SDK would take it as it stands: the SDK's own checks pass for its
    version (the era's envelope, the params), and the answer's shape, checked
    once a version against the SDK's serializer, comes out the same.
    Everything else is the SDK's: the handshake, tools/list, pings,
    debug_tools (its answer may change the list), params or an envelope the
    SDK would refuse, and its error for them. A `notifications/cancelled` for
    a call taken here cancels it unanswered, and the end of the input cancels
    what is still running, as the SDK's dispatcher does. Not done here: the
    SDK's OpenTelemetry span of the call (the server installs no exporter)."""

    def __init__(self, front: Any, out: _WireOut) -> None:
        self.front = front
        self.out = out
        self.modern: bool | None = None  # the era, as the SDK decides it: by the first request
        self.init_id: Any = None
        self.version: str | None = None  # the handshake's, when its shape check passed
        self.initialized = False
        self.running: dict[Any, asyncio.Task[None]] = {}
        #: per protocol version: whether `_body` is the SDK's shape there (for this server)
        self.shapes: dict[str, bool] = {}

    def take(self, message: dict[str, Any]) -> bool:
        """Whether this message was taken here (else the SDK is given it)."""
        method = message.get("method")
        if method == "tools/call":
            return self._call(message)
        if method == "notifications/cancelled":
            params = message.get("params")
            request_id = params.get("requestId") if isinstance(params, dict) else None
            task = self.running.get(request_id) if isinstance(request_id, (str, int)) else None
            if task is None:
                return False
            task.cancel()
            return True
        return False

    def too_early(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The error answer for a request before the connection's handshake
        (none yet, and no 2026 per-request envelope): the SDK's own says only
        "Invalid request parameters", with empty data."""
        method, msg_id = message.get("method"), message.get("id")
        if (self.modern is not None or method in (None, "initialize", "ping") or msg_id is None
                or _enveloped(message.get("params"))):
            return None
        return {"jsonrpc": "2.0", "id": msg_id, "error": {
            "code": -32602, "message": f"Invalid params: {method} came before the handshake. "
            "Send `initialize`, then the `notifications/initialized` notification, first (or "
            "name the protocol version in each request's params._meta)."}}

    def given(self, message: Any) -> None:
        """The SDK was given `message` (its JSON-RPC model): the first request
        decides the era, as `serve_dual_era_loop` does; a handshake's id is kept
        to read its answer."""
        method = getattr(message, "method", None)
        if method == "notifications/initialized":
            self.initialized = True
        if method is None or getattr(message, "id", None) is None:
            return
        params = getattr(message, "params", None)
        if self.modern is None:
            self.modern = method != "initialize" and _enveloped(params)
        if method == "initialize" and not self.modern:
            self.init_id, self.version, self.initialized = message.id, None, False

    def answered(self, message: Any) -> None:
        """The SDK wrote `message`: the handshake's answer names the version."""
        if self.init_id is None or getattr(message, "id", None) != self.init_id:
            return
        self.init_id = None
        result = getattr(message, "result", None)
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        self.version = version if isinstance(version, str) and self._same_shape(version) else None

    def _call(self, message: dict[str, Any]) -> bool:
        from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request
        from mcp_types import methods

        msg_id, params = message.get("id"), message.get("params")
        if (self.modern is None or not isinstance(msg_id, (str, int)) or isinstance(msg_id, bool)
                or msg_id in self.running or not isinstance(params, dict)
                or not self.front.answers_directly(params.get("name"))):
            return False
        if self.modern:
            route = classify_inbound_request(message)
            if isinstance(route, InboundLadderRejection) or not self._same_shape(
                    route.protocol_version):
                return False
            version = route.protocol_version
        else:
            if not self.initialized or self.version is None or _enveloped(params):
                return False
            version = self.version
        try:
            methods.validate_client_request("tools/call", version, params)
        except Exception:  # the SDK's to answer, with its own error
            return False
        task = asyncio.get_running_loop().create_task(
            self._answer(msg_id, params["name"], params.get("arguments"), self.modern))
        self.running[msg_id] = task
        task.add_done_callback(lambda _task: self.running.pop(msg_id, None))
        return True

    async def _answer(self, msg_id: Any, name: str, arguments: Any, modern: bool) -> None:
        result = await self.front.answer(name, arguments)
        try:
            body = (self._body(result, modern) if not isinstance(result, tuple)
                    else self._plain_body(*result, modern))
            line = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": body},
                              ensure_ascii=False, separators=(",", ":"))
        except Exception as exc:  # never a call left unanswered (`call` itself never raises)
            line = json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {
                "code": -32603, "message": f"Internal error: the answer to {name} could not be "
                f"encoded ({exc!r}). Please report this."}})
        self.out.write(line.encode("utf-8", "backslashreplace") + b"\n")
        if len(self.out.pending) > _OUT_HIGH_WATER:
            await self.out.drain(_OUT_HIGH_WATER)

    def _body(self, result: Any, modern: bool) -> dict[str, Any]:
        """A CallToolResult as the SDK's runner puts it on the wire: the 2026
        era's answer says it is complete and names the server (`_meta`), the
        handshake era's has neither."""
        from mcp_types import SERVER_INFO_META_KEY

        body = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        if modern:
            body.setdefault("resultType", "complete")
            body["_meta"] = {SERVER_INFO_META_KEY: self.front.server.server_info_stamp}
        else:
            body.pop("resultType", None)
        return body

    def _plain_body(self, structured: dict[str, Any], text: str, modern: bool) -> dict[str, Any]:
        """`_body` of an agent's plain answer (the front end's `plain_result`), made
        straight from the host's: its structured content came from JSON, so
        the model's validation and its dump back (a fifth of the server's CPU
        in an agent's round, py-spy) would give it back as it is. Its shape
        is checked with the rest (_check_shape)."""
        from mcp_types import SERVER_INFO_META_KEY

        body: dict[str, Any] = {"content": [{"type": "text", "text": text}],
                                "structuredContent": structured, "isError": False}
        if modern:
            body["resultType"] = "complete"
            body["_meta"] = {SERVER_INFO_META_KEY: self.front.server.server_info_stamp}
        return body

    def _same_shape(self, version: str) -> bool:
        """Whether the SDK would answer a tools/call at `version` as `_body`
        does (checked once a version, on answers of each kind)."""
        if version not in self.shapes:
            self.shapes[version] = self._check_shape(version)
        return self.shapes[version]

    def _check_shape(self, version: str) -> bool:
        from mcp_types import (SERVER_INFO_META_KEY, CallToolResult, TextContent, methods,
                               version as versions)

        server = self.front.server
        if server.cache_hints.get("tools/call") is not None:
            return False  # the SDK would add the hint
        modern = version in versions.MODERN_PROTOCOL_VERSIONS
        samples = [
            CallToolResult(content=[TextContent(type="text", text="x\u00e9")],
                           structured_content={"a": [1, None, {"b": "c"}], "n": 1.5}),
            CallToolResult(content=[TextContent(type="text", text="e")],
                           structured_content={"error": "e", "code": "c"}, is_error=True),
            CallToolResult(content=[], structured_content={"values": []}),
        ]
        try:
            for sample in samples:
                sdk = methods.serialize_server_result(
                    "tools/call", version, sample.model_dump(by_alias=True, mode="json",
                                                            exclude_none=True))
                if modern:
                    sdk.setdefault("resultType", "complete")
                    sdk["_meta"] = {SERVER_INFO_META_KEY: server.server_info_stamp}
                if sdk != self._body(sample, modern):
                    return False
            plain = ({"a": [1, None, {"b": "c"}], "n": 1.5, "s": "x\u00e9"}, "t\u00e9")
            if self._plain_body(*plain, modern) != self._body(self.front.plain_result(*plain), modern):
                return False
        except Exception:
            return False
        return True

    def cancel_all(self) -> None:
        for task in list(self.running.values()):
            task.cancel()


def _enveloped(params: Any) -> bool:
    """Whether a request carries the 2026 era's per-request envelope (the
    SDK's own test: its protocol-version key in `params._meta`)."""
    from mcp_types import PROTOCOL_VERSION_META_KEY

    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta


class _SdkWriteStream:
    """The stream the SDK's server writes its messages to (its WriteStream
    protocol): each one is encoded and queued on the wire within the call, in
    order, with no task or thread between the answer and the pipe."""

    def __init__(self, out: _WireOut, calls: _ToolCalls) -> None:
        self.out = out
        self.calls = calls
        self.closed = False

    async def send(self, item: Any, /) -> None:
        import anyio

        if self.closed:
            raise anyio.ClosedResourceError
        self.calls.answered(item.message)
        data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
        self.out.write(data.encode("utf-8", "backslashreplace") + b"\n")
        if len(self.out.pending) > _OUT_HIGH_WATER:
            await self.out.drain(_OUT_HIGH_WATER)

    async def aclose(self) -> None:
        self.closed = True

    async def __aenter__(self) -> "_SdkWriteStream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _SdkReadStream:
    """The stream the SDK's server reads its messages from (its ReadStream
    protocol): each receive reads the wire up to the next line the SDK can
    take, as its own message type, and answers the bad lines on the way,
    with no task between the pipe and the SDK."""

    def __init__(self, wire_in: "_WireIn", out: _WireOut, calls: _ToolCalls) -> None:
        self.lines = _lines(wire_in, out)
        self.out = out
        self.calls = calls
        self.closed = False

    async def receive(self) -> Any:
        import anyio
        from mcp.shared.message import SessionMessage
        from mcp_types import jsonrpc_message_adapter

        while not self.closed:
            try:
                line = await self.lines.__anext__()
            except StopAsyncIteration:
                self.calls.cancel_all()
                raise anyio.EndOfStream from None
            message, problem = inspect_line(line.decode("utf-8", "replace"))
            if problem is None and message is not None:
                problem = self.calls.too_early(message)
            if problem is not None:
                self.out.write(_error_line(problem))
            elif message is not None and self.calls.take(message):
                continue
            elif message is not None:
                try:
                    parsed = jsonrpc_message_adapter.validate_python(message, by_name=False)
                except Exception as exc:  # what the SDK's own reader hands on
                    return exc
                self.calls.given(parsed)
                return SessionMessage(parsed)
        raise anyio.ClosedResourceError

    def __aiter__(self) -> "_SdkReadStream":
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self.closed = True
        with contextlib.suppress(RuntimeError):  # still running in a task being cancelled
            await self.lines.aclose()

    async def __aenter__(self) -> "_SdkReadStream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _WireIn:
    """The wire's stdin, read from the event loop, its descriptor left blocking
    (see _WireOut): read when poll says there is something to read (one read
    then takes what is there without waiting), else once the loop's reader
    callback says so. The reader stays registered between messages (an agent's
    next call mostly comes while we wait for it): registering and removing it
    at each read were two epoll_ctl calls a message, 7% of the server's time in
    an agent's round (py-spy). It is removed only when it fires with nobody
    waiting, so a line that came meanwhile does not wake the loop over and over."""

    def __init__(self, fd: int) -> None:
        import select

        self.fd = fd
        self.loop = asyncio.get_running_loop()
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN)
        self.waiter: asyncio.Future[None] | None = None
        self.registered = False

    def _readable(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)
        else:
            self._unregister()

    def _unregister(self) -> None:
        if self.registered:
            self.registered = False
            self.loop.remove_reader(self.fd)

    async def read(self) -> bytes:
        """The next bytes, b"" at the end."""
        while not self.poller.poll(0):
            self.waiter = self.loop.create_future()
            if not self.registered:
                try:
                    self.loop.add_reader(self.fd, self._readable)
                except (PermissionError, ValueError):  # not pollable by epoll: read in a thread
                    self.waiter = None
                    return await asyncio.to_thread(os.read, self.fd, _READ_BYTES)
                self.registered = True
            try:
                await self.waiter
            except BaseException:
                self._unregister()
                raise
            finally:
                self.waiter = None
        try:
            data = os.read(self.fd, _READ_BYTES)
        except BlockingIOError:  # another holder of the pipe made it non-blocking
            return await self.read()
        if not data:
            self._unregister()
        return data

    def close(self) -> None:
        if self.waiter is not None:
            self.waiter.cancel()
        self._unregister()


async def _lines(wire_in: _WireIn, out: _WireOut) -> Any:
    """The wire's lines, a line too long (over MAX_MESSAGE_BYTES) answered
    with an error without being held whole; a last line without its newline
    counts. CR and CRLF end lines too, as the SDK's text reader had them."""
    buffer = bytearray()
    skipping = False  # in a line over the limit: its head is kept, and its tail
    head = tail = b""
    skipped = 0
    while True:
        data = await wire_in.read()
        if not data:
            break
        if b"\r" in data:
            data = data.replace(b"\r", b"\n")  # a CRLF leaves a blank line: unanswered
        start = 0
        while True:
            end = data.find(b"\n", start)
            if skipping:
                piece = data[start:] if end < 0 else data[start:end]
                skipped += len(piece)
                tail = (tail + piece)[-_TAIL_BYTES:]
                if end < 0:
                    break
                skipping = False
                out.write(_error_line(_too_long(skipped, head + tail)))
                head = tail = b""
                start = end + 1
                continue
            if end < 0:
                buffer += data[start:]
                if len(buffer) > MAX_MESSAGE_BYTES:
                    skipping, skipped = True, len(buffer)
                    head, tail = bytes(buffer[:_HEAD_BYTES]), bytes(buffer[-_TAIL_BYTES:])
                    buffer.clear()
                break
            if buffer:
                buffer += data[start:end]
                line = bytes(buffer)
                buffer.clear()
            else:
                line = data[start:end]
            start = end + 1
            if len(line) > MAX_MESSAGE_BYTES:
                ends = line[:_HEAD_BYTES] + line[-_TAIL_BYTES:]
                out.write(_error_line(_too_long(len(line), ends)))
            else:
                yield line
    if skipping:
        out.write(_error_line(_too_long(skipped, head + tail)))
    elif buffer:
        yield bytes(buffer)


def _too_long(size: int, ends: bytes) -> dict[str, Any]:
    # Answered with the request's id, or its caller would wait for ever.
    return {"jsonrpc": "2.0", "id": wire.message_id(ends.decode("utf-8", "replace")),
            "error": {"code": -32600, "message": f"Invalid Request: a message of {size:,} "
                      f"bytes; the limit is {MAX_MESSAGE_BYTES:,}. Send a shorter one."}}


def _claim_stdio() -> tuple[int, int]:
    """The wire's descriptors, private copies (closed on exec); fd 0 then
    reads the null device and fd 1 goes to stderr, so nothing a child or a
    stray print writes can reach the wire."""
    import fcntl

    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


async def serve_stdio(front: Any) -> None:
    """The MCP protocol (the SDK's server, `Server.run`) over stdin and stdout,
    every request answered: a line that is not JSON, not JSON-RPC 2.0, has
    params that are not an object, holds a lone surrogate or is longer than
    MAX_MESSAGE_BYTES gets a JSON-RPC error instead of silence. The end of
    stdin ends the server.

    The transport is the event loop's own (a reader callback on the pipe,
    writes from the loop), not the SDK's `stdio_server`, which hands every
    line read and every answer written to a worker thread: on a busy 2-core
    machine those hand-overs cost the server 2 of its 5.4 ms of CPU per agent
    round (see docs/performance.md, "MCP tool round trips"). The SDK reads its own
    message type and writes to the wire through its stream protocols."""
    from mcp.server.lowlevel.server import NotificationOptions

    wire_in, wire_out = _claim_stdio()
    reader = writer = None
    try:
        reader, writer = _WireIn(wire_in), _WireOut(wire_out)
        options = front.server.create_initialization_options(
            NotificationOptions(tools_changed=True))
        calls = _ToolCalls(front, writer)
        await front.server.run(_SdkReadStream(reader, writer, calls),
                               _SdkWriteStream(writer, calls), options)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(writer.drain(), 10)  # the last answers, to a reading client
    finally:
        for end in (reader, writer):
            if end is not None:
                end.close()
        with contextlib.suppress(OSError):
            os.dup2(wire_in, 0)
            os.dup2(wire_out, 1)
        for fd in (wire_in, wire_out):
            with contextlib.suppress(OSError):
                os.close(fd)
