"""Sets TCP_NODELAY on debugpy's own sockets (adapter, launcher, debuggee),
keeps other local users out of them, and spares pydevd listing a big dict's
keys to show the first few (`_faster_dict_repr`).

debugpy's processes talk over loopback TCP with Nagle's algorithm on, so every
small DAP message waits out the peer's delayed ACK (~40 ms per hop; debugpy
issue #2054). This module is put first on PYTHONPATH of the adapter and of the
debuggee; Python imports it at start-up. It touches only sockets that debugpy
or pydevd code connects or accepts, then hands over to the sitecustomize this
one shadows, if any, and takes its directory back off sys.path so the program
sees the path it would have had.

Other users: debugpy's adapter listens on loopback ports (for debug servers and
for more clients) that any local user can connect to, and a client that sends
`launch` runs a program as us. On Linux an accepted connection whose peer
belongs to another uid (read from /proc/net/tcp, as delve's --only-same-user
does) is closed at once. And the access token the launcher passes to the
debuggee moves from its command line (which `ps` shows every user) to
DEBUGPY_EXTRA_ARGV in its environment (readable by its owner only).
"""

import os
import sys


def _from_debugger(depth):
    """Whether the caller `depth` frames up is debugpy's or pydevd's code."""
    try:
        module = sys._getframe(depth).f_globals.get("__name__") or ""
    except Exception:
        return False
    return module.startswith(("debugpy", "_pydevd", "pydevd", "_pydev"))


def _install():
    import socket

    def _nodelay(sock):
        try:
            if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except Exception:
            pass

    original_connect = socket.socket.connect
    original_accept = socket.socket.accept

    def connect(self, address):
        result = original_connect(self, address)
        if _from_debugger(2):
            _nodelay(self)
            _faster_dict_repr()
        return result

    def accept(self):
        while True:
            conn, address = original_accept(self)
            if not _from_debugger(2):
                return conn, address
            if _same_user(conn):
                _nodelay(conn)
                return conn, address
            try:
                conn.close()
            except Exception:
                pass

    connect.__doc__ = original_connect.__doc__
    accept.__doc__ = original_accept.__doc__
    socket.socket.connect = connect
    socket.socket.accept = accept


_DICT_REPR = []  # patched once, when pydevd first connects (its modules are loaded)


def _faster_dict_repr():
    """pydevd's safe repr of a dict lists all its keys (`list(obj)`) to show the
    first few: 2 ms for 200,000 keys, paid twice per `variables` answer. Hand it
    a dict of just the keys it shows; its output is the same (it stops at
    `maxcollection[level]` keys and says "..."), and a dict that holds itself
    among them is left to pydevd as it is."""
    if _DICT_REPR:
        return
    _DICT_REPR.append(True)
    module = sys.modules.get("_pydevd_bundle.pydevd_safe_repr")
    safe_repr = getattr(module, "SafeRepr", None)
    original = getattr(safe_repr, "_repr_dict", None)
    if original is None or getattr(original, "_tui_debugger_head", False):
        return
    import itertools

    def _repr_dict(self, obj, level, *rest, **kwargs):
        try:
            limit = self.maxcollection[level]
            if len(obj) > limit + 1:
                head = {}
                for key in itertools.islice(obj, limit):
                    value = obj[key]
                    if value is obj:
                        raise LookupError("a dict inside itself")
                    head[key] = value
                obj = head
        except Exception:
            pass
        return original(self, obj, level, *rest, **kwargs)

    _repr_dict._tui_debugger_head = True
    _repr_dict.__doc__ = original.__doc__
    safe_repr._repr_dict = _repr_dict


def _proc_net_address(host, port):
    """How /proc/net/tcp{,6} spells an address: each 32-bit word in host order."""
    import socket
    import struct

    if ":" in host:
        raw = socket.inet_pton(socket.AF_INET6, host.split("%")[0])
        words = struct.unpack("=4I", raw)
        return "".join("%08X" % w for w in words) + ":%04X" % port, "tcp6"
    raw = socket.inet_pton(socket.AF_INET, host)
    return "%08X" % struct.unpack("=I", raw)[0] + ":%04X" % port, "tcp"


def _same_user(conn):
    """Whether the peer of an accepted loopback TCP connection is our uid."""
    if not sys.platform.startswith("linux"):
        return True
    try:
        peer_host, peer_port = conn.getpeername()[:2]
        local_host, local_port = conn.getsockname()[:2]
        peer, table = _proc_net_address(peer_host, peer_port)
        local, _ = _proc_net_address(local_host, local_port)
    except Exception:
        return True  # not a TCP/IP socket: nothing to check here
    try:
        with open("/proc/net/" + table) as entries:
            for line in entries:
                fields = line.split()
                if len(fields) > 7 and fields[1] == peer and fields[2] == local:
                    return int(fields[7]) == os.getuid()
    except OSError:
        return False
    return False


def _hide_token():
    """The launcher starts the debuggee with --adapter-access-token on its
    command line; move it to the environment."""
    import subprocess

    original_init = subprocess.Popen.__init__

    def __init__(self, args, *rest, **kwargs):
        try:
            if (isinstance(args, list) and "--adapter-access-token" in args
                    and _from_debugger(2) and kwargs.get("env") is not None):
                at = args.index("--adapter-access-token")
                token = args[at + 1]
                args = args[:at] + args[at + 2:]
                env = dict(kwargs["env"])
                extra = env.get("DEBUGPY_EXTRA_ARGV", "")
                env["DEBUGPY_EXTRA_ARGV"] = (extra + " --adapter-access-token " + token).strip()
                kwargs["env"] = env
        except Exception:
            pass
        original_init(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = __init__


def _chain():
    """Run the sitecustomize this file shadows, under the same module name."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.path[:] = rest
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


try:
    _install()
except Exception:
    pass
try:
    _hide_token()
except Exception:
    pass


def _stdin_from_file():
    """The program's stdin, when the user chose a file for it (TUI_DEBUGGER_STDIN)."""
    path = os.environ.pop("TUI_DEBUGGER_STDIN", None)
    if path:
        fd = os.open(path, os.O_RDONLY)
        os.dup2(fd, 0)
        os.close(fd)


try:
    _stdin_from_file()
except Exception:
    pass
_chain()
