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

from tests.support import one_at_a_time

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
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
    with one_at_a_time("native-build"):
        if _fresh(output, source):
            return output
        return _build_c(output, source)


def _build_c(output: Path, source: Path) -> Path:
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
    with one_at_a_time("native-build"):
        if _fresh(output, source):
            return output
        return _build_go(output, source)


def _build_go(output: Path, source: Path) -> Path:
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


# --------------------------------------------------------------------------- attach helpers


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def tracer_of(pid: int) -> int:
    """The pid tracing `pid` (0: none), from /proc."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("TracerPid:"):
                return int(line.split()[1])
    return -1


def unique_copy(program: Path, directory: Path) -> tuple[str, str]:
    """A copy of `program` under a name no other process has, for waiting by name
    (kept within the 15 characters Linux keeps of a process name)."""
    import secrets

    name = "tw" + secrets.token_hex(5)
    copy = directory / name
    shutil.copy2(program, copy)
    return str(copy), name


async def start_once_lldb_waits(backend, argv: list[str]) -> subprocess.Popen:
    """Start `argv` once lldb-server (which does lldb's waiting for a process by
    name) runs under the backend: lldb catches only processes started after its
    wait began."""
    import asyncio

    from backends.process import descendants

    for _ in range(200):
        await asyncio.sleep(0.05)
        if backend.child_pids and any(
            "lldb-server" in _cmdline(pid) for pid in descendants(backend.child_pids[0])
        ):
            break
    await asyncio.sleep(0.3)
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, start_new_session=True)


# --------------------------------------------------------------------------- the shared C flow


async def run_c_flow(backend, events: EventLog) -> dict:
    """native_demo.c through any LLDB backend: a conditional line breakpoint, a
    function breakpoint, the stack, locals with a struct's children, globals,
    evaluate, step in, step out, step over, run to the end. Asserts what must
    hold on every backend and returns what was seen, for comparing backends."""
    from backends.errors import DebuggerError
    from backends.models import BreakpointSpec, LaunchRequest

    demo = str(c_program("native_demo"))
    source = source_path("native_demo.c")
    loop_line = line_of("native_demo.c", "loop_body")
    seen: dict = {"stops": [], "frames": [], "variables": [], "evaluate": []}

    async def configure():
        seen["line_breakpoints"] = [
            (s.verified, s.line) for s in await backend.set_source_breakpoints(
                source, [BreakpointSpec(path=source, line=loop_line, condition="i == 3")])
        ]
        seen["function_breakpoints"] = [
            (s.verified, s.line) for s in await backend.set_function_breakpoints(
                [BreakpointSpec(function="sum_of_squares")])
        ]

    def frame_record(frames):
        return [(f.name, f.location.line if f.location else None,
                 f.location.path if f.location and f.location.path
                 and os.path.isfile(f.location.path) else None) for f in frames]

    async def note_stop(stop, levels=3):
        frames, _ = await backend.stack_trace(stop.thread_id, 0, levels)
        seen["stops"].append((stop.reason, len(stop.hit_breakpoint_ids)))
        seen["frames"].append(frame_record(frames))
        return frames

    await backend.launch(LaunchRequest(program=demo), configure)
    assert seen["line_breakpoints"] == [(True, loop_line)]
    assert seen["function_breakpoints"] == [(True, line_of("native_demo.c", "call_square"))]

    stop = await events.wait("stopped")
    assert stop.reason == "breakpoint"
    frames = await note_stop(stop)
    assert frames[0].name == "main" and frames[0].location.line == loop_line
    assert frames[0].location.path == source
    assert [t.id for t in await backend.threads()] == [stop.thread_id]

    scopes = await backend.scopes(frames[0].id)
    seen["scopes"] = [(s.name, s.kind.value) for s in scopes]
    assert [s.kind.value for s in scopes][:2] == ["locals", "globals"]
    local_vars = await backend.variables(scopes[0].ref)
    seen["variables"].append([(v.name, v.value, v.type, v.ref > 0) for v in local_vars])
    by_name = {v.name: v for v in local_vars}
    assert by_name["i"].value == "3" and by_name["accumulator"].value == "3"
    origin = by_name["origin"]
    assert origin.ref > 0 and origin.type == "point"
    children = await backend.variables(origin.ref)
    seen["variables"].append([(v.name, v.value, v.type, v.evaluate_name) for v in children])
    assert [(v.name, v.value) for v in children][:2] == [("x", "3"), ("y", "4")]
    assert children[2].value.endswith('"origin"')
    globals_ = await backend.variables(scopes[1].ref)
    seen["variables"].append([(v.name, v.value) for v in globals_])
    assert ("global_counter", "10") in seen["variables"][-1]

    for expression in ("origin.x * 10 + i", "origin.label", "global_counter"):
        result = await backend.evaluate(expression, frames[0].id, "watch")
        seen["evaluate"].append((expression, result.value, result.type))
    assert seen["evaluate"][0][1:] == ("33", "int")
    try:
        await backend.evaluate("no_such_name", frames[0].id, "watch")
    except DebuggerError as exc:
        seen["evaluate"].append(("no_such_name", exc.code.value, "no_such_name" in exc.message))
    else:
        raise AssertionError("evaluating an unknown name must fail")

    await backend.continue_(stop.thread_id)
    stop = await events.wait("stopped")
    frames = await note_stop(stop)
    assert [f.name for f in frames[:2]] == ["sum_of_squares", "main"]

    await backend.step_in(stop.thread_id)
    stop = await events.wait("stopped")
    frames = await note_stop(stop)
    assert stop.reason == "step"
    assert (frames[0].name, frames[0].location.line) == (
        "square", line_of("native_demo.c", "square_body"))

    await backend.step_out(stop.thread_id)
    stop = await events.wait("stopped")
    frames = await note_stop(stop)
    assert frames[0].name == "sum_of_squares"

    await backend.step_over(stop.thread_id)
    stop = await events.wait("stopped")
    frames = await note_stop(stop)
    assert frames[0].location.line == line_of("native_demo.c", "call_square") + 1

    await backend.continue_(stop.thread_id)
    exited = await events.wait("exited")
    await events.wait("terminated")
    seen["exit_code"] = exited.exit_code
    assert exited.exit_code == 0
    assert "accumulator=10 distance_squared=25" in events.output("stdout")
    return seen


def crash_core(program: Path, directory: Path, env: dict[str, str] | None = None) -> Path:
    """Run `program` until it crashes and return the core dump of that crash.

    The kernel writes it (core size limit raised) when /proc/sys/kernel/core_pattern
    is a plain file name; where it is a pipe to a crash collector (systemd-coredump,
    apport) the program runs under gdb instead, which writes the core at the
    crashing signal (`generate-core-file`): the same moment, the same memory."""
    import resource

    directory.mkdir(parents=True, exist_ok=True)
    run_env = {**os.environ, **(env or {})}
    try:
        pattern = Path("/proc/sys/kernel/core_pattern").read_text().strip()
    except OSError:
        pattern = "|"
    if pattern and not pattern.startswith("|") and "/" not in pattern:
        def unlimited_core() -> None:
            resource.setrlimit(resource.RLIMIT_CORE,
                               (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

        done = subprocess.run([str(program)], cwd=directory, env=run_env,
                              capture_output=True, timeout=60, preexec_fn=unlimited_core)
        assert done.returncode < 0, f"{program} did not crash: {done.returncode}"
        cores = sorted(directory.glob("core*"), key=lambda p: p.stat().st_mtime)
        if cores:
            return cores[-1]
    gdb = shutil.which("gdb")
    if gdb is None:
        raise BuildFailed("no core dump: core_pattern is a pipe and gdb is not installed "
                          "(sudo apt-get install gdb)")
    core = directory / "core.gdb"
    subprocess.run([gdb, "-nx", "-batch", "-ex", "run", "-ex", f"generate-core-file {core}",
                    str(program)], cwd=directory, env=run_env, capture_output=True,
                   timeout=120, check=False)
    if not core.exists():
        raise BuildFailed(f"gdb wrote no core for {program}")
    return core


#: zlib's example programs, as Debian's zlib1g-dev ships them (scripts/test installs it)
ZLIB_EXAMPLES = Path("/usr/share/doc/zlib1g-dev/examples")


def zran_program() -> Path:
    """zlib's zran.c example (random access into a gzip file), a real C program
    none of us wrote, built with `gcc -g -O0 -DTEST` against the system's zlib.
    Raises BuildFailed when zlib1g-dev is missing."""
    workdir = BUILD / "zran"
    output = workdir / "zran"
    if output.exists():
        return output
    with one_at_a_time("native-build"):
        if output.exists():
            return output
        return _build_zran(workdir, output)


def _build_zran(workdir: Path, output: Path) -> Path:
    import gzip

    workdir.mkdir(parents=True, exist_ok=True)
    for name in ("zran.c", "zran.h"):
        plain, packed = ZLIB_EXAMPLES / name, ZLIB_EXAMPLES / f"{name}.gz"
        if plain.exists():
            shutil.copyfile(plain, workdir / name)
        elif packed.exists():
            (workdir / name).write_bytes(gzip.decompress(packed.read_bytes()))
        else:
            raise BuildFailed(f"{plain} is missing: install zlib1g-dev (scripts/test does)")
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        raise BuildFailed("gcc is not installed (sudo apt-get install gcc)")
    return _build([gcc, "-g", "-O0", "-DTEST", "-o", "{out}", str(workdir / "zran.c"), "-lz"],
                  output)


def zran_input(directory: Path) -> Path:
    """A gzip file for zran: 200,000 numbered lines (1.3 MB, two access points)."""
    import gzip

    path = directory / "numbers.gz"
    path.write_bytes(gzip.compress("".join(f"{i}\n" for i in range(1, 200_001)).encode(),
                                   mtime=0))
    return path
