"""A program whose Python is pyenv's shim on PATH (no venv active or above
it) runs under the interpreter the shim would pick for the program's
directory, run straight: the shim's bash start (~80 ms) is paid at most once
per directory and version file, not at the probe and again at the launch.
Against the machine's real pyenv (its 3.12 and 3.13, as tests/support/pyenvs
finds them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from backends import python_env
from tests.support import require
from tests.support.pyenvs import base_python

PROGRAM = """\
import json, os, sys
print("RAN " + json.dumps({"version": list(sys.version_info[:2]), "exe": sys.executable,
                           "path0": os.environ["PATH"].split(os.pathsep)[0]}))
"""


def _pyenv_shims() -> Path:
    python = Path(base_python("3.12"))  # .../versions/3.12.x/bin/python3
    shims = python.parents[3] / "shims"
    require((shims / "python3").is_file() and python_env._is_pyenv_shim(str(shims / "python3")),
            f"pyenv's shims ({shims}/python3)")
    return shims


def _project(tmp_path: Path, name: str, version: str) -> Path:
    project = tmp_path / name
    project.mkdir()
    # the full version pyenv has installed, as `pyenv local` writes it
    (project / ".python-version").write_text(Path(base_python(version)).parents[1].name + "\n")
    (project / "main.py").write_text(PROGRAM)
    return project


def _env(shims: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYENV_VERSION", "PYENV_DIR")}
    env["PATH"] = os.pathsep.join([str(shims), "/usr/bin", "/bin"])
    return env


def test_the_shims_choice_is_run_straight_per_directory(isolated_runtime, tmp_path, monkeypatch):
    shims = _pyenv_shims()
    env = _env(shims)
    a, b = _project(tmp_path, "a", "3.12"), _project(tmp_path, "b", "3.13")
    ran: list[list[str]] = []
    real_run = subprocess.run

    def counted(argv, *args, **kwargs):
        ran.append(list(argv))
        return real_run(argv, *args, **kwargs)

    monkeypatch.setattr(python_env.subprocess, "run", counted)
    python_env._pyenv_choices.clear()
    first = python_env.find_python(None, str(a), env=env, cwd=str(a))
    assert first.path == base_python("3.12"), first
    assert first.version.startswith("3.12.") and first.path_first == os.path.dirname(first.path)
    assert "pyenv" in first.source
    other = python_env.find_python(None, str(b), env=env, cwd=str(b))
    assert other.path == base_python("3.13") and other.version.startswith("3.13."), other
    shim_runs = [argv for argv in ran if argv[0] == str(shims / "python3")]
    assert len(shim_runs) == 2, ran  # one per directory
    again = python_env.find_python(None, str(a), env=env, cwd=str(a))
    assert again.path == first.path
    assert len([argv for argv in ran if argv[0] == str(shims / "python3")]) == 2, \
        "the shim was asked again for the same directory and version file"
    # The version file changed: asked again, and its new answer taken.
    (a / ".python-version").write_text(Path(base_python("3.13")).parents[1].name + "\n")
    changed = python_env.find_python(None, str(a), env=env, cwd=str(a))
    assert changed.path == base_python("3.13")
    # PYENV_VERSION wins over the file, as in pyenv.
    pinned = python_env.find_python(
        None, str(a), env={**env, "PYENV_VERSION": Path(base_python("3.12")).parents[1].name},
        cwd=str(a))
    assert pinned.path == base_python("3.12")


def test_a_launch_through_the_shim_runs_its_version_with_its_bin_first(isolated_runtime,
                                                                       tmp_path):
    shims = _pyenv_shims()
    project = _project(tmp_path, "proj", "3.13")
    env = _env(shims) | {k: v for k, v in os.environ.items() if k.startswith("TUI_DEBUGGER_")}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=project,
                              env=env, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)

    started = cli("start", "main.py")
    assert started.returncode == 0, started.stderr
    assert f"{base_python('3.13')} (pyenv's python3 on PATH)" in started.stdout, started.stdout
    cli("await")
    output = cli("output").stdout
    line = next((line for line in output.splitlines() if line.startswith("RAN ")), None)
    assert line is not None, output
    ran = json.loads(line[4:])
    assert ran["version"] == [3, 13], ran
    assert ran["exe"] == base_python("3.13")
    assert ran["path0"] == os.path.dirname(base_python("3.13")), ran
    cli("stop")
