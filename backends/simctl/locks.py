"""Per-resource locks (`lldb:{pid}`: one debugger per process), across processes.

A lock is an flock on a file in the state directory's `locks/`. The kernel drops
it when its holder exits, so a crashed session never leaves a stale lock. flock
locks belong to an open file description, so two sessions in one process also
exclude each other. The file holds the owner's description, for the
`resource_busy` message.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import time
from pathlib import Path

from ..errors import ResourceBusy
from .defaults import state_dir


def _file_name(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", key) + ".lock"


class ResourceLock:
    def __init__(self, key: str, owner: str, path: Path, fd: int) -> None:
        self.key = key
        self.owner = owner
        self.path = path
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Idempotent. Unlinks while still holding the lock, so the next holder
        never locks a file that is about to disappear."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        with contextlib.suppress(OSError):
            os.close(fd)

    def __repr__(self) -> str:
        return f"ResourceLock({self.key!r}, held={self.held})"


def lock_dir(directory: str | os.PathLike[str] | None = None) -> Path:
    path = state_dir(directory) / "locks"
    path.mkdir(exist_ok=True, mode=0o700)
    return path


def _read_owner(path: Path) -> str:
    try:
        data = json.loads(path.read_text())
        return f"{data['owner']} (pid {data['pid']}, since {data['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another debugger session"


def acquire(
    key: str, owner: str, *, directory: str | os.PathLike[str] | None = None,
    busy_hint: str = "",
) -> ResourceLock:
    """Take `key` now or raise ResourceBusy naming who holds it."""
    path = lock_dir(directory) / _file_name(key)
    for _ in range(20):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = _read_owner(path)
            raise ResourceBusy(
                f"{key} is held by {holder}. {busy_hint}".strip(), resource=key, owner=holder,
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            # The previous holder released (and unlinked) between our open and our lock.
            os.close(fd)
            continue
        record = {
            "owner": owner,
            "pid": os.getpid(),
            "since": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "resource": key,
        }
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(record).encode())
        return ResourceLock(key, owner, path, fd)
    raise ResourceBusy(f"{key} changed hands too often to lock; try again.", resource=key)
