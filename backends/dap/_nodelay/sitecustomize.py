"""Sets TCP_NODELAY on debugpy's own sockets (adapter, launcher, debuggee).

debugpy's processes talk over loopback TCP with Nagle's algorithm on, so every
small DAP message waits out the peer's delayed ACK (~40 ms per hop; debugpy
issue #2054). This module is put first on PYTHONPATH of the adapter and of the
debuggee; Python imports it at start-up. It touches only sockets that debugpy
or pydevd code connects or accepts, then hands over to the sitecustomize this
one shadows, if any, and takes its directory back off sys.path so the program
sees the path it would have had.
"""

import os
import sys


def _install():
    import socket

    def _from_debugger(depth):
        try:
            module = sys._getframe(depth).f_globals.get("__name__") or ""
        except Exception:
            return False
        return module.startswith(("debugpy", "_pydevd", "pydevd", "_pydev"))

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
        return result

    def accept(self):
        conn, address = original_accept(self)
        if _from_debugger(2):
            _nodelay(conn)
        return conn, address

    connect.__doc__ = original_connect.__doc__
    accept.__doc__ = original_accept.__doc__
    socket.socket.connect = connect
    socket.socket.accept = accept


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
_chain()
