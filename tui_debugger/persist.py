"""Breakpoints that outlive their session.

They are kept per project (the program's working directory) and per program,
in one JSON file per project under the user's state directory
(platformdirs' user_state_dir, or TUI_DEBUGGER_STATE_DIR / `state_dir`):

    breakpoints/<folder name>-<hash of its path>.json
    {"version": 1, "cwd": "/home/me/proj",
     "programs": {"/home/me/proj/app.py": {"saved_at": 1732000000.0,
                                            "breakpoints": [BreakpointSpec, ...]}}}

A launch restores the program's saved breakpoints before the program starts
(conditions, hit conditions, log messages and the enabled state included),
then every change of the session's registry rewrites the entry, so removing
them all (`break remove --all`, from any front end) clears it. A saved
breakpoint whose file is gone is skipped with a note in the output, and is
dropped from the file at the next save. Writes are atomic (a temporary file
renamed over the old one) under a lock, since two sessions of one project may
save at once.
"""

import contextlib
import fcntl
import hashlib
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from pydantic import BaseModel, Field, ValidationError

from backends.errors import DebuggerError
from backends.models import BreakpointSpec, empty_list

from .config import settings
from .events import Breakpoints, ExceptionFilters

if TYPE_CHECKING:
    from .events import SessionEvent
    from .session import Session

FORMAT_VERSION = 1
RESTORED_BY = "restored"  # `set_by` of breakpoints brought back from a previous session


class SkippedBreakpoint(BaseModel):
    spec: BreakpointSpec
    reason: str


class RestoreReport(BaseModel):
    restored: list[int] = Field(default_factory=empty_list)  # session breakpoint ids
    skipped: list[SkippedBreakpoint] = Field(default_factory=empty_list)


def state_dir() -> Path:
    configured = os.environ.get("TUI_DEBUGGER_STATE_DIR") or settings().state_dir
    if configured:
        return Path(os.path.expanduser(configured))
    from platformdirs import user_state_dir

    return Path(user_state_dir("tui-debugger", appauthor=False))


def project_file(cwd: str) -> Path:
    cwd = os.path.normpath(os.path.abspath(cwd))
    digest = hashlib.sha256(cwd.encode()).hexdigest()[:16]
    slug = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(cwd) or "root")[:40]
    return state_dir() / "breakpoints" / f"{slug}-{digest}.json"


def _key(program: str) -> str:
    return os.path.normpath(os.path.abspath(program))


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        # A damaged file must not stop a launch; the next save replaces it.
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("programs"), dict):
        return {}
    return data


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # One lock for the folder: saves are rare and small, and no lock file is left per project.
    with open(path.parent / ".lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _write_atomic(path: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def load(cwd: str, program: str) -> list[BreakpointSpec]:
    """The saved breakpoints of `program` in the project at `cwd`."""
    entry = _read(project_file(cwd)).get("programs", {}).get(_key(program), {})
    specs = []
    for raw in entry.get("breakpoints", []) if isinstance(entry, dict) else []:
        try:
            specs.append(BreakpointSpec.model_validate(raw))
        except ValidationError:
            continue  # written by a newer or older version; skip what we cannot read
    return specs


def load_exception_filters(cwd: str, program: str) -> list[str] | None:
    """The exception filters saved for `program` (None: never chosen, the adapter's defaults)."""
    entry = _read(project_file(cwd)).get("programs", {}).get(_key(program), {})
    filters = entry.get("exceptionFilters") if isinstance(entry, dict) else None
    if isinstance(filters, list) and all(isinstance(f, str) for f in filters):
        return filters
    return None


def save(cwd: str, program: str, specs: list[BreakpointSpec],
         exception_filters: list[str] | None = None) -> None:
    """Replace the saved breakpoints (and exception filters, when chosen) of
    `program`; nothing to save removes its entry."""
    path = project_file(cwd)
    with _locked(path):
        data = _read(path) or {"version": FORMAT_VERSION, "cwd": os.path.abspath(cwd), "programs": {}}
        programs = data["programs"]
        if specs or exception_filters is not None:
            programs[_key(program)] = {
                "saved_at": time.time(),
                "breakpoints": [s.model_dump(mode="json", exclude_defaults=True) for s in specs],
            }
            if exception_filters is not None:
                programs[_key(program)]["exceptionFilters"] = list(exception_filters)
        else:
            programs.pop(_key(program), None)
        if programs:
            _write_atomic(path, data)
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def clear(cwd: str, program: str | None = None) -> None:
    """Forget the saved breakpoints of one program, or of the whole project."""
    if program is not None:
        save(cwd, program, [])
        return
    path = project_file(cwd)
    with _locked(path):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


# ============================================================================ sessions


def add_note(session: "Session", text: str) -> None:
    """A debugger message in the session's output, seen by every front end."""
    if not text.endswith("\n"):
        text += "\n"
    session.add_output("console", text)


def _same_place(a: BreakpointSpec, b: BreakpointSpec) -> bool:
    if a.function or b.function:
        return a.function == b.function
    return a.path == b.path and a.line == b.line


async def restore(session: "Session", program: str, cwd: str) -> RestoreReport:
    """Add the saved breakpoints of `program` to the session (before launch)."""
    report = RestoreReport()
    for spec in load(cwd, program):
        if any(_same_place(spec, bp.spec) for bp in session.breakpoints.values()):
            continue
        if spec.path and not os.path.isfile(spec.path):
            report.skipped.append(SkippedBreakpoint(spec=spec, reason="the file no longer exists"))
            continue
        try:
            bp = await session.add_breakpoint(spec, RESTORED_BY)
        except DebuggerError as exc:
            report.skipped.append(SkippedBreakpoint(spec=spec, reason=exc.message))
            continue
        report.restored.append(bp.id)
    name = os.path.basename(program)
    if report.restored:
        add_note(session, f"Restored {len(report.restored)} breakpoint(s) from the last session "
                 f"of {name} (`break remove --all` forgets them).")
        session.record_activity("session", "breakpoints_restored",
                                f"{len(report.restored)} from the last session of {name}")
    for skipped in report.skipped:
        where = skipped.spec.function or f"{skipped.spec.path}:{skipped.spec.line}"
        add_note(session, f"Skipped the saved breakpoint at {where}: {skipped.reason}.")
    return report


class BreakpointSaver:
    """Saves the session's breakpoints whenever its registry changes."""

    def __init__(self, session: "Session", program: str, cwd: str):
        self.session = session
        self.program = program
        self.cwd = cwd
        self._last: str | None = None
        self.failed: str | None = None

    def snapshot(self) -> list[BreakpointSpec]:
        # The session's own one-shot breakpoints (run to a line, stop at main) are not the user's.
        return [bp.spec for bp in sorted(self.session.breakpoints.values(), key=lambda b: b.id)
                if bp.set_by != "session"]

    def save_now(self) -> None:
        specs = self.snapshot()
        filters = self.session.exception_filters
        text = json.dumps([[s.model_dump(mode="json") for s in specs], filters], sort_keys=True)
        if text == self._last:
            return  # hit counts and verified states change often; the specs rarely
        try:
            save(self.cwd, self.program, specs, filters)
        except OSError as exc:
            if self.failed is None:
                add_note(self.session, f"Could not save breakpoints to {project_file(self.cwd)}: "
                         f"{exc}. They last only as long as this session.")
            self.failed = str(exc)
            return
        self._last = text
        self.failed = None

    def __call__(self, event: "SessionEvent") -> None:
        if isinstance(event, (Breakpoints, ExceptionFilters)):
            self.save_now()


async def track(session: "Session", program: str, cwd: str,
                restore_saved: bool = True) -> RestoreReport | None:
    """Restore the saved breakpoints of `program` into `session` (unless not
    `restore_saved`: a run with breakpoints of its own, an agent's listed ones,
    then saves its own in their place) and keep them saved from now on. Does
    nothing when persist_breakpoints is off."""
    if not settings().persist_breakpoints:
        return None
    report = await restore(session, program, cwd) if restore_saved else RestoreReport()
    filters = load_exception_filters(cwd, program)
    if filters is not None and session.exception_filters is None:
        session.exception_filters = filters  # applied with the breakpoints, before the run
    saver = BreakpointSaver(session, program, cwd)
    # What is on disk now; the session may already differ (breakpoints asked for
    # at launch took the place of saved ones), and then it is saved at once.
    saver._last = json.dumps([[s.model_dump(mode="json") for s in load(cwd, program)], filters],
                             sort_keys=True) if not report.skipped else None
    saver.save_now()
    session.add_listener(saver)
    session.metadata["breakpoint_saver"] = saver
    return report


__all__ = [
    "BreakpointSaver", "RestoreReport", "SkippedBreakpoint", "add_note", "clear", "load", "load_exception_filters",
    "project_file", "restore", "save", "state_dir", "track",
]
