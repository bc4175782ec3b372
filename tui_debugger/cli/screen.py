"""The warm screen's process (tui_debugger/warm_screen.py):
`python -P -m tui_debugger.cli.screen`, started by a warm host that served a
TUI's session. It imports what `run` imports on its way to the first stop
(the command line, the TUI, Textual), then waits, as a warm host waits, for
a `run` in a terminal of this user and project to take it; taken, it becomes
that `run`: the starter's terminal, environment and directory, its command
line, its exit code told back.
"""

import contextlib
import os
import sys
import time


def _import_the_tui() -> None:
    """What `run` imports before its first stop is on screen."""
    from ..host import early, start  # noqa: F401
    from ..tui import app  # noqa: F401
    from . import full, quick  # noqa: F401


def _rehearse() -> None:
    """What the TUI's first screen does the first time in a process, done
    once before a `run` takes this one: traced on a warm `run`, the screen
    spent ~0.3 s of CPU from the take to the first stop on screen, while the
    stop itself had long arrived. A headless run of the app's screen, with no
    session (it joins none, starts none, and exits after its first paint):
    the widgets' CSS parsed, their lazy imports made, Textual's and Rich's
    caches filled; Python's lexer compiled; and the command models that
    pydantic completes at their first use completed now."""
    import asyncio

    from ..tui import app as app_module
    from ..tui.app import DebuggerApp
    from ..tui.widgets.source_view import warm_lexer

    class Rehearsal(DebuggerApp):
        # the app's own stylesheet (a relative CSS_PATH is read beside the class)
        CSS_PATH = os.path.join(os.path.dirname(app_module.__file__), str(DebuggerApp.CSS_PATH))

        def on_load(self) -> None:
            pass  # no session: nothing joined early

        def on_mount(self) -> None:
            self._after_compose()
            self.call_after_refresh(self.exit)

    with contextlib.suppress(Exception):
        warm_lexer("program.py")
    with contextlib.suppress(Exception):
        asyncio.run(asyncio.wait_for(
            Rehearsal("join", cwd=os.getcwd()).run_async(headless=True, size=(160, 45)), 30))
    with contextlib.suppress(Exception):
        _complete_models()


def _complete_models() -> None:
    """pydantic defers a model whose fields name a model defined later until
    its first validation (~13 of them on the way to a first stop): done now."""
    from pydantic import BaseModel

    seen: set[type] = set()
    stack: list[type] = [BaseModel]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
    for model in seen:
        if not getattr(model, "__pydantic_complete__", True) and \
                model.__module__.startswith(("tui_debugger.", "backends.")):
            with contextlib.suppress(Exception):
                model.model_rebuild()


def main(argv: list[str] | None = None) -> int:
    """`--after PID`: the TUI that started it; its idle time counts from that
    process's end."""
    from .. import paths, warm, warm_screen
    from backends.procinfo import pid_alive

    argv = sys.argv[1:] if argv is None else argv
    after = int(argv[1]) if argv[:1] == ["--after"] and argv[1:2] and argv[1].isdigit() else 0
    from ..config import ConfigError, reload_settings

    try:
        cfg = reload_settings()
    except ConfigError as exc:
        print(f"warm screen: not started ({exc})", file=sys.stderr, flush=True)
        return 0
    if not (cfg.warm and warm.enabled() and cfg.warm_idle_s > 0):
        return 0
    env = dict(os.environ)
    cwd = os.getcwd()
    stamp = warm.install_stamp()
    # Claimed first, described as starting: `warm stop` and a second TUI see
    # it at once (a starter takes only a ready one). While it imports, a
    # SIGTERM ends it as by default: the socket and description it leaves are
    # a dead process's, which the next claim and every reader pass over.
    listener = warm.Listener.claim(warm_screen.PLACE)
    if listener is None:
        return 0  # another is waiting, or starting
    log = str(paths.runtime_dir() / f"daemon-{os.getpid()}.log")
    listener.describe({**_description(cwd, log), "ready": False})
    try:
        _import_the_tui()
        _rehearse()
    except Exception as exc:
        print(f"warm screen: ending ({exc!r})", file=sys.stderr, flush=True)
        listener.release()
        return 0
    import gc

    gc.collect()
    gc.freeze()  # what the imports made is kept, not walked by every collection
    ended = _end_on_signals()
    try:
        listener.describe({**_description(cwd, log), "ready": True})
        print(f"warm screen: waiting for a run, up to {cfg.warm_idle_s} s after pid {after} ends",
              file=sys.stderr, flush=True)
        told_until = False
        while True:
            # While its TUI runs, the person has not come to the next `run` yet:
            # the idle time starts at that TUI's end.
            alive = bool(after) and pid_alive(after)
            if not alive and not told_until:
                told_until = True
                listener.describe({**_description(cwd, log), "ready": True,
                                   "until": time.time() + cfg.warm_idle_s})
            try:
                conn, request = warm.wait_for_taker(
                    listener, idle_s=1.0 if alive else cfg.warm_idle_s, stamp=stamp,
                    project=paths.project_of(cwd), env=env, log=log,
                    still_wanted=_still_wanted)
                break
            except warm.Ended as exc:
                if str(exc) != "idle time over" or not alive:
                    raise
    except BaseException as exc:  # warm.Ended, a signal, anything: it ends, cleanly
        print(f"warm screen: ending ({exc!r})", file=sys.stderr, flush=True)
        listener.release()
        return 0
    finally:
        ended()
    fds = warm_screen.receive_terminal(conn)
    argv = request.get("argv")
    if not fds or not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        print("warm screen: taken without a terminal or a command line; ending",
              file=sys.stderr, flush=True)
        conn.close()
        return 0
    print(f"warm screen: taken for {argv[:1]}", file=sys.stderr, flush=True)
    log_file = os.fdopen(os.dup(2), "w", buffering=1)  # this log, once fd 2 is the terminal
    warm_screen.become_the_starter(request, fds)
    warm_screen.pass_on_signals(conn)
    from ..config import settings

    settings.cache_clear()  # read again, in the starter's environment
    from . import main as door

    rc = 1
    try:
        rc = door.main(argv, screen=False)
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc(file=log_file)
        raise
    finally:
        print(f"warm screen: the TUI ended ({rc})", file=log_file, flush=True)
        warm_screen.tell_exit(conn, rc)
    return rc


def _description(cwd: str, log: str) -> dict[str, object]:
    from .. import paths, warm

    return {"pid": os.getpid(), "python": sys.executable, "version": warm.__version__,
            "project": paths.project_of(cwd), "cwd": cwd, "since": time.time(), "log": log}


def _end_on_signals():
    """SIGTERM, SIGINT and SIGHUP end the wait (warm.Ended: the socket and the
    description go with it); the returned function puts them back."""
    import signal

    from .. import warm

    def end(signum: int, _frame: object) -> None:
        raise warm.Ended(f"signal {signum}")

    old = {sig: signal.signal(sig, end) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    return lambda: [signal.signal(sig, handler or signal.SIG_DFL) for sig, handler in old.items()]


def _still_wanted() -> bool:
    from ..config import ConfigError, reload_settings

    try:
        return bool(reload_settings().warm)
    except ConfigError:
        return False


if __name__ == "__main__":
    sys.exit(main())
