"""Debugger backends: DAP (debugpy, lldb-dap, delve), the LLDB command line, the
Chrome DevTools Protocol (Node.js) and Xcode's simctl. Nothing here imports a
user interface; every backend implements `backends.base.Backend`."""

TYPE_CHECKING = False  # not typing's: its import is most of a CLI command's
if TYPE_CHECKING:
    from typing import Any

    from .base import Backend, Configure, EventSink
    from .errors import DebuggerError, ErrorCode


def __getattr__(name: str) -> "Any":
    # Looked up on first use: `import backends.errors` (enum alone) must not pull
    # in the models and pydantic; a CLI command's client imports it.
    if name in ("Backend", "Configure", "EventSink"):
        from . import base

        return getattr(base, name)
    if name in ("DebuggerError", "ErrorCode"):
        from . import errors

        return getattr(errors, name)
    raise AttributeError(f"module 'backends' has no attribute {name!r}")

__all__ = ["Backend", "Configure", "DebuggerError", "ErrorCode", "EventSink"]
