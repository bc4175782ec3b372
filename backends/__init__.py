"""Debugger backends: DAP (debugpy, lldb-dap, delve), the LLDB command line, the
Chrome DevTools Protocol (Node.js) and Xcode's simctl. Nothing here imports a
user interface; every backend implements `backends.base.Backend`."""

from .base import Backend, Configure, EventSink
from .errors import DebuggerError, ErrorCode

__all__ = ["Backend", "Configure", "DebuggerError", "ErrorCode", "EventSink"]
