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

At the resume what the start made is frozen (gc.freeze): kept for the
process's life, it is left out of every later pass. Without it the first pass
after the resume walked it all (~100 ms in the TUI, a scroll bar's repaint
just after the first stop took the blame) and every full pass after it again,
in the middle of a step. The cycles the start left unreachable (~1,300
objects after the TUI's imports) stay with it; a warm host thaws and collects
what its last session froze before it waits (host/warm_stay.py).
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
        gc.freeze()
        gc.enable()


def thaw() -> None:
    """Give what a start froze back to the collector (a process that stays
    on after its session, before it collects)."""
    gc.unfreeze()
