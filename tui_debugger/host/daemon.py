"""The host process of a session: behind `tui-debugger start`, and behind
every session the TUI runs or attaches (host.py starts it).

It runs the launch (or attach) command, writes one JSON line with the result to
its stdout (read by whoever started it, who then joins), and serves the session
on its socket until the session ends, no client has used it for
`idle_timeout_s`, or it is told to stop. It exits when its session ends; after
the program ends on its own it lingers briefly so `output` and `status` can
still be read. Nothing it started outlives it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

from backends.errors import DebuggerError, InternalError
from backends.process import (
    HOST_TAG,
    become_subreaper,
    end_descendants,
    reap_orphans_forever,
    start_orphan_watchdog,
    start_time,
    stop_orphan_watchdog,
)

from backends import early_adapter, spare_program

from .. import paths

# The hub, the commands and pydantic are imported by serve(): a host told to
# (--debugpy) starts debugpy's adapter before it imports them.
if TYPE_CHECKING:
    from .wire import HostReady, HostSpec


def _write_serving(name: str) -> None:
    """Tell the starter (spec.announce) its session is served: it may join it
    while the start command goes on. The pipe stays open for HostReady."""
    from .wire import HostServing

    with contextlib.suppress(OSError, ValueError):
        sys.stdout.write(HostServing(serving=name).model_dump_json() + "\n")
        sys.stdout.flush()


def _write_ready(message: HostReady) -> None:
    try:
        sys.stdout.write(message.model_dump_json(exclude_none=True) + "\n")
        sys.stdout.flush()
        sys.stdout.close()
    except (OSError, ValueError):
        pass
    # Nothing else may write to the pipe the `start` command has stopped reading.
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)  # a warm host writes this once per session (host/warm_stay.py)


#: A signal told this host to end (serve): it then ends, and does not stay warm.
_signalled: int | bool = False

#: How often a host no client is joined to checks that its socket is still
#: there to be found (SessionServer.reachable).
SOCKET_CHECK_S = 2.0


async def serve(spec: HostSpec, as_json: bool = False) -> int:
    """Run the spec's command and serve its session. `as_json`: the client
    of a `cli` spec asked for --json."""
    from ..config import settings
    from ..execute import execute
    from .hub import Hub
    from ..commands.registry import View
    from ..models import SessionState
    from .wire import HostReady

    become_subreaper()
    start_orphan_watchdog()
    reaper = asyncio.get_running_loop().create_task(reap_orphans_forever())
    hub = Hub(serve=True)
    if spec.announce:
        hub.on_served = _write_serving
    stop_requested = asyncio.Event()
    #: wakes the loop below before its next tick: told to stop, or a call answered
    wake = asyncio.Event()
    loop = asyncio.get_running_loop()
    starting = loop.create_task(execute(
        hub, spec.command, spec.args or {}, origin=spec.origin or "cli", client_cwd=spec.cwd,
        view=View.from_wire(spec.view), client=spec.client))

    def stop(signum: int = 0) -> None:
        # Told to stop before the session is up (its starter gave up waiting):
        # abandon the start; the hub ends whatever it had begun.
        global _signalled
        _signalled = signum or True  # a host told to end by a signal does not stay warm
        if not starting.done():
            starting.cancel()
        stop_requested.set()
        wake.set()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop, int(sig))
    try:
        try:
            result = await starting
        finally:
            early_adapter.discard()  # an adapter started early that the launch did not take
            spare_program.discard()  # a spare program process the launch did not take
            from ..gcpause import resume

            resume()  # the start is over (daemon.main paused it)
    except asyncio.CancelledError:
        await hub.close_all()
        await end_descendants()
        return 1
    except DebuggerError as exc:
        _write_ready(_failed(spec, exc, as_json))
        await hub.close_all()
        return 1
    except Exception as exc:  # report, never a traceback to the user
        _write_ready(_failed(spec, InternalError(str(exc)), as_json))
        await hub.close_all()
        return 1
    answer = None
    if spec.cli is not None:
        from ..cli.parse import result_answer

        answer = result_answer(result, as_json)
    _write_ready(HostReady(ok=True, result=result.model_dump(mode="json", by_alias=True),
                           cli=answer))
    remember_program()
    session = hub.local(None)
    assert session is not None
    cfg = settings()
    ended_at: float | None = None
    end_seen: float | None = None  # when this loop first saw that someone asked for the end
    # A client that goes away without a word leaves the session here; it ends once
    # no client has come back for idle_timeout_s, or orphan_grace_s after the TUI
    # that started it (its owner) is gone, if no client has joined it since.
    last_client = loop.time()
    checked_socket = loop.time()
    server = hub.servers.get(session.name)
    if server is not None:
        server.on_change = wake.set
    # Read by the owner itself (host.py): it may have been killed during the launch.
    owner = spec.owner
    owner_started = spec.owner_started if owner is not None else None
    try:
        while not stop_requested.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(wake.wait(), 0.25)
            wake.clear()
            if session.clients:
                last_client = loop.time()
            if session.state == SessionState.terminated:
                ended_at = ended_at or loop.time()
                # A client still joined (a TUI) may restart the program: the host
                # stays while one is, then goes at once after `stop` (its answer
                # has reached its client by then), or linger_s after the end.
                since = loop.time() - max(ended_at, last_client)
                if session.end_requested:
                    end_seen = end_seen or loop.time()
                    # Once the call that asked is answered (every call is: its
                    # answer is with its client), else 0.3 s after it
                    quiet = min(loop.time() - end_seen, session.idle_seconds)
                    answered = server is not None and server.calls_running == 0
                    if not session.clients and (answered or quiet >= 0.3):
                        break
                if since >= cfg.linger_s:
                    break
            else:
                ended_at = end_seen = None  # restarted
            if (not session.clients and owner_started is not None and start_time(int(owner)) != owner_started
                  and loop.time() - last_client > cfg.orphan_grace_s):
                # Not at once: `tui-debugger ui` may rejoin it meanwhile.
                session.add_output("console", "Ending the session: the TUI that started "
                                   "it is gone.\n")
                break
            if (server is not None and loop.time() - checked_socket >= SOCKET_CHECK_S
                    and not session.clients):
                checked_socket = loop.time()
                if not server.reachable():
                    # No client can reach it any more: end now, not after idle_timeout_s.
                    session.add_output("console", f"Ending the session: its socket "
                                       f"{server.path} was removed, so no client could "
                                       "reach it again.\n")
                    break
            unused = min(session.idle_seconds, loop.time() - last_client)
            if cfg.idle_timeout_s and not session.clients and unused > cfg.idle_timeout_s:
                session.add_output("console", "Ending the session: idle timeout.\n")
                break
    finally:
        reaper.cancel()
        await hub.close_all()
        stop_orphan_watchdog()
        await end_descendants()
    return 0


def _failed(spec: HostSpec, exc: DebuggerError, as_json: bool) -> HostReady:
    from .wire import HostReady

    answer = None
    if spec.cli is not None:
        from ..cli.parse import error_answer

        answer = error_answer(exc, as_json)
    return HostReady(ok=False, error=exc.to_dict(), cli=answer)


def run_daemon(raw_spec: dict[str, Any]) -> int:
    # A host started before its starter read the settings (early_host.start_early)
    # exports the adapter settings itself; what its starter's environment
    # already holds wins, as it does in the starter (which checked them).
    from ..config import apply_config
    from .wire import HostSpec

    spec = HostSpec.model_validate(raw_spec)
    with contextlib.suppress(DebuggerError):
        apply_config()
    if spec.cwd:
        with contextlib.suppress(OSError):
            os.chdir(spec.cwd)
    as_json = False
    if spec.cli is not None:
        # cli.py's quick `start`: its command line is parsed here, where the
        # parser's modules are imported already, as commandline.py parses it.
        from ..cli.parse import start_on_host
        from .wire import HostReady

        args, answer, as_json = start_on_host(spec.cli, spec.columns)
        if answer is not None:
            _write_ready(HostReady(ok=False, cli=answer))
            return int(answer["rc"])
        spec = spec.model_copy(update={"command": "launch", "args": args})
    return asyncio.run(serve(spec, as_json))


def import_host_modules(debugpy: bool = False) -> None:
    """What run_daemon and serve import: the settings, the wire models, the
    hub, the commands (pydantic and pydantic-settings among them; ~0.8 s on an
    idle machine). Imported before the spec is read, so this cost overlaps the
    starter's own until its spec comes (`start` parses its command line, `run`
    too, an MCP server's spare waits for a launch) instead of following it.
    Importing them depends on nothing in the spec (the host runs with -P).
    `debugpy`: a Python launch is expected; its backend and the interpreter
    look-up too."""
    from ..cli import parse as cliparse
    from .. import config, execute, models
    from . import hub, wire  # noqa: F401
    from ..commands import registry  # noqa: F401

    if debugpy:
        from backends import python_env  # noqa: F401
        from backends.adapters import ADAPTERS

        with contextlib.suppress(Exception):  # one that cannot load says so at launch
            ADAPTERS["debugpy"].backend_class()


def read_spec(preload: bool = False) -> dict[str, Any] | None:
    """The spec host.py writes to our stdin (never on the command line, where
    `ps` shows a program's environment to every user); stdin then reads the
    null device, so nothing started here inherits the pipe. A spare host
    (early_host.SpareHost, `preload`) first imports every backend while nobody waits;
    None when its starter let it go instead of sending a spec."""
    if preload:
        from backends.adapters import ADAPTERS

        for entry in ADAPTERS.values():
            with contextlib.suppress(Exception):  # one that cannot load says so at launch
                entry.backend_class()
    data = sys.stdin.buffer.read()
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    if not data.strip():
        return None
    spec = json.loads(data)
    if not isinstance(spec, dict):
        raise ValueError("the daemon's spec is not a JSON object")
    return spec


def main(argv: list[str] | None = None) -> int:
    """`python -P -m tui_debugger.host.daemon [--spare]`, its spec on stdin: what
    host.py starts. It skips the CLI's parser, which a host does not need, so a
    session starts sooner."""
    argv = sys.argv[1:] if argv is None else argv
    from ..gcpause import pause

    #: the starter's environment, before a watchdog's tag or a setting is added
    starter_env = dict(os.environ)
    pause()  # until the start command is answered (serve)
    if "--debugpy" in argv:
        start_debugpy_early()
        start_remembered_program()
    try:
        import_host_modules(debugpy="--debugpy" in argv)
        from .warm_stay import WarmState

        state = WarmState(starter_env, start_adapter=start_debugpy_early, read_spec=read_spec)
        spec = read_spec(preload="--spare" in argv)
        if spec is None:
            return 0
        rc = run_daemon(spec)
        while not _signalled:  # a failed launch too: the host is as it was
            state.served(spec)
            spec = state.stay()  # the next session's, once a starter takes this host
            if spec is None:
                return 0
            rc = run_daemon(spec)
        if _signalled:
            # Told to end (or a starter gave up on its start): it does not stay warm.
            print(f"host: ended by signal {_signalled}; not staying warm", file=sys.stderr,
                  flush=True)
        return rc
    finally:
        early_adapter.discard()
        spare_program.discard()


def start_debugpy_early() -> None:
    """debugpy's adapter, started before this host imports the hub and the
    commands, as the debugpy backend would start it: in a process group of its
    own, to die with this process, below this (subreaper) host and carrying its
    watchdog's tag, so the backend's own command and environment match it
    (backends/early_adapter.py)."""
    from backends.process import _LIBC, _die_with

    become_subreaper()
    start_orphan_watchdog()
    early_adapter.start(os.getcwd(), preexec=_die_with(os.getpid()) if _LIBC is not None else None)


def _memory_path() -> str | None:
    try:
        return str(paths.runtime_dir() / spare_program.MEMORY_FILE)
    except Exception:  # no runtime directory of ours: nothing remembered
        return None


def start_remembered_program() -> None:
    """The program the last launch in this directory started, up to its
    launch (backends/spare_program.py), while this host imports: a cold
    host's launch takes it as a warm host's takes its spare (a warm host
    starts its spare from its own last launch, warm_stay)."""
    from backends.process import _LIBC, _die_with

    path = _memory_path()
    if path is None or spare_program.pending():
        return
    cwd = os.getcwd()
    if spare_program.recall(spare_program.read_memory(path, cwd), cwd):
        spare_program.start(preexec=_die_with(os.getpid()) if _LIBC is not None else None)


def remember_program() -> None:
    """What this session's launch started, for the next cold host in its
    directory (start_remembered_program); written by a thread, off the way
    of the session's first answer."""
    cwd = spare_program.last_directory()
    path = _memory_path()
    if cwd is None or path is None:
        return
    # None (its launch set variables of its own): the directory's old entry goes.
    memory = spare_program.recollection(ignore=frozenset({HOST_TAG}))
    import threading

    threading.Thread(target=spare_program.write_memory, args=(path, cwd, memory),
                     name="program-memory", daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
