"""The Node test programs: where they are, their `// @mark` lines, and the
TypeScript sources compiled for the source-map tests (the `node` and
`ts_builds` fixtures are in tests/conftest.py)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from tests.support import one_at_a_time, require, unavailable

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "tests" / "programs" / "node"
BUILD_DIR = ROOT / "tests" / "programs" / "build"
SESSION_JS = NODE_DIR / "session.js"
THROWS_JS = NODE_DIR / "throws.js"
SPIN_JS = NODE_DIR / "spin.js"
SCRIPT_JS = NODE_DIR / "script_target.js"
APP_TS = NODE_DIR / "src" / "app.ts"
GEOMETRY_TS = NODE_DIR / "src" / "geometry.ts"


def mark(path: Path, name: str) -> int:
    """The line holding `// @mark name`."""
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if re.search(rf"@mark {re.escape(name)}\b", text):
            return number
    raise AssertionError(f"no @mark {name} in {path}")


def _tsc() -> list[str] | None:
    local = NODE_DIR / "node_modules" / ".bin" / "tsc"
    if local.exists():
        return [str(local)]
    found = shutil.which("tsc")
    return [found] if found else None


def _up_to_date(builds: dict[str, Path]) -> bool:
    sources = [*NODE_DIR.glob("src/*.ts"), NODE_DIR / "tsconfig.json"]
    newest_source = max(p.stat().st_mtime for p in sources)
    outputs = [out / f"{src.stem}.js" for out in builds.values() for src in sources[:-1]]
    outputs.append(builds["map"] / "app.js.map")
    return all(p.exists() and p.stat().st_mtime >= newest_source for p in outputs)


def build_typescript() -> dict[str, Path]:
    """Compile src/*.ts twice: once with inline source maps, once with .map files
    (skipped while the outputs are newer than the sources)."""
    builds = {"inline": BUILD_DIR / "node-ts-inline", "map": BUILD_DIR / "node-ts-map"}
    if _up_to_date(builds):
        return builds
    with one_at_a_time("node-build"):
        if _up_to_date(builds):
            return builds
        return _build_typescript(builds)


def _build_typescript(builds: dict[str, Path]) -> dict[str, Path]:
    tsc = _tsc()
    if tsc is None:
        npm = shutil.which("npm")
        require(npm is not None, "npm (to install typescript for the TypeScript tests)")
        done = subprocess.run(
            [str(npm), "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR,
            capture_output=True, text=True, timeout=300,
        )
        if done.returncode != 0:
            unavailable(f"npm ci in {NODE_DIR} failed: {done.stderr[-1500:]}")
        tsc = _tsc()
        assert tsc is not None, "npm ci did not install tsc"
    flags = {"inline": ["--inlineSourceMap"], "map": ["--sourceMap"]}
    procs = [
        subprocess.Popen(
            [*tsc, "-p", str(NODE_DIR / "tsconfig.json"), "--outDir", str(out), *flags[kind]],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        for kind, out in builds.items()
    ]
    for proc in procs:
        output, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, f"tsc failed:\n{output}"
    assert (builds["map"] / "app.js.map").exists()
    assert "sourceMappingURL=data:" in (builds["inline"] / "app.js").read_text()
    return builds
