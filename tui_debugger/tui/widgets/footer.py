"""The key bar: Textual's Footer, each of its keys styled once as it is made.

Textual's FooterKey starts `compact` (a reactive that toggles its `-compact`
class) at True, and the footer binds it to its own `compact` (False) as the
key mounts: two class changes, each restyling the key (with its component
classes) at once. The footer makes a key for every binding of the focused
widget's chain, ~40 here, and makes them all again whenever the focus moves:
80 extra restyles, 40-60 ms of the TUI's start-up while the program's first
stop waited to be shown (docs/performance.md). Here each key is made with the
footer's value already set, so its binding finds nothing to change.

Textual's footer also makes its keys again for every change of the bindings
it hears of: three come together at start-up (the first focus, the app's
state, the screen's resume), and each made the ~40 keys again (15-85 ms each)
while the first stop waited to be shown. Changes heard before the keys are
made again are made once (`bindings_changed`). And a footer made `held` (the
app's first, while a person waits for a new program's first stop) makes no
keys until it is released, so their making and layout come after that stop
is on screen, not before it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


if TYPE_CHECKING:
    from textual.screen import Screen

#: FooterKey's own `compact`, which a key the footer does not bind keeps
OWN_COMPACT: bool = FooterKey.compact._default  # type: ignore[attr-defined]


class KeyFooter(Footer):
    """Footer whose keys start with the footer's `compact`, not FooterKey's own,
    and are made again once for the changes of the bindings that come together."""

    #: the keys will be made again (the changes heard since are in it)
    _remake_queued = False
    #: bindings changed while held
    _remake_wanted = False

    def __init__(self, *, held: bool = False) -> None:
        super().__init__()
        self.held = held

    def release(self) -> None:
        """Make the keys from now on (at once, if they were asked for)."""
        if self.held:
            self.held = False
            if self._remake_wanted and self.is_attached:
                self._remake_wanted = False
                self.bindings_changed(self.screen)

    def bindings_changed(self, screen: Screen) -> None:
        # Footer.bindings_changed, with one remake queued at a time: the keys
        # are made from the bindings as they are when it runs.
        if self.held:
            self._remake_wanted = True
            return
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._remake_queued:
            self._remake_queued = True
            self.call_after_refresh(self._remake)

    async def _remake(self) -> None:
        self._remake_queued = False
        # With this footer the active message pump, whoever asked (its keys bind
        # to its own `compact`): the app, when release() comes from its timer.
        with self._context():
            await self.recompose()

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                # The keys the footer binds (data_bind) take its value; the
                # palette's key, unbound, keeps FooterKey's own, as Textual makes it.
                bound = "compact" in (widget._reactive_connect or {})
                compact = self.compact if bound else OWN_COMPACT
                widget.set_reactive(FooterKey.compact, compact)
                widget.set_class(compact, "-compact", update=False)
            yield widget
