"""iOS simulator apps, found through Xcode's `xcrun simctl` and debugged with LLDB.

    backend, info = await attach_sim(emit, simulator_name="iPhone 15",
                                     bundle_id="com.example.MyApp")

or, when `configure` must reach the backend (to set breakpoints before the app runs on):

    backend, request = await prepare_sim_attach(emit, simulator_name="iPhone 15",
                                                bundle_id="com.example.MyApp")
    await backend.attach(request, configure)      # backend.info says what was resolved

See docs/backends/simctl.md for the flow and what was verified where.
"""

from .apps import (
    LaunchdJob,
    app_executable_name,
    find_app_pid,
    parse_launchctl_list,
    resolve_app_pid,
)
from .attach import SimAttachInfo, SimctlBackend, attach_sim, backend_kind, prepare_sim_attach
from .defaults import SimDefaults, SimDefaultValues, state_dir, validate_default_simulator
from .devices import (
    SimDevice,
    list_devices,
    looks_like_udid,
    parse_device_list,
    resolve_simulator,
    select_simulator,
)
from .locks import ResourceLock
from .xcrun import ENV_XCRUN, find_tool, find_xcrun, run_xcrun

__all__ = [
    "ENV_XCRUN",
    "LaunchdJob",
    "ResourceLock",
    "SimAttachInfo",
    "SimDefaultValues",
    "SimDefaults",
    "SimDevice",
    "SimctlBackend",
    "app_executable_name",
    "attach_sim",
    "backend_kind",
    "find_app_pid",
    "find_tool",
    "find_xcrun",
    "list_devices",
    "looks_like_udid",
    "parse_device_list",
    "parse_launchctl_list",
    "prepare_sim_attach",
    "resolve_app_pid",
    "resolve_simulator",
    "run_xcrun",
    "select_simulator",
    "state_dir",
    "validate_default_simulator",
]
