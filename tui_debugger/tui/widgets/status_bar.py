"""One line: state, stop reason and exception text, backend, session, and who is
connected. Readable without colour: the state is a word, not only a colour."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ...models import ClientInfo, StopInfo, client_id
from ..format import cut_middle, display_path, one_line, who

#: The shortest a stop's path is cut to (in the middle) before anything else goes.
PATH_AT_LEAST = 12
STATE_STYLES = {"stopped": "bold black on yellow", "running": "bold black on green",
                "terminated": "bold white on red", "starting": "bold black on cyan",
                "idle": "bold black on white", "connecting": "bold black on cyan"}


class StatusBar(Widget):
    state: reactive[str] = reactive("connecting")
    stop: reactive[StopInfo | None] = reactive(None)
    adapter: reactive[str | None] = reactive(None)
    #: the program's Python, when it is not tui-debugger's own ("py3.12 .venv")
    python: reactive[str | None] = reactive(None)
    session_name: reactive[str | None] = reactive(None)
    clients: reactive[tuple[str, ...]] = reactive(())
    exit_code: reactive[int | None] = reactive(None)
    message: reactive[str] = reactive("")
    #: how many times the breakpoint of this stop has been hit: a second stop at the
    #: same line reads differently from the first
    hits: reactive[int] = reactive(0)
    #: the program's other processes stopped now, and the key that shows the next
    #: ("1 more stopped: Alt+N"); none: (0, "")
    elsewhere: reactive[tuple[int, str]] = reactive((0, ""))

    def __init__(self, *, cwd: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cwd = cwd

    def set_clients(self, clients: list[ClientInfo], own_origin: str = "tui") -> None:
        """Who else is here, by kind; ids and pids stay off screen."""
        # This TUI is among the clients too; another TUI is another person.
        others = sorted({c.origin if c.origin in ("tui", "web") else who(c.origin)
                         for c in clients if c.id != client_id(own_origin)})
        self.clients = tuple(others)

    def render(self) -> Text:
        width = self.size.width
        rights = [self._right(adapter=True, session=True), self._right(adapter=True, session=False),
                  self._right(adapter=False, session=False)]
        right = rights[-1]
        if width:
            # The stop (its place whole, its path cut to 12) matters more than the
            # session's name, which matters more than the backend's.
            shortest = self._left(PATH_AT_LEAST).cell_len
            right = next((r for r in rights if shortest + r.cell_len <= width), rights[-1])
        text = self._left(None)
        room = width - right.cell_len
        if width and text.cell_len > room:
            # Cut the path in the middle first (never its line number), then the end.
            path = self._path()
            if path:
                text = self._left(max(PATH_AT_LEAST, len(path) - (text.cell_len - room)))
            if text.cell_len > room:
                text.truncate(max(width // 2, room), overflow="ellipsis")
        if width and text.cell_len + right.cell_len <= width:
            text.append(" " * (width - text.cell_len - right.cell_len))
        text.append_text(right)
        if width:
            text.truncate(width, overflow="ellipsis")
        return text

    def _path(self) -> str:
        stop = self.stop
        if self.state == "stopped" and stop is not None and stop.location and stop.location.path:
            return display_path(stop.location.path, self.cwd)
        return ""

    def _left(self, path_width: int | None) -> Text:
        """State, stop reason, place, hits, function, exception; the path cut to
        `path_width` characters (in the middle) when given."""
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f" {self.state.upper()} ", STATE_STYLES.get(self.state, "reverse"))
        stop = self.stop
        if self.state == "stopped" and stop is not None:
            where = ""
            if stop.location and stop.location.path:
                path = self._path()
                if path_width is not None:
                    path = cut_middle(path, path_width)
                where = f" at {path}:{stop.location.line}"
            text.append(f" {stop.reason}{where}")
            if self.hits > 1:
                text.append(f" (hit {self.hits})", "bold")
            if stop.function:
                text.append(f" in {stop.function}", "dim")
            detail = stop.text or (stop.description if stop.reason == "exception" else None)
            if detail:
                text.append(f"  {one_line(detail, 120)}", "bold red")
        elif self.state == "terminated":
            if self.exit_code is not None:
                text.append(f" exit code {self.exit_code}")
            if self.message:
                text.append(f" {one_line(self.message, 120)}", "dim")
        elif self.message:
            text.append(f" {one_line(self.message, 120)}", "dim")
        return text

    def _right(self, adapter: bool, session: bool) -> Text:
        right = Text()
        if adapter and self.adapter:
            right.append(f" {self.adapter} ", "dim")
        if adapter and self.python:
            right.append(f"{self.python} ", "dim")
        if session and self.session_name:
            right.append(f"│ {self.session_name} ", "dim")
        if self.elsewhere[0]:
            right.append(f"│ {self.elsewhere[0]} more stopped: {self.elsewhere[1]} ", "bold yellow")
        right.append("│ you" + "".join(f" + {c}" for c in self.clients) + " ", "bold")
        return right
