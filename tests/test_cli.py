"""The CLI end to end: real `tui-debugger` processes, a real daemon, real debugpy."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import marker_line

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture
def workdir(tmp_path):
    for name in ("py_basic.py", "py_threads.py", "py_raise.py", "py_output.py"):
        shutil.copy(PROGRAMS / name, tmp_path / name)
    return tmp_path


def tdb(workdir: Path, *args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "tui_debugger", *args], cwd=workdir, capture_output=True,
        text=True, timeout=timeout, stdin=subprocess.DEVNULL,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"tui-debugger {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def tdb_json(workdir: Path, *args: str) -> dict:
    return json.loads(tdb(workdir, *args, "--json").stdout)


@pytest.mark.slow
@pytest.mark.timeout(180)  # some thirty CLI processes, each a Python start-up: ~55 s on busy cores
def test_walkthrough(no_leftover_daemons, workdir):
    program = workdir / "py_basic.py"
    loop = marker_line(program, "@loop-body")
    count = marker_line(program, "@count")
    started = tdb(workdir, "start", "--break", f"py_basic.py:{loop}", "py_basic.py")
    assert "running" in started.stdout or "stopped" in started.stdout

    stop = tdb(workdir, "await", "--timeout", "20").stdout
    assert f"-> {loop}" in stop or f"●> {loop}" in stop
    assert "Locals:" in stop and "acc (int) = 0" in stop

    assert "acc (int) = 0" in tdb(workdir, "locals").stdout
    assert tdb(workdir, "print", "v", "*", "7").stdout.strip() == "7 (int)"
    bt = tdb(workdir, "bt").stdout.splitlines()
    assert "total" in bt[0] and "main" in bt[1]
    ctx = tdb(workdir, "context", "--lines", "1").stdout
    assert len([l for l in ctx.splitlines() if " | " in l]) == 3

    nxt = tdb(workdir, "next").stdout
    assert "Stopped (step)" in nxt
    step = tdb(workdir, "step").stdout
    assert "total" in step or "scale" in step
    tdb(workdir, "finish")

    added = tdb_json(workdir, "break", "add", f"py_basic.py:{count}", "--condition", "n == 2")
    assert added["breakpoint"]["verified"] is True
    assert added["breakpoint"]["spec"]["condition"] == "n == 2"
    tdb(workdir, "break", "add", f"py_basic.py:{count}", "--hit-count", "1", "--disabled")
    tdb(workdir, "break", "add", f"py_basic.py:{count + 1}", "--log", "count={count}")
    listing = tdb(workdir, "break", "list").stdout
    assert "if n == 2" in listing and "log 'count={count}'" in listing and "disabled" in listing
    tdb(workdir, "break", "remove", "1")
    assert "#1 " not in tdb(workdir, "break", "list").stdout

    hit = tdb(workdir, "continue").stdout
    assert f"-> {count}" in hit or f"●> {count}" in hit
    assert "n (int) = 2" in hit
    assert tdb(workdir, "threads").stdout.strip().startswith("*")
    status = tdb_json(workdir, "status")
    assert status["state"] == "stopped" and status["adapter"] == "debugpy"

    tdb(workdir, "break", "remove", "2")
    tdb(workdir, "break", "remove", "3")
    ended = tdb(workdir, "continue").stdout
    assert "exit code 0" in ended
    out = tdb_json(workdir, "output")
    text = "".join(e["text"] for e in out["entries"])
    assert "count=10" in text and "answer=12" in text  # the logpoint, then the program
    assert tdb_json(workdir, "output", "--since", str(out["nextCursor"]))["entries"] == []
    tdb(workdir, "stop")
    assert "No live sessions" in tdb(workdir, "sessions").stdout


@pytest.mark.slow
def test_socket_permissions_and_json(no_leftover_daemons, workdir, isolated_runtime):
    tdb(workdir, "start", "--session", "perm", "--stop-on-entry", "py_basic.py")
    run_dir = Path(os.environ["TUI_DEBUGGER_RUNTIME_DIR"])
    assert stat.S_IMODE(run_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE((run_dir / "perm.sock").stat().st_mode) == 0o600
    sessions = tdb_json(workdir, "sessions")["sessions"]
    assert [s["name"] for s in sessions] == ["perm"]
    waited = tdb_json(workdir, "await", "--session", "perm")
    assert waited["status"] == "stopped" and waited["stop"]["reason"] == "entry"
    assert waited["nextSteps"] and waited["nextSteps"][0].startswith("debug_")
    tdb(workdir, "stop", "--session", "perm")


@pytest.mark.slow
def test_bad_input_gets_one_clear_line(no_leftover_daemons, workdir):
    missing = tdb(workdir, "start", "nope.py", check=False)
    assert missing.returncode != 0
    assert missing.stderr.startswith("error: No such program") and "Traceback" not in missing.stderr

    nosession = tdb(workdir, "status", check=False)
    assert nosession.returncode == 1 and "No live session" in nosession.stderr

    no_adapter = subprocess.run(
        [sys.executable, "-m", "tui_debugger", "start", "--adapter", "dlv", "py_basic.py"],
        cwd=workdir, capture_output=True, text=True, timeout=60,
        env={**os.environ, "TUI_DEBUGGER_DLV_PATH": "/nonexistent/dlv"},
    )
    assert no_adapter.returncode == 1 and "dlv" in no_adapter.stderr and "Traceback" not in no_adapter.stderr

    unknown_adapter = tdb(workdir, "start", "--adapter", "gdb", "py_basic.py", check=False)
    assert "Valid adapters: debugpy, lldb-dap, lldb-cli, dlv, node" in unknown_adapter.stderr

    spin = workdir / "spin.py"
    spin.write_text("import time\nwhile True:\n    time.sleep(0.01)\n")
    tdb(workdir, "start", "--session", "spin", "spin.py")
    running = tdb(workdir, "locals", check=False)
    assert running.returncode == 1 and "running" in running.stderr and "pause" in running.stderr
    bad_bp = tdb(workdir, "break", "add", "missing.py:3", check=False)
    assert bad_bp.returncode == 1 and "No such file" in bad_bp.stderr
    wrong_name = tdb(workdir, "status", "--session", "nosuch", check=False)
    assert wrong_name.returncode == 1 and "No live session named 'nosuch'" in wrong_name.stderr
    paused = tdb(workdir, "pause").stdout
    assert "Stopped (pause)" in paused
    raised = tdb(workdir, "print", "undefined_name", check=False)
    assert raised.returncode == 1 and "NameError" in raised.stderr
    assert "stopped" in tdb(workdir, "status").stdout  # nothing was lost
    tdb(workdir, "stop")


def test_dead_daemon_is_detected_and_cleaned(no_leftover_daemons, workdir):
    tdb(workdir, "start", "--session", "doomed", "--stop-on-entry", "py_basic.py")
    meta = json.loads((Path(os.environ["TUI_DEBUGGER_RUNTIME_DIR"]) / "doomed.json").read_text())
    os.kill(meta["pid"], signal.SIGKILL)
    time.sleep(0.3)
    after = tdb(workdir, "status", "--session", "doomed", check=False)
    assert after.returncode == 1 and "Traceback" not in after.stderr
    assert not (Path(os.environ["TUI_DEBUGGER_RUNTIME_DIR"]) / "doomed.sock").exists()
    # The debugger processes the dead daemon left behind are found by the fixture;
    # end them here as a person would (they belong to no session any more).
    from tests.support import processes_tagged

    for pid, _ in processes_tagged(os.environ["TUI_DEBUGGER_RUNTIME_DIR"]):
        os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_exception_and_threads_from_the_cli(no_leftover_daemons, workdir):
    tdb(workdir, "start", "--session", "boom", "py_raise.py")
    stop = tdb(workdir, "await").stdout
    assert "Stopped (exception)" in stop and "ValueError: bad value 3" in stop
    assert "raise ValueError" in stop
    tdb(workdir, "stop")

    line = marker_line(workdir / "py_threads.py", "@all-started")
    tdb(workdir, "start", "--session", "threads", "--break", f"py_threads.py:{line}", "py_threads.py")
    tdb(workdir, "await")
    threads = tdb(workdir, "threads").stdout
    assert "worker-0" in threads and "worker-2" in threads
    tdb(workdir, "stop")


@pytest.mark.slow
def test_idle_daemon_ends_its_session(no_leftover_daemons, workdir, monkeypatch):
    monkeypatch.setenv("TUI_DEBUGGER_IDLE_TIMEOUT_S", "2")
    spin = workdir / "spin.py"
    spin.write_text("import time\nwhile True:\n    time.sleep(0.05)\n")
    tdb(workdir, "start", "--session", "idle", "spin.py")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and "idle" in tdb(workdir, "sessions").stdout:
        time.sleep(0.5)
    assert "No live sessions" in tdb(workdir, "sessions").stdout


def test_a_host_no_client_can_reach_ends_and_spares_the_next_of_its_name(
        no_leftover_daemons, workdir):
    """A headless host whose socket is removed (the runtime directory cleaned,
    as a logout or a /tmp cleaner does) ends its session within seconds
    instead of at the idle timeout, program included; a session started
    meanwhile under the same name keeps its socket and its file."""
    from backends.procinfo import pid_alive

    run_dir = Path(os.environ["TUI_DEBUGGER_RUNTIME_DIR"])
    tdb(workdir, "start", "--session", "same", "--stop-on-entry", "py_basic.py")
    first = json.loads((run_dir / "same.json").read_text())
    (run_dir / "same.sock").unlink()
    (run_dir / "same.json").unlink()
    tdb(workdir, "start", "--session", "same", "--stop-on-entry", "py_basic.py")
    second = json.loads((run_dir / "same.json").read_text())
    assert second["pid"] != first["pid"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (pid_alive(first["pid"])
                                           or pid_alive(first["program_pid"])):
        time.sleep(0.1)
    assert not pid_alive(first["pid"]) and not pid_alive(first["program_pid"])
    assert (run_dir / "same.sock").exists()
    assert json.loads((run_dir / "same.json").read_text())["pid"] == second["pid"]
    assert "stopped" in tdb(workdir, "status", "--session", "same").stdout
    tdb(workdir, "stop", "--session", "same")


def test_start_then_next_never_races_the_entry_stop(no_leftover_daemons, workdir):
    # `start` returns with the first stop when one is coming, so `next` right
    # after it steps instead of failing with "the program is running".
    started = json.loads(tdb(workdir, "start", "--json", "--stop-on-entry", "py_basic.py").stdout)
    assert started["state"] == "stopped" and started["stop"]["reason"] == "entry"
    stepped = tdb_json(workdir, "next")
    assert stepped["status"] == "stopped" and stepped["stop"]["reason"] == "step"
    tdb(workdir, "stop")


def test_trace_from_the_command_line(no_leftover_daemons, workdir):
    loop = marker_line(workdir / "py_basic.py", "@loop-body")
    tdb(workdir, "start", "--stop-on-entry", "py_basic.py")
    out = tdb(workdir, "trace", f"py_basic.py:{loop}", "v", "*", "10", "--max-hits", "2").stdout
    assert out.splitlines()[:2] == ['{"type": "int", "value": 10}', '{"type": "int", "value": 20}']
    assert "maxHits reached" in out
    tdb(workdir, "stop")


async def test_the_reapers_pass_over_proc_leaves_the_hosts_loop_free(monkeypatch):
    """The reaper reads every process's stat file once a second (tens of ms
    under load): in a thread, so a step's stop is not held behind it."""
    import asyncio

    from backends import process

    def slow_table():
        time.sleep(0.3)  # a slow pass over /proc
        return {}

    monkeypatch.setattr(process, "_proc_table", slow_table)
    reaper = asyncio.get_running_loop().create_task(process.reap_orphans_forever(interval=0.01))
    try:
        worst, last = 0.0, time.monotonic()
        for _ in range(60):
            await asyncio.sleep(0.01)
            now = time.monotonic()
            worst, last = max(worst, now - last), now
        assert worst < 0.15, f"the loop was held {worst * 1000:.0f} ms"
    finally:
        reaper.cancel()


@pytest.mark.slow
def test_the_daemon_reaps_the_programs_it_ran(no_leftover_daemons, workdir):
    from backends.process import _zombie_children

    host = json.loads(tdb(workdir, "start", "--json", "--stop-on-entry", "py_basic.py").stdout)["hostPid"]
    tdb(workdir, "restart")  # the first debuggee ends under the daemon (a subreaper)
    deadline = time.monotonic() + 10
    while _zombie_children(host) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _zombie_children(host)
    tdb(workdir, "stop")


def _subparsers(parser):
    import argparse

    yield parser
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for child in dict.fromkeys(action.choices.values()):
                yield from _subparsers(child)


def test_help_speaks_each_front_ends_words():
    """CLI help never names an MCP tool or a camelCase argument; an MCP
    description never names a flag of the CLI."""
    import re

    from tui_debugger.cli.parse import build_parser
    from tui_debugger.commands import registry
    from tui_debugger.mcp.server import create_server

    aliases = {field.alias for cmd in registry.all_commands()
               for field in cmd.args.model_fields.values() if field.alias and
               re.fullmatch(r"[a-z]+[A-Z][A-Za-z]*", field.alias)}
    flags: set[str] = set()
    for parser in _subparsers(build_parser()):
        text = parser.format_help()
        assert not re.search(r"\bdebug_[a-z]", text), (parser.prog, text)
        words = set(re.findall(r"\b[a-z]+[A-Z][A-Za-z]*\b", text))
        assert not words & aliases, (parser.prog, words & aliases)
        for action in parser._actions:  # noqa: SLF001
            flags.update(o for o in action.option_strings if o.startswith("--"))
    flags -= {"--help", "--session", "--json"}
    tools = create_server(tools=["all"]).tools.tools
    for tool in tools:
        texts = [tool.description or ""] + [
            p.get("description", "") for p in tool.input_schema.get("properties", {}).values()]
        for text in texts:
            named = set(re.findall(r"--[a-z][a-z-]+", text)) & flags
            assert not named, (tool.name, named, text)


def test_until_and_jump_take_a_bare_line_of_the_current_file(no_leftover_daemons, workdir):
    """pdb's `until 18`, gdb's `jump 18`: a line number alone is the current
    frame's file; with no current file, the error says to give FILE:LINE."""
    program = workdir / "py_basic.py"
    loop = marker_line(program, "@loop-body")
    ret = loop + 1  # `return acc`, after the loop
    tdb(workdir, "start", "--break", f"py_basic.py:{loop}", "py_basic.py")
    try:
        assert f"> {loop}" in tdb(workdir, "await", "--timeout", "20").stdout
        tdb(workdir, "break", "remove", "--all")
        until = tdb(workdir, "until", str(ret)).stdout
        assert f"> {ret}" in until, until
        start = loop - 2  # `acc = 0`, before the loop: a jump may go there
        jumped = tdb(workdir, "jump", str(start)).stdout
        assert f"> {start}" in jumped, jumped
        bad = tdb(workdir, "jump", "x18", check=False)
        assert bad.returncode == 1 and "LINE or FILE:LINE" in bad.stderr, bad.stderr
    finally:
        tdb(workdir, "stop", check=False)
