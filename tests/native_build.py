"""Builds the native test programs (C with gcc, Go with go) into
tests/programs/build/, once per test session: a binary newer than its source
is reused.

Line numbers are looked up through `/* LINE:name */` (C) or `// LINE:name` (Go)
markers in the sources, so editing a program does not break its tests.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parent / "programs"
BUILD = PROGRAMS / "build"


class BuildFailed(RuntimeError):
    pass


def _fresh(output: Path, source: Path) -> bool:
    return output.exists() and output.stat().st_mtime >= source.stat().st_mtime


def _build(argv: list[str], output: Path, env: dict[str, str] | None = None) -> Path:
    BUILD.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".partial")
    argv = [a if a != "{out}" else str(partial) for a in argv]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300,
                          cwd=PROGRAMS)
    if done.returncode != 0:
        raise BuildFailed(f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}")
    os.replace(partial, output)
    return output


def c_program(name: str) -> Path:
    """tests/programs/NAME.c built with `gcc -g -O0`."""
    source = PROGRAMS / f"{name}.c"
    output = BUILD / name
    if _fresh(output, source):
        return output
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        raise BuildFailed("gcc is not installed (sudo apt-get install gcc)")
    return _build([gcc, "-g", "-O0", "-o", "{out}", str(source)], output)


def go_program(name: str) -> Path:
    """tests/programs/NAME.go built with optimisations and inlining off, as
    delve needs for reliable lines and variables."""
    source = PROGRAMS / f"{name}.go"
    output = BUILD / name
    if _fresh(output, source):
        return output
    go = shutil.which("go")
    if go is None:
        raise BuildFailed("go is not installed (sudo apt-get install golang-go)")
    env = dict(os.environ)
    env.setdefault("GOCACHE", str(BUILD / ".gocache"))
    env.setdefault("GOFLAGS", "-mod=mod")
    env["GO111MODULE"] = "off"  # one file, standard library only: no module lookups
    return _build([go, "build", "-gcflags=all=-N -l", "-o", "{out}", str(source)], output, env)


def line_of(source_name: str, marker: str) -> int:
    """The 1-based line of `LINE:marker` in tests/programs/SOURCE_NAME."""
    for number, text in enumerate((PROGRAMS / source_name).read_text().splitlines(), 1):
        if marker in re.findall(r"LINE:(\w+)", text):
            return number
    raise KeyError(f"no LINE:{marker} marker in {source_name}")


def source_path(source_name: str) -> str:
    return str(PROGRAMS / source_name)


class EventLog:
    """Collects a backend's events; `wait` returns the next one of a kind."""

    def __init__(self) -> None:
        import asyncio

        self.events: list = []
        self._cursor = 0
        self._changed = asyncio.Event()

    def __call__(self, event) -> None:
        self.events.append(event)
        self._changed.set()

    async def wait(self, kind: str, timeout: float = 15.0):
        """The next event of `kind` after the last one waited for."""
        import asyncio

        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for index in range(self._cursor, len(self.events)):
                if self.events[index].kind == kind:
                    self._cursor = index + 1
                    return self.events[index]
            remaining = deadline - loop.time()
            if remaining <= 0:
                kinds = [e.kind for e in self.events[self._cursor:]]
                raise AssertionError(f"no {kind} event within {timeout}s; since then: {kinds}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    def output(self, category: str | None = None) -> str:
        return "".join(
            e.text for e in self.events
            if e.kind == "output" and (category is None or e.category == category)
        )
