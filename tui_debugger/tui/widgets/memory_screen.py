"""Memory as hex and ASCII, opened from a pointer or an array in Variables.
The app reads the bytes (memory_read) and gives them here; `n` and `p` ask it
for the next or previous block."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static


class MemoryScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,q", "close", "close", show=False),
        Binding("n", "page(1)", "next block", show=False),
        Binding("p", "page(-1)", "previous block", show=False),
    ]

    class Page(Message):
        """Read the block `offset` bytes from the first one shown."""

        def __init__(self, address: int, count: int) -> None:
            super().__init__()
            self.address = address
            self.count = count

    def __init__(self, result) -> None:
        super().__init__()
        self.result = result

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="memory-body"):
            yield Static(id="memory-title")
            yield Static(id="memory-rows")
            yield Static("n next block · p previous · Escape closes", id="memory-help")

    def on_mount(self) -> None:
        self.show(self.result)

    def show(self, result) -> None:
        self.result = result
        self.query_one("#memory-title", Static).update(Text(
            f"{result.count} bytes at {result.address}  ({result.expression})", style="bold"))
        body = Text(no_wrap=True)
        for row in result.rows:
            address, _, rest = row.partition(": ")
            hexes, _, ascii_ = rest.rpartition("  |")
            body.append(address + ": ", style="bold cyan")
            body.append(hexes)
            body.append("  |" + ascii_ + "\n", style="green")
        self.query_one("#memory-rows", Static).update(body)

    def action_page(self, direction: int) -> None:
        start = int(self.result.address, 16) + direction * max(self.result.count, 16)
        if start >= 0:
            self.app.post_message(self.Page(start, max(self.result.count, 16)))

    def action_close(self) -> None:
        self.dismiss(None)
