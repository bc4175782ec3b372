"""Who did what in this session: the person, the agent (MCP) and the CLI."""

from __future__ import annotations

from rich.text import Text
from .rich_log import RichLog

from ...models import ActivityEntry, client_id
from ..format import one_line, own_origin, who

ORIGIN_STYLES = {"mcp": "bold magenta", "cli": "bold cyan", "tui": "bold green", "web": "bold blue"}


def who_did(entry: ActivityEntry) -> str:
    """The label of an entry: "you" for this TUI's own moves only; a second
    TUI joined to the session is another person."""
    mine = own_origin()
    if entry.origin == mine and entry.client == client_id(mine):
        return "you"
    if entry.origin in ("tui", "web"):
        return entry.origin
    return who(entry.origin)


class ActivityPane(RichLog):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, wrap=False, max_lines=1_000, auto_scroll=True)
        self.entries: list[ActivityEntry] = []

    def add(self, entry: ActivityEntry) -> None:
        self.entries.append(entry)
        text = Text()
        text.append(f"{who_did(entry):>7} ", ORIGIN_STYLES.get(entry.origin, "bold"))
        text.append(entry.command, "" if entry.ok else "red")
        if entry.summary:
            text.append(" " + one_line(entry.summary, 120), "dim" if entry.ok else "red")
        self.write(text)
