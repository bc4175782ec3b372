"""The source pane: line numbers, a breakpoint gutter, the current-line marker and
syntax highlighting, for files of any size.

It is a Line API widget: only the rows on screen are rendered, and highlighting is
done per block of lines the first time a block scrolls into view, so a file of
100,000 lines costs no more per step than a file of 100.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..format import WHO_LETTER, display_path, expression_at, expressions_in
from ..messages import EditBreakpoint, Inspect, RunCommand, ToggleBreakpoint
from .kept_styles import KeptStyles

HIGHLIGHT_BLOCK = 200  # lines lexed together: enough context for multi-line strings
HIGHLIGHT_CACHE_BLOCKS = 64
MAX_LINE_CHARS = 2_000  # a minified line is cut rather than measured and laid out whole
#: The source's bottom border says how to get room (at 80x24 every pane is small).
ROOM_HINT = "F8 maximize · ? keys"


@dataclass(frozen=True)
class GutterMark:
    glyph: str  # ● ◆ ▲ (hollow when disabled), see format.breakpoint_glyph
    origin: str  # who set it: tui, mcp, cli, session
    enabled: bool = True
    verified: bool = True
    detail: str = ""


@dataclass
class LoadedFile:
    path: str
    lines: list[str]
    width: int
    mtime: float


def read_source(path: str) -> LoadedFile | None:
    from ...paths import source_problem

    if source_problem(path):  # /dev/zero, a FIFO, a huge file: nothing to show
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        mtime = os.path.getmtime(path)
    except OSError:
        return None
    lines = [line[:MAX_LINE_CHARS].expandtabs(4) for line in text.splitlines()] or [""]
    return LoadedFile(path, lines, max(map(len, lines)), mtime)


class SourceView(KeptStyles, ScrollView, can_focus=True):
    """Shows one file. The app sets `location` (where the selected frame is),
    `breakpoints` (gutter marks by line) and opens files; the view posts
    ToggleBreakpoint and RunCommand when the person acts."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "up", show=False),
        Binding("down,j", "cursor(1)", "down", show=False),
        Binding("left,h", "scroll_columns(-4)", "scroll left", show=False),
        Binding("right,l", "scroll_columns(4)", "scroll right", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home", "cursor_to(1)", "first line", show=False),
        Binding("end", "cursor_to(-1)", "last line", show=False),
        Binding("period", "cursor_to_location", "back to the current line", show=False),
        Binding("slash", "app.find", "find in this file (n / N: next / previous match)",
                show=False, id="src.find"),
        # While a find is active n / N move between matches (as in less and vim);
        # Escape ends the find and n is "next" (step over) again.
        Binding("n", "find_next(1)", "next match (while finding)", show=False, id="src.find_next"),
        Binding("N", "find_next(-1)", "previous match (while finding)", show=False,
                id="src.find_previous"),
        Binding("escape", "clear_find", "end the find", show=False, id="src.find_clear"),
        Binding("n", "app.run_command('next')", "next (step over)", show=False, id="src.next"),
        Binding("s", "app.run_command('step')", "step into", show=False, id="src.step"),
        Binding("c", "app.run_command('continue')", "continue", show=False, id="src.continue"),
        Binding("r,f", "app.run_command('finish')", "finish (step out)", show=False, id="src.finish"),
        Binding("b", "toggle_breakpoint", "toggle breakpoint", show=False, id="src.break"),
        Binding("t", "run_to_cursor", "run to the cursor line", show=False, id="src.until"),
        Binding("K", "inspect", "inspect: the value of the name under the cursor (again: the next)",
                show=False, id="src.inspect"),
        Binding("J", "jump_to_cursor", "jump: the cursor line runs next (set next statement)",
                show=False, id="src.jump"),
        Binding("u", "app.frame_offset(1)", "up the stack (caller)", show=False, id="src.up"),
        Binding("d", "app.frame_offset(-1)", "down the stack (callee)", show=False, id="src.down"),
    ]

    COMPONENT_CLASSES = {
        "source--lineno",
        "source--current",
        "source--current-marker",
        "source--cursor",
        "source--breakpoint",
        "source--breakpoint-disabled",
        "source--origin",
        "source--match",
        "source--match-current",
        "source--inline",
    }

    #: Moving the cursor repaints its old and new rows (watch_cursor_line), not the pane.
    cursor_line: reactive[int] = reactive(1, always_update=True, repaint=False)

    def __init__(self, *, cwd: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cwd = cwd
        self.file: LoadedFile | None = None
        self.location_line: int | None = None  # the selected frame's line in this file
        self.location_is_top = True  # innermost frame (▶) or a caller (▷)
        #: (path, line) of the selected frame, kept while another file is shown
        self.location: tuple[str, int] | None = None
        self.marks: dict[int, GutterMark] = {}
        self._all_marks: dict[str, dict[int, GutterMark]] = {}
        self._files: dict[str, LoadedFile] = {}
        self._blocks: OrderedDict[int, list[Text]] = OrderedDict()
        self._lexer = None
        self._syntax_theme = Syntax.get_theme("monokai")
        #: the program's file and its first block, highlighted before its first stop
        self._first_block: tuple[LoadedFile, list[Text]] | None = None
        #: the current line as last painted: what a person sees (the benchmark reads it)
        self.painted_location: tuple[str, int] | None = None
        self.message = "No program stopped yet."
        #: the text being found (case-insensitive unless it has a capital, like vim's
        #: smartcase) and its matches in the open file: line -> [(start, end)]
        self.find_text = ""
        self.matches: dict[int, list[tuple[int, int]]] = {}
        self._match_order: list[tuple[int, int, int]] = []  # (line, start, end), in file order
        self.current_match: tuple[int, int, int] | None = None
        #: the prompt `/` or Ctrl+G opened: keys that reached this pane before the
        #: focus moved (typed fast, pasted) go there, not to the pdb letters
        self.typing_into = None
        self._base_style: Style | None = None
        #: (line, column) of the last click in the code: what Inspect looks at there
        self.clicked_at: tuple[int, int] | None = None
        self._inspected: tuple[int, int] | None = None  # (line, index) of the last Inspect
        self.border_subtitle = ROOM_HINT
        #: values inline after the lines of the selected frame's function: (path, {line: text})
        self.inline: tuple[str, dict[int, str]] | None = None

    # ------------------------------------------------------------------ inputs from the app

    def prepare_for(self, path: str | None) -> None:
        """Get the program's source ready before its first stop, in a thread
        while the screen waits for it: the lexer of its language built (~0.1 s
        for Python's), the file read and its first lines highlighted (where an
        entry stop is; 5-10 ms of the first stop's paint otherwise)."""
        if path:
            self.run_worker(functools.partial(self._prepare, os.path.abspath(path)),
                            thread=True, group="lexer")

    def _prepare(self, path: str) -> None:
        lexer = warm_lexer(path)
        loaded = read_source(path) if lexer is not None else None
        if loaded is None:
            return
        texts = _lex_lines(lexer, self._syntax_theme, loaded.lines[:HIGHLIGHT_BLOCK])
        with contextlib.suppress(Exception):  # the app is gone already
            self.app.call_from_thread(self._prepared, loaded, texts)

    def _prepared(self, loaded: LoadedFile, texts: list[Text]) -> None:
        if loaded.path not in self._files:
            self._files[loaded.path] = loaded
            self._first_block = (loaded, texts)

    def open_file(self, path: str) -> bool:
        """Show `path` (cached after the first read). False when it cannot be read."""
        if self.file is not None and self.file.path == path:
            return True
        loaded = self._files.get(path)
        if loaded is not None:
            try:
                if os.path.getmtime(path) != loaded.mtime:
                    loaded = None
            except OSError:
                loaded = None
        if loaded is None:
            loaded = read_source(path)
            if loaded is None:
                self.message = f"Source not available: {display_path(path, self.cwd)}"
                self.file = None
                self.virtual_size = Size(0, 0)
                self.border_title = display_path(path, self.cwd)
                self.refresh()
                return False
            self._files[path] = loaded
        self.file = loaded
        self._blocks.clear()
        first, self._first_block = self._first_block, None
        if first is not None and first[0] is loaded:  # highlighted before the stop (_prepare)
            self._blocks[0] = first[1]
        self._lexer = _lexer_for(path)
        self.marks = self._all_marks.get(path, {})
        here = self.location is not None and self.location[0] == path
        self.location_line = self.location[1] if here else None
        self._find_matches()
        self.border_title = display_path(path, self.cwd)
        self.virtual_size = Size(loaded.width + self.gutter_width + 1, len(loaded.lines))
        self.refresh()
        return True

    def show_location(self, path: str | None, line: int, top: bool = True,
                      name: str | None = None) -> None:
        """Move the current-line marker (opening the file if needed) and scroll it into view.
        Without a path (a runtime's own code, e.g. node:internal/...), say what it is."""
        if not path:
            self.file = None
            self.location_line = None
            self.location = None
            where = f"{name}:{line}" if name and line else name
            self.message = (f"No source file for {where} (the runtime's own or generated code)."
                            if where else "No source for this frame (library or generated code).")
            self.border_title = where or "<no source>"
            self.virtual_size = Size(0, 0)
            self.refresh()
            return
        self.location = (path, line)
        same_file = self.file is not None and self.file.path == path
        if not self.open_file(path):
            return
        before = (self.location_line, self.location_is_top, self.scroll_offset.y)
        self.location_line = line
        self.location_is_top = top
        self.cursor_line = line
        self.center_line(line)
        if same_file and before[1:] == (top, self.scroll_offset.y):
            # A step in view: only the old and the new current rows change.
            self._refresh_rows(before[0], line)
            return
        if not same_file:
            # The virtual size of a newly opened file is applied at the next layout.
            self.call_after_refresh(self.center_line, line)
        self.refresh()

    def show_inline_values(self, path: str | None, line: int, values: dict[str, str]) -> None:
        """The frame's locals (name -> value) after the lines that use them, up to `line`."""
        from ..inline_values import inline_values

        loaded = self._files.get(path) if path else None
        shown = inline_values(loaded.lines, line, values) if loaded is not None else {}
        before = self.inline[1] if self.inline is not None and self.inline[0] == path else {}
        self.inline = (path, shown) if path else None
        if self.file is not None and self.file.path == path:
            self._refresh_rows(*(n for n in set(before) | set(shown) if before.get(n) != shown.get(n)))

    def go_to_line(self, line: int) -> None:
        """Put the cursor on `line` (clamped to the file) and show it."""
        self._move_cursor(line)
        self.center_line(self.cursor_line)

    # ------------------------------------------------------------------ find

    def find(self, text: str, forward_from: int | None = None) -> int:
        """Highlight every match of `text` and put the cursor on the first one at or
        after `forward_from` (the cursor line by default). Answers the number of matches."""
        self.find_text = text
        self._find_matches()
        if self._match_order:
            start = self.cursor_line if forward_from is None else forward_from
            following = [m for m in self._match_order if m[0] >= start]
            self._go_to_match((following or self._match_order)[0])
        else:
            self.current_match = None
            self._show_find_status()
        self.refresh()
        return len(self._match_order)

    def clear_find(self) -> None:
        self.find_text = ""
        self._find_matches()
        self.refresh()

    async def on_key(self, event) -> None:
        target = self.typing_into
        if event.key == "slash" and (target is None or not target.display) \
                and "src.find" not in getattr(self.app, "keymap", {}):
            # Here rather than through the binding, which the app runs only after
            # this pane has taken the keys typed next: those must reach the prompt.
            event.stop()
            event.prevent_default()
            await self.app.run_action("find")
            return
        if target is None or not target.display:
            return
        if event.is_printable and event.character:
            target.insert_text_at_cursor(event.character)
        elif event.key == "enter":
            await target.action_submit()
        elif event.key == "escape":
            target.action_cancel()
        elif event.key == "backspace":
            target.action_delete_left()
        else:
            return
        event.stop()
        event.prevent_default()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("find_next", "clear_find"):
            return bool(self.find_text)  # else the key's other binding (n: step over) runs
        return True

    def action_find_next(self, direction: int) -> None:
        if not self._match_order:
            self.notify(f"No match for {self.find_text!r} in this file.", severity="warning")
            return
        current = self.current_match or (self.cursor_line, -1, -1)
        if direction > 0:
            later = [m for m in self._match_order if m > current]
            self._go_to_match(later[0] if later else self._match_order[0])
        else:
            earlier = [m for m in self._match_order if m < current]
            self._go_to_match(earlier[-1] if earlier else self._match_order[-1])

    def action_clear_find(self) -> None:
        self.clear_find()

    def _find_matches(self) -> None:
        self.matches = {}
        self._match_order = []
        self.current_match = None
        text = self.find_text
        if text and self.file is not None:
            fold = text == text.lower()
            needle = text.lower() if fold else text
            for number, line in enumerate(self.file.lines, 1):
                hay = line.lower() if fold else line
                start = hay.find(needle)
                while start >= 0:
                    end = start + len(needle)
                    self.matches.setdefault(number, []).append((start, end))
                    self._match_order.append((number, start, end))
                    start = hay.find(needle, end)
        self._show_find_status()

    def _go_to_match(self, match: tuple[int, int, int]) -> None:
        self.current_match = match
        line, start, end = match
        self._move_cursor(line)
        self.center_line(line)
        code_width = max(1, self.scrollable_content_region.width - self.gutter_width)
        x = self.scroll_offset.x
        if start < x or end > x + code_width:
            self.scroll_to(x=max(0, end - code_width + 4) if end > code_width else 0,
                           animate=False, immediate=True, force=True)
        self._show_find_status()
        self.refresh()

    def _show_find_status(self) -> None:
        if not self.find_text:
            self.border_subtitle = ROOM_HINT
        elif not self._match_order:
            self.border_subtitle = f"/{self.find_text}: no match"
        else:
            index = self._match_order.index(self.current_match) + 1 if self.current_match else 0
            # Short enough for the border at 80 columns (a longer one is not drawn at all).
            self.border_subtitle = f"/{self.find_text}: {index} of {len(self._match_order)} (n N Esc)"

    def watch_cursor_line(self, previous: int, line: int) -> None:
        self._refresh_rows(previous, line)

    def _refresh_rows(self, *numbers: int | None) -> None:
        top = self.scroll_offset.y
        width = self.size.width
        for number in numbers:
            if number and 0 <= number - 1 - top < self.size.height:
                self.refresh(Region(0, number - 1 - top, width, 1))

    def set_breakpoints(self, marks_by_path: dict[str, dict[int, GutterMark]]) -> None:
        self._all_marks = marks_by_path
        marks = marks_by_path.get(self.file.path, {}) if self.file else {}
        if marks != self.marks:  # a hit count changes at every hit, the gutter seldom
            self.marks = marks
            self.refresh()

    # ------------------------------------------------------------------ geometry

    @property
    def gutter_width(self) -> int:
        digits = len(str(len(self.file.lines))) if self.file else 3
        # breakpoint glyph, who set it, space, number, space, marker, space
        return 3 + max(digits, 3) + 3

    def center_line(self, line: int) -> None:
        if getattr(self.screen, "held", False):
            # A run's screen not laid out yet (PacedScreen.hold_first_layout):
            # the line is placed once the height is known, before the paint.
            self.screen.after_first_layout(functools.partial(self.center_line, line))
            return
        height = self.scrollable_content_region.height or self.size.height or 10
        top = self.scroll_offset.y
        if top < line - 1 < top + height - 1 and height > 4 and top + 1 < line - 1:
            return  # already comfortably visible: do not jump
        self.scroll_to(y=max(0, line - 1 - height // 3), animate=False, immediate=True, force=True)

    def on_resize(self) -> None:
        # A smaller pane (terminal resized, the find prompt shown) must not leave the
        # cursor off screen; it is on the current line unless the person moved it.
        if self.file is not None:
            self.call_after_refresh(self._ensure_cursor_visible)

    def _ensure_cursor_visible(self) -> None:
        height = self.scrollable_content_region.height or self.size.height
        top = self.scroll_offset.y
        line = self.cursor_line
        if line - 1 < top:
            self.scroll_to(y=line - 1, animate=False, immediate=True, force=True)
        elif line - 1 >= top + height:
            self.scroll_to(y=line - height, animate=False, immediate=True, force=True)

    # ------------------------------------------------------------------ actions

    def action_cursor(self, delta: int) -> None:
        self._move_cursor(self.cursor_line + delta)

    def action_scroll_columns(self, delta: int) -> None:
        self.scroll_to(x=max(0, self.scroll_offset.x + delta), animate=False, immediate=True, force=True)

    def action_page(self, direction: int) -> None:
        height = self.scrollable_content_region.height or 10
        self._move_cursor(self.cursor_line + direction * max(1, height - 1))

    def action_cursor_to(self, line: int) -> None:
        total = len(self.file.lines) if self.file else 1
        self._move_cursor(total if line < 0 else line)

    def action_cursor_to_location(self) -> None:
        if self.location is not None and (self.file is None or self.file.path != self.location[0]):
            self.open_file(self.location[0])  # back from a file opened with Ctrl+O
        if self.location_line:
            self._move_cursor(self.location_line)
            self.center_line(self.location_line)

    def clear_location(self) -> None:
        """The program ended: no current line any more (the file stays open)."""
        self.location = None
        self.location_line = None
        self.refresh()

    def _move_cursor(self, line: int) -> None:
        total = len(self.file.lines) if self.file else 1
        self.cursor_line = min(max(1, line), total)
        self._ensure_cursor_visible()

    def action_toggle_breakpoint(self) -> None:
        if self.file is not None:
            self.post_message(ToggleBreakpoint(self.file.path, self.cursor_line))

    def action_edit_breakpoint(self) -> None:
        if self.file is not None:
            self.post_message(EditBreakpoint(path=self.file.path, line=self.cursor_line))

    def action_run_to_cursor(self) -> None:
        if self.file is not None:
            self.post_message(RunCommand("until", {"file": self.file.path, "line": self.cursor_line}))

    def action_inspect(self) -> None:
        """The name under the cursor: where the code was clicked on this line, else
        the names of the line in turn (K again: the next one)."""
        if self.file is None:
            return
        line = self.cursor_line
        text = self.file.lines[line - 1]
        expression = None
        if self.clicked_at is not None and self.clicked_at[0] == line:
            expression = expression_at(text, self.clicked_at[1])
            self.clicked_at = None  # K again walks the line's names
        if expression is None:
            names = expressions_in(text)
            if not names:
                self.notify("No name on this line to inspect.", severity="warning")
                return
            index = 0
            if self._inspected is not None and self._inspected[0] == line:
                index = (self._inspected[1] + 1) % len(names)
            self._inspected = (line, index)
            expression = names[index][2]
        self.post_message(Inspect(expression))

    def action_jump_to_cursor(self) -> None:
        if self.file is not None:
            self.post_message(RunCommand("until", {"file": self.file.path, "line": self.cursor_line,
                                                   "jump": True}))

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if self.file is None or offset is None:
            return
        line = offset.y + self.scroll_offset.y + 1
        if not 1 <= line <= len(self.file.lines):
            return
        self.cursor_line = line
        if offset.x < self.gutter_width:
            # The gutter toggles, as in every editor; the code area only moves the cursor.
            self.post_message(ToggleBreakpoint(self.file.path, line))
        else:
            self.clicked_at = (line, offset.x - self.gutter_width + self.scroll_offset.x)

    # ------------------------------------------------------------------ rendering

    def render_lines(self, crop: Region) -> list[Strip]:
        # The pane's style walks every ancestor: work it out once per paint, not per row.
        self._base_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._base_style = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._base_style or self.rich_style
        if self.file is None:
            if y == 0:
                return Strip([Segment(self.message[:width], base)]).extend_cell_length(width, base)
            return Strip.blank(width, base)
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        if index >= len(self.file.lines):
            return Strip.blank(width, base)
        number = index + 1
        is_current = number == self.location_line
        is_cursor = number == self.cursor_line and self.has_focus
        gutter = self._gutter(number, is_current, is_cursor)
        code_width = max(0, width - gutter.cell_length)
        text = self._highlighted(index)
        found = self.matches.get(number)
        if found:
            text = text.copy()
            for start, end in found:
                current = self.current_match == (number, start, end)
                text.stylize(self.get_component_rich_style(
                    "source--match-current" if current else "source--match", partial=True),
                    start, end)
        inline = self.inline[1].get(number) if (
            self.inline is not None and self.inline[0] == self.file.path) else None
        if inline:
            text = text.copy() if not found else text
            text.append("  " + inline, self.get_component_rich_style("source--inline", partial=True))
        code = Strip(text.render(self.app.console), text.cell_len)
        code = code.crop_extend(scroll_x, scroll_x + code_width, None)
        if is_current:
            code = code.apply_style(self._current_line_style())
            self.painted_location = (self.file.path, number)
        elif is_cursor:
            code = code.apply_style(self.get_component_rich_style("source--cursor", partial=True))
        return Strip.join([gutter, code]).apply_style(base)

    def _current_line_style(self) -> Style:
        # Component styles are not blended with what is under them; a translucent
        # highlight is blended here so the code on it keeps its colours readable.
        styles = self.get_component_styles("source--current")
        background = self.background_colors[1] + styles.background
        return Style(bgcolor=background.rich_color, bold=True)

    def _gutter(self, number: int, is_current: bool, is_cursor: bool) -> Strip:
        assert self.file is not None
        digits = self.gutter_width - 6
        mark = self.marks.get(number)
        segments: list[Segment] = []
        if mark is not None:
            style = self.get_component_rich_style(
                "source--breakpoint" if mark.enabled and mark.verified else "source--breakpoint-disabled")
            segments.append(Segment(mark.glyph, style))
            letter = WHO_LETTER.get(mark.origin, " ")
            segments.append(Segment(letter, self.get_component_rich_style("source--origin")))
        else:
            segments.append(Segment("  "))
        segments.append(Segment(" "))
        lineno_style = self.get_component_rich_style("source--lineno")
        if is_cursor:
            lineno_style += Style(reverse=True)
        segments.append(Segment(str(number).rjust(digits), lineno_style))
        segments.append(Segment(" "))
        if is_current:
            glyph = "▶" if self.location_is_top else "▷"
            segments.append(Segment(glyph, self.get_component_rich_style("source--current-marker")))
        else:
            segments.append(Segment(" "))
        segments.append(Segment(" "))
        return Strip(segments, self.gutter_width)

    def _highlighted(self, index: int) -> Text:
        assert self.file is not None
        block = index // HIGHLIGHT_BLOCK
        texts = self._blocks.get(block)
        if texts is None:
            start = block * HIGHLIGHT_BLOCK
            texts = self._lex(self.file.lines[start:start + HIGHLIGHT_BLOCK])
            self._blocks[block] = texts
            if len(self._blocks) > HIGHLIGHT_CACHE_BLOCKS:
                self._blocks.popitem(last=False)
        else:
            self._blocks.move_to_end(block)
        return texts[index - block * HIGHLIGHT_BLOCK]

    def _lex(self, lines: list[str]) -> list[Text]:
        return _lex_lines(self._lexer, self._syntax_theme, lines)


def _lex_lines(lexer: Any, theme: Any, lines: list[str]) -> list[Text]:
    """The lines, highlighted by `lexer` in `theme`'s colours, one Text each."""
    if lexer is None:
        return [Text(line) for line in lines]
    out: list[Text] = [Text()]
    styles: dict = {}
    for token_type, value in lexer.get_tokens("\n".join(lines) + "\n"):
        style = styles.get(token_type)
        if style is None:
            full = theme.get_style_for_token(token_type)
            style = Style(color=full.color, bold=full.bold, italic=full.italic)
            styles[token_type] = style
        pieces = value.split("\n")
        for i, piece in enumerate(pieces):
            if i:
                out.append(Text())
            if piece:
                out[-1].append(piece, style)
    out = out[: len(lines)]
    while len(out) < len(lines):
        out.append(Text())
    return out


#: The languages we debug, by suffix. Finding a lexer by file name compiles the
#: file patterns of every lexer Pygments has: about 0.3 s, paid at the first stop.
LEXER_BY_SUFFIX = {
    ".py": "python", ".pyw": "python", ".pyi": "python", ".js": "javascript",
    ".mjs": "javascript", ".cjs": "javascript", ".ts": "typescript", ".mts": "typescript",
    ".cts": "typescript", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp",
    ".hpp": "cpp", ".hh": "cpp", ".go": "go", ".rs": "rust", ".swift": "swift",
    ".m": "objective-c", ".mm": "objective-c++",
}


_lexers: dict[str, object] = {}


def warm_lexer(path: str) -> Any:
    """Import and compile the lexer for `path` ahead of the first stop (in a thread:
    about 0.1 s for Python's, which the first stop would otherwise wait for)."""
    lexer = _lexer_for(path)
    if lexer is not None:
        for _ in lexer.get_tokens("x = 1\n"):
            pass
    return lexer


def _lexer_for(path: str):
    suffix = os.path.splitext(path)[1].lower()
    if suffix in _lexers:
        return _lexers[suffix]
    lexer = _find_lexer(path)
    if suffix:
        _lexers[suffix] = lexer
    return lexer


def _find_lexer(path: str):
    try:
        from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover - pygments ships with rich
        return None
    try:
        name = LEXER_BY_SUFFIX.get(os.path.splitext(path)[1].lower())
        if name is not None:
            return get_lexer_by_name(name, stripnl=False, ensurenl=False)
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
