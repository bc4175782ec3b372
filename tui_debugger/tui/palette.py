"""Ctrl+P: every registry command the TUI offers, with its keys and help. A
command that needs arguments opens a form built from its argument model."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ..commands import registry
from .keymap import display_key


def palette_commands() -> list[registry.Command]:
    return [cmd for cmd in registry.all_commands() if cmd.tui_action]


class RegistryCommands(Provider):
    def _entries(self):
        keymap = getattr(self.app, "keymap", {})
        for cmd in palette_commands():
            keys = keymap.get(cmd.id) or ",".join(cmd.keys)
            shown = f"{cmd.id}  ({', '.join(display_key(k) for k in keys.split(','))})" if keys else cmd.id
            yield cmd, shown

    async def discover(self) -> Hits:
        for cmd, shown in self._entries():
            yield DiscoveryHit(shown, partial(self.app.invoke_command, cmd.id), help=cmd.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for cmd, shown in self._entries():
            score = max(matcher.match(shown), matcher.match(cmd.help) * 0.5)
            if score > 0:
                yield Hit(score, matcher.highlight(shown), partial(self.app.invoke_command, cmd.id),
                          help=cmd.help)
