"""A full Python shell in the stopped program's frame (pudb's `!`): the TUI
hands the terminal over to it and takes it back when the shell ends (Ctrl+D).
Blocks of several lines (`def`, `for`), readline's editing and history, and
each line answered as a REPL does: statements run in the frame, the last
expression's value is printed.

It is a client of the session of its own, as the CLI is: each line is the
`evaluate` command, in the frame the TUI had selected.

    python -m tui_debugger.tui.shell --session NAME [--frame N]
"""

from __future__ import annotations

import argparse
import asyncio
import code
import codeop
import signal
import sys

from backends.errors import DebuggerError

from . import repl

BANNER = ("Python shell in {where}, the program's own frame.\n"
          "Ctrl+D returns to the debugger.")


class FrameShell(code.InteractiveConsole):
    """InteractiveConsole whose complete sources run in the program's frame."""

    def __init__(self, runner: asyncio.Runner, handle, frame: int) -> None:
        super().__init__()
        self.runner = runner
        self.handle = handle
        self.frame = frame

    def evaluate(self, text: str) -> str:
        result = self.runner.run(self.handle.call("evaluate", {"expression": text,
                                                               "frame_index": self.frame}))
        return result.value

    def runsource(self, source: str, filename: str = "<input>", symbol: str = "single") -> bool:
        try:
            if codeop.compile_command(source, filename, symbol) is None:
                return True  # more lines to come (a block, an open bracket)
        except (SyntaxError, OverflowError, ValueError):
            self.showsyntaxerror(filename)
            return False
        line = repl.split(source)
        try:
            if line.statements is not None:
                printed = self.evaluate(line.statements)
                if printed:
                    self.write(printed + "\n")
            if line.expression is not None:
                value = self.evaluate(line.expression)
                if value not in ("", "None"):
                    self.write(value + "\n")
        except DebuggerError as exc:
            self.write(exc.message.rstrip() + "\n")
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A Python shell in a stopped program's frame.")
    parser.add_argument("--session", required=True)
    parser.add_argument("--frame", type=int, default=0)
    parser.add_argument("--where", default="the selected frame")
    ns = parser.parse_args(argv)
    # The TUI ignores Ctrl+C while the shell has the terminal; here it stops a line.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        import readline  # noqa: F401 - line editing and history for input()
    except ImportError:
        pass
    from ..client.router import RemoteHandle

    with asyncio.Runner() as runner:
        try:
            handle = runner.run(RemoteHandle.connect(ns.session, "tui"))
        except DebuggerError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 1
        try:
            FrameShell(runner, handle, ns.frame).interact(
                banner=BANNER.format(where=ns.where), exitmsg="")
        finally:
            runner.run(handle.close())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
