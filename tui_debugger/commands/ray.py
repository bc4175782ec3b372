"""Attaching to the Ray tasks and actors that wait for a debugger (`debug_attach`
with `ray`, `tui-debugger ray attach`): backends/ray finds the paused workers;
each is a debugpy server, attached like any other, as a child session of one
root session named `ray` in one host (docs/architecture.md, "Ray: one tree").

The root stands for the cluster: it has no program of its own, stays
"running" while the cluster does, and answers only what applies to a tree
(status, sessions, output, breakpoints, which it mirrors to every worker,
detach and stop). Its children are the workers, reached by name. While it
lives it looks at the cluster every WATCH_EVERY seconds and attaches to tasks
that paused since, as new children. Ending it, or any worker's session,
detaches: the workers and the cluster run on; they are never ours to end."""

import asyncio
import contextlib
import re
import time
from typing import Any, Awaitable, Callable

from pydantic import Field

from backends.errors import DebuggerError, InvalidInput
from backends.models import AttachRequest, empty_list
from backends.ray import PausedTask, dashboard_url, list_paused

from ..events import Stopped
from ..models import SessionState
from .context import is_ray_root, status_of
from .registry import ActionResult, Args, Command, CommandContext, register
from .views import SessionStatus

#: the root session's name, unless the caller names it
ROOT_NAME = "ray"
#: Ray's own frames, which its debugger hook stops in before the user's.
_RAY_FRAME = re.compile(r"[/\\](site|dist)-packages[/\\]ray[/\\]")
#: Step-outs at most from Ray's hook to the frame that called breakpoint().
_MAX_STEP_OUTS = 4
#: what the root answers itself; anything else acts on one worker
ROOT_COMMANDS = {"status", "sessions", "detach", "terminate", "output", "activity",
                 "breakpoint_add", "breakpoint_remove", "breakpoint_list", "breakpoint_update",
                 "ray_attach"}


def session_name_for(task: PausedTask) -> str:
    """The task's (or actor method's) name and the worker's pid: two workers of
    one function are told apart by their pids."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", task.name.rsplit(".", 1)[-1]).strip("-.") or "task"
    return f"ray-{slug[:24]}-{task.pid}"


def pick(tasks: list[PausedTask], pid: int | None, dashboard: str) -> PausedTask:
    if not tasks:
        raise InvalidInput(
            f"No task or actor of the Ray cluster at {dashboard} waits for a debugger. A "
            "`breakpoint()` in a @ray.remote function or actor method pauses one (and "
            "RAY_DEBUG_POST_MORTEM=1 pauses a task that raises); `tui-debugger ray` lists them.")
    if pid is None:
        return tasks[0]
    for task in tasks:
        if task.pid == pid:
            return task
    listed = "; ".join(f"pid {t.pid}: {t.name}" for t in tasks)
    raise InvalidInput(f"No paused Ray worker has pid {pid}. Paused: {listed}.")


def workers_of(hub: Any, root: Any) -> list[Any]:
    return [s for s in hub.sessions.values() if s.parent == root.name]


def stop_place(stop: Any, short: bool = False) -> str:
    """` at file:line`, and the exception where it is one: a worker's place in
    a listing (`short`: the file's name, the exception's first 80 characters)."""
    if stop is None or stop.location is None or not stop.location.path:
        return ""
    path = stop.location.path.rsplit("/", 1)[-1] if short else stop.location.path
    where = f" at {path}:{stop.location.line}"
    if stop.reason == "exception":
        text = stop.text or stop.description or "exception"
        where += f" ({text[:80] if short else text})"
    return where


def _worker_line(session: Any) -> str:
    return f"{session.name} {session.state.value}{stop_place(session.stop, short=True)}"


def root_guard(hub: Any, root: Any, command_id: str) -> None:
    """The root has no program: a command for one worker says which ones there are."""
    if command_id in ROOT_COMMANDS:
        return
    workers = workers_of(hub, root)
    listed = "; ".join(_worker_line(w) for w in workers) or "none attached yet"
    raise InvalidInput(
        f"Session {root.name!r} stands for the Ray cluster; {command_id} acts on one of its "
        f"workers. Name one with --session NAME (MCP: debugSessionId): {listed}.")


async def make_root(ctx: CommandContext, dashboard: str, name: str | None) -> Any:
    hub = ctx.hub
    root = await hub.create_session(name or ROOT_NAME, hint="ray", cwd=ctx.client_cwd,
                                    origin=ctx.origin)
    root.adapter = "ray"
    root.program = f"Ray cluster at {dashboard}"
    root.cwd = ctx.client_cwd or root.cwd
    root.metadata["ray"] = dashboard  # is_ray_root's mark
    root.leave_running = True
    root.command_guard = lambda command_id: root_guard(hub, root, command_id)
    # It stands for the cluster, which runs: its host lives until it is ended.
    root.set_state(SessionState.running)
    hub.update_meta(root)
    return root


async def attach_ray(ctx: CommandContext, args: Any,
                     attach: Callable[..., Awaitable[Any]] | None = None) -> Any:
    """A new host: the root `ray` and a child session for each paused worker
    (or only the one whose pid is given)."""
    dashboard = dashboard_url(args.ray or None)
    tasks = await asyncio.to_thread(list_paused, dashboard)
    chosen = [pick(tasks, args.pid, dashboard)] if args.pid is not None or not tasks else tasks
    root = await make_root(ctx, dashboard, args.session_name)
    ctx.session = root
    try:
        attached, errors = await attach_workers(ctx.hub, root, chosen, ctx.origin)
        if not attached:
            raise errors[0]
    except BaseException:
        await ctx.hub.close_session(root.name)
        raise
    seen = {(t.pid, t.port) for t in tasks}
    root.ray_watch = asyncio.get_running_loop().create_task(  # type: ignore[attr-defined]
        watch_new_pauses(ctx.hub, root, dashboard, seen))

    status = status_of(root)
    status.message = summary(ctx.hub, root, attached, errors,
                             [t for t in tasks if t not in chosen])
    return status


def summary(hub: Any, root: Any, attached: list[Any], errors: list[DebuggerError],
            left: list[PausedTask]) -> str:
    text = (f"Ray ({root.metadata.get('ray')}): {len(attached)} paused worker"
            f"{'s' if len(attached) != 1 else ''} attached, each a session under {root.name!r}: "
            + "; ".join(_worker_line(s) for s in attached)
            + ". Act on one with --session NAME (MCP: debugSessionId).")
    if left:
        text += (f" {len(left)} more paused: "
                 + "; ".join(f"{t.name} (pid {t.pid})" for t in left[:10])
                 + (" …" if len(left) > 10 else "")
                 + ". Attach each the same way with its pid.")
    if errors:
        text += " Not attached: " + "; ".join(e.message for e in errors)
    return text


async def attach_workers(hub: Any, root: Any, tasks: list[PausedTask],
                         origin: str) -> tuple[list[Any], list[DebuggerError]]:
    """A child session of `root` for each task's worker, side by side; those
    already attached are left as they are."""
    have = {s.metadata.get("pid") for s in workers_of(hub, root)
            if s.state != SessionState.terminated}
    results = await asyncio.gather(*(attach_worker(hub, root, t, origin)
                                     for t in tasks if t.pid not in have),
                                   return_exceptions=True)
    attached = [r for r in results if not isinstance(r, BaseException)]
    errors = [r if isinstance(r, DebuggerError) else DebuggerError(str(r))
              for r in results if isinstance(r, BaseException)]
    return attached, errors


async def attach_worker(hub: Any, root: Any, task: PausedTask, origin: str) -> Any:
    from ..persist import add_note
    from ..tree import _publish

    name = session_name_for(task)
    if name in hub.sessions and hub.sessions[name].state == SessionState.terminated:
        await hub.close_session(name)  # its task ended before; the worker paused again
    child = await hub.create_session(name, hint=name, parent=root)
    child.leave_running = True  # only attached: a worker of the cluster, never ours to end
    child.cwd = root.cwd
    child.program = f"ray task {task.name}"
    child.metadata.update({"pid": task.pid, "ray_task": task.name})
    # The root's host lives as long as its workers are used.
    child.add_listener(lambda event: setattr(root, "_last_activity", time.monotonic()))
    hub.update_meta(child)
    _publish(hub, child, "started", text=f"Ray: {task.label()}, as session {name}.")
    add_note(root, f"Ray: attached {task.label()}, as session {name}.")
    request = AttachRequest(host=task.host, port=task.port, program=child.program,
                            extra={"justMyCode": False})
    try:
        # Ray's hook asks debugpy to stop in its own frame; with justMyCode that
        # stop is dropped and the task runs on, so Ray's frames are stepped out of here.
        await child.attach(request, "debugpy", origin="session")
        await into_user_frame(child, origin, FIRST_STOP_S)
        keep_out_of_ray_frames(child)
    except BaseException:
        with contextlib.suppress(Exception):
            await hub.close_session(child.name)
        raise
    hub.update_meta(child)
    return child


#: how long an attach waits for the worker's first stop: 16 attached at once on a
#: loaded 2-core machine took more than 10 s (benchmarks/ray_scale.py)
FIRST_STOP_S = 30.0


async def into_user_frame(session: Any, origin: str, first_wait: float = 10.0) -> None:
    """After Ray's breakpoint hook stopped in Ray's own frames, step out to the
    frame that called breakpoint(). A post-mortem stop is left as it is: it
    shows the frame that raised."""
    await session.wait_for_stop(first_wait)
    for _ in range(_MAX_STEP_OUTS):
        stop = session.stop
        if session.state != SessionState.stopped or stop is None or stop.reason == "exception":
            return
        path = stop.location.path if stop.location else None
        if not path or not _RAY_FRAME.search(path):
            return
        generation = await session.resume("step_out", "session")
        await session.wait_for_stop(10.0, since_generation=generation)


def keep_out_of_ray_frames(session: Any) -> None:
    """The worker stays attached after its task goes on, so its next
    breakpoint() (this task's, or a later task's on the same worker) stops in
    this session, in Ray's frames again: step out of them each time."""
    loop = asyncio.get_running_loop()
    busy = False

    async def settle() -> None:
        nonlocal busy
        try:
            await into_user_frame(session, "session")
        except Exception:  # noqa: BLE001 - the person can still step out by hand
            pass
        finally:
            busy = False

    def on_event(event: Any) -> None:
        nonlocal busy
        if isinstance(event, Stopped) and not busy:
            busy = True
            loop.create_task(settle())

    session.add_listener(on_event)


#: Seconds between two looks at the cluster for tasks paused since.
WATCH_EVERY = 2.0


async def watch_new_pauses(hub: Any, root: Any, dashboard: str,
                           seen: set[tuple[int, int]]) -> None:
    """While the root lives, attach to the tasks of the cluster that pause for a
    debugger since, as new workers of the tree; every client hears of each (a
    `process` event, a line in the root's output)."""
    from ..persist import add_note

    while root.state != SessionState.terminated:
        await asyncio.sleep(WATCH_EVERY)
        try:
            tasks = await asyncio.to_thread(list_paused, dashboard, read_stacks=False)
        except DebuggerError:
            continue  # the dashboard restarting, or gone with the cluster: say nothing
        new = [t for t in tasks if (t.pid, t.port) not in seen]
        if not new or root.state != SessionState.running:
            continue
        seen.update((t.pid, t.port) for t in new)
        # A worker already attached pauses again in its own session.
        attached, errors = await attach_workers(hub, root, new, "session")
        for exc in errors:
            add_note(root, f"Ray: a newly paused task was not attached: {exc.message}")


class RayAttachArgs(Args):
    ray: str | None = Field(None, description="the dashboard (default: the root's)")
    pids: list[int] = Field(default_factory=empty_list, description="the workers to attach")
    every: bool = Field(False, description="every paused worker not attached yet")


class RayWorkers(ActionResult):
    root: str
    dashboard: str
    workers: list[SessionStatus] = Field(default_factory=empty_list)
    attached: list[str] = Field(default_factory=empty_list, description="attached by this call")
    errors: list[str] = Field(default_factory=empty_list)
    message: str | None = None


async def _ray_attach(ctx: CommandContext, args: RayAttachArgs) -> RayWorkers:
    """More workers for a live root (`tui-debugger ray attach` with a root
    already there, `debug_attach` with `ray` likewise): the named pids, or
    every paused one with `every`; none but a listing of the tree otherwise."""

    root = ctx.session
    if not is_ray_root(root):
        raise InvalidInput(f"Session {getattr(root, 'name', None)!r} is not a Ray root; "
                           "`tui-debugger ray attach` makes one.")
    dashboard = dashboard_url(args.ray) if args.ray else root.metadata["ray"]
    attached: list[Any] = []
    errors: list[DebuggerError] = []
    if args.pids or args.every:
        tasks = await asyncio.to_thread(list_paused, dashboard)
        chosen = tasks if args.every else [pick(tasks, pid, dashboard) for pid in args.pids]
        attached, errors = await attach_workers(ctx.hub, root, chosen, ctx.origin)
    workers = workers_of(ctx.hub, root)
    return RayWorkers(root=root.name, dashboard=dashboard,
                      workers=[status_of(w) for w in workers],
                      attached=[s.name for s in attached], errors=[e.message for e in errors],
                      message=summary(ctx.hub, root, attached, errors, []) if attached else None)


register(Command(
    id="ray_attach", help="Attach more paused Ray workers to the live `ray` session.",
    description="Attach more paused Ray workers (pids, or every) to a live Ray root session.",
    args=RayAttachArgs, result=RayWorkers, handler=_ray_attach, tui_action=False,
))


async def join_live_root(router: Any, validated: Any) -> SessionStatus | None:
    """`debug_attach` with `ray` while a root of that name lives: its host
    attaches the workers (one root per cluster, as the person's and the
    agent's are the same tree), and the caller joins it. None: no such root."""
    from .. import paths

    name = validated.session_name or ROOT_NAME
    if not any(s.name == name for s in paths.live_sessions()):
        return None
    raw = {"ray": validated.ray or None,
           **({"pids": [validated.pid]} if validated.pid else {"every": True})}
    added = await router.call("ray_attach", raw, session=name)
    status = await router.call("status", session=name)
    status.message = added.message or (
        f"Joined the live Ray session {name!r}; its workers: "
        + "; ".join(f"{w.session} {w.state}" for w in added.workers) + ".")
    return status
