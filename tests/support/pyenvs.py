"""Virtual environments of other Pythons than the one tui-debugger runs on,
each with a third-party package from PyPI, as a user's project has them.

Made once and kept under tests/.cache (pip's download is the slow part); a
venv whose interpreter moved or whose package is gone is made again.
"""

from __future__ import annotations

import fcntl
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import ROOT, require

CACHE = ROOT / "tests" / ".cache" / "venvs"
#: small, pure Python, no dependencies of its own
PACKAGE = "tabulate"


def base_python(version: str) -> str:
    """pyenv's interpreter of `version` (3.12, 3.13), or the one on PATH."""
    roots = [os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv"), "/root/.pyenv"]
    for root in roots:
        found = sorted(glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", "python3")))
        if found:
            return found[-1]
    on_path = shutil.which(f"python{version}")
    require(bool(on_path), f"Python {version} (pyenv install {version})")
    return str(on_path)


def project_venv(version: str) -> Path:
    """A venv of Python `version` with PACKAGE installed; its directory."""
    python = base_python(version)
    venv = CACHE / f"py{version}-{PACKAGE}"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _works(venv):
            return venv
        shutil.rmtree(venv, ignore_errors=True)
        # --without-pip, then our pip installs into it: ensurepip alone costs ~15 s.
        subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True,
                       capture_output=True, timeout=120)
        # Our pip writes the wheel straight into the venv's site-packages, running
        # under our Python only. `pip --python VENV` would run our pip under the venv's
        # Python instead, and an older pip (Debian's 23.0 in a fresh scripts/test venv)
        # dies there under 3.12+ (pkgutil.ImpImporter is gone).
        site = subprocess.run(
            [str(venv / "bin" / "python"), "-c",
             "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True, capture_output=True, text=True, timeout=60).stdout.strip()
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
             "--target", site, "--python-version", version, "--only-binary=:all:",
             PACKAGE],
            capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            raise AssertionError(f"pip could not install {PACKAGE} into a Python {version} "
                                 f"venv:\n{done.stdout}\n{done.stderr}")
        assert _works(venv)
        return venv


def _works(venv: Path) -> bool:
    python = venv / "bin" / "python"
    if not python.exists():
        return False
    done = subprocess.run([str(python), "-c", f"import {PACKAGE}"], capture_output=True,
                          timeout=60)
    return done.returncode == 0
