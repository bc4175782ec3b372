"""An Input whose own keys run in order with the keys typed around them.

Textual runs a focused widget's (non-priority) key bindings when the key has
bubbled back up to the App, and by then the App may already have handed the
widget the keys that came right behind it: keys that arrive together (a fast
typist on a busy machine, keys sent by tmux or a terminal multiplexer) ran out
of order. Ctrl+U and then typing deleted the typing too; Backspace, the arrows
and Enter could act after the keys typed after them. Here the input's own
bindings run when it takes the key from its queue, in order."""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class TextInput(Input):
    async def _on_key(self, event: events.Key) -> None:
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()
                event.prevent_default()
                return
        await super()._on_key(event)
