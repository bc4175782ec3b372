"""The key bar: Textual's Footer, each of its keys styled once as it is made.

Textual's FooterKey starts `compact` (a reactive that toggles its `-compact`
class) at True, and the footer binds it to its own `compact` (False) as the
key mounts: two class changes, each restyling the key (with its component
classes) at once. The footer makes a key for every binding of the focused
widget's chain, ~40 here, and makes them all again whenever the focus moves:
80 extra restyles, 40-60 ms of the TUI's start-up while the program's first
stop waited to be shown (docs/performance.md). Here each key is made with the
footer's value already set, so its binding finds nothing to change.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


#: FooterKey's own `compact`, which a key the footer does not bind keeps
OWN_COMPACT: bool = FooterKey.compact._default  # type: ignore[attr-defined]


class KeyFooter(Footer):
    """Footer whose keys start with the footer's `compact`, not FooterKey's own."""

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
