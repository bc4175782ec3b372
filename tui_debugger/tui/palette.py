"""Ctrl+P: every registry command the TUI offers, with its keys and help. A
command that needs arguments opens a form built from its argument model. The
TUI's own session actions are listed too: the attach dialog, and switching to
another live session."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ..commands import registry
from .keymap import PALETTE_ACTIONS, TUI_ACTIONS, display_key

ATTACH_HELP = "Attach to a PID, HOST:PORT or simulator app, or launch a program, in a new session."


def palette_commands() -> list[registry.Command]:
    return [cmd for cmd in registry.all_commands() if cmd.tui_action]


class RegistryCommands(Provider):
    def _keys(self, binding_id: str, defaults: str) -> str:
        keys = getattr(self.app, "keymap", {}).get(binding_id) or defaults
        return f"  ({', '.join(display_key(k) for k in keys.split(','))})" if keys else ""

    def _entries(self):
        for cmd in palette_commands():
            yield f"{cmd.id}{self._keys(cmd.id, ','.join(cmd.keys))}", \
                partial(self.app.invoke_command, cmd.id), cmd.help
        yield f"attach / launch…{self._keys('attach_dialog', 'ctrl+a')}", \
            self.app.action_attach_dialog, ATTACH_HELP
        yield "Just my code on / off (Python, at once)", self.app.action_toggle_just_my_code, \
            "Step into libraries too, or only your code: switched in the live debugpy, no restart."
        yield "Find in the source  (/, then n / N)", self.app.action_find, \
            "Find text in the file shown; n / N go to the next / previous match."
        # The TUI's own actions (pane keys, find, go to line…), so no key is only in `?`.
        for binding_id, keys, action, description in TUI_ACTIONS:
            if binding_id in PALETTE_ACTIONS:
                yield f"{description}{self._keys(binding_id, keys)}", \
                    partial(self.app.run_action, action), description
        for name in self.app.other_sessions():
            yield f"switch to session {name}", partial(self._switch, name), \
                "Show this session; the one on screen keeps running."

    def _switch(self, name: str) -> None:
        self.app.run_worker(self.app.switch_session(name), group="start-session", exclusive=True)

    async def discover(self) -> Hits:
        for shown, action, help_text in self._entries():
            yield DiscoveryHit(shown, action, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for shown, action, help_text in self._entries():
            score = max(matcher.match(shown), matcher.match(help_text) * 0.5)
            if score > 0:
                yield Hit(score, matcher.highlight(shown), action, help=help_text)
