"""Debug Adapter Protocol: framing (no I/O), an asyncio client, a generic
backend, and the adapter profiles (debugpy, lldb-dap, dlv)."""

from .backend import DapBackend
from .client import DapClient
from .framing import Decoder, FramingError, encode
from .profile import AdapterProfile

__all__ = ["AdapterProfile", "DapBackend", "DapClient", "Decoder", "FramingError", "encode"]
