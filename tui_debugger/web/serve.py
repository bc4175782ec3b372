"""`tui-debugger serve`: the TUI of a live session in a web browser.

Each browser tab is one more client of the session: textual-serve starts a
`tui-debugger ui --session NAME` process per websocket and relays the
terminal between it and xterm.js in the page, so the page shows and does
exactly what the terminal TUI does, and the session's other clients see the
tab as "web".

Whoever reaches the port could drive the debuggee (run code as us), so the
server is closed by default, as the HTTP MCP transport is:
- it listens on loopback unless told otherwise;
- every request needs the token: `?token=` in the printed URL (which then sets
  an HttpOnly, SameSite=Strict cookie and redirects to a URL without it), the
  cookie, or `Authorization: Bearer TOKEN`; the token is also kept in a 0600
  file in the per-user runtime directory (0700), so other local users cannot
  read it;
- the Host header must name this server exactly, and an Origin, when sent,
  must be this server's: a page on another site (DNS rebinding) gets nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import html
import logging
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from backends.errors import DebuggerError, InvalidInput
from backends.process import die_with_this_process

from .. import paths

#: The cookie that carries the token once the printed URL was opened.
COOKIE = "tui_debugger_token"
#: Where the token of the running server is kept (0600), per port.
TOKEN_FILE = "serve-{port}.token"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: The driver a tab's `tui-debugger ui` runs with.
TAB_DRIVER = "tui_debugger.tui.web_tab:TabDriver"
#: How long a tab's process has to quit when asked, then when sent SIGTERM.
TAB_QUITS_WITHIN = 5.0

log = logging.getLogger("tui-debugger.serve")

PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>tui-debugger: {title}</title>
<link rel="stylesheet" href="{static}css/xterm.css">
<script src="{static}js/textual.js"></script>
<style>
  body {{ background: #0c181f; margin: 0; }}
  body .textual-terminal {{ opacity: 0; }}
  body.-first-byte .textual-terminal {{ opacity: 1; }}
  .closed {{ display: none; color: #eee; font: 16px monospace; padding: 2em; }}
  body.-closed .closed {{ display: block; }}
</style>
</head>
<body>
<div class="closed">This tab's view of the session ended. Reload the page to open it again.</div>
<div id="terminal" class="textual-terminal" data-session-websocket-url="{websocket}"
     data-font-size="{font_size}"></div>
</body>
</html>
"""


# ============================================================================ checks


def host_allowed(value: str | None, allowed: set[str]) -> bool:
    """Whether a Host header (`host:port`) names this server exactly. Anything
    with userinfo, a path or a second host (`127.0.0.1:PORT@evil.com`) is not."""
    if not value:
        return False
    return value.strip().lower() in allowed


def origin_allowed(value: str | None, allowed: set[str]) -> bool:
    """An absent Origin is a non-browser client (its Host was checked); a
    present one must be `http://` plus an allowed host:port, nothing more."""
    if value is None:
        return True
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return False
    if parts.scheme != "http" or parts.path not in ("", "/") or parts.query or parts.fragment:
        return False
    if parts.username is not None or parts.password is not None:
        return False
    return parts.netloc.lower() in allowed


def allowed_hosts(host: str, port: int, extra: list[str] | None = None) -> set[str]:
    names = {host, *LOOPBACK, *(extra or [])}
    return {f"[{n}]:{port}" if ":" in n else f"{n}:{port}" for n in names}


def given_token(request: Any) -> str:
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value:
        return value.strip()
    return request.query.get("token") or request.cookies.get(COOKIE, "")


def write_token_file(port: int, token: str) -> Path:
    path = paths.runtime_dir() / TOKEN_FILE.format(port=port)
    with contextlib.suppress(OSError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    return path


# ============================================================================ the server


class WebServer:
    """The aiohttp application: the page, textual-serve's static files, and a
    websocket per tab that runs `tui-debugger ui` through textual-serve's
    AppService (its process started from an argument list, not a shell)."""

    def __init__(self, session: str, host: str, port: int, token: str,
                 extra_hosts: list[str] | None = None) -> None:
        self.session = session
        self.host = host
        self.port = port
        self.token = token
        self.extra_hosts = extra_hosts or []
        self.allowed: set[str] = set()
        self.public_url = ""
        self.services: set[Any] = set()
        self.runner: Any = None

    # -------------------------------------------------------------- requests

    def _refuse(self, status: int, text: str) -> Any:
        from aiohttp import web

        return web.Response(status=status, text=text + "\n",
                            headers={"Cache-Control": "no-store"})

    def middleware(self) -> Any:
        from aiohttp import web

        @web.middleware
        async def guard(request: web.Request, handler: Any) -> Any:
            if not host_allowed(request.headers.get("Host"), self.allowed):
                return self._refuse(421, "This server answers only to its own address "
                                         f"({self.public_url}).")
            if not origin_allowed(request.headers.get("Origin"), self.allowed):
                return self._refuse(403, "Requests from other sites are refused.")
            if not hmac.compare_digest(given_token(request).encode(), self.token.encode()):
                return self._refuse(401, "Open the URL that `tui-debugger serve` printed: it "
                                         "carries the token (also kept in the token file it "
                                         "named, readable by its user only).")
            if "token" in request.query and request.method == "GET" and request.path == "/":
                # The token leaves the address bar (and the history) for a cookie
                # that only this origin's own requests carry.
                query = {k: v for k, v in request.query.items() if k != "token"}
                location = request.rel_url.with_query(query)
                response = web.HTTPSeeOther(location=str(location))
                response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict",
                                    path="/")
                raise response
            response = await handler(request)
            response.headers.setdefault("Cache-Control", "no-store")
            response.headers.setdefault("Referrer-Policy", "no-referrer")
            response.headers.setdefault("X-Frame-Options", "DENY")
            return response

        return guard

    async def index(self, request: Any) -> Any:
        from aiohttp import web

        try:
            font_size = max(6, min(48, int(request.query.get("fontsize", "16"))))
        except ValueError:
            font_size = 16
        # The Host was checked against this server's names: the page's own
        # addresses follow it, so the token cookie goes wherever the page does.
        page = PAGE.format(title=html.escape(self.session), static="/static/",
                           websocket=html.escape(f"ws://{request.host}/ws"), font_size=font_size)
        return web.Response(text=page, content_type="text/html")

    async def websocket(self, request: Any) -> Any:
        from aiohttp import WSMsgType, web

        socket = web.WebSocketResponse(heartbeat=15)
        await socket.prepare(request)
        width = _int(request.query.get("width"), 80)
        height = _int(request.query.get("height"), 24)
        service = self._service(socket)
        self.services.add(service)
        try:
            await service.start(width, height)
            async for message in socket:
                if message.type != WSMsgType.TEXT:
                    continue
                try:
                    kind, data = message.json()
                except (ValueError, TypeError):
                    continue
                if kind == "stdin" and isinstance(data, str):
                    await service.send_bytes(data.encode("utf-8"))
                elif kind == "resize" and isinstance(data, dict):
                    await service.set_terminal_size(_int(data.get("width"), width),
                                                    _int(data.get("height"), height))
                elif kind == "ping":
                    with contextlib.suppress(ConnectionError):  # the tab is closing
                        await socket.send_json(["pong", data])
                elif kind == "blur":
                    await service.blur()
                elif kind == "focus":
                    await service.focus()
        except asyncio.CancelledError:
            pass
        finally:
            self.services.discard(service)
            with contextlib.suppress(Exception):
                # Shielded: a tab closing mid-start cancels this handler, and its
                # process must still be ended.
                await asyncio.shield(service.stop())
            with contextlib.suppress(Exception):
                await socket.close()
        return socket

    def _service(self, socket: Any) -> Any:
        from textual_serve.app_service import AppService
        from textual_serve.download_manager import DownloadManager

        # -P: `-m` would put the working directory first on sys.path.
        argv = [sys.executable, "-P", "-m", "tui_debugger", "ui", "--session", self.session]

        class TabService(AppService):
            async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
                env = self._build_environment(width=width, height=height)
                env.pop("TUI_DEBUGGER_SERVE_TOKEN", None)
                # textual's WebDriver, plus: the tab's end (the end of its input,
                # a failed write, SIGTERM) is the app's end (tui/web_tab.py).
                env["TEXTUAL_DRIVER"] = TAB_DRIVER
                # A group of its own (ended whole), and it dies with serve even
                # when serve is killed outright (PR_SET_PDEATHSIG).
                self._process = process = await asyncio.create_subprocess_exec(
                    *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE, env=env, start_new_session=True,
                    preexec_fn=die_with_this_process())
                self._stdin = process.stdin
                return process

            async def stop(self) -> None:
                """Ask the app to quit, then end its process group if it did not
                (textual-serve's stop would wait on it for ever), also for a tab
                that closed while its process was starting (no reader task yet)."""
                process = self._process
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(super().stop(), TAB_QUITS_WITHIN)
                if process is not None:
                    await end_tab_process(process)

        return TabService(argv[0], write_bytes=socket.send_bytes, write_str=socket.send_str,
                          close=socket.close, download_manager=DownloadManager())

    # -------------------------------------------------------------- life

    async def start(self) -> None:
        """Bind first: nothing is printed or written until the port is ours, so
        a port another user took first never receives the token."""
        from aiohttp import web
        from textual_serve import server as textual_server

        app = web.Application(middlewares=[self.middleware()])
        statics = Path(textual_server.__file__).parent / "static"
        app.add_routes([web.get("/", self.index), web.get("/ws", self.websocket),
                        web.static("/static", statics)])
        self.runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, self.host, self.port, reuse_address=False)
        try:
            await site.start()
        except OSError as exc:
            await self.runner.cleanup()
            raise InvalidInput(f"Cannot listen on {self.host}:{self.port}: {exc.strerror or exc}. "
                               "Pick another port with --port (0 picks a free one).") from exc
        sockets = site._server.sockets if site._server else []  # type: ignore[union-attr]
        if sockets:
            self.port = sockets[0].getsockname()[1]
        bound = f"[{self.host}]" if ":" in self.host else self.host
        self.public_url = f"http://{bound}:{self.port}"
        self.allowed = allowed_hosts(self.host, self.port, self.extra_hosts)

    async def stop(self) -> None:
        await asyncio.gather(*(service.stop() for service in list(self.services)),
                             return_exceptions=True)
        if self.runner is not None:
            await self.runner.cleanup()


async def end_tab_process(process: Any) -> None:
    """SIGTERM to a tab's process group, then SIGKILL if it is still there."""
    for sig, grace in ((signal.SIGTERM, TAB_QUITS_WITHIN), (signal.SIGKILL, TAB_QUITS_WITHIN)):
        if process.returncode is not None:
            return
        with contextlib.suppress(OSError):
            os.killpg(process.pid, sig)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), grace)


def _int(value: Any, default: int) -> int:
    try:
        return max(1, min(1000, int(value)))
    except (TypeError, ValueError):
        return default


async def serve(session: str, host: str, port: int, extra_hosts: list[str] | None = None) -> int:
    token = os.environ.get("TUI_DEBUGGER_SERVE_TOKEN") or secrets.token_urlsafe(32)
    if len(token) < 16:
        raise InvalidInput("TUI_DEBUGGER_SERVE_TOKEN is too short: use 16 characters or more "
                           "(or leave it unset for a random one).")
    server = WebServer(session, host, port, token, extra_hosts)
    await server.start()
    token_file: Path | None = None
    try:
        token_file = write_token_file(server.port, token)
        print(f"Session {session} in the browser: {server.public_url}/?token={token}", flush=True)
        print(f"(The token is also in {token_file}, readable by you only; send it as the "
              f"`{COOKIE}` cookie or `Authorization: Bearer TOKEN`. Ctrl+C stops serving.)",
              flush=True)
        if host not in LOOPBACK:
            print(f"warning: listening on {host}, not loopback only: anyone who can reach it "
                  "and holds the token drives the program as you.", file=sys.stderr, flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        waiter = asyncio.create_task(stop.wait())
        watcher = asyncio.create_task(_session_gone(session))
        await asyncio.wait({waiter, watcher}, return_when=asyncio.FIRST_COMPLETED)
        for task in (waiter, watcher):
            task.cancel()
        if watcher.done() and not watcher.cancelled():
            print(f"Session {session} ended; stopped serving it.", flush=True)
    finally:
        await server.stop()
        if token_file is not None:
            with contextlib.suppress(OSError):
                token_file.unlink()
    return 0


async def _session_gone(name: str) -> None:
    """Returns once the session's host is gone: the page has nothing to show."""
    while True:
        await asyncio.sleep(1.0)
        if not any(s.name == name for s in paths.live_sessions(clean_stale=False)):
            return


def run_serve(session: str | None, host: str, port: int, extra_hosts: list[str] | None = None) -> int:
    try:
        import textual_serve  # noqa: F401
        import aiohttp  # noqa: F401
    except ImportError as exc:
        print(f"error: serving the TUI on the web needs textual-serve ({exc}); install it: "
              "pip install textual-serve", file=sys.stderr)
        return 1
    from ..client.router import resolve_live

    try:
        # Which session, by the clients' rule: the one named, else the one of this project.
        name = asyncio.run(resolve_live(session or paths.pinned_session()))
        return asyncio.run(serve(name, host, port, extra_hosts))
    except DebuggerError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
