"""A host of another network for remote-target tests: a network namespace
with a veth pair, so the remote server binds an address of its own and the
debugger reaches it over a network link. Needs root and iproute2; elsewhere
the "remote" is this host's loopback."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class RemoteHost:
    address: str  # where the remote server listens, as the debugger dials it
    prefix: list[str] = field(default_factory=list)  # runs a command on the remote host
    namespace: str | None = None
    started: list[subprocess.Popen] = field(default_factory=list)

    def start(self, argv: list[str], **options) -> subprocess.Popen:
        """A server on the remote host, in a process group of its own."""
        proc = subprocess.Popen([*self.prefix, *argv], start_new_session=True,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, **options)
        self.started.append(proc)
        return proc

    def wait_listening(self, port: int, timeout: float = 15.0) -> None:
        """Read the remote host's socket table (a probe connection would be taken
        for the debugger by servers that accept one client)."""
        table = ["cat", "/proc/net/tcp", "/proc/net/tcp6"]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = subprocess.run([*self.prefix, *table], capture_output=True, text=True).stdout
            for line in text.splitlines()[1:]:
                fields = line.split()
                if len(fields) > 3 and ":" in fields[1] and \
                        int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":
                    return
            time.sleep(0.05)
        raise AssertionError(f"nothing listens on port {port} of {self.address}")

    def stop_all(self) -> None:
        from backends.process import descendants

        orphans: list[int] = []
        for proc in self.started:
            if proc.poll() is None:
                orphans += descendants(proc.pid)  # the servers' programs
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
            proc.wait(timeout=10)
        reap_orphans(orphans)


def reap_orphans(pids: list[int], timeout: float = 5.0) -> None:
    """A killed server's program is orphaned to the nearest subreaper, which is
    this process when the MCP server runs in it: reap it, or it stays a zombie."""
    deadline = time.monotonic() + timeout
    pending = set(pids)
    while pending and time.monotonic() < deadline:
        for pid in list(pending):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not ours: its own parent reaps it
                pending.discard(pid)
                continue
            if done:
                pending.discard(pid)
        if pending:
            time.sleep(0.02)


def processes_serving(port: int) -> list[int]:
    """Pids whose command line names `port` (debugpy's detached adapter, which
    `--listen` starts and which outlives the program by a moment)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--for-server" in argv and any(str(port).encode() in a for a in argv):
                found.append(int(entry))
    return found


def can_make_namespaces() -> bool:
    return os.geteuid() == 0 and shutil.which("ip") is not None and \
        Path("/var/run/netns").parent.exists()


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=20)


def open_remote_host() -> RemoteHost:
    if not can_make_namespaces():
        return RemoteHost(address="127.0.0.1")
    tag = secrets.token_hex(3)
    namespace, here, there = f"tdbg-{tag}", f"td{tag}a", f"td{tag}b"
    subnet = f"10.{200 + secrets.randbelow(50)}.{secrets.randbelow(250)}"
    try:
        _ip("netns", "add", namespace)
        _ip("link", "add", here, "type", "veth", "peer", "name", there)
        _ip("link", "set", there, "netns", namespace)
        _ip("addr", "add", f"{subnet}.1/24", "dev", here)
        _ip("link", "set", here, "up")
        _ip("netns", "exec", namespace, "ip", "addr", "add", f"{subnet}.2/24", "dev", there)
        _ip("netns", "exec", namespace, "ip", "link", "set", there, "up")
        _ip("netns", "exec", namespace, "ip", "link", "set", "lo", "up")
    except subprocess.CalledProcessError as exc:
        close_remote_host(RemoteHost(address="", namespace=namespace))
        subprocess.run(["ip", "link", "del", here], capture_output=True)
        if os.environ.get("CI") == "true":
            raise
        # A container without the rights to make namespaces: loopback it is.
        _ = exc
        return RemoteHost(address="127.0.0.1")
    return RemoteHost(address=f"{subnet}.2", prefix=["ip", "netns", "exec", namespace],
                      namespace=namespace)


def close_remote_host(host: RemoteHost) -> None:
    host.stop_all()
    if host.namespace:
        pids = subprocess.run(["ip", "netns", "pids", host.namespace], capture_output=True,
                              text=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
        # Deleting the namespace deletes its end of the veth pair, and so the pair.
        subprocess.run(["ip", "netns", "del", host.namespace], capture_output=True, timeout=20)
