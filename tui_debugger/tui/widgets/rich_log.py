"""Textual's RichLog, for the Console and Activity panes, imported without
attrs.

RichLog imports rich.pretty, which imports attrs when it is installed (the
MCP SDK's dependencies bring it) to pretty-print attrs classes: 17 ms of the
TUI's start-up, on the way to the first stop. The TUI pretty-prints no
objects of its own process (the program's values come from the debugger as
text), so rich.pretty is imported here with attrs hidden, and then treats an
attrs class as any other class. attrs itself stays importable for anything
that imports it later.
"""

from __future__ import annotations

import sys


def _without_attrs() -> None:
    if "rich.pretty" in sys.modules or "attr" in sys.modules:
        return
    sys.modules["attr"] = None  # type: ignore[assignment]  # an import of it fails
    try:
        import rich.pretty  # noqa: F401
    finally:
        if "attr" in sys.modules and sys.modules["attr"] is None:
            del sys.modules["attr"]


_without_attrs()

from textual.widgets import RichLog  # noqa: E402

__all__ = ["RichLog"]
