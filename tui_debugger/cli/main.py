"""The `tui-debugger` executable's door. It decides, with route.py, which way
a command line goes before it imports anything more: a session command to the
quick client (quick.py), `run` and `start` to a host started first thing
(host/early.py; `start` then parses and runs on it), everything else, and
whatever the quick path gives back, to the whole command line (full.py).
"""

from __future__ import annotations

import os
import sys

from .. import __version__
from . import route

# No `typing` either: annotations stay strings (from __future__ import annotations).


def main(argv: Sequence[str] | None = None, screen: bool = True) -> int:
    """`screen`: a `run` in a terminal may be handed to the warm screen
    (tui_debugger/warm_screen.py); not when this is the warm screen."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:
        print(f"tui-debugger {__version__}")
        return 0
    if route.quick_session_command(argv, os.environ):
        from . import quick

        rc = quick.run_command(argv)
        if rc is not None:
            return rc
    if argv[:1] == ["run"]:
        from .. import warm_screen

        if warm_screen.usable(argv):
            rc = warm_screen.take_and_run(argv) if screen else None
            if rc is not None:
                return rc
            warm_screen.remember_starter()  # its TUI starts one for the next `run`
    early = route.starts_early(argv)
    if argv and argv[0] in ("run", "start", "ui", "attach"):
        from ..gcpause import pause

        pause()  # the app resumes it once its start is over (gcpause.py)
    if early:
        from ..host.early import leave_on_end_signals, start_early

        if argv[0] == "run":
            leave_on_end_signals()
        # `start` only: under `run` the adapter started early competed with the
        # TUI's own Textual import and paint, and the entry stop came later
        # (docs/performance.md).
        start_early(argv if argv[0] == "start" else None)
        if route.quick_start(argv, os.environ):
            from . import quick

            rc = quick.start(argv)
            if rc is not None:
                return rc
    try:
        from . import quick
        from .full import main as full_main

        return full_main(argv, settings_checked=quick.remember_settings_checked)
    finally:
        if early:
            from ..host.early import discard_early

            discard_early()
