"""The headless session host behind `tui-debugger start`.

It runs the launch (or attach) command, writes one JSON line with the result to
its stdout (read by the `start` command, which then returns), and serves the
session on its socket until the session ends, the idle timeout passes, or it
is told to stop. It exits when its session ends; after the program ends on its
own it lingers briefly so `output` and `status` can still be read.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from typing import Any

from backends.errors import DebuggerError, InternalError
from backends.process import become_subreaper, end_descendants, reap_orphans_forever

from .config import settings
from .execute import execute
from .hub import Hub
from .models import SessionState


def _write_ready(message: dict[str, Any]) -> None:
    try:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()
        sys.stdout.close()
    except (OSError, ValueError):
        pass
    # Nothing else may write to the pipe the `start` command has stopped reading.
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)


async def serve(spec: dict[str, Any]) -> int:
    become_subreaper()
    reaper = asyncio.get_running_loop().create_task(reap_orphans_forever())
    hub = Hub(serve=True)
    stop_requested = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop_requested.set)
    try:
        result = await execute(hub, spec["command"], spec.get("args") or {}, origin="cli",
                               client_cwd=spec.get("cwd"))
    except DebuggerError as exc:
        _write_ready({"ok": False, "error": exc.to_dict()})
        await hub.close_all()
        return 1
    except Exception as exc:  # report, never a traceback to the user
        _write_ready({"ok": False, "error": InternalError(str(exc)).to_dict()})
        await hub.close_all()
        return 1
    _write_ready({"ok": True, "result": result.model_dump(mode="json", by_alias=True)})
    session = hub.local(None)
    assert session is not None
    cfg = settings()
    ended_at: float | None = None
    try:
        while not stop_requested.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop_requested.wait(), 0.25)
            if session.state == SessionState.terminated:
                if session.end_requested:
                    await asyncio.sleep(0.3)  # let the answer to `stop` reach its client
                    break
                ended_at = ended_at or loop.time()
                if loop.time() - ended_at >= cfg.linger_s:
                    break
            if cfg.idle_timeout_s and session.idle_seconds > cfg.idle_timeout_s and not session.clients:
                session.output.append("console", "Ending the session: idle timeout.\n")
                break
    finally:
        reaper.cancel()
        await hub.close_all()
        await end_descendants()
    return 0


def run_daemon(spec: dict[str, Any]) -> int:
    if spec.get("cwd"):
        with contextlib.suppress(OSError):
            os.chdir(spec["cwd"])
    return asyncio.run(serve(spec))
