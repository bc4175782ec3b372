"""Attach LLDB to an app running in an iOS simulator.

The flow (XcodeBuildMCP's `debug_attach_sim`):

1. the simulator: simulatorId / simulatorName, else the remembered default
   (checked against `simctl list`; gone -> stale_default);
2. the process: pid, else the bundle id's row in the simulator's
   `launchctl list`; an app that is not running yet, with waitFor, is awaited by
   its executable name (CFBundleExecutable of the installed bundle);
3. the lock `lldb:{pid}`: one debugger per process, across sessions;
4. an LLDB backend: the lldb command line through `xcrun lldb`, or Xcode's
   lldb-dap found with `xcrun --find lldb-dap`; attach, then remember the
   simulator and bundle id for the next call.

Simulator apps are ordinary macOS processes, so the pid launchd reports is
attachable from the host with no remote platform.
"""

from __future__ import annotations

import asyncio
import os
from typing import Literal

from ..base import Backend, Configure, EventSink
from ..errors import InvalidInput, Timeout
from ..models import (
    AttachRequest,
    BreakpointSpec,
    BreakpointState,
    Capabilities,
    EvalResult,
    Frame,
    LaunchRequest,
    Model,
    Scope,
    Thread,
    Variable,
)
from ..process import pid_alive
from . import locks
from .apps import app_executable_name, app_jobs, find_app_pid, list_launchd_jobs
from .defaults import SimDefaults, validate_default_simulator
from .devices import SimDevice, list_devices, select_simulator
from .xcrun import DEFAULT_TIMEOUT, find_tool, find_xcrun

ENV_SIM_BACKEND = "TUI_DEBUGGER_SIM_BACKEND"
SimBackendName = Literal["lldb-cli", "lldb-dap"]
_BACKEND_ALIASES: dict[str, SimBackendName] = {
    "lldb-cli": "lldb-cli", "lldb": "lldb-cli", "cli": "lldb-cli",
    "lldb-dap": "lldb-dap", "dap": "lldb-dap",
}

#: how long waitFor waits for the app to start before giving up
DEFAULT_WAIT_TIMEOUT = 120.0
#: an attach to a running pid (LLDB loads the app's symbols)
DEFAULT_ATTACH_TIMEOUT = 60.0


class SimAttachInfo(Model):
    udid: str
    simulator_name: str
    runtime: str | None = None  # "iOS 17.5"
    bundle_id: str | None = None
    pid: int | None = None
    backend: SimBackendName = "lldb-cli"
    waited_for: str | None = None  # the process name LLDB waited for, with waitFor
    used_defaults: list[str] = []  # which of simulatorId / bundleId came from the defaults


def backend_kind(name: str | None) -> SimBackendName:
    """Explicit argument, then TUI_DEBUGGER_SIM_BACKEND, then lldb-cli (seeds/000's order)."""
    chosen = name or os.environ.get(ENV_SIM_BACKEND) or "lldb-cli"
    kind = _BACKEND_ALIASES.get(chosen.strip().lower())
    if kind is None:
        raise InvalidInput(
            f"Unknown simulator debugger backend {chosen!r}. Use lldb-cli (the default) or "
            "lldb-dap.",
            valid=["lldb-cli", "lldb-dap"],
        )
    return kind


async def _create_lldb_backend(
    kind: SimBackendName, emit: EventSink, xcrun: str, timeout: float
) -> Backend:
    if kind == "lldb-cli":
        from ..lldb_cli.backend import LldbCliBackend

        return LldbCliBackend(emit, lldb_argv=[xcrun, "lldb"])
    from ..dap.adapters import LldbDapBackend

    adapter = await find_tool(xcrun, "lldb-dap", timeout=timeout)
    return LldbDapBackend(emit, adapter_argv=[adapter])


class SimctlBackend(Backend):
    """The LLDB backend attached to a simulator app, plus what attaching took:
    the process lock, released when the session detaches or ends. Every call is
    passed to the LLDB backend unchanged."""

    name = "simctl"

    def __init__(
        self, emit: EventSink, inner: Backend, info: SimAttachInfo, held: list[locks.ResourceLock]
    ) -> None:
        self.inner = inner
        self.info = info
        self._locks = held
        super().__init__(emit)

    # The contract's attributes are the inner backend's, live.
    @property  # type: ignore[override]
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    @capabilities.setter
    def capabilities(self, value: Capabilities) -> None:
        pass

    @property  # type: ignore[override]
    def child_pids(self) -> list[int]:
        return self.inner.child_pids

    @child_pids.setter
    def child_pids(self, value: list[int]) -> None:
        pass

    @property  # type: ignore[override]
    def debuggee_pid(self) -> int | None:
        return self.inner.debuggee_pid

    @debuggee_pid.setter
    def debuggee_pid(self, value: int | None) -> None:
        pass

    def release_locks(self) -> None:
        for lock in self._locks:
            lock.release()

    async def launch(self, request: LaunchRequest, configure: Configure) -> None:
        raise InvalidInput(
            "Simulator apps are launched by simctl, not by the debugger: run "
            "`xcrun simctl launch UDID BUNDLE_ID`, then attach (or attach with waitFor first)."
        )

    async def attach(self, request: AttachRequest, configure: Configure) -> None:
        raise InvalidInput("This simulator session is already attached; detach first.")

    async def disconnect(self, terminate: bool) -> None:
        try:
            await self.inner.disconnect(terminate)
        finally:
            self.release_locks()

    async def dispose(self) -> None:
        try:
            await self.inner.dispose()
        except Exception:  # dispose never raises, even if the inner one breaks that rule
            pass
        finally:
            self.release_locks()

    async def set_source_breakpoints(
        self, path: str, specs: list[BreakpointSpec]
    ) -> list[BreakpointState]:
        return await self.inner.set_source_breakpoints(path, specs)

    async def set_function_breakpoints(self, specs: list[BreakpointSpec]) -> list[BreakpointState]:
        return await self.inner.set_function_breakpoints(specs)

    async def set_exception_filters(self, filter_ids: list[str]) -> None:
        await self.inner.set_exception_filters(filter_ids)

    async def continue_(self, thread_id: int | None) -> None:
        await self.inner.continue_(thread_id)

    async def step_over(self, thread_id: int) -> None:
        await self.inner.step_over(thread_id)

    async def step_in(self, thread_id: int) -> None:
        await self.inner.step_in(thread_id)

    async def step_out(self, thread_id: int) -> None:
        await self.inner.step_out(thread_id)

    async def pause(self, thread_id: int | None) -> None:
        await self.inner.pause(thread_id)

    async def threads(self) -> list[Thread]:
        return await self.inner.threads()

    async def stack_trace(
        self, thread_id: int, start: int = 0, levels: int = 20
    ) -> tuple[list[Frame], int | None]:
        return await self.inner.stack_trace(thread_id, start, levels)

    async def scopes(self, frame_id: int) -> list[Scope]:
        return await self.inner.scopes(frame_id)

    async def variables(self, ref: int, start: int = 0, count: int = 0) -> list[Variable]:
        return await self.inner.variables(ref, start, count)

    async def evaluate(
        self, expression: str, frame_id: int | None, context: str = "repl"
    ) -> EvalResult:
        return await self.inner.evaluate(expression, frame_id, context)

    async def raw_command(self, command: str, timeout: float) -> str:
        return await self.inner.raw_command(command, timeout)

    async def source(self, source_reference: int) -> str:
        return await self.inner.source(source_reference)

    async def disassemble(self, frame_id: int, count: int = 32) -> list[str]:
        return await self.inner.disassemble(frame_id, count)

    async def read_memory(self, address: str, count: int) -> bytes:
        return await self.inner.read_memory(address, count)


async def _no_configuration() -> None:
    return None


async def _pick_simulator(
    xcrun: str,
    simulator_id: str | None,
    simulator_name: str | None,
    remembered_id: str | None,
    remembered_name: str | None,
    timeout: float,
) -> tuple[SimDevice, bool]:
    """The simulator to use, and whether it came from the defaults."""
    if simulator_id or simulator_name:
        devices = await list_devices(xcrun, timeout=timeout)
        return select_simulator(devices, simulator_id, simulator_name), False
    if not remembered_id:
        raise InvalidInput(
            "Which simulator? Pass simulatorId (a UDID) or simulatorName (e.g. 'iPhone 15'); "
            "it is remembered for later calls. `xcrun simctl list devices available` lists them."
        )
    device, devices = await validate_default_simulator(
        xcrun, remembered_id, remembered_name, timeout=timeout
    )
    if device is None or devices is None:
        # simctl could not answer: trust the remembered UDID (later simctl calls will say
        # plainly if it is wrong).
        return SimDevice(
            udid=remembered_id, name=remembered_name or remembered_id, state="Unknown"
        ), True
    return select_simulator(devices, simulator_id=device.udid), True


async def attach_sim(
    emit: EventSink,
    *,
    simulator_id: str | None = None,
    simulator_name: str | None = None,
    bundle_id: str | None = None,
    pid: int | None = None,
    wait_for: bool = False,
    backend: str | None = "lldb-cli",
    defaults: SimDefaults | None = None,
    configure: Configure | None = None,
    owner: str | None = None,
    remember: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
    attach_timeout: float = DEFAULT_ATTACH_TIMEOUT,
    wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
) -> tuple[SimctlBackend, SimAttachInfo]:
    """Find the simulator and the app's process, attach LLDB to it, and return the
    attached backend with what was resolved.

    `configure` is awaited once by the LLDB backend when breakpoints may be set
    (see backends.base). `owner` names this session in another session's
    resource_busy message. `timeout` bounds each xcrun call; `attach_timeout`
    the attach to a running pid; `wait_timeout` how long waitFor waits for the
    app to start.
    """
    kind = backend_kind(backend)
    xcrun = find_xcrun()
    store = defaults if defaults is not None else SimDefaults()
    remembered = store.load()
    used_defaults: list[str] = []

    device, from_default = await _pick_simulator(
        xcrun, simulator_id, simulator_name,
        remembered.simulator_id, remembered.simulator_name, timeout,
    )
    if from_default:
        used_defaults.append("simulatorId")

    bundle = (bundle_id or "").strip() or None
    if pid is None and bundle is None:
        bundle = remembered.bundle_id
        if bundle is None:
            raise InvalidInput(
                "Which app? Pass bundleId (e.g. com.example.MyApp) or pid; the bundle id is "
                "remembered for later calls."
            )
        used_defaults.append("bundleId")

    wait_name: str | None = None
    if pid is not None:
        if pid <= 0 or not pid_alive(pid):
            raise InvalidInput(
                f"No process has pid {pid}. Pass bundleId to find the app by its bundle id, "
                f"or list the simulator's processes: xcrun simctl spawn {device.udid} launchctl list",
                pid=pid,
            )
    else:
        assert bundle is not None
        jobs = await list_launchd_jobs(xcrun, device.udid, timeout=timeout)
        running = [j for j in app_jobs(jobs, bundle) if j.pid is not None]
        if running or not wait_for:
            pid = find_app_pid(jobs, device.udid, bundle)
        else:
            wait_name = await app_executable_name(xcrun, device.udid, bundle, timeout=timeout)

    who = owner or f"tui-debugger session in process {os.getpid()}"
    hint = "Detach that session first (debug_detach, or `tui-debugger detach`), then attach again."
    held: list[locks.ResourceLock] = []
    if pid is not None:
        held.append(locks.acquire(f"lldb:{pid}", who, busy_hint=hint))
    else:
        held.append(locks.acquire(f"lldb:wait:{device.udid}:{bundle}", who, busy_hint=hint))

    inner: Backend | None = None
    try:
        inner = await _create_lldb_backend(kind, emit, xcrun, timeout)
        request = AttachRequest(pid=pid) if pid is not None else AttachRequest(wait_for=wait_name)
        limit = attach_timeout if pid is not None else wait_timeout + attach_timeout
        try:
            await asyncio.wait_for(inner.attach(request, configure or _no_configuration), limit)
        except asyncio.TimeoutError:
            if pid is not None:
                raise Timeout(
                    f"LLDB did not finish attaching to pid {pid} within {attach_timeout:g} s. "
                    "Check that the app is still running, then try again.",
                    pid=pid,
                ) from None
            raise Timeout(
                f"{bundle} did not start within {wait_timeout:g} s while LLDB waited for a "
                f"process named {wait_name!r}. Launch it with "
                f"`xcrun simctl launch {device.udid} {bundle}` while attaching with waitFor.",
                bundle_id=bundle, process_name=wait_name,
            ) from None
        if pid is None:
            pid = inner.debuggee_pid
            if pid is not None:
                held.append(locks.acquire(f"lldb:{pid}", who, busy_hint=hint))
                held[0].release()
    except BaseException:
        if inner is not None:
            await inner.dispose()
        for lock in held:
            lock.release()
        raise

    info = SimAttachInfo(
        udid=device.udid, simulator_name=device.name,
        runtime=device.runtime_name if device.runtime else None,
        bundle_id=bundle, pid=pid, backend=kind, waited_for=wait_name,
        used_defaults=used_defaults,
    )
    if remember:
        try:
            store.remember(device, bundle)
        except OSError:
            pass  # a read-only state directory costs the defaults, not the attach
    return SimctlBackend(emit, inner, info, held), info

