"""Adapter profiles and the backend classes the registry names
(backends.adapters: debugpy, lldb-dap, dlv), one module each:
debugpy_adapter.py, lldb_dap.py and delve.py.

A profile says how to start its adapter and how to word launch and attach
arguments; everything else is the generic DapBackend. This module keeps the
names it has always exported importable from here.
"""

from __future__ import annotations

from ..early_adapter import NODELAY_DIR, debugpy_adapter_argv, with_nodelay
from .backend import DapBackend
from .client import DapClient
from .debugpy_adapter import (PYDEVD_WAKEUPS_SHA256, STDIN_ENV, THREAD_OPTIONS,
                              VARIABLE_PRESENTATION, WAKEUPS_ENV, DebugpyBackend, DebugpyProfile,
                              injection_failure, pydevd_wakeups)
from .delve import DelveBackend, DelveProfile
from .lldb_dap import (EXPRESSION_STOP_WAIT_S, INTERRUPTED, LEFT_IN_EXPRESSION, RESULT_NAME,
                       UNWOUND, VARIABLE_PATH, LldbDapBackend, LldbDapProfile)
from .profile import AdapterProfile, stdin_path

__all__ = [
    "AdapterProfile", "DapBackend", "DapClient", "stdin_path",
    # debugpy
    "NODELAY_DIR", "debugpy_adapter_argv", "with_nodelay", "STDIN_ENV", "PYDEVD_WAKEUPS_SHA256",
    "WAKEUPS_ENV", "pydevd_wakeups", "THREAD_OPTIONS", "VARIABLE_PRESENTATION",
    "injection_failure", "DebugpyProfile", "DebugpyBackend",
    # lldb-dap
    "LEFT_IN_EXPRESSION", "UNWOUND", "EXPRESSION_STOP_WAIT_S", "INTERRUPTED", "VARIABLE_PATH",
    "RESULT_NAME", "LldbDapProfile", "LldbDapBackend",
    # delve
    "DelveProfile", "DelveBackend",
]
