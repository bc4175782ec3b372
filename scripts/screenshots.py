"""Regenerate the README's screenshots from the real app, stopped at real breakpoints.

    python scripts/screenshots.py            # writes screenshots/*.svg and a PNG of each
    python scripts/screenshots.py --no-png   # the SVGs only

The SVGs convert true with rsvg-convert (the PNGs are made so): their spaces are
kept (xml:space="preserve"; rsvg dropped the leading non-breaking spaces of each
run, so `qty= {item.quantity}`), and they name DejaVu Sans Mono first, a
monospace font Debian ships (fonts-dejavu-core), then Fira Code, which Rich's
export names and a browser fetches.

Scenes:
  python.svg   examples/inventory.py stopped in its loop, nested data expanded
  pairing.svg  the same program while an agent (an MCP client) sets a breakpoint and steps
  native.svg   examples/inventory.c under lldb-dap (skipped when lldb-dap is missing)
  disassembly.svg  the same, the source pane turned to disassembly (Ctrl+D)
  memory.svg       the same, memory at a pointer opened from Variables (m)

Your own config, saved breakpoints and live sessions are kept out (temporary
directories), so the pictures are the same on every machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "screenshots"
SIZE = (130, 38)
sys.path.insert(0, str(ROOT))


def line_of(path: Path, marker: str) -> int:
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if marker in text:
            return number
    raise SystemExit(f"{marker!r} is not in {path}")


async def until(pilot, predicate, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await pilot.pause(0.05)


async def expand(pilot, paths: list[str]) -> None:
    tree = pilot.app.variables

    def find(path):
        stack = list(tree.root.children)
        while stack:
            node = stack.pop()
            if node.data is not None and node.data.kind == "var" and node.data.path == path:
                return node
            stack.extend(node.children)
        return None

    for path in paths:
        node = find(path)
        if node is None:
            known = sorted(n.data.path for n in tree._var_nodes.values() if n.data.path)  # noqa: SLF001
            raise SystemExit(f"no variable {path} to expand; there are: {', '.join(known)}")
        node.expand()
        await until(pilot, lambda p=path: any(c.data.kind == "var" for c in find(p).children),
                    f"{path}'s children")
    tree.move_cursor(find(paths[-1]))


async def stopped(pilot, line: int, previous=None) -> None:
    """Stopped at `line`, by a stop other than `previous` (a StopInfo seen before)."""
    app = pilot.app
    await until(pilot, lambda: app.state == "stopped" and app.source.location_line == line
                and app.stop_info is not None and app.stop_info is not previous
                and app.variables.filled > 0 and app.query_one("#stack").row_count > 0,
                f"a stop at line {line}")


def fresh_state(name: str) -> None:
    """Breakpoints saved by one scene must not be restored in the next."""
    os.environ["TUI_DEBUGGER_STATE_DIR"] = os.path.join(os.environ["TUI_DEBUGGER_RUNTIME_DIR"],
                                                        "..", f"state-{name}")


#: The fonts the SVGs name, in order (Rich's export names Fira Code alone).
FONTS = '"DejaVu Sans Mono", "Fira Code", monospace'


def portable(svg: str) -> str:
    """Rich's SVG, made to convert true without Fira Code (see the top)."""
    svg = svg.replace("<svg class=", '<svg xml:space="preserve" class=', 1)
    return svg.replace("font-family: Fira Code, monospace;", f"font-family: {FONTS};")


def save(app, name: str) -> Path:
    path = OUT / f"{name}.svg"
    path.write_text(portable(app.export_screenshot(title=f"tui-debugger · {name}")))
    print(f"wrote {path.relative_to(ROOT)}")
    return path


async def python_scene() -> Path:
    from tui_debugger.tui.app import create_app

    program = ROOT / "examples" / "inventory.py"
    line = line_of(program, "added = restock(item")
    fresh_state("python")
    app = create_app("launch", {"program": "examples/inventory.py",
                                "breakpoints": [f"examples/inventory.py:{line}"]}, None, cwd=str(ROOT))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await stopped(pilot, line)
        previous = app.stop_info
        await pilot.press("f5")  # the second item: values that changed are marked
        await stopped(pilot, line, previous)
        await expand(pilot, ["warehouse", "warehouse.shelves", "warehouse.shelves['A1']"])
        app.query_one("#io-tabs").active = "tab-output"
        app.variables.focus()
        await pilot.pause(0.3)
        path = save(app, "python")
        await app.action_quit()
    return path


async def pairing_scene() -> Path:
    from tui_debugger.client.router import join
    from tui_debugger.tui.app import create_app

    program = ROOT / "examples" / "inventory.py"
    line = line_of(program, "added = restock(item")
    agent_line = line_of(program, "missing = minimum - item.quantity")
    watched_line = line_of(program, "if missing > 0:")
    fresh_state("pairing")
    app = create_app("launch", {"program": "examples/inventory.py",
                                "breakpoints": [f"examples/inventory.py:{line}"]}, None, cwd=str(ROOT))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await stopped(pilot, line)
        agent = await join(None, "mcp")
        try:
            await agent.call("breakpoint_add", {"file": "examples/inventory.py", "line": watched_line,
                                                "condition": "missing > 0"})
            await agent.call("step", {"waitMs": 5_000})
            await stopped(pilot, agent_line)
            await agent.call("next", {"waitMs": 5_000})
            await stopped(pilot, watched_line)
            await agent.call("evaluate", {"expression": "missing"})
            app.query_one("#io-tabs").active = "tab-activity"
            app.query_one("#nav-tabs").active = "tab-breakpoints"
            await until(pilot, lambda: len(app.query_one("#activity").entries) >= 4, "the activity")
            await pilot.pause(0.3)
            path = save(app, "pairing")
        finally:
            await agent.close()
        await app.action_quit()
    return path


async def native_scene(build: Path) -> Path | None:
    from backends import adapters
    from tui_debugger.tui.app import create_app

    if not adapters.find_lldb_dap() or not shutil.which("gcc"):
        print("skipped native.svg: needs lldb-dap and gcc (see `tui-debugger doctor`)")
        return None
    source = ROOT / "examples" / "inventory.c"
    binary = build / "inventory"
    subprocess.run(["gcc", "-g", "-O0", "-o", str(binary), str(source)], check=True)
    line = line_of(source, "int added = restock(item, 3);")
    fresh_state("native")
    app = create_app("launch", {"program": str(binary), "adapter": "lldb-dap",
                                "breakpoints": [f"examples/inventory.c:{line}"]}, None, cwd=str(ROOT))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await stopped(pilot, line)
        for _ in range(2):
            previous = app.stop_info
            await pilot.press("f5")
            await stopped(pilot, line, previous)
        await expand(pilot, ["item", "shelves"])
        app.variables.focus()
        await pilot.pause(0.3)
        path = save(app, "native")
        await app.action_quit()
    return path


async def machine_scenes(build: Path) -> list[Path]:
    """The source pane turned to disassembly (Ctrl+D), and memory at a pointer
    from Variables (m), on examples/inventory.c under lldb-dap."""
    from backends import adapters
    from tui_debugger.tui.app import create_app
    from tui_debugger.tui.widgets.memory_screen import MemoryScreen

    if not adapters.find_lldb_dap() or not shutil.which("gcc"):
        print("skipped disassembly.svg, memory.svg: need lldb-dap and gcc")
        return []
    source = ROOT / "examples" / "inventory.c"
    binary = build / "inventory-machine"
    subprocess.run(["gcc", "-g", "-O0", "-o", str(binary), str(source)], check=True)
    line = line_of(source, "int added = restock(item, 3);")
    fresh_state("machine")
    app = create_app("launch", {"program": str(binary), "adapter": "lldb-dap",
                                "breakpoints": [f"examples/inventory.c:{line}"]}, None, cwd=str(ROOT))
    paths = []
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await stopped(pilot, line)
        await pilot.press("ctrl+d")
        view = app.query_one("#disassembly")
        await until(pilot, lambda: view.current_row is not None, "the disassembly")
        await pilot.pause(0.3)
        paths.append(save(app, "disassembly"))
        await pilot.press("ctrl+d")
        await expand(pilot, ["item"])
        app.variables.focus()
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, MemoryScreen), "the memory view")
        await pilot.pause(0.3)
        paths.append(save(app, "memory"))
        await app.action_quit()
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-png", dest="png", action="store_false",
                        help="the SVGs only (by default a PNG of each too, with rsvg-convert)")
    ns = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    os.chdir(ROOT)
    with tempfile.TemporaryDirectory(prefix="tuid-shots-") as tmp:
        os.environ["TUI_DEBUGGER_CONFIG"] = os.path.join(tmp, "none.toml")
        os.environ["TUI_DEBUGGER_STATE_DIR"] = os.path.join(tmp, "state")
        os.environ["TUI_DEBUGGER_RUNTIME_DIR"] = os.path.join(tmp, "rt")
        # Its sessions' hosts end with them: a warm one would wait on in a
        # runtime directory this script removes.
        os.environ["TUI_DEBUGGER_WARM"] = "0"
        from tui_debugger.tui.app import DebuggerApp

        DebuggerApp.CURSOR_BLINK = False
        paths = [asyncio.run(python_scene()), asyncio.run(pairing_scene()),
                 asyncio.run(native_scene(Path(tmp))), *asyncio.run(machine_scenes(Path(tmp)))]
    web = OUT / "web.png"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "web_step.py"), "--rounds", "1",
                           "--screenshot", str(web)], capture_output=True, text=True)
    if done.returncode == 0:
        print(f"wrote {web.relative_to(ROOT)} (the TUI in a browser tab, chromium)")
    else:
        print(f"screenshots/web.png not made (needs chromium and playwright): {done.stderr[-300:]}")
    if ns.png:
        converter = shutil.which("rsvg-convert")
        if converter is None:
            print("rsvg-convert is not installed (apt-get install librsvg2-bin): SVGs only, "
                  "the PNGs beside them are now out of date")
            return 1
        for path in filter(None, paths):
            png = path.with_suffix(".png")
            subprocess.run([converter, str(path), "-o", str(png)], check=True)
            print(f"wrote {png.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
