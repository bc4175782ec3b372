"""Session defaults: the simulator and bundle id set once and reused by later calls.

They live in a small JSON file in the per-user state directory, so the CLI, the
MCP server and the TUI share them across processes. A remembered simulator can
vanish (deleted, runtime removed); using it is then a `stale_default` error,
never a silent fallback to another device. When simctl itself fails, the default
is used as it is (graceful degradation): a broken listing must not block an
attach that would otherwise work.
"""

import json
import os
import tempfile
from pathlib import Path

import platformdirs
from pydantic import ValidationError

from ..errors import CommandFailed, StaleDefault, Timeout
from ..models import Model
from .devices import SimDevice, list_devices
from .xcrun import DEFAULT_TIMEOUT

ENV_STATE_DIR = "TUI_DEBUGGER_STATE_DIR"
APP_NAME = "tui-debugger"
FILE_NAME = "simctl-defaults.json"


def state_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Per-user state directory (0700): the argument, else TUI_DEBUGGER_STATE_DIR,
    else the platform's (~/.local/state/tui-debugger, ~/Library/Application Support/...)."""
    chosen = override or os.environ.get(ENV_STATE_DIR) or platformdirs.user_state_dir(APP_NAME)
    path = Path(chosen)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


class SimDefaultValues(Model):
    simulator_id: str | None = None
    simulator_name: str | None = None  # for messages only; the UDID is what is matched
    bundle_id: str | None = None


class SimDefaults:
    """The defaults file. Reads are forgiving (a corrupt file reads as empty);
    writes are atomic (temp file + rename), so two processes never see half a file."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.path = state_dir(directory) / FILE_NAME

    def load(self) -> SimDefaultValues:
        try:
            return SimDefaultValues.model_validate_json(self.path.read_text())
        except (OSError, ValidationError, ValueError):
            return SimDefaultValues()

    def set(
        self,
        *,
        simulator_id: str | None = None,
        simulator_name: str | None = None,
        bundle_id: str | None = None,
    ) -> SimDefaultValues:
        """Set the given fields, keep the others."""
        values = self.load()
        if simulator_id is not None:
            values.simulator_id = simulator_id or None
            values.simulator_name = simulator_name or None
        if bundle_id is not None:
            values.bundle_id = bundle_id or None
        self._write(values)
        return values

    def remember(self, device: SimDevice, bundle_id: str | None) -> SimDefaultValues:
        return self.set(
            simulator_id=device.udid, simulator_name=device.name,
            bundle_id=bundle_id if bundle_id else None,
        )

    def clear(self) -> None:
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def _write(self, values: SimDefaultValues) -> None:
        fd, tmp = tempfile.mkstemp(prefix=".defaults-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(values.model_dump(), f, indent=2)
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


async def validate_default_simulator(
    xcrun: str, udid: str, remembered_name: str | None = None, *, timeout: float = DEFAULT_TIMEOUT
) -> tuple[SimDevice | None, list[SimDevice] | None]:
    """Check that a remembered simulator still exists.

    Returns (device, all devices) when simctl answered and the UDID is there;
    (None, None) when simctl could not answer (the caller uses the UDID as it
    is); raises StaleDefault when simctl answered and the UDID is gone."""
    try:
        devices = await list_devices(xcrun, timeout=timeout)
    except (CommandFailed, Timeout):
        return None, None
    for device in devices:
        if device.udid.lower() == udid.lower():
            return device, devices
    named = f"{remembered_name} ({udid})" if remembered_name else udid
    raise StaleDefault(
        f"The remembered simulator {named} no longer exists; pass simulatorId or "
        "simulatorName to pick another (it will be remembered instead).",
        simulator_id=udid,
    )
