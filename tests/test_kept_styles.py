"""The panes' Rich styles are kept between paints (tui/widgets/kept_styles.py)
and follow every change of a style they come from: a theme, a class on an
ancestor, the widget's own focus, a style set by code."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widget import Widget

from tui_debugger.tui.widgets.kept_styles import KeptStyles


class Pane(KeptStyles, Widget, can_focus=True):
    COMPONENT_CLASSES = {"pane--mark"}


class Host(App):
    AUTO_FOCUS = None
    CSS = """
    Pane { background: $surface; }
    Pane > .pane--mark { color: red; }
    .tinted Pane { background: green; }
    .tinted Pane > .pane--mark { color: yellow; }
    .tinted Pane:focus > .pane--mark { color: blue; }
    """

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield Pane()


async def test_kept_styles_follow_each_change_they_come_from():
    app = Host()
    async with app.run_test() as pilot:
        pane = app.query_one(Pane)
        box = app.query_one("#box")
        await pilot.pause()

        def fresh() -> tuple:
            # what Textual works out itself, nothing kept
            return (Widget.rich_style.fget(pane),
                    Widget.get_component_rich_style(pane, "pane--mark"))

        def kept() -> tuple:
            return pane.rich_style, pane.get_component_rich_style("pane--mark")

        first = kept()
        assert first == fresh()
        assert kept() is not None and kept()[1] is first[1]  # kept, not worked out again
        pane.refresh()
        assert kept()[1] is first[1]  # a repaint changes no style

        box.add_class("tinted")  # an ancestor's class
        await pilot.pause()
        tinted = kept()
        assert tinted == fresh() and tinted != first

        pane.focus()  # the widget's own pseudo-class
        await pilot.pause()
        focused = kept()
        assert focused == fresh() and focused[1] != tinted[1]

        box.styles.color = "orange"  # set by code on an ancestor
        await pilot.pause()
        assert kept() == fresh() and kept()[0] != focused[0]
        pane.styles.background = "purple"  # and on the widget
        await pilot.pause()
        assert kept() == fresh() and kept()[0].bgcolor != focused[0].bgcolor

        app.theme = "textual-light" if app.theme != "textual-light" else "nord"
        await pilot.pause()
        assert kept() == fresh()
