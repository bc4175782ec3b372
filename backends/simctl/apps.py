"""Which process: the app's pid from the simulator's launchd, and its executable name.

`xcrun simctl spawn UDID launchctl list` prints a tab-separated table with a
header (`PID\tStatus\tLabel`). A `-` pid is a job that is loaded but not running.
An app's job is labelled `UIKitApplication:<bundle id>[<4 hex>][rb-legacy]`; both
bracketed parts belong to launchd (an instance tag and a role), so the bundle id
is exactly what lies between the colon and the first `[`. Matching by substring
would take `com.example.App` for `com.example.AppWidget`.
"""

from __future__ import annotations

import os
import plistlib
from dataclasses import dataclass

from ..errors import CommandFailed, InvalidInput
from .xcrun import DEFAULT_TIMEOUT, XcrunResult, run_xcrun

APP_LABEL_PREFIX = "UIKitApplication:"


@dataclass(frozen=True)
class LaunchdJob:
    pid: int | None  # None: loaded, not running
    status: str
    label: str

    @property
    def bundle_id(self) -> str | None:
        if not self.label.startswith(APP_LABEL_PREFIX):
            return None
        rest = self.label[len(APP_LABEL_PREFIX):]
        return rest.split("[", 1)[0].strip() or None


def parse_launchctl_list(text: str) -> list[LaunchdJob]:
    jobs: list[LaunchdJob] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        parts = line.split("\t") if "\t" in line else line.split(None, 2)
        if len(parts) < 3:
            continue
        pid_text, status, label = parts[0].strip(), parts[1].strip(), parts[2].strip()
        if pid_text == "PID" and label == "Label":
            continue
        if pid_text == "-":
            pid = None
        else:
            try:
                pid = int(pid_text)
            except ValueError:
                continue
            if pid <= 0:
                pid = None
        jobs.append(LaunchdJob(pid, status, label))
    return jobs


def app_jobs(jobs: list[LaunchdJob], bundle_id: str) -> list[LaunchdJob]:
    exact = [j for j in jobs if j.bundle_id == bundle_id]
    if exact:
        return exact
    # Bundle ids are case-insensitive on iOS; launchd keeps the spelling of Info.plist.
    return [j for j in jobs if j.bundle_id and j.bundle_id.lower() == bundle_id.lower()]


def _simctl_device_error(result: XcrunResult, udid: str, doing: str) -> Exception:
    reason = result.reason()
    if reason.startswith("Invalid device"):
        return InvalidInput(
            f"simctl knows no simulator {udid} ({reason}). List the simulators with "
            "`xcrun simctl list devices available` and pass simulatorId or simulatorName.",
            udid=udid,
        )
    if "current state: Shutdown" in reason or "current state: Shutting" in reason:
        return InvalidInput(
            f"Simulator {udid} is not booted, so simctl could not {doing}. Boot it with "
            f"`xcrun simctl boot {udid}`, launch the app, then attach.",
            udid=udid,
        )
    return CommandFailed(
        f"Could not {doing} on simulator {udid}: simctl said {reason!r}. Check that "
        f"`xcrun {' '.join(result.argv[1:])}` works in a terminal.",
        udid=udid, exit_code=result.returncode, stderr=result.stderr[-2000:],
    )


async def list_launchd_jobs(
    xcrun: str, udid: str, *, timeout: float = DEFAULT_TIMEOUT
) -> list[LaunchdJob]:
    result = await run_xcrun(xcrun, ["simctl", "spawn", udid, "launchctl", "list"], timeout=timeout)
    if not result.ok:
        raise _simctl_device_error(result, udid, "list its processes")
    return parse_launchctl_list(result.stdout)


def not_running_error(udid: str, bundle_id: str, known: bool) -> InvalidInput:
    seen = "is not running" if known else "has not run since the simulator booted"
    return InvalidInput(
        f"App {bundle_id} {seen} on simulator {udid}. Launch it with "
        f"`xcrun simctl launch {udid} {bundle_id}`, or pass waitFor to attach as soon as "
        "it starts.",
        udid=udid, bundle_id=bundle_id,
    )


def find_app_pid(jobs: list[LaunchdJob], udid: str, bundle_id: str) -> int:
    matching = app_jobs(jobs, bundle_id)
    running = [j.pid for j in matching if j.pid is not None]
    if not running:
        raise not_running_error(udid, bundle_id, known=bool(matching))
    # launchd keeps one job per app instance; a relaunch lists the new one last.
    return running[-1]


async def resolve_app_pid(
    xcrun: str, udid: str, bundle_id: str, *, timeout: float = DEFAULT_TIMEOUT
) -> int:
    """The pid of the running app `bundle_id` on simulator `udid`."""
    jobs = await list_launchd_jobs(xcrun, udid, timeout=timeout)
    return find_app_pid(jobs, udid, bundle_id)


async def app_bundle_path(
    xcrun: str, udid: str, bundle_id: str, *, timeout: float = DEFAULT_TIMEOUT
) -> str:
    result = await run_xcrun(
        xcrun, ["simctl", "get_app_container", udid, bundle_id, "app"], timeout=timeout
    )
    path = result.stdout.strip()
    if result.ok and path:
        return path
    reason = result.reason()
    if reason.startswith("Invalid device") or "current state" in reason:
        raise _simctl_device_error(result, udid, f"find the app {bundle_id}")
    raise InvalidInput(
        f"App {bundle_id} is not installed on simulator {udid} (simctl: {reason}). Install "
        f"it with `xcrun simctl install {udid} path/to/App.app` (or build and run it from "
        "Xcode), then attach.",
        udid=udid, bundle_id=bundle_id,
    )


def executable_name(app_path: str) -> str:
    """CFBundleExecutable from the bundle's Info.plist (binary or XML), else the
    bundle's own name, which is what Xcode names the executable by default."""
    try:
        with open(os.path.join(app_path, "Info.plist"), "rb") as f:
            info = plistlib.load(f)
        name = info.get("CFBundleExecutable") if isinstance(info, dict) else None
        if isinstance(name, str) and name.strip():
            return name.strip()
    except (OSError, plistlib.InvalidFileException, ValueError):
        pass
    base = os.path.basename(app_path.rstrip("/"))
    return base[:-4] if base.endswith(".app") else base


async def app_executable(
    xcrun: str, udid: str, bundle_id: str, *, timeout: float = DEFAULT_TIMEOUT
) -> tuple[str, str]:
    """(process name, executable path) of an installed app. The name is what LLDB's
    wait-for matches; the path (iOS bundles are flat: the executable sits at the top
    of the .app) lets LLDB load the app's symbols before the process exists."""
    bundle_path = await app_bundle_path(xcrun, udid, bundle_id, timeout=timeout)
    name = executable_name(bundle_path)
    return name, os.path.join(bundle_path, name)


async def app_executable_name(
    xcrun: str, udid: str, bundle_id: str, *, timeout: float = DEFAULT_TIMEOUT
) -> str:
    """The process name the app will run under: LLDB's wait-for matches on it."""
    return (await app_executable(xcrun, udid, bundle_id, timeout=timeout))[0]
