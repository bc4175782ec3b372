"""An exception stop, as pudb's post-mortem view shows it: the exception's type
and message, then its traceback as the debugger formats it. The tab appears
with the stop and goes at the next resume."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from ...models import StopInfo
from ..format import display_path


class ExceptionPane(VerticalScroll):
    ALLOW_MAXIMIZE = True

    def __init__(self, *, cwd: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cwd = cwd
        self.stop: StopInfo | None = None

    def compose(self):
        yield Static(id="exception-text")

    def show(self, stop: StopInfo) -> None:
        self.stop = stop
        text = Text()
        headline = stop.text or stop.description or "An exception"
        kind, sep, message = headline.partition(": ")
        if sep:
            text.append(kind, "bold red")
            text.append(": " + message, "bold")
        else:
            text.append(headline, "bold red")
        loc = stop.location
        if loc is not None and loc.path:
            text.append(f"\n  at {display_path(loc.path, self.cwd)}:{loc.line}", "dim")
            if stop.function:
                text.append(f" in {stop.function}", "dim")
        if stop.traceback:
            text.append("\n\n")
            text.append(stop.traceback)
        else:
            text.append("\n\n(no traceback from this debugger: see Stack)", "dim italic")
        self.query_one("#exception-text", Static).update(text)
