"""`tui-debugger serve`: the live session's TUI in a real browser (Debian's
chromium driven by Playwright), paired with a terminal TUI and an MCP client,
and closed to whoever does not hold the token.

The page draws the terminal with xterm.js on a canvas, so what it shows is read
where it arrives: every byte the page's websocket receives is kept (an init
script wraps the socket's message listener) and the escape sequences stripped.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.faults.test_other_uid import as_other, other_user  # noqa: F401 - a fixture
from tests.support import require, require_executable
from tests.support.mcp import call
from tests.support.tui import wait_until
from tests.support.web import ESCAPES, RECORD_SCREEN

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "inventory.py"



def chromium() -> str:
    return require_executable("chromium", "chromium-browser")


def playwright_installed() -> None:
    try:
        import playwright  # noqa: F401
    except ImportError:
        require(False, "playwright (the test lock's)")


def start_session(name: str) -> None:
    done = subprocess.run([sys.executable, "-m", "tui_debugger", "start", "--session", name,
                           "--stop-on-entry", str(EXAMPLE)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def stop_session(name: str) -> None:
    subprocess.run([sys.executable, "-m", "tui_debugger", "stop", "--session", name],
                   capture_output=True, timeout=30)


def cli_text(command: str, session: str) -> str:
    done = subprocess.run([sys.executable, "-m", "tui_debugger", command, "--session", session],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def cli_json(command: str, session: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "tui_debugger", command, "--session", session,
                           "--json"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


class Served:
    """A running `tui-debugger serve`: its URL (with the token) and its parts."""

    def __init__(self, name: str, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tui_debugger", "serve", "--session", name, "--port", "0",
             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:(\d+))/\?token=(\S+)", first)
        assert match, (first, self.proc.stderr.read() if self.proc.poll() is not None else "")
        self.url = match.group(0)
        self.base, self.port, self.token = match.group(1), int(match.group(2)), match.group(3)
        self.token_file = Path(re.search(r"in (\S+), readable", self.proc.stdout.readline()).group(1))

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=15)


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def test_serve_refuses_without_the_token_and_from_other_sites(isolated_runtime, no_leftover_daemons,
                                                               other_user):  # noqa: F811
    start_session("webguard")
    served = Served("webguard")
    try:
        # No token, a wrong one, another site's Host or Origin: nothing.
        status, _, body = fetch(served.base + "/")
        assert status == 401 and "token" in body
        assert fetch(served.base + "/?token=" + "x" * 43)[0] == 401
        assert fetch(served.base + "/static/js/textual.js")[0] == 401
        bearer = {"Authorization": f"Bearer {served.token}"}
        assert fetch(served.base + "/", bearer)[0] == 200
        for host in (f"127.0.0.1:{served.port}@evil.com", f"evil.com:{served.port}",
                     f"127.0.0.1:{served.port}.evil.com"):
            assert fetch(served.base + "/", {**bearer, "Host": host})[0] == 421, host
        for origin in ("http://evil.com", f"http://127.0.0.1:{served.port}.evil.com",
                       f"http://127.0.0.1:{served.port}@evil.com", "null"):
            assert fetch(served.base + "/", {**bearer, "Origin": origin})[0] == 403, origin
        assert fetch(served.base + "/", {**bearer, "Origin": served.base})[0] == 200

        # The printed URL trades the token for a cookie of this origin only, and
        # leaves the address bar without it.
        status, headers, _ = fetch(served.url)
        assert status == 303 and "token" not in headers["Location"]
        cookie = headers["Set-Cookie"]
        assert served.token in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert fetch(served.base + "/", {"Cookie": f"tui_debugger_token={served.token}"})[0] == 200

        # Another local user reaches the port, but not the token.
        assert oct(served.token_file.stat().st_mode & 0o777) == "0o600"
        probe = ("import sys, urllib.request, urllib.error\n"
                 "try:\n    urllib.request.urlopen(sys.argv[1], timeout=10); print('open')\n"
                 "except urllib.error.HTTPError as e: print(e.code)\n"
                 "try:\n    open(sys.argv[2]).read(); print('read')\n"
                 "except OSError as e: print('unreadable')\n")
        assert as_other(other_user, probe, served.base + "/", str(served.token_file)).split() == [
            "401", "unreadable"]
    finally:
        served.close()
        stop_session("webguard")
    assert not served.token_file.exists()


@pytest.mark.slow
@pytest.mark.timeout(150)
async def test_browser_tab_pairs_with_the_terminal_tui_and_an_agent(isolated_runtime,
                                                                    no_leftover_daemons,
                                                                    tmp_path):
    executable = chromium()
    playwright_installed()
    from playwright.async_api import async_playwright

    from tests.support.mcp import in_process_client
    from tui_debugger.tui.app import create_app

    name = "webpair"
    start_session(name)
    served = Served(name)
    tui = create_app("join", {}, name, cwd=str(ROOT))
    try:
        async with async_playwright() as playwright, in_process_client(name) as agent, \
                tui.run_test(size=(160, 45)) as pilot:
            browser = await playwright.chromium.launch(executable_path=executable,
                                                       args=["--no-sandbox"])
            page = await browser.new_page(viewport={"width": 1400, "height": 900})
            await page.add_init_script(RECORD_SCREEN)
            await page.goto(served.url)
            seen = 0

            async def page_shows(text: str, timeout: float = 40) -> None:
                """Waits until the bytes the page received since the last check
                draw `text` (escape sequences aside)."""
                nonlocal seen
                deadline = time.monotonic() + timeout
                while True:
                    chunks = await page.evaluate(f"window.__screen.slice({seen})")
                    plain = ESCAPES.sub("", "".join(text for _, text in chunks))
                    if text in plain:
                        seen += len(chunks)
                        return
                    assert time.monotonic() < deadline, f"the page never showed {text!r}: {plain[-2000:]!r}"
                    await asyncio.sleep(0.05)

            await page_shows("inventory.py:1")
            await wait_until(pilot, lambda: tui.state == "stopped" and tui.source.location_line == 1,
                             what="the terminal TUI at line 1")
            clients = cli_json("status", name)["clients"]
            assert any(c["origin"] == "web" for c in clients), clients

            # The person steps in the page: the session, the terminal TUI and the agent follow.
            await page.focus(".xterm-helper-textarea")
            await page.keyboard.press("F10")
            await wait_until(pilot, lambda: tui.state == "stopped" and tui.source.location_line > 1,
                             timeout=30, what="the terminal TUI following F10 in the page")
            line = tui.source.location_line
            await page_shows(f"inventory.py:{line}")
            context = await call(agent, "debug_context", {})
            assert f"inventory.py:{line}" in context.text, context.text
            activity = cli_text("activity", name)
            assert re.search(r"\bweb\b.*\bnext\b", activity), activity

            # The agent steps: the page and the terminal TUI follow.
            await call(agent, "debug_step_over", {})
            await wait_until(pilot, lambda: tui.state == "stopped" and tui.source.location_line != line,
                             timeout=30, what="the terminal TUI following the agent")
            await page_shows(f"inventory.py:{tui.source.location_line}")
            await page.screenshot(path=str(tmp_path / "web.png"))
            assert (tmp_path / "web.png").stat().st_size > 10_000
            await browser.close()
            await tui.action_quit()
    finally:
        served.close()
        stop_session(name)
