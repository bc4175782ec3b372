"""Python's cyclic garbage collector, paused while a process starts.

Starting, a session's host imports ~0.3 s of modules (pydantic's models, the
commands, the backends) and the TUI ~0.6 s (the same, and Textual), then the
TUI builds its screen: some hundred thousand objects, nearly all kept for the
process's life, which the collector's passes walk again and again (a full pass
or two, and many young ones, during the imports alone). Paused from the
process's first line until its start is over (the host: its start command
answered; the TUI: the new program's first state on screen, or a second),
the imports alone took ~9% less CPU (docs/performance.md). Reference counting
frees everything else as always; only cycles wait for the resume.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Pause the collector, unless someone else already has."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Let the collector run again, if pause() paused it."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()
