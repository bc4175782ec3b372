"""A host that stays warm once its session ended (tui_debugger/warm.py): what
it does between one session and the next. daemon.main runs a session, then
asks `stay()` for the next one; None ends the host.

Staying, the host goes back to what its starter gave it (the environment and
the directory of the session it hosted), becomes the user's warm host if no
other is one, starts debugpy's adapter as a host told `--debugpy` does and a
spare of the last program's process (its Python with debugpy and pydevd
imported, backends/spare_program.py), and waits. Taken, it adopts the new
starter's environment (the starter checked it matches but for
`warm.VOLATILE`), puts the connection where a cold host has its spec pipe
(stdin) and its answer pipe (stdout), and reads the spec from it: the rest of
the session is a cold host's. Nothing it starts while warm outlives it: the
adapter and the spare die with it (PR_SET_PDEATHSIG, the watchdog's tag), and
an end by a signal, `warm stop`, the idle time or a new version of the
package ends them and the watchdog first.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import time
from typing import Any

from backends import early_adapter, spare_program
from backends.process import HOST_TAG, stop_orphan_watchdog

from .. import paths, warm


class WarmState:
    """What a host keeps from one session to the next."""

    def __init__(self, starter_env: dict[str, str], *, start_adapter: Any, read_spec: Any) -> None:
        #: daemon.start_debugpy_early and daemon.read_spec (daemon.py imports this module)
        self._start_adapter, self._read_spec = start_adapter, read_spec
        #: the environment of the starter whose session this host runs
        self.env = {k: v for k, v in starter_env.items() if k != HOST_TAG}
        #: its package as imported (warm.install_stamp); changed: it ends
        self.stamp = warm.install_stamp()
        self.cwd = os.getcwd()

    def served(self, spec: dict[str, Any]) -> None:
        """The session of `spec` has ended (it was served)."""
        cwd = spec.get("cwd")
        if isinstance(cwd, str) and os.path.isdir(cwd):
            self.cwd = cwd

    def stay(self) -> dict[str, Any] | None:
        """Wait, warm, for the next session: its spec, or None to end."""
        while True:
            taken = self._wait()
            if taken is None:
                return None
            spec = self._read_one_spec()
            if spec is not None:
                return spec
            # The starter let it go without a spec: warm again.
            early_adapter.discard()
            spare_program.discard()
            stop_orphan_watchdog()

    def _wait(self) -> bool | None:
        from ..config import ConfigError, apply_config, reload_settings, settings

        _restore_env(self.env)
        with contextlib.suppress(OSError):
            os.chdir(self.cwd)
        try:
            cfg = reload_settings()
        except ConfigError:
            return None
        if not (cfg.warm and warm.enabled() and cfg.warm_idle_s > 0):
            return None
        listener = warm.Listener.claim()
        if listener is None:
            return None  # another host is the warm one
        ended = _end_on_signals()
        try:
            with contextlib.suppress(Exception):
                apply_config()  # as the next session's host will: the adapter's environment
            if not early_adapter.pending():
                self._start_adapter()
            if not spare_program.pending():
                _start_spare_program()
            from ..gcpause import thaw

            thaw()  # what the last session's start froze (gcpause.resume)
            gc.collect()  # the last session's cycles, before the wait
            log = _log_path()
            now = time.time()
            listener.describe({
                "pid": os.getpid(), "python": sys.executable, "version": warm.__version__,
                "project": paths.project_of(self.cwd), "cwd": self.cwd,
                "since": now, "until": now + cfg.warm_idle_s, "log": log,
                "adapter": "debugpy" if early_adapter.pending() else None})
            print(f"warm host: waiting up to {cfg.warm_idle_s} s for the next session",
                  file=sys.stderr, flush=True)
            conn, request = warm.wait_for_taker(
                listener, idle_s=cfg.warm_idle_s, stamp=self.stamp,
                project=paths.project_of(self.cwd), env=self.env, log=log,
                still_wanted=_still_wanted)
        except Exception as exc:  # warm.Ended, or anything else: the host ends, cleanly
            print(f"warm host: ending ({exc})", file=sys.stderr, flush=True)
            listener.release()
            early_adapter.discard()
            spare_program.discard()
            stop_orphan_watchdog()
            return None
        finally:
            ended.restore()
        print("warm host: taken for a new session", file=sys.stderr, flush=True)
        from ..gcpause import pause

        pause()  # until the start command is answered, as at a cold start (serve)
        self.env = {k: v for k, v in request["env"].items() if k != HOST_TAG}
        _restore_env(self.env, keep_tag=True)
        settings.cache_clear()  # read again, in the new environment, by run_daemon
        _as_stdio(conn)
        return True

    def _read_one_spec(self) -> dict[str, Any] | None:
        try:
            return self._read_spec()
        except ValueError as exc:
            print(f"warm host: a spec that is not one: {exc}", file=sys.stderr, flush=True)
            return None


def _start_spare_program() -> None:
    """The last session's program, started again up to its launch: its Python
    with debugpy and pydevd imported (backends/spare_program.py), in the
    environment it had, to die with this host as its adapter does."""
    from backends.process import _LIBC, _die_with

    spare_program.start(preexec=_die_with(os.getpid()) if _LIBC is not None else None)


def _still_wanted() -> bool:
    from ..config import ConfigError, reload_settings

    try:
        return bool(reload_settings().warm)
    except ConfigError:
        return False


def _log_path() -> str:
    try:
        return str(paths.runtime_dir() / f"daemon-{os.getpid()}.log")
    except Exception:
        return ""


def _restore_env(env: dict[str, str], keep_tag: bool = False) -> None:
    """os.environ as `env` says (the watchdog's tag kept, for a taken host:
    its adapter carries it)."""
    tag = os.environ.get(HOST_TAG)
    os.environ.clear()
    os.environ.update(env)
    if keep_tag and tag is not None:
        os.environ[HOST_TAG] = tag


def _as_stdio(conn: Any) -> None:
    """The starter's connection in the place of a cold host's two pipes: the
    spec is read from fd 0, serving and ready lines go to fd 1."""
    fd = conn.fileno()
    os.dup2(fd, 0)
    os.dup2(fd, 1)
    conn.close()
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 (the process's own)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115


class _EndOnSignals:
    """SIGTERM, SIGINT and SIGHUP end the wait (warm.Ended), so the adapter and
    the socket go with the host."""

    def __init__(self) -> None:
        self._old = {}
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            self._old[sig] = signal.signal(sig, self._raise)

    @staticmethod
    def _raise(signum: int, _frame: Any) -> None:
        raise warm.Ended(f"signal {signum}")

    def restore(self) -> None:
        for sig, old in self._old.items():
            with contextlib.suppress(Exception):
                signal.signal(sig, old if old is not None else signal.SIG_DFL)


def _end_on_signals() -> _EndOnSignals:
    return _EndOnSignals()
