"""Finding and running Xcode's `xcrun`.

Every simctl look-up goes through `run_xcrun`: an argument list, a timeout, and
stderr kept, because simctl says why it failed on stderr and nothing on stdout
(and its exit codes carry no stable meaning: 148 for an unknown device, 149 for
a shut-down one, 1 for an unknown subcommand).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from ..errors import CommandFailed, DependencyMissing, Timeout
from ..process import spawn

ENV_XCRUN = "TUI_DEBUGGER_XCRUN"

#: simctl answers in well under a second on a warm machine; the first call after an
#: Xcode update can take several seconds while Xcode checks itself.
DEFAULT_TIMEOUT = 20.0

_BOILERPLATE = (
    "An error was encountered processing the command",
    "Underlying error (domain=",
)


@dataclass
class XcrunResult:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def reason(self) -> str:
        """simctl's own sentence, without its `An error was encountered` wrapper."""
        return simctl_reason(self.stderr) or self.stdout.strip() or f"exit code {self.returncode}"


def simctl_reason(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        # Several subcommands word it "Invalid device: X", boot "Invalid device or device pair: X".
        if line.startswith("Invalid device"):
            return line
    meaningful = [line for line in lines if not line.startswith(_BOILERPLATE)]
    return " ".join(meaningful or lines)


def missing_xcrun_message() -> str:
    if sys.platform == "darwin":
        return (
            "xcrun was not found. Debugging iOS simulator apps needs Xcode: install it, "
            "then run `sudo xcode-select --switch /Applications/Xcode.app` "
            f"(or set {ENV_XCRUN} to the xcrun to use)."
        )
    return (
        "Debugging iOS simulator apps is macOS-only: it needs Xcode's xcrun, and this "
        f"{sys.platform} machine has none. To debug a local process, use `attach PID` instead."
    )


def find_xcrun() -> str:
    """TUI_DEBUGGER_XCRUN when set, else `xcrun` on PATH."""
    override = os.environ.get(ENV_XCRUN)
    if override:
        if os.path.isfile(override) and os.access(override, os.X_OK):
            return override
        raise DependencyMissing(
            f"{ENV_XCRUN}={override!r} is not an executable file. Point it at xcrun, "
            f"or unset it to use the xcrun on PATH.",
            xcrun=override,
        )
    found = shutil.which("xcrun")
    if not found:
        raise DependencyMissing(missing_xcrun_message(), platform=sys.platform)
    return found


async def run_xcrun(
    xcrun: str, args: list[str], *, timeout: float = DEFAULT_TIMEOUT
) -> XcrunResult:
    argv = [xcrun, *args]
    try:
        child = await spawn(argv, stdin=subprocess.DEVNULL, what="xcrun")
    except DependencyMissing as exc:
        raise DependencyMissing(missing_xcrun_message(), argv=argv) from exc
    try:
        out, err = await asyncio.wait_for(child.proc.communicate(), timeout)
    except asyncio.TimeoutError:
        await child.kill_group(grace=0.5)
        raise Timeout(
            f"`{' '.join(['xcrun', *args])}` did not answer within {timeout:g} s. Check that "
            "it works in a terminal; right after an Xcode update, run "
            "`xcodebuild -runFirstLaunch` once and try again.",
            argv=argv,
        ) from None
    except BaseException:
        await child.kill_group(grace=0.5)
        raise
    result = XcrunResult(
        argv, child.proc.returncode or 0,
        out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
    )
    if not result.ok:
        _raise_if_xcode_missing(result, args)
    return result


def _raise_if_xcode_missing(result: XcrunResult, args: list[str]) -> None:
    """xcrun's own complaints (not the tool's) mean Xcode is missing or half set up."""
    stderr = result.stderr
    tool = args[0] if args and not args[0].startswith("-") else None
    if tool and f'unable to find utility "{tool}"' in stderr:
        raise DependencyMissing(
            f"xcrun cannot find {tool}: it ships with Xcode, not with the Command Line "
            "Tools alone. Install Xcode, then run "
            "`sudo xcode-select --switch /Applications/Xcode.app`.",
            tool=tool, stderr=stderr[-500:],
        )
    if "invalid active developer path" in stderr or "missing DEVELOPER_DIR" in stderr:
        raise DependencyMissing(
            "xcrun has no developer directory: install Xcode and run "
            "`sudo xcode-select --switch /Applications/Xcode.app` (or fix DEVELOPER_DIR). "
            f"xcrun said: {simctl_reason(stderr)}",
            stderr=stderr[-500:],
        )


async def find_tool(xcrun: str, tool: str, *, timeout: float = DEFAULT_TIMEOUT) -> str:
    """`xcrun --find TOOL`: the path of a developer tool inside the selected Xcode."""
    result = await run_xcrun(xcrun, ["--find", tool], timeout=timeout)
    path = result.stdout.strip().splitlines()[-1].strip() if result.stdout.strip() else ""
    if not result.ok or not path:
        raise DependencyMissing(
            f"Xcode has no {tool} (`xcrun --find {tool}`: {result.reason()}). "
            + (
                "lldb-dap ships with Xcode 16 and later: update Xcode, or use the lldb-cli backend."
                if tool == "lldb-dap"
                else "Check the selected Xcode with `xcode-select -p`."
            ),
            tool=tool,
        )
    return path


def ensure_ok(result: XcrunResult, doing: str) -> XcrunResult:
    if not result.ok:
        raise CommandFailed(
            f"Could not {doing}: simctl said {result.reason()!r}. Check that "
            f"`{' '.join(['xcrun', *result.argv[1:]])}` works in a terminal.",
            argv=result.argv, exit_code=result.returncode, stderr=result.stderr[-2000:],
        )
    return result
