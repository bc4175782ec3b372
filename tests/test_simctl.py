"""The simctl backend against tests/fake_xcrun: the real output shapes of
`simctl list`, `simctl spawn UDID launchctl list` and `xcrun --find`, with the
attach itself done by the real local lldb / lldb-dap on a real local process."""

from __future__ import annotations

import asyncio
import json
import os
import plistlib
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backends.adapters import find_lldb_dap
from backends.models import BreakpointSpec
from backends.process import descendants, pid_alive
from backends.errors import (
    CommandFailed,
    DependencyMissing,
    ErrorCode,
    InvalidInput,
    ResourceBusy,
    StaleDefault,
    Timeout,
)
from backends.simctl import (
    SimDefaults,
    attach_sim,
    find_app_pid,
    find_xcrun,
    parse_device_list,
    parse_launchctl_list,
    prepare_sim_attach,
    resolve_app_pid,
    resolve_simulator,
)
from backends.simctl import locks
from backends.simctl.apps import app_executable_name

from tests.support import require
from tests.support.native_build import EventLog
from tests.support.simctl import (
    APP_EXECUTABLE,
    APP_SOURCE,
    BREAK_LINE,
    BUNDLE,
    IOS_17,
    IPAD_GONE,
    IPHONE_15,
    IPHONE_15_PRO,
    IPHONE_16_A,
    IPHONE_16_B,
    XCRUN,
    SimulatorApp,
    device,
    tracer_and_state,
    wait_until_released,
)



# --------------------------------------------------------------------------- parsing


LAUNCHCTL_REAL = (
    "PID\tStatus\tLabel\n"
    "-\t0\tcom.apple.progressd\n"
    "22109\t0\tcom.apple.CoreAuthentication.daemon\n"
    "68331\t0\tUIKitApplication:com.apple.mobilecal[1a99][rb-legacy]\n"
    "-\t0\tUIKitApplication:com.example.App[2b0f][rb-legacy]\n"
    "70001\t0\tUIKitApplication:com.example.AppWidget[0c1d][rb-legacy]\n"
    "70002\t0\tUIKitApplication:com.example.Plain[0x37c3]\n"
    "70003\t0\tUIKitApplication:com.example.Bare\n"
)


def test_launchctl_rows_parse_with_and_without_launchd_suffixes():
    jobs = parse_launchctl_list(LAUNCHCTL_REAL)
    assert [j.pid for j in jobs] == [None, 22109, 68331, None, 70001, 70002, 70003]
    assert [j.bundle_id for j in jobs] == [
        None, None, "com.apple.mobilecal", "com.example.App", "com.example.AppWidget",
        "com.example.Plain", "com.example.Bare",
    ]
    assert find_app_pid(jobs, "U", "com.example.Plain") == 70002
    assert find_app_pid(jobs, "U", "com.example.Bare") == 70003
    # A bundle id is matched whole: the widget's pid is not the app's.
    with pytest.raises(InvalidInput) as caught:
        find_app_pid(jobs, "U", "com.example.App")
    assert "xcrun simctl launch U com.example.App" in caught.value.message


def test_device_list_skips_unavailable_devices_in_both_formats():
    text = json.dumps({"devices": {
        IOS_17: [device(IPHONE_15, "iPhone 15", "Booted"),
                 device(IPAD_GONE, "iPad Air", "Shutdown", available=False)],
        "iOS 12.0": [{"state": "Shutdown", "availability": "(unavailable, runtime profile not found)",
                      "name": "iPhone X", "udid": "OLD-1"}],
    }})
    devices = parse_device_list(text)
    assert [(d.udid, d.runtime_name) for d in devices] == [(IPHONE_15, "iOS 17.5")]
    with pytest.raises(CommandFailed):
        parse_device_list("Usage: simctl list")


# --------------------------------------------------------------------------- simulators


async def test_name_prefers_the_booted_device_and_runs_the_real_command(sims):
    found = await resolve_simulator(XCRUN, simulator_name="iPhone 15")
    assert (found.udid, found.state, found.runtime_name) == (IPHONE_15, "Booted", "iOS 17.5")
    assert sims.calls() == [["simctl", "list", "devices", "available", "-j"]]


async def test_udid_matches_case_insensitively_and_names_fall_back_to_any_case(sims):
    assert (await resolve_simulator(XCRUN, simulator_id=IPHONE_15.lower())).name == "iPhone 15"
    assert (await resolve_simulator(XCRUN, simulator_name="IPHONE 15")).udid == IPHONE_15


async def test_several_booted_devices_of_one_name_are_listed(sims):
    with pytest.raises(InvalidInput) as caught:
        await resolve_simulator(XCRUN, simulator_name="iPhone 16")
    message = caught.value.message
    assert IPHONE_16_A in message and IPHONE_16_B in message
    assert "iOS 17.5" in message and "iOS 18.0" in message
    assert "simulatorId" in message
    assert caught.value.code is ErrorCode.invalid_input


async def test_no_such_simulator_lists_the_available_names(sims):
    with pytest.raises(InvalidInput) as caught:
        await resolve_simulator(XCRUN, simulator_name="iPhone 99")
    message = caught.value.message
    assert "iPhone 99" in message and "iPhone 15 (booted)" in message and "iPhone 15 Pro" in message
    assert "iPad Air" not in message  # unavailable devices cannot be debugged
    with pytest.raises(InvalidInput, match="No available simulator has UDID"):
        await resolve_simulator(XCRUN, simulator_id="00000000-0000-0000-0000-000000000000")
    with pytest.raises(InvalidInput, match="No available simulator has UDID"):
        await resolve_simulator(XCRUN, simulator_id=IPAD_GONE)


async def test_a_simulator_that_is_not_booted_says_how_to_boot_it(sims):
    with pytest.raises(InvalidInput) as caught:
        await resolve_simulator(XCRUN, simulator_name="iPhone 15 Pro")
    assert f"xcrun simctl boot {IPHONE_15_PRO}" in caught.value.message


async def test_booted_keyword_needs_a_single_booted_device(sims):
    with pytest.raises(InvalidInput, match="3 booted simulators"):
        await resolve_simulator(XCRUN, simulator_id="booted")


# --------------------------------------------------------------------------- apps


async def test_app_pid_comes_from_launchctl_and_a_stopped_app_says_how_to_launch_it(sims):
    sims.set_app(IPHONE_15, "com.example.Running", 4242)
    sims.set_app(IPHONE_15, "com.example.Idle", None)
    assert await resolve_app_pid(XCRUN, IPHONE_15, "com.example.Running") == 4242
    assert sims.calls()[-1] == ["simctl", "spawn", IPHONE_15, "launchctl", "list"]
    for bundle in ("com.example.Idle", "com.example.Missing"):
        with pytest.raises(InvalidInput) as caught:
            await resolve_app_pid(XCRUN, IPHONE_15, bundle)
        assert f"xcrun simctl launch {IPHONE_15} {bundle}" in caught.value.message
        assert "waitFor" in caught.value.message


async def test_simctl_device_errors_become_actionable(sims):
    with pytest.raises(InvalidInput, match="Invalid device: 00000000"):
        await resolve_app_pid(XCRUN, "00000000-0000-0000-0000-000000000000", BUNDLE)
    with pytest.raises(InvalidInput, match=f"xcrun simctl boot {IPHONE_15_PRO}"):
        await resolve_app_pid(XCRUN, IPHONE_15_PRO, BUNDLE)


async def test_executable_name_comes_from_the_installed_bundle(sims, tmp_path):
    bundle_dir = tmp_path / "Demo.app"
    bundle_dir.mkdir()
    (bundle_dir / "Info.plist").write_bytes(
        plistlib.dumps({"CFBundleExecutable": "DemoExec", "CFBundleIdentifier": BUNDLE},
                       fmt=plistlib.FMT_BINARY)
    )
    sims.set_app(IPHONE_15, BUNDLE, None, appPath=str(bundle_dir))
    assert await app_executable_name(XCRUN, IPHONE_15, BUNDLE) == "DemoExec"
    with pytest.raises(InvalidInput, match="not installed"):
        await app_executable_name(XCRUN, IPHONE_15, "com.example.NotInstalled")


# --------------------------------------------------------------------------- xcrun


def test_missing_xcrun_says_this_backend_needs_xcode_on_macos(monkeypatch, tmp_path):
    monkeypatch.delenv("TUI_DEBUGGER_XCRUN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(DependencyMissing) as caught:
        find_xcrun()
    assert "Xcode" in caught.value.message
    if sys.platform != "darwin":
        assert "macOS-only" in caught.value.message
    monkeypatch.setenv("TUI_DEBUGGER_XCRUN", str(tmp_path / "nowhere" / "xcrun"))
    with pytest.raises(DependencyMissing, match="TUI_DEBUGGER_XCRUN"):
        find_xcrun()


async def test_xcrun_without_xcode_is_dependency_missing(sims):
    sims.data["command_line_tools_only"] = True
    sims.save()
    with pytest.raises(DependencyMissing, match="Command Line Tools alone"):
        await resolve_simulator(XCRUN, simulator_name="iPhone 15")


async def test_attach_without_xcrun_is_dependency_missing(monkeypatch, tmp_path):
    monkeypatch.delenv("TUI_DEBUGGER_XCRUN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(DependencyMissing) as caught:
        await attach_sim(lambda e: None, simulator_name="iPhone 15", bundle_id=BUNDLE,
                         defaults=SimDefaults(tmp_path))
    assert caught.value.code is ErrorCode.dependency_missing


async def test_a_hanging_simctl_times_out_and_is_ended(sims, tmp_path, no_leftover_processes):
    hang = tmp_path / "xcrun-hang"
    hang.write_text("#!/bin/sh\nexec sleep 30\n")
    hang.chmod(0o755)
    started = time.monotonic()
    with pytest.raises(Timeout, match="did not answer within 0.5 s"):
        await resolve_simulator(str(hang), simulator_name="iPhone 15", timeout=0.5)
    assert time.monotonic() - started < 3


# --------------------------------------------------------------------------- defaults


async def test_a_remembered_simulator_that_is_gone_is_a_stale_default(sims):
    store = SimDefaults()
    store.set(simulator_id=IPHONE_15_PRO, simulator_name="iPhone 15 Pro", bundle_id=BUNDLE)
    sims.remove_device(IPHONE_15_PRO)
    with pytest.raises(StaleDefault) as caught:
        await attach_sim(lambda e: None, defaults=store)
    assert caught.value.code is ErrorCode.stale_default
    assert f"iPhone 15 Pro ({IPHONE_15_PRO}) no longer exists" in caught.value.message
    assert "simulatorId or simulatorName" in caught.value.message


async def test_defaults_pass_validation_when_simctl_itself_fails(sims):
    store = SimDefaults()
    store.set(simulator_id=IPHONE_15, simulator_name="iPhone 15", bundle_id=BUNDLE)
    sims.data["fail"] = {"list": "CoreSimulatorService connection became invalid."}
    sims.save()
    # The listing fails, the remembered UDID is used as it is, and the flow goes on to
    # launchctl, which answers: the app is not running.
    with pytest.raises(InvalidInput, match=f"xcrun simctl launch {IPHONE_15} {BUNDLE}"):
        await attach_sim(lambda e: None, defaults=store)
    # An explicit simulator is never guessed: the failure is reported.
    with pytest.raises(CommandFailed, match="CoreSimulatorService"):
        await attach_sim(lambda e: None, simulator_name="iPhone 15", bundle_id=BUNDLE,
                         defaults=store)


async def test_nothing_given_and_nothing_remembered_asks_for_a_simulator(sims):
    with pytest.raises(InvalidInput, match="simulatorId"):
        await attach_sim(lambda e: None, defaults=SimDefaults())
    with pytest.raises(InvalidInput, match="bundleId"):
        await attach_sim(lambda e: None, simulator_name="iPhone 15", defaults=SimDefaults())


def test_defaults_file_survives_corruption(sims):
    store = SimDefaults()
    store.path.write_text("{not json")
    assert store.load().simulator_id is None
    store.set(bundle_id=BUNDLE)
    assert SimDefaults().load().bundle_id == BUNDLE


# --------------------------------------------------------------------------- locks


def test_a_resource_lock_names_its_owner_until_released(sims):
    first = locks.acquire("lldb:4242", "session agent-1")
    with pytest.raises(ResourceBusy) as caught:
        locks.acquire("lldb:4242", "session person-2")
    assert "session agent-1" in caught.value.message
    assert caught.value.code is ErrorCode.resource_busy
    first.release()
    first.release()
    locks.acquire("lldb:4242", "session person-2").release()


# --------------------------------------------------------------------------- the whole flow




@pytest.mark.parametrize("kind", ["lldb-cli", "lldb-dap"])
async def test_attach_by_name_and_bundle_stops_at_a_breakpoint_and_detach_leaves_it_running(
    sims, sim_app, kind
):
    if kind == "lldb-dap":
        require(find_lldb_dap() is not None, "lldb-dap")
        # Xcode's lldb-dap lives where `xcrun --find` says, not on PATH: point the fake
        # at a path no discovery would find, and check that is the adapter started.
        xcode_dap = sim_app.bundle.parent / "Xcode.app-bin" / "lldb-dap"
        xcode_dap.parent.mkdir()
        xcode_dap.symlink_to(find_lldb_dap())
        sims.data["tools"]["lldb-dap"] = str(xcode_dap)
        sims.save()
    proc = sim_app.start()
    sims.set_app(IPHONE_15, BUNDLE, proc.pid, appPath=str(sim_app.bundle))
    events = EventLog()
    backend, request = await prepare_sim_attach(
        events, simulator_name="iPhone 15", bundle_id=BUNDLE, backend=kind,
        owner="session first (agent)",
    )
    states = []

    async def configure():
        states.extend(await backend.set_source_breakpoints(
            str(APP_SOURCE), [BreakpointSpec(path=str(APP_SOURCE), line=BREAK_LINE)]
        ))

    try:
        await backend.attach(request, configure)
        info = backend.info
        assert (info.udid, info.simulator_name, info.runtime) == (IPHONE_15, "iPhone 15", "iOS 17.5")
        assert (info.bundle_id, info.pid, info.backend) == (BUNDLE, proc.pid, kind)
        assert backend.debuggee_pid == proc.pid
        calls = sims.calls()
        assert calls[:2] == [["simctl", "list", "devices", "available", "-j"],
                             ["simctl", "spawn", IPHONE_15, "launchctl", "list"]]
        assert calls[2] == (["lldb", "--no-lldbinit"] if kind == "lldb-cli" else ["--find", "lldb-dap"])
        if kind == "lldb-dap":
            adapter_pid = backend.child_pids[0]
            argv0 = Path(f"/proc/{adapter_pid}/cmdline").read_bytes().split(b"\0")[0]
            assert argv0.decode() == str(xcode_dap)

        # One debugger per process: a second attach names the first one's owner.
        with pytest.raises(ResourceBusy, match=r"session first \(agent\)"):
            await attach_sim(lambda e: None, simulator_id=IPHONE_15, pid=proc.pid, backend=kind)

        assert states and states[0].verified, states
        stopped = await events.wait("stopped", timeout=15)
        assert stopped.reason == "breakpoint"
        thread_id = stopped.thread_id or (await backend.threads())[0].id
        frames, _ = await backend.stack_trace(thread_id, 0, 5)
        assert "draw_frame" in frames[0].name
        assert frames[0].location is not None and frames[0].location.line == BREAK_LINE
        assert tracer_and_state(proc.pid)[0] != 0  # really under a debugger

        # A session adopts the backend by setting its sink; the LLDB backend's events follow.
        adopted = EventLog()
        backend._emit = adopted
        await backend.set_source_breakpoints(str(APP_SOURCE), [])
        await backend.disconnect(terminate=False)
        await adopted.wait("terminated", timeout=10)
    finally:
        await backend.dispose()
    assert pid_alive(proc.pid)
    tracer, state = await wait_until_released(proc.pid)
    assert tracer == 0 and state != "t", (tracer, state)
    # The lock went with the session.
    locks.acquire(f"lldb:{proc.pid}", "next session").release()


async def test_defaults_remembered_by_one_attach_serve_the_next(sims, sim_app):
    proc = sim_app.start()
    sims.set_app(IPHONE_15, BUNDLE, proc.pid, appPath=str(sim_app.bundle))
    backend, info = await attach_sim(lambda e: None, simulator_id=IPHONE_15, bundle_id=BUNDLE)
    assert info.used_defaults == []
    await backend.disconnect(terminate=False)
    await backend.dispose()
    assert SimDefaults().load().model_dump() == {
        "simulator_id": IPHONE_15, "simulator_name": "iPhone 15", "bundle_id": BUNDLE,
    }
    # No simulator, no bundle id: both come from the defaults, and the lock was released.
    backend, info = await attach_sim(lambda e: None)
    try:
        assert info.used_defaults == ["simulatorId", "bundleId"]
        assert (info.udid, info.pid) == (IPHONE_15, proc.pid)
        await backend.disconnect(terminate=False)
    finally:
        await backend.dispose()
    assert pid_alive(proc.pid)


async def lldb_server_waiting(timeout: float = 20.0) -> None:
    """Until lldb-server (which does the waiting on Linux) runs under this test.
    LLDB waits for a *new* process: one that already exists when the wait begins
    is ignored, so the app must start after that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in descendants(os.getpid()):
            try:
                if Path(f"/proc/{pid}/comm").read_text().startswith("lldb-server"):
                    await asyncio.sleep(0.5)
                    return
            except OSError:
                continue
        await asyncio.sleep(0.05)
    raise AssertionError("lldb-server never started waiting")


async def start_until_caught(app: SimulatorApp, attempts: int = 5) -> subprocess.Popen:
    """Start the app until LLDB's wait catches an instance. lldb-server exists a
    moment before its wait begins (and so before it lists the processes to
    ignore); on a loaded machine an instance started in that moment is ignored,
    so one that no tracer took within a few seconds is replaced by a new one."""
    for _ in range(attempts):
        proc = app.start()
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            if proc.poll() is None and tracer_and_state(proc.pid)[0] != 0:
                return proc
            await asyncio.sleep(0.05)
        proc.kill()
        proc.wait()
    raise AssertionError(f"LLDB caught none of {attempts} instances of the app")


@pytest.mark.parametrize("kind", ["lldb-cli", "lldb-dap"])
async def test_wait_for_attaches_when_the_app_starts(sims, sim_app, kind):
    if kind == "lldb-dap":
        require(find_lldb_dap() is not None, "lldb-dap")
    sims.set_app(IPHONE_15, BUNDLE, None, appPath=str(sim_app.bundle))
    events = EventLog()
    attaching = asyncio.ensure_future(attach_sim(
        events, simulator_name="iPhone 15", bundle_id=BUNDLE, wait_for=True, backend=kind,
        continue_on_attach=False, wait_timeout=20,
    ))
    await lldb_server_waiting()
    assert not attaching.done()
    proc = await start_until_caught(sim_app)
    backend, info = await asyncio.wait_for(attaching, 30)
    try:
        assert (info.pid, info.waited_for) == (proc.pid, APP_EXECUTABLE)
        assert backend.debuggee_pid == proc.pid
        assert ["simctl", "get_app_container", IPHONE_15, BUNDLE, "app"] in sims.calls()
        # Without continue_on_attach the app stays stopped where the attach caught it
        # (lldb-cli calls that "entry"; lldb-dap reports the SIGSTOP as it sees it).
        stopped = await events.wait("stopped", timeout=10)
        assert stopped.reason == "entry" or kind == "lldb-dap", stopped
        assert tracer_and_state(proc.pid)[1] == "t"
        # The wait's lock became the process's.
        with pytest.raises(ResourceBusy):
            locks.acquire(f"lldb:{proc.pid}", "another session")
        await backend.disconnect(terminate=False)
    finally:
        await backend.dispose()
    tracer, state = await wait_until_released(proc.pid)
    assert tracer == 0 and state != "t", (tracer, state)
