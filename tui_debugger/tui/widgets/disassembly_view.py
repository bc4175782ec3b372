"""The source pane's other face: the machine instructions around the pc, each
source line above the instructions it became, the current instruction marked.
It shows what the app gives it (a DisassemblyResult); it fetches nothing."""

from __future__ import annotations

import os

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static


class DisassemblyView(VerticalScroll, can_focus=True):
    COMPONENT_CLASSES = {
        "disassembly--source", "disassembly--symbol", "disassembly--address",
        "disassembly--current",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "Disassembly"
        self.current_row: int | None = None
        self.rows = 0

    def compose(self):
        yield Static(Text("Stop the program to see its instructions.", style="italic"),
                     id="disassembly-body")

    def show(self, result) -> None:
        """A DisassemblyResult: source lines interleaved, the pc marked."""
        text = Text(no_wrap=True, overflow="ellipsis")
        style = self.get_component_rich_style
        row = 0
        self.current_row = None
        for ins in result.instructions:
            if ins.symbol:
                text.append(f"{ins.symbol}:\n", style("disassembly--symbol", partial=True))
                row += 1
            if ins.line:
                where = f"{os.path.basename(ins.file)}:{ins.line}" if ins.file else f"line {ins.line}"
                text.append(f"  {where}  {(ins.source or '').strip()}\n",
                            style("disassembly--source", partial=True))
                row += 1
            line = Text()
            line.append("=> " if ins.current else "   ")
            line.append(f"{ins.address}  ", style("disassembly--address", partial=True))
            line.append(ins.instruction)
            if ins.current:
                self.current_row = row
                line.stylize(style("disassembly--current", partial=True))
            text.append_text(line)
            text.append("\n")
            row += 1
        if not result.instructions:
            text.append(f"No instructions at {result.target}.", style="italic")
        self.rows = row
        self.border_subtitle = f"pc {result.pc}" if result.pc else result.target
        self.query_one("#disassembly-body", Static).update(text)
        if self.current_row is not None:
            self.call_after_refresh(self._center_current)

    def show_message(self, message: str) -> None:
        self.current_row = None
        self.rows = 0
        self.query_one("#disassembly-body", Static).update(Text(message, style="italic"))

    def _center_current(self) -> None:
        if self.current_row is not None:
            self.scroll_to(y=max(0, self.current_row - self.size.height // 2), animate=False)
