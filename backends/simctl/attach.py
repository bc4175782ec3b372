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

import asyncio
import os
from typing import Literal

from ..base import Backend, Configure, EventSink
from ..errors import InvalidInput, NotSupported, Timeout
from ..models import (
    AttachRequest,
    BackendEvent,
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
from .apps import app_executable, app_jobs, find_app_pid, list_launchd_jobs
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
BUSY_HINT = "Detach that session first (debug_detach, or `tui-debugger detach`), then attach again."


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
    from ..dap.lldb_dap import LldbDapBackend

    adapter = await find_tool(xcrun, "lldb-dap", timeout=timeout)
    return LldbDapBackend(emit, adapter_argv=[adapter])


class EventRelay:
    """An event sink whose destination can change after the backend exists."""

    def __init__(self, target: EventSink) -> None:
        self.target = target

    def __call__(self, event: BackendEvent) -> None:
        self.target(event)


class SimctlBackend(Backend):
    """An LLDB backend aimed at a simulator app, plus what aiming it took: the
    resolved simulator and process (`info`) and the process lock, released when
    the session detaches or ends. `attach` does the real attach; every other call
    is passed to the LLDB backend unchanged."""

    name = "simctl"

    def __init__(
        self,
        relay: EventRelay,
        inner: Backend,
        info: SimAttachInfo,
        held: list[locks.ResourceLock],
        *,
        device: SimDevice,
        owner: str,
        defaults: SimDefaults | None,
        attach_timeout: float = DEFAULT_ATTACH_TIMEOUT,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
    ) -> None:
        self._relay = relay
        self.inner = inner
        self.info = info
        self._locks = held
        self._device = device
        self._owner = owner
        self._defaults = defaults
        self._attach_timeout = attach_timeout
        self._wait_timeout = wait_timeout
        self._attach_started = False
        super().__init__(relay.target)

    # The inner backend emits through the relay, so whoever adopts this backend (by
    # setting `_emit`, as a session does) receives the inner backend's events too.
    @property  # type: ignore[override]
    def _emit(self) -> EventSink:
        return self._relay.target

    @_emit.setter
    def _emit(self, value: EventSink) -> None:
        self._relay.target = value

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

    def not_supported(self, ability: str) -> NotSupported:
        # The abilities are the inner backend's, and so are the words refusing one.
        return self.inner.not_supported(ability)

    def release_locks(self) -> None:
        for lock in self._locks:
            lock.release()

    async def launch(self, request: LaunchRequest, configure: Configure) -> None:
        raise InvalidInput(
            "Simulator apps are launched by simctl, not by the debugger: run "
            "`xcrun simctl launch UDID BUNDLE_ID`, then attach (or attach with waitFor first)."
        )

    async def attach(self, request: AttachRequest, configure: Configure) -> None:
        """Attach with the request `prepare_sim_attach` returned. On failure the
        backend is disposed (locks released) and the error raised."""
        if self._attach_started:
            raise InvalidInput("This simulator session is already attached; detach first.")
        self._attach_started = True
        info = self.info
        waiting = request.pid is None
        limit = self._attach_timeout + (self._wait_timeout if waiting else 0.0)
        try:
            try:
                await asyncio.wait_for(self.inner.attach(request, configure), limit)
            except asyncio.TimeoutError:
                if not waiting:
                    raise Timeout(
                        f"LLDB did not finish attaching to pid {request.pid} within "
                        f"{self._attach_timeout:g} s. Check that the app is still running, "
                        "then try again.",
                        pid=request.pid,
                    ) from None
                raise Timeout(
                    f"{info.bundle_id} did not start within {self._wait_timeout:g} s while "
                    f"LLDB waited for a process named {info.waited_for!r}. Launch it with "
                    f"`xcrun simctl launch {info.udid} {info.bundle_id}` while attaching "
                    "with waitFor.",
                    bundle_id=info.bundle_id, process_name=info.waited_for,
                ) from None
            if waiting and self.inner.debuggee_pid is not None:
                info.pid = self.inner.debuggee_pid
                waited = self._locks[:]
                self._locks.append(
                    locks.acquire(f"lldb:{info.pid}", self._owner, busy_hint=BUSY_HINT)
                )
                for lock in waited:
                    lock.release()
                    self._locks.remove(lock)
        except BaseException:
            await self.dispose()
            raise
        if self._defaults is not None:
            try:
                self._defaults.remember(self._device, info.bundle_id)
            except OSError:
                pass  # a read-only state directory costs the defaults, not the attach

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

    async def disassemble(self, address: str, count: int = 32, offset: int = 0):
        return await self.inner.disassemble(address, count, offset)

    async def resolve_address(self, expression: str, frame_id: int | None) -> str:
        return await self.inner.resolve_address(expression, frame_id)

    async def read_memory(self, address: str, count: int) -> bytes:
        return await self.inner.read_memory(address, count)

    async def step_instruction(self, thread_id: int, over: bool) -> None:
        await self.inner.step_instruction(thread_id, over)

    async def set_data_breakpoints(self, specs):
        return await self.inner.set_data_breakpoints(specs)


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


async def prepare_sim_attach(
    emit: EventSink,
    *,
    simulator_id: str | None = None,
    simulator_name: str | None = None,
    bundle_id: str | None = None,
    pid: int | None = None,
    wait_for: bool = False,
    continue_on_attach: bool = True,
    backend: str | None = "lldb-cli",
    defaults: SimDefaults | None = None,
    owner: str | None = None,
    remember: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
    attach_timeout: float = DEFAULT_ATTACH_TIMEOUT,
    wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
) -> tuple[SimctlBackend, AttachRequest]:
    """Resolve the simulator and the process, take the process lock and create
    the LLDB backend, without attaching yet: `await backend.attach(request,
    configure)` does that, so `configure` can already reach the backend. A caller
    that does not attach must `dispose()` it to release the lock."""
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
    executable: str | None = None
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
            wait_name, executable = await app_executable(
                xcrun, device.udid, bundle, timeout=timeout
            )

    who = owner or f"tui-debugger session in process {os.getpid()}"
    key = f"lldb:{pid}" if pid is not None else f"lldb:wait:{device.udid}:{bundle}"
    held = [locks.acquire(key, who, busy_hint=BUSY_HINT)]

    # Both LLDB backends resume the process after attaching unless told stopOnEntry.
    extra: dict[str, object] = {} if continue_on_attach else {"stopOnEntry": True}
    if pid is not None:
        request = AttachRequest(pid=pid, extra=extra)
    else:
        request = AttachRequest(
            wait_for=wait_name,
            program=executable if executable and os.path.isfile(executable) else None,
            extra={**extra, "timeout": wait_timeout},
        )
    info = SimAttachInfo(
        udid=device.udid, simulator_name=device.name,
        runtime=device.runtime_name if device.runtime else None,
        bundle_id=bundle, pid=pid, backend=kind, waited_for=wait_name,
        used_defaults=used_defaults,
    )
    relay = EventRelay(emit)
    try:
        inner = await _create_lldb_backend(kind, relay, xcrun, timeout)
    except BaseException:
        held[0].release()
        raise
    sim_backend = SimctlBackend(
        relay, inner, info, held, device=device, owner=who,
        defaults=store if remember else None,
        attach_timeout=attach_timeout, wait_timeout=wait_timeout,
    )
    return sim_backend, request


async def attach_sim(
    emit: EventSink,
    *,
    simulator_id: str | None = None,
    simulator_name: str | None = None,
    bundle_id: str | None = None,
    pid: int | None = None,
    wait_for: bool = False,
    continue_on_attach: bool = True,
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

    Simulator: `simulator_id` (a UDID, or "booted") or `simulator_name`, else the
    remembered default. Process: `pid`, else `bundle_id` (or the remembered one)
    looked up in the simulator's launchd; with `wait_for`, an app that is not
    running yet is attached as soon as it starts. `backend`: lldb-cli (Xcode's
    lldb through `xcrun lldb`) or lldb-dap (`xcrun --find lldb-dap`); None reads
    TUI_DEBUGGER_SIM_BACKEND. With `continue_on_attach` (XcodeBuildMCP's default)
    the app runs on after the attach; without it, it stays stopped (a stopped
    event follows; lldb-cli gives it the reason "entry"). `configure` is awaited once when breakpoints may be set
    (see backends.base); use prepare_sim_attach when it needs the backend.
    `owner` names this session in another session's resource_busy message.
    `remember` stores the simulator and bundle id as the defaults for the next
    call. `timeout` bounds each xcrun call; `attach_timeout` the attach itself;
    `wait_timeout` how long waitFor waits for the app to start.
    """
    sim_backend, request = await prepare_sim_attach(
        emit, simulator_id=simulator_id, simulator_name=simulator_name,
        bundle_id=bundle_id, pid=pid, wait_for=wait_for,
        continue_on_attach=continue_on_attach, backend=backend, defaults=defaults,
        owner=owner, remember=remember, timeout=timeout,
        attach_timeout=attach_timeout, wait_timeout=wait_timeout,
    )
    await sim_backend.attach(request, configure or _no_configuration)
    return sim_backend, sim_backend.info
