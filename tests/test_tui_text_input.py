"""The TUI's inputs take keys that come together in the order they came."""

from __future__ import annotations

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Input

from tui_debugger.tui.widgets.console_pane import ConsoleInput
from tui_debugger.tui.widgets.text_input import TextInput

_NAMES = {"{": "left_curly_bracket", "}": "right_curly_bracket", "'": "apostrophe",
          ":": "colon", " ": "space"}


def typed(text: str) -> list[events.Key]:
    return [events.Key(_NAMES.get(c, c), c) for c in text]


class _Box(App):
    def __init__(self, kind: type[Input]) -> None:
        super().__init__()
        self.kind = kind

    def compose(self) -> ComposeResult:
        yield self.kind()


async def _burst(kind: type[Input], start: str, keys: list[events.Key]) -> str:
    """The input's value after `keys` reach the app all at once, as a terminal
    delivers keys sent together (tmux send-keys, a busy machine)."""
    app = _Box(kind)
    async with app.run_test() as pilot:
        box = app.query_one(Input)
        box.focus()
        box.value, box.cursor_position = start, len(start)
        await pilot.pause()
        for key in keys:
            app.post_message(key)
        await pilot.pause()
        await pilot.pause(0.1)
        return box.value


async def test_keys_sent_together_act_in_their_order():
    """Ctrl+U then typing keeps the typing (a plain Textual Input ran Ctrl+U's
    binding after the typed keys and deleted them: the tmux console test's
    lost expression); Backspace, Left and Home act where they were pressed."""
    for kind in (TextInput, ConsoleInput):
        assert await _burst(kind, "isinstance",
                            [events.Key("ctrl+u", None), *typed("{'k': 1}")]) == "{'k': 1}"
        assert await _burst(kind, "abc",
                            [events.Key("backspace", None), *typed("xy")]) == "abxy"
        assert await _burst(kind, "abc",
                            [events.Key("home", None), *typed("z"), events.Key("end", None),
                             events.Key("left", None), *typed("q")]) == "zabqc"
