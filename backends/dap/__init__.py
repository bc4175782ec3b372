"""Debug Adapter Protocol: framing (no I/O), an asyncio client, a generic
backend, and the adapter profiles (debugpy, lldb-dap, dlv)."""

from .backend import AdapterProfile, DapBackend
from .client import DapClient
from .framing import Decoder, FramingError, encode

__all__ = ["AdapterProfile", "DapBackend", "DapClient", "Decoder", "FramingError", "encode"]
