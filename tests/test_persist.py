"""Breakpoints saved per project and program, restored by the next session."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from backends.models import BreakpointSpec
from tui_debugger import persist
from tui_debugger.config import reload_settings
from tui_debugger.session import Session

ROOT = Path(__file__).resolve().parent.parent
PY_BASIC = ROOT / "tests" / "programs" / "py_basic.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    shutil.copy(PY_BASIC, proj / "app.py")
    (proj / "helper.py").write_text("def helper():\n    return 1\n")
    return proj


# ============================================================================ the store


def test_save_load_round_trip_keeps_every_field(project: Path):
    app = str(project / "app.py")
    specs = [
        BreakpointSpec(path=app, line=15, condition="value > 1"),
        BreakpointSpec(path=app, line=20, hit_condition=">= 2", log_message="acc={acc}"),
        BreakpointSpec(function="total", enabled=False),
    ]
    persist.save(str(project), app, specs)
    assert persist.load(str(project), app) == specs
    # Keyed by the program, then by the project directory.
    assert persist.load(str(project), str(project / "helper.py")) == []
    other = project / "sub"
    other.mkdir()
    assert persist.load(str(other), app) == []
    assert persist.project_file(str(project)) != persist.project_file(str(other))


def test_the_state_dir_follows_the_environment(project: Path, monkeypatch, tmp_path: Path):
    monkeypatch.setenv("TUI_DEBUGGER_STATE_DIR", str(tmp_path / "elsewhere"))
    reload_settings()
    app = str(project / "app.py")
    persist.save(str(project), app, [BreakpointSpec(path=app, line=3)])
    assert persist.project_file(str(project)).is_relative_to(tmp_path / "elsewhere")
    assert persist.project_file(str(project)).exists()


def test_writes_are_atomic_and_an_empty_list_clears(project: Path):
    app = str(project / "app.py")
    helper = str(project / "helper.py")
    persist.save(str(project), app, [BreakpointSpec(path=app, line=3)])
    persist.save(str(project), helper, [BreakpointSpec(path=helper, line=2)])
    path = persist.project_file(str(project))
    leftovers = [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    data = json.loads(path.read_text())
    assert set(data["programs"]) == {app, helper}
    persist.save(str(project), app, [])
    assert persist.load(str(project), app) == []
    assert persist.load(str(project), helper) != []
    persist.clear(str(project), helper)
    assert not path.exists()


def test_a_damaged_file_is_ignored_and_replaced(project: Path):
    app = str(project / "app.py")
    path = persist.project_file(str(project))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    assert persist.load(str(project), app) == []
    persist.save(str(project), app, [BreakpointSpec(path=app, line=3)])
    assert persist.load(str(project), app) == [BreakpointSpec(path=app, line=3)]


# ============================================================================ with a session


async def test_a_session_saves_on_every_change_and_the_next_restores(project: Path):
    app = str(project / "app.py")
    helper = project / "helper.py"
    first = Session("first")
    first.cwd = str(project)
    assert (await persist.track(first, app, str(project))).restored == []
    await first.add_breakpoint(BreakpointSpec(path=app, line=15, condition="value > 1"), "cli")
    await first.add_breakpoint(BreakpointSpec(path=str(helper), line=2, log_message="hi"), "mcp")
    bp = await first.add_breakpoint(BreakpointSpec(path=app, line=20, hit_condition="2"), "tui")
    await first.update_breakpoint(bp.id, "tui", enabled=False)
    saved = persist.load(str(project), app)
    assert [(s.line, s.condition, s.hit_condition, s.log_message, s.enabled) for s in saved] == [
        (15, "value > 1", None, None, True), (2, None, None, "hi", True), (20, None, "2", None, False)]

    helper.unlink()  # a file that went away is skipped, with a note
    second = Session("second")
    second.cwd = str(project)
    report = await persist.track(second, app, str(project))
    assert len(report.restored) == 2
    assert [s.spec.path for s in report.skipped] == [str(helper)]
    specs = [bp.spec for bp in second.breakpoints.values()]
    assert specs == [saved[0], saved[2]]
    assert all(bp.set_by == persist.RESTORED_BY for bp in second.breakpoints.values())
    notes = "".join(e.text for e in second.output.read(0, 100, 100_000).entries)
    assert "Restored 2 breakpoint(s)" in notes
    assert f"Skipped the saved breakpoint at {helper}:2: the file no longer exists" in notes

    await second.remove_breakpoints(None, "mcp")
    assert persist.load(str(project), app) == []


async def test_persistence_can_be_turned_off(project: Path, monkeypatch):
    app = str(project / "app.py")
    persist.save(str(project), app, [BreakpointSpec(path=app, line=3)])
    monkeypatch.setenv("TUI_DEBUGGER_PERSIST_BREAKPOINTS", "false")
    reload_settings()
    session = Session("off")
    assert await persist.track(session, app, str(project)) is None
    assert session.breakpoints == {}


# ============================================================================ through the CLI, with debugpy


def _cli(capsys, *argv: str) -> str:
    from tui_debugger.cli.main import main

    code = main(list(argv))
    out = capsys.readouterr()
    assert code == 0, f"{argv} -> {code}: {out.out}{out.err}"
    return out.out


def test_breakpoints_survive_a_restart_through_the_cli(project: Path, capsys, monkeypatch,
                                                       no_leftover_processes):
    monkeypatch.chdir(project)
    _cli(capsys, "start", "--stop-on-entry", "app.py")
    try:
        _cli(capsys, "break", "add", "app.py:15", "--condition", "value > 1")
        _cli(capsys, "break", "add", "app.py:20", "--hit-count", "2", "--log", "acc={acc}")
        _cli(capsys, "break", "add", "--function", "total", "--disabled")
    finally:
        _cli(capsys, "stop")

    _cli(capsys, "start", "app.py")
    try:
        listed = json.loads(_cli(capsys, "break", "list", "--json"))["breakpoints"]
        got = [(os.path.basename(b["spec"]["path"] or ""), b["spec"]["line"], b["spec"]["function"],
                b["spec"]["condition"], b["spec"]["hit_condition"], b["spec"]["log_message"],
                b["spec"]["enabled"], b["set_by"]) for b in listed]
        assert got == [
            ("app.py", 15, None, "value > 1", None, None, True, "restored"),
            ("app.py", 20, None, None, "2", "acc={acc}", True, "restored"),
            ("", None, "total", None, None, None, False, "restored"),
        ]
        # Restored before the program started, so the first stop is the conditional one.
        _cli(capsys, "await", "--timeout", "20")
        status = json.loads(_cli(capsys, "status", "--json"))
        assert status["state"] == "stopped"
        assert status["stop"]["location"]["line"] == 15
        assert "Restored 3 breakpoint(s)" in _cli(capsys, "output")
        _cli(capsys, "break", "remove", "--all")
    finally:
        _cli(capsys, "stop")
    # Saved by the session's host, in the state directory it inherited.
    assert persist.load(str(project), str(project / "app.py")) == []
    assert not persist.project_file(str(project)).exists()
