"""What a launch pays before its first stop, and must pay once only: the
host's imports overlap its starter's (made before the spec is read), the
interpreter probe is kept across processes, and debugpy's processes do not
describe their environment to a log nobody keeps (docs/performance.md,
"Start-up to the first stop")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backends import python_env
from backends.early_adapter import NODELAY_DIR
from tui_debugger.host.early import daemon_argv


def _maps(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return ""


@pytest.mark.timeout(120)
def test_the_host_imports_what_runs_the_launch_before_its_spec_comes(isolated_runtime, tmp_path):
    # pydantic's compiled core is mapped into the host once pydantic is imported:
    # it must be there while the host still waits on its stdin for the spec.
    host = subprocess.Popen(daemon_argv(), cwd=tmp_path, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while "_pydantic_core" not in _maps(host.pid):
            assert host.poll() is None, host.stderr.read().decode()
            assert time.monotonic() < deadline, "the host did not import pydantic before its spec"
            time.sleep(0.05)
        assert host.poll() is None, "the host went on without a spec"
        host.stdin.close()  # no spec: a host its starter let go ends at once
        assert host.wait(timeout=30) == 0
        assert host.stdout.read() == b""
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()


def _probe_fresh(path: str) -> python_env.Interpreter:
    python_env._cache.clear()  # what a new process starts with
    return python_env.probe(path, "test")


def _runs(monkeypatch) -> list[list[str]]:
    ran: list[list[str]] = []
    real = subprocess.run

    def run(argv, *args, **kwargs):
        ran.append([str(a) for a in argv])
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(python_env.subprocess, "run", run)
    return ran


def test_the_interpreter_probe_is_kept_while_the_interpreter_is_the_same(isolated_runtime,
                                                                         tmp_path, monkeypatch):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = str(venv / "bin" / "python")
    ran = _runs(monkeypatch)
    first = _probe_fresh(python)
    assert len(ran) == 1 and first.prefix == str(venv)
    assert (Path(os.environ["TUI_DEBUGGER_STATE_DIR"]) / python_env.CACHE_FILE).is_file()
    again = _probe_fresh(python)
    assert len(ran) == 1, "the probe ran again for the same interpreter"
    assert (again.version, again.library_dirs, again.prefix) == (first.version, first.library_dirs,
                                                                first.prefix)
    # The venv made again (its pyvenv.cfg rewritten): asked again.
    cfg = venv / "pyvenv.cfg"
    cfg.write_text(cfg.read_text() + "\n")
    _probe_fresh(python)
    assert len(ran) == 2


def test_a_wrapper_of_an_interpreter_is_asked_each_time(isolated_runtime, tmp_path, monkeypatch):
    # pyenv's shim, or a script that execs a Python: its answer may depend on
    # where and with what environment it runs.
    wrapper = tmp_path / "python-wrapper"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    ran = _runs(monkeypatch)
    _probe_fresh(str(wrapper))
    _probe_fresh(str(wrapper))
    assert len(ran) == 2


_DESCRIBE = """
import json, sys
import importlib.metadata
listed = []
real = importlib.metadata.distributions
def distributions(*a, **k):
    listed.append(1)
    return real(*a, **k)
importlib.metadata.distributions = distributions
from debugpy.common import log
if len(sys.argv) > 1:
    log.to_file(filename=sys.argv[1])
log.describe_environment("test:")
print(json.dumps({"listed": len(listed),
                  "wrapped": hasattr(log.describe_environment, "__wrapped__")}))
"""


def _describe(env_extra: dict[str, str], *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": NODELAY_DIR, **env_extra}
    env.pop("DEBUGPY_LOG_DIR", None)
    done = subprocess.run([sys.executable, "-c", _DESCRIBE, *args], env=env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_debugpy_describes_its_environment_only_to_a_log_that_keeps_it(tmp_path):
    # No log records "info" (debugpy's default): the installed packages are not listed.
    assert _describe({}) == {"listed": 0, "wrapped": True}
    # A log that does: written as before.
    log_file = tmp_path / "debugpy.log"
    assert _describe({}, str(log_file)) == {"listed": 1, "wrapped": True}
    assert "Installed packages:" in log_file.read_text()
    # The way back to debugpy as it is.
    assert _describe({"TUI_DEBUGGER_PYDEVD_SPEEDUPS": "0"}) == {"listed": 1, "wrapped": False}


#: Chained after ours (the sitecustomize ours shadows runs too): notes each
#: `uname -p` run, and says at exit what debugpy's process imported.
_REPORT = """
import atexit, json, os, subprocess, sys

uname_p = []
_check_output = subprocess.check_output

def check_output(args, *a, **k):
    if list(args)[:2] == ["uname", "-p"]:
        uname_p.append(1)
    return _check_output(args, *a, **k)

subprocess.check_output = check_output

def _report():
    metadata = sys.modules.get("importlib.metadata")
    with open(os.environ["REPORT_TO"], "w") as out:
        json.dump({"log": "debugpy.common.log" in sys.modules,
                   "metadata_lazy": type(metadata).__name__ == "_LazyModule",
                   "uname_p": len(uname_p)}, out)

atexit.register(_report)
"""


def _debugpy_start(tmp_path: Path, argv: list[str], env_extra: dict[str, str]) -> dict:
    chained = tmp_path / "chained"
    chained.mkdir(exist_ok=True)
    (chained / "sitecustomize.py").write_text(_REPORT)
    report = tmp_path / "report.json"
    report.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([NODELAY_DIR, str(chained)]),
           "REPORT_TO": str(report), **env_extra}
    subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True,
                   timeout=60, stdin=subprocess.DEVNULL, cwd=tmp_path)
    return json.loads(report.read_text())


def test_debugpys_adapter_and_launcher_start_without_what_their_log_would_use(tmp_path):
    """debugpy's adapter and launcher import `importlib.metadata` lazily and
    never run `uname -p` for a log header nobody writes; the program, and
    debugpy left as it is, pay as before."""
    import debugpy

    lean = {"log": True, "metadata_lazy": True, "uname_p": 0}
    as_shipped = {"log": True, "metadata_lazy": False, "uname_p": 1}
    adapter = ["-P", "-m", "debugpy.adapter", "--help"]
    assert _debugpy_start(tmp_path, adapter, {}) == lean
    # The launcher as the adapter runs it (here with no adapter to reach: the
    # same start-up, then it stops at the refused connection).
    launcher = [os.path.join(os.path.dirname(debugpy.__file__), "launcher"), "1", "--", "x.py"]
    assert _debugpy_start(tmp_path, launcher, {}) == lean
    assert _debugpy_start(tmp_path, ["-X", "utf8", *launcher], {}) == lean
    # The program under debugpy: as it is.
    program = ["-c", "from debugpy.common import log"]
    assert _debugpy_start(tmp_path, program, {}) == as_shipped
    assert _debugpy_start(tmp_path, adapter, {"TUI_DEBUGGER_PYDEVD_SPEEDUPS": "0"}) == as_shipped


#: Opened on demand, after the first stop is on screen: the TUI's start does
#: not import them (docs/performance.md, "A lighter first screen").
ON_DEMAND = ("attach_dialog", "breakpoint_dialog", "command_form", "exception_dialog",
             "help_screen", "memory_screen", "open_file_dialog", "quit_dialog",
             "session_picker", "value_dialog")


def test_the_tuis_start_imports_no_dialog(tmp_path):
    probe = ("import sys, tui_debugger.cli.full, tui_debugger.tui.app; "
             "print(' '.join(m for m in sys.modules if m.startswith('tui_debugger.tui.widgets.')"
             " or m == 'textual.widgets._text_area'))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60, check=True).stdout.split()
    loaded = {m.rsplit(".", 1)[1] for m in out}
    assert "source_view" in loaded  # the probe sees the TUI's widgets
    assert not loaded & set(ON_DEMAND), sorted(loaded & set(ON_DEMAND))
    # Nor Textual's TextArea (~8 ms), which no pane of the first screen is.
    assert "_text_area" not in loaded, out


def probe_output(tmp_path, probe: str) -> str:
    """What `python -c probe` prints, run from an empty directory with this
    checkout first on the path."""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_no_process_of_ours_reads_every_distribution_for_pydantic_plugins(tmp_path):
    # The first model built looked for pydantic plugins in every installed
    # distribution's entry points (4-5 ms of each process's start).
    probe = ("import importlib.metadata as md\n"
             "seen = []\n"
             "real = md.entry_points\n"
             "md.entry_points = lambda *a, **k: seen.append(k) or real(*a, **k)\n"
             "from backends.models import SourceLocation\n"
             "from tui_debugger.commands import registry\n"
             "SourceLocation(path='x.py', line=1)\n"
             "registry.get('next').args.model_validate({})\n"
             "print(seen)\n")
    out = probe_output(tmp_path, probe)
    assert out.strip() == "[]", out


def test_pydantics_plugin_loader_is_not_imported_by_our_processes(tmp_path):
    # It imports importlib.metadata (10-11 ms) only to look for plugins; our
    # processes have none to find (backends/models.py). (Pygments before 2.20
    # imports importlib.metadata too, so the probe asks for pydantic's loader.)
    probe = ("import sys, tui_debugger.cli.full, tui_debugger.tui.app, tui_debugger.host.daemon\n"
             "from backends.models import SourceLocation\n"
             "from tui_debugger.commands import registry\n"
             "SourceLocation(path='x.py', line=1)\n"
             "registry.get('next').args.model_validate({})\n"
             "from pydantic.plugin._loader import get_plugins\n"
             "loader = sys.modules['pydantic.plugin._loader']\n"
             "print('entry_points' in vars(loader), list(get_plugins()))\n")
    out = probe_output(tmp_path, probe)
    assert out.split() == ["False", "[]"], out


def test_the_tuis_start_imports_no_attrs_and_rich_pretty_still_works(tmp_path):
    # Textual's RichLog imports rich.pretty, which imported attrs (17 ms of the
    # TUI's start) to pretty-print attrs classes (tui/widgets/rich_log.py).
    probe = ("import sys, tui_debugger.cli.full, tui_debugger.tui.app\n"
             "assert 'rich.pretty' in sys.modules\n"
             "print('attr' in sys.modules)\n"
             "from rich.pretty import pretty_repr\n"
             "print(pretty_repr({'a': [1, 2]}))\n"
             "import attr\n"  # still there for whoever wants it
             "print(attr.__name__)\n")
    out = probe_output(tmp_path, probe)
    assert out.split("\n")[:3] == ["False", "{'a': [1, 2]}", "attr"], out


def test_our_models_are_built_from_evaluated_annotations_and_cheap_factories(tmp_path):
    # Each field annotation given as a string (`from __future__ import
    # annotations`) was compiled and evaluated by pydantic at its class's
    # creation (~19 us a field, 700 of them: ~12 ms of each process's start),
    # and each `default_factory=list` had its signature parsed from its text at
    # every schema built (~0.1 ms a field). The model modules define their
    # classes in order instead, and use backends.models.empty_list.
    probe = (
        "import sys, pydantic, tui_debugger.cli.full, tui_debugger.tui.app, tui_debugger.host.daemon\n"
        "from tui_debugger.host.daemon import import_host_modules\n"
        "import_host_modules()\n"
        "import tui_debugger.launch_json, tui_debugger.cli.screen, backends.simctl.attach\n"
        "import backends.simctl.devices, backends.simctl.defaults\n"
        "seen, strings, builtin_factories = 0, [], []\n"
        "for name, module in list(sys.modules.items()):\n"
        "    if not name.startswith(('tui_debugger', 'backends')):\n"
        "        continue\n"
        "    for value in list(vars(module).values()):\n"
        "        if not (isinstance(value, type) and issubclass(value, pydantic.BaseModel)\n"
        "                and value.__module__ == name):\n"
        "            continue\n"
        "        seen += 1\n"
        "        for field, annotation in vars(value).get('__annotations__', {}).items():\n"
        "            if isinstance(annotation, str):\n"
        "                strings.append(f'{name}.{value.__name__}.{field}')\n"
        "        for field, info in value.model_fields.items():\n"
        "            if info.default_factory in (list, tuple):\n"
        "                builtin_factories.append(f'{name}.{value.__name__}.{field}')\n"
        "print(seen, strings, builtin_factories)\n")
    out = probe_output(tmp_path, probe).split(" ", 1)
    assert int(out[0]) > 100, out  # the probe sees our models
    assert out[1].strip() == "[] []", out
