"""The simulator stand-ins: the fixture file tests/fake_xcrun reads (devices,
apps, the tools it forwards to), and a real local process standing in for an
app inside an installed bundle. The `sims` and `sim_app` fixtures are in
tests/conftest.py."""

from __future__ import annotations

import asyncio
import json
import os
import plistlib
import shutil
import subprocess
import time
from pathlib import Path

from backends.adapters import find_lldb, find_lldb_dap

from .native_build import c_program, line_of

ROOT = Path(__file__).resolve().parents[2]
FAKE_XCRUN = ROOT / "tests" / "fake_xcrun" / "xcrun"
APP_SOURCE = ROOT / "tests" / "programs" / "sim_demo_app.c"
# Under 16 characters (Linux matches wait-for names on comm), and unique to this test
# run, so a wait-for never catches another run's app on the same machine.
APP_EXECUTABLE = f"SimApp{os.getpid() % 1_000_000:06d}"
BUNDLE = "com.example.SimDemoApp"

IPHONE_15 = "A1EDEC56-560D-4E95-A19C-87F2FC438103"
IPHONE_15_PRO = "9F72E171-D1DD-4A7E-8C78-2CB1F540AE95"
IPHONE_15_IOS18 = "5B2E8C1F-3D4A-4F6B-9E7C-1A2B3C4D5E6F"
IPHONE_16_A = "0C9D8E7F-6A5B-4C3D-2E1F-0A9B8C7D6E5F"
IPHONE_16_B = "D3FF5631-7656-4429-A597-527A1B2C3D4E"
IPAD_GONE = "064545FB-B27F-4D1C-9F9F-C05F31F30B42"
IOS_17 = "com.apple.CoreSimulator.SimRuntime.iOS-17-5"
IOS_18 = "com.apple.CoreSimulator.SimRuntime.iOS-18-0"


def device(udid: str, name: str, state: str, available: bool = True, kind: str = "iPhone-15"):
    entry = {
        "dataPath": f"/Users/dev/Library/Developer/CoreSimulator/Devices/{udid}/data",
        "logPath": f"/Users/dev/Library/Logs/CoreSimulator/{udid}",
        "udid": udid,
        "isAvailable": available,
        "deviceTypeIdentifier": f"com.apple.CoreSimulator.SimDeviceType.{kind}",
        "state": state,
        "name": name,
    }
    if not available:
        entry["availabilityError"] = "runtime profile not found"
    return entry


class FakeSimulators:
    """The fixture file the fake xcrun reads, and the log of what it was asked."""

    def __init__(self, root: Path) -> None:
        self.path = root / "fixture.json"
        self.log = root / "xcrun-calls.jsonl"
        self.state_dir = root / "state"
        self.data: dict = {
            "devices": {
                IOS_17: [
                    device(IPHONE_15, "iPhone 15", "Booted"),
                    device(IPHONE_15_PRO, "iPhone 15 Pro", "Shutdown", kind="iPhone-15-Pro"),
                    device(IPHONE_16_A, "iPhone 16", "Booted", kind="iPhone-16"),
                    device(IPAD_GONE, "iPad Air", "Shutdown", available=False, kind="iPad-Air"),
                ],
                IOS_18: [
                    device(IPHONE_15_IOS18, "iPhone 15", "Shutdown"),
                    device(IPHONE_16_B, "iPhone 16", "Booted", kind="iPhone-16"),
                ],
            },
            "apps": {},
            "tools": {"lldb": find_lldb(), "lldb-dap": find_lldb_dap()},
        }
        self.save()

    def save(self) -> None:
        self.path.write_text(json.dumps(self.data))

    def set_app(self, udid: str, bundle_id: str, pid: int | None, **extra) -> None:
        apps = self.data["apps"].setdefault(udid, [])
        apps[:] = [a for a in apps if a["bundleId"] != bundle_id]
        apps.append({"bundleId": bundle_id, "pid": pid, "instance": "1a2b",
                     "suffix": "[rb-legacy]", **extra})
        self.save()

    def remove_device(self, udid: str) -> None:
        for runtime, devices in self.data["devices"].items():
            self.data["devices"][runtime] = [d for d in devices if d["udid"] != udid]
        self.save()

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


XCRUN = str(FAKE_XCRUN)


class SimulatorApp:
    """A real local process standing in for the app: an installed bundle (Info.plist
    naming its executable) whose executable runs until killed."""

    def __init__(self, root: Path) -> None:
        self.bundle = root / "SimDemoApp.app"
        self.bundle.mkdir()
        self.executable = self.bundle / APP_EXECUTABLE
        shutil.copy2(c_program("sim_demo_app"), self.executable)
        (self.bundle / "Info.plist").write_bytes(plistlib.dumps(
            {"CFBundleExecutable": APP_EXECUTABLE, "CFBundleIdentifier": BUNDLE},
            fmt=plistlib.FMT_BINARY,
        ))
        self.processes: list[subprocess.Popen] = []

    def start(self) -> subprocess.Popen:
        proc = subprocess.Popen(
            [str(self.executable)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )
        self.processes.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in self.processes:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)


def tracer_and_state(pid: int) -> tuple[int, str]:
    """(TracerPid, scheduler state letter) from /proc: a detached, running app has
    no tracer and is not in tracing stop ('t')."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return int(fields["TracerPid"].strip()), fields["State"].strip()[0]


async def wait_until_released(pid: int, timeout: float = 5.0) -> tuple[int, str]:
    deadline = time.monotonic() + timeout
    while True:
        tracer, state = tracer_and_state(pid)
        if (tracer == 0 and state != "t") or time.monotonic() > deadline:
            return tracer, state
        await asyncio.sleep(0.05)


BREAK_LINE = line_of("sim_demo_app.c", "draw_frame")
