"""Attaching to a Ray task or actor that waits for a debugger (`debug_attach`
with `ray`, `tui-debugger ray attach`): backends/ray finds the paused workers;
each is a debugpy server, attached like any other."""

from __future__ import annotations

import asyncio
import re
from typing import Any, Awaitable, Callable

from backends.errors import InvalidInput
from backends.ray import PausedTask, dashboard_url, list_paused

from ..models import SessionState
from .registry import CommandContext

#: Ray's own frames, which its debugger hook stops in before the user's.
_RAY_FRAME = re.compile(r"[/\\](site|dist)-packages[/\\]ray[/\\]")
#: Step-outs at most from Ray's hook to the frame that called breakpoint().
_MAX_STEP_OUTS = 4


def session_name_for(task: PausedTask) -> str:
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


async def attach_ray(ctx: CommandContext, args: Any,
                     attach: Callable[..., Awaitable[Any]]) -> Any:
    """Attach to one paused worker (the one whose pid is given, else the first),
    say which others wait, and show the user's frame rather than Ray's hook."""
    dashboard = dashboard_url(args.ray or None)
    tasks = await asyncio.to_thread(list_paused, dashboard)
    task = pick(tasks, args.pid, dashboard)
    notes = [f"Ray ({dashboard}): attached to {task.label()}."]
    others = [t for t in tasks if t is not task]
    more = None
    if others:
        more = (f"{len(others)} more paused: " + "; ".join(
            f"{t.name} (pid {t.pid})" for t in others[:10])
            + (" …" if len(others) > 10 else "")
            + ". Attach each the same way with its pid.")
        notes.append(more)
    target = args.model_copy(update={
        "ray": None, "pid": None, "host": task.host, "port": task.port, "adapter": "debugpy",
        "session_name": args.session_name or session_name_for(task)})
    # Ray's hook asks debugpy to stop in its own frame; with justMyCode that
    # stop is dropped and the task runs on, so Ray's frames are stepped out of here.
    status = await attach(ctx, target, extra={"justMyCode": False}, notes=notes)
    session = ctx.session
    if session is not None:
        session.program = args.program or f"ray task {task.name}"
        await into_user_frame(session, ctx.origin)
        keep_out_of_ray_frames(session)
        seen = {(t.pid, t.port) for t in tasks}
        session.ray_watch = asyncio.get_running_loop().create_task(  # type: ignore[attr-defined]
            watch_new_pauses(session, dashboard, seen))
        from .context import status_of

        ctx.hub.update_meta(session)
        status = status_of(session)
    if more:
        status.message = more
    return status


async def into_user_frame(session: Any, origin: str) -> None:
    """After Ray's breakpoint hook stopped in Ray's own frames, step out to the
    frame that called breakpoint(). A post-mortem stop is left as it is: it
    shows the frame that raised."""
    await session.wait_for_stop(10.0)
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
        if event.kind == "stopped" and not busy:
            busy = True
            loop.create_task(settle())

    session.add_listener(on_event)


#: Seconds between two looks at the cluster for tasks paused since.
WATCH_EVERY = 2.0


async def watch_new_pauses(session: Any, dashboard: str, seen: set[tuple[int, int]]) -> None:
    """While the session lives, say (in its output, which every client sees)
    when more tasks of the cluster pause for a debugger, and how to attach."""
    from backends.errors import DebuggerError

    from ..persist import add_note

    while session.state != SessionState.terminated:
        await asyncio.sleep(WATCH_EVERY)
        try:
            tasks = await asyncio.to_thread(list_paused, dashboard, read_stacks=False)
        except DebuggerError:
            continue  # the dashboard restarting, or gone with the cluster: say nothing
        new = [t for t in tasks if (t.pid, t.port) not in seen]
        if not new or session.state == SessionState.terminated:
            continue
        seen.update((t.pid, t.port) for t in new)
        names = "; ".join(f"{t.name} (pid {t.pid})" for t in new[:10])
        add_note(session, f"Ray: {len(new)} more task{'s' if len(new) > 1 else ''} paused: "
                          f"{names}. Attach with `tui-debugger ray attach` (MCP: debug_attach "
                          f"with ray and the pid).")
