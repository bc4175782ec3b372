"""A CLI command on a live session stays light: its process imports what talks
to the socket and prints, and the session's host parses, runs and renders it.
Checked by what the process imports (sys.modules), not by a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli import PROGRAMS, tdb

#: Modules a session command's process must not import: pydantic and the
#: backends' models, the registry and its commands, Textual, the MCP SDK,
#: asyncio, argparse (the host parses).
HEAVY = ("pydantic", "pydantic_core", "pydantic_settings", "backends.models", "backends.base",
         "tui_debugger.commands", "tui_debugger.cli.full", "tui_debugger.models",
         "tui_debugger.client.router", "tui_debugger.config", "textual", "rich", "mcp", "asyncio",
         "argparse", "typing")

#: Runs one command as the executable does and says what it imported.
PROBE = """
import json, sys
from tui_debugger.cli.main import main
rc = main(sys.argv[1:])
sys.stdout.flush()
print("\\n@@" + json.dumps({"rc": rc, "modules": sorted(sys.modules)}))
"""


def run_probe(workdir: Path, *args: str) -> tuple[int, str, str, list[str]]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=workdir, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    out, _, tail = proc.stdout.rpartition("\n@@")
    report = json.loads(tail)
    return report["rc"], out, proc.stderr, report["modules"]


def heavy_in(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


@pytest.fixture
def live(no_leftover_daemons, tmp_path):
    import shutil

    shutil.copy(PROGRAMS / "py_basic.py", tmp_path / "py_basic.py")
    tdb(tmp_path, "start", "--stop-on-entry", "py_basic.py")
    yield tmp_path
    tdb(tmp_path, "stop", check=False)


def full(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    """The same command through the whole command line in the client."""
    return subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=workdir,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "TUI_DEBUGGER_FULL_CLI": "1"})


@pytest.mark.timeout(120)
def test_a_session_command_imports_nothing_heavy(live):
    for args in (["status"], ["next"], ["print", "1", "+", "2"], ["await", "--timeout", "5"],
                 ["status", "--json"], ["print"], ["next", "--bogus"], ["frame", "99"],
                 ["break", "nonsense"], ["b", "nowhere"], ["n", "--thread-id", "x"]):
        rc, out, err, modules = run_probe(live, *args)
        assert not heavy_in(modules), (args, heavy_in(modules))
        # The same answer as the whole command line gives (a stop already there:
        # `await` and `status` say the same twice).
        if args[0] in ("status", "await", "print", "frame", "break") or rc != 0:
            again = full(live, *args)
            assert (rc, out, err) == (again.returncode, again.stdout, again.stderr), args
    assert run_probe(live, "print", "1", "+", "2")[1] == "3 (int)\n"
    rc, out, err, _ = run_probe(live, "print")
    assert rc == 2 and "the following arguments are required: EXPRESSION" in err
    rc, out, _, modules = run_probe(live, "--version")
    assert rc == 0 and out.startswith("tui-debugger ") and not heavy_in(modules)


@pytest.mark.timeout(120)
def test_without_a_session_the_whole_command_line_answers(no_leftover_daemons, tmp_path):
    rc, out, err, modules = run_probe(tmp_path, "status")
    again = full(tmp_path, "status")
    assert (rc, out, err) == (again.returncode, again.stdout, again.stderr)
    assert rc == 1 and "No live session" in err
    assert "tui_debugger.cli.full" in modules  # it said so itself


def test_the_quick_words_are_the_registrys():
    """cli.SESSION_WORDS, written out so the client imports no registry, is the
    first words of every CLI form of the commands that act on one live session."""
    from tui_debugger.cli import route as cli
    from tui_debugger.commands import registry

    words = {form[0] for cmd in registry.all_commands()
             if cmd.needs_session and not cmd.creates_session
             for spec in cmd.cli for form in (spec.path, *spec.aliases)}
    assert cli.SESSION_WORDS == words


@pytest.mark.timeout(120)
def test_a_changed_config_is_checked_again(live, tmp_path_factory):
    """The quick path skips the settings' check only while nothing it depends on
    changed: a broken config file is reported, as before."""
    config = tmp_path_factory.mktemp("cfg") / "config.toml"
    config.write_text("step_wait_ms = 'soon'\n")
    env = {**os.environ, "TUI_DEBUGGER_CONFIG": str(config)}
    proc = subprocess.run([sys.executable, "-m", "tui_debugger", "status"], cwd=live,
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 1 and "step_wait_ms" in proc.stderr


def test_run_and_start_start_their_host_before_anything_heavy(no_leftover_daemons, tmp_path):
    """`run` and `start` start their session's host first thing
    (early_host.start_early), before the event loop, the registry or Textual:
    whatever they import before it puts off the host, and the first stop."""
    probe = """
import json, sys
from tui_debugger.host.early import discard_early, leave_on_end_signals, start_early
leave_on_end_signals()
start_early(["start", "py_basic.py"])
before = sorted(sys.modules)
discard_early()
print(json.dumps(before))
"""
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    imported = json.loads(proc.stdout)
    early_heavy = [m for m in heavy_in(imported) if m.split(".")[0] != "typing"] + [
        m for m in imported if m in ("dataclasses", "inspect", "tui_debugger.host.start")]
    assert early_heavy == [], f"imported before the host starts: {early_heavy}"


def _same_run(text: str) -> str:
    """An answer with what differs between two runs of one program taken out."""
    import re

    text = re.sub(r'("?(?:pid|hostPid|host)"?:? )\d+', r"\1N", text)
    return re.sub(r'("at": )[\d.]+', r"\1T", text)


@pytest.mark.timeout(180)
def test_start_is_parsed_and_run_by_its_host(no_leftover_daemons, tmp_path):
    """`start` hands its whole command line to the host it started first thing
    (cli/quick.py, start): its own process imports nothing heavy, and it prints
    what the whole command line prints, for a session, its --json, a usage
    error, arguments the launch refuses and a launch that fails."""
    import shutil

    shutil.copy(PROGRAMS / "py_basic.py", tmp_path / "py_basic.py")
    tdb(tmp_path, "sessions")  # the whole command line checks the settings once
    cases = [(0, ["start", "--stop-on-entry", "py_basic.py"]),
             (0, ["start", "--stop-on-entry", "--json", "py_basic.py", "--", "--json"]),
             (2, ["start", "--bogus", "py_basic.py"]), (1, ["start"]), (1, ["start", "missing.py"]),
             (1, ["start", "--session", "../x", "py_basic.py"]),
             (1, ["start", "--json", "missing.py"])]
    for code, args in cases:
        rc, out, err, modules = run_probe(tmp_path, *args)
        assert "tui_debugger.cli.full" not in modules, args
        assert [m for m in heavy_in(modules) if m.split(".")[0] != "typing"] == [], args
        if rc == 0:
            tdb(tmp_path, "stop")
        again = full(tmp_path, *args)
        if again.returncode == 0:
            tdb(tmp_path, "stop")
        assert (rc, _same_run(out), err) == (again.returncode, _same_run(again.stdout),
                                             again.stderr), args
        assert rc == code, (args, err)
    rc, out, _, _ = run_probe(tmp_path, "start", "--stop-on-entry", "py_basic.py")
    assert rc == 0 and "Stopped (entry)" in out, out
    tdb(tmp_path, "stop")
