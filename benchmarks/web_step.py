"""From the agent's step to the new line in a browser tab, beside the terminal TUI.

One live debugpy session stopped in a loop; joined by a `tui-debugger serve`
page in Debian's chromium (Playwright), a terminal TUI (Textual's headless
Pilot, in this process) and an MCP client (the SDK's, in this process). Each
round the agent calls debug_step_over and we time, from the call:

  agent answer     the tool's answer (the stop, its source and locals)
  terminal TUI     the TUI's source pane on the new line
  browser tab      the first bytes drawing the new line reaching the page
                   (stamped in the page by its websocket listener, before
                   xterm.js paints them)

Run:  python benchmarks/web_step.py [--rounds N] [--screenshot PATH]
(needs chromium and playwright: scripts/test installs both)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.step_latency import PROGRAM  # noqa: E402 - the same loop
from tests.support.web import ESCAPES, RECORD_SCREEN as RECORD  # noqa: E402


def cli(*args: str, cwd: str) -> str:
    done = subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)
    if done.returncode:
        raise SystemExit(f"tui-debugger {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def line(name: str, samples: list[float], base: float | None = None) -> str:
    med = statistics.median(samples) * 1000
    p90 = sorted(samples)[max(0, int(len(samples) * 0.9) - 1)] * 1000
    ratio = f"{med / (base * 1000):5.2f}x" if base else "     "
    return f"{name:16} median {med:7.1f} ms   p90 {p90:7.1f} ms   {ratio}"


async def run(rounds: int, screenshot: str | None) -> None:
    from mcp.client import Client
    from playwright.async_api import async_playwright

    from tui_debugger.mcp.server import create_server
    from tui_debugger.tui.app import create_app

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("chromium is missing (Debian: apt-get install chromium)")
    work = tempfile.mkdtemp(prefix="web-step-")
    os.environ.setdefault("TUI_DEBUGGER_RUNTIME_DIR", os.path.join(work, "run"))
    program = Path(work, "loop.py")
    program.write_text(PROGRAM)
    name = "webbench"
    cli("start", "--session", name, "--break", "loop.py:4", "loop.py", cwd=work)
    cli("await", "--session", name, cwd=work)
    served = subprocess.Popen([sys.executable, "-m", "tui_debugger", "serve", "--session", name,
                               "--port", "0"], cwd=work, stdout=subprocess.PIPE, text=True)
    url = re.search(r"http://\S+", served.stdout.readline()).group(0)
    answers, tuis, pages = [], [], []
    try:
        tui = create_app("join", {}, name, cwd=work)
        async with async_playwright() as playwright, create_server(name) as front, \
                Client(front.server) as agent, tui.run_test(size=(160, 45)) as pilot:
            browser = await playwright.chromium.launch(executable_path=chromium,
                                                       args=["--no-sandbox"])
            page = await browser.new_page(viewport={"width": 1400, "height": 900})
            await page.add_init_script(RECORD)
            await page.goto(url)
            await page.wait_for_function(
                "window.__screen.map(c => c[1]).join('').includes('loop.py:4')", timeout=60_000)
            while tui.source.location_line != 4:
                await pilot.pause(0.01)
            for _ in range(rounds + 2):  # the first two warm up
                before = tui.source.location_line
                seen = await page.evaluate("window.__screen.length")
                t0 = time.time()
                result = await agent.call_tool("debug_step_over", {})
                answered = time.time() - t0
                assert not result.is_error, result.content
                while tui.source.location_line == before:
                    await pilot.pause(0.001)
                on_tui = time.time() - t0
                want = f"loop.py:{tui.source.location_line}"
                deadline = time.monotonic() + 10
                on_page = None
                while on_page is None and time.monotonic() < deadline:
                    for stamp, text in await page.evaluate(f"window.__screen.slice({seen})"):
                        if want in ESCAPES.sub("", text):
                            on_page = stamp - t0
                            break
                    await asyncio.sleep(0.005)
                assert on_page is not None, f"the page never showed {want}"
                answers.append(answered)
                tuis.append(on_tui)
                pages.append(on_page)
            if screenshot:
                # The page's "the agent is driving" notices time out after 5 s.
                await asyncio.sleep(6)
                await page.screenshot(path=screenshot)
            await browser.close()
            await tui.action_quit()
    finally:
        served.terminate()
        served.wait(timeout=10)
        cli("stop", "--session", name, cwd=work)
    answers, tuis, pages = answers[2:], tuis[2:], pages[2:]
    print(f"agent step -> new line on screen, {rounds} rounds (load {os.getloadavg()[0]:.2f}):")
    print(line("agent answer", answers))
    print(line("terminal TUI", tuis, statistics.median(tuis)))
    print(line("browser tab", pages, statistics.median(tuis)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--screenshot", help="save the page after the last step (PNG)")
    ns = parser.parse_args()
    asyncio.run(run(ns.rounds, ns.screenshot))


if __name__ == "__main__":
    main()
