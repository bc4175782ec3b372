"""Which simulator: `xcrun simctl list devices available -j`, matched by UDID or name.

The listing is a JSON object whose `devices` maps a runtime identifier
(`com.apple.CoreSimulator.SimRuntime.iOS-17-5`) to that runtime's devices, each
with `udid`, `name`, `state` (Booted, Shutdown, Booting, ...) and `isAvailable`.
One name can exist under several runtimes ("iPhone 15" on iOS 17.5 and 18.0),
so a name alone may be ambiguous; a UDID never is.
"""

import json
import re

from ..errors import CommandFailed, InvalidInput
from ..models import Model
from .xcrun import DEFAULT_TIMEOUT, ensure_ok, run_xcrun

LIST_ARGS = ["simctl", "list", "devices", "available", "-j"]
BOOTED = "Booted"
_UDID = re.compile(r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$")
_MAX_LISTED = 25


class SimDevice(Model):
    udid: str
    name: str
    state: str
    runtime: str = ""  # com.apple.CoreSimulator.SimRuntime.iOS-17-5
    device_type: str | None = None
    is_available: bool = True

    @property
    def booted(self) -> bool:
        return self.state == BOOTED

    @property
    def runtime_name(self) -> str:
        """`iOS 17.5` from `com.apple.CoreSimulator.SimRuntime.iOS-17-5`."""
        tail = self.runtime.rsplit(".", 1)[-1] if self.runtime else ""
        platform, _, version = tail.partition("-")
        return f"{platform} {version.replace('-', '.')}".strip() if tail else "unknown runtime"

    def describe(self) -> str:
        return f"{self.name} ({self.runtime_name}, {self.state}) {self.udid}"


def looks_like_udid(text: str) -> bool:
    return bool(_UDID.match(text.strip()))


def parse_device_list(text: str) -> list[SimDevice]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandFailed(
            f"`xcrun simctl list devices available -j` printed something that is not JSON "
            f"({exc.msg}). Run it in a terminal to see what it says.",
            output=text[:500],
        ) from None
    runtimes = data.get("devices") if isinstance(data, dict) else None
    if not isinstance(runtimes, dict):
        raise CommandFailed(
            "`xcrun simctl list devices available -j` printed JSON without a `devices` "
            "object. Run it in a terminal to see what it says.",
            output=text[:500],
        )
    devices: list[SimDevice] = []
    for runtime, entries in runtimes.items():
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict) or not entry.get("udid"):
                continue
            # Xcode 10.1 and later say isAvailable: bool; older ones "availability": "(available)".
            available = entry.get("isAvailable", True)
            legacy = str(entry.get("availability", ""))
            if available is False or available == "NO" or "unavailable" in legacy:
                continue
            devices.append(
                SimDevice(
                    udid=str(entry["udid"]),
                    name=str(entry.get("name", "")),
                    state=str(entry.get("state", "Unknown")),
                    runtime=str(runtime),
                    device_type=entry.get("deviceTypeIdentifier"),
                )
            )
    return devices


async def list_devices(xcrun: str, *, timeout: float = DEFAULT_TIMEOUT) -> list[SimDevice]:
    result = ensure_ok(await run_xcrun(xcrun, LIST_ARGS, timeout=timeout), "list the simulators")
    return parse_device_list(result.stdout)


def _listing(devices: list[SimDevice]) -> str:
    lines = [f"  {d.describe()}" for d in devices[:_MAX_LISTED]]
    if len(devices) > _MAX_LISTED:
        lines.append(f"  ... and {len(devices) - _MAX_LISTED} more")
    return "\n".join(lines)


def _available_names(devices: list[SimDevice]) -> str:
    if not devices:
        return (
            "There are no available simulators at all: create one in Xcode (Window > Devices "
            "and Simulators) or with `xcrun simctl create`."
        )
    names: dict[str, bool] = {}
    for device in devices:
        names[device.name] = names.get(device.name, False) or device.booted
    ordered = sorted(names, key=lambda n: (not names[n], n.lower()))
    shown = [f"{n} (booted)" if names[n] else n for n in ordered[:_MAX_LISTED]]
    more = f", and {len(ordered) - _MAX_LISTED} more" if len(ordered) > _MAX_LISTED else ""
    return "Available simulators: " + ", ".join(shown) + more + "."


def _require_booted(candidates: list[SimDevice], asked: str) -> SimDevice:
    booted = [d for d in candidates if d.booted]
    if len(booted) == 1:
        return booted[0]
    if len(booted) > 1:
        raise InvalidInput(
            f"{len(booted)} booted simulators match {asked}:\n{_listing(booted)}\n"
            "Pass simulatorId with the UDID of the one to use.",
            candidates=[d.model_dump() for d in booted],
        )
    if len(candidates) == 1:
        only = candidates[0]
        raise InvalidInput(
            f"Simulator {only.name} ({only.runtime_name}, {only.udid}) is {only.state}, not "
            f"booted. Boot it with `xcrun simctl boot {only.udid}`, launch the app, then attach.",
            udid=only.udid, state=only.state,
        )
    raise InvalidInput(
        f"None of the {len(candidates)} simulators matching {asked} is booted:\n"
        f"{_listing(candidates)}\nBoot one with `xcrun simctl boot UDID`, launch the app, "
        "then attach with simulatorId set to that UDID.",
        candidates=[d.model_dump() for d in candidates],
    )


def select_simulator(
    devices: list[SimDevice], simulator_id: str | None = None, simulator_name: str | None = None
) -> SimDevice:
    """Pick one booted device. UDIDs match case-insensitively; names exactly, else
    case-insensitively; among several devices of one name, the booted one wins."""
    simulator_id = (simulator_id or "").strip() or None
    simulator_name = (simulator_name or "").strip() or None
    if simulator_id and simulator_name:
        raise InvalidInput(
            "Pass simulatorId or simulatorName, not both (a UDID already names one simulator)."
        )
    if not simulator_id and not simulator_name:
        raise InvalidInput(
            "Which simulator? Pass simulatorId (a UDID) or simulatorName (e.g. 'iPhone 15'). "
            + _available_names(devices)
        )
    if simulator_id and simulator_id.lower() == "booted":
        booted = [d for d in devices if d.booted]
        if not booted:
            raise InvalidInput(
                "No simulator is booted. Boot one with `xcrun simctl boot UDID`. "
                + _available_names(devices)
            )
        return _require_booted(booted, "'booted'")
    if simulator_id:
        wanted = simulator_id.lower()
        by_udid = [d for d in devices if d.udid.lower() == wanted]
        if by_udid:
            return _require_booted(by_udid, f"UDID {simulator_id}")
        if looks_like_udid(simulator_id) or not any(
            d.name.lower() == wanted for d in devices
        ):
            raise InvalidInput(
                f"No available simulator has UDID {simulator_id}. It may have been deleted, "
                "or its runtime removed. " + _available_names(devices),
                valid=[d.udid for d in devices][:_MAX_LISTED],
            )
        simulator_name = simulator_id  # a name given where a UDID was expected
    assert simulator_name is not None
    matches = [d for d in devices if d.name == simulator_name] or [
        d for d in devices if d.name.lower() == simulator_name.lower()
    ]
    if not matches:
        raise InvalidInput(
            f"No available simulator is named {simulator_name!r}. " + _available_names(devices),
            valid=sorted({d.name for d in devices}),
        )
    return _require_booted(matches, repr(simulator_name))


async def resolve_simulator(
    xcrun: str,
    simulator_id: str | None = None,
    simulator_name: str | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
) -> SimDevice:
    """The booted simulator named by UDID or name, from `xcrun simctl list devices available -j`."""
    devices = await list_devices(xcrun, timeout=timeout)
    return select_simulator(devices, simulator_id, simulator_name)
