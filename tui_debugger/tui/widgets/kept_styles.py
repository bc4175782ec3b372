"""A pane's Rich styles kept from one paint to the next.

Textual works out a widget's `rich_style` and each component style by walking
the widget's ancestors and blending their backgrounds and colours, and it
forgets its cache of them at every refresh. The panes a step repaints (the
source, the stack, the variables) ask for ~20 of them each step: a fifth of the
TUI's CPU of a step went there (cProfile over 43 steps), every answer the same
as the step before.

Here they are kept until a style they come from changes: each is keyed by the
change counters of the widget's and its ancestors' styles (Textual's own
`RenderStyles._cache_key`, which moves whenever a rule is set, by the
stylesheet, a theme, a class, a pseudo-class or code) and, for a component, by
the component's styles object (replaced when the stylesheet is applied again).
Reading ~8 counters is a small part of the walk it saves.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style


class KeptStyles:
    """Mixed in before the Textual widget class."""

    def _styles_key(self) -> tuple[int, ...]:
        return tuple(node.styles._cache_key for node in self.ancestors_with_self)  # type: ignore[attr-defined]

    def _kept(self) -> dict[Any, Style]:
        kept = self.__dict__.get("_kept_styles")
        if kept is None:
            kept = self.__dict__["_kept_styles"] = {}
        return kept

    @property
    def rich_style(self) -> Style:  # type: ignore[override]
        key = ("", self._styles_key())
        kept = self._kept()
        style = kept.get(key)
        if style is None:
            if len(kept) > 64:  # old keys: styles that changed since
                kept.clear()
            style = kept[key] = super().rich_style  # type: ignore[misc]
        return style

    def get_component_rich_style(self, *names: str, partial: bool = False,
                                 default: Style | None = None) -> Style:
        components = self._component_styles  # type: ignore[attr-defined]
        key = (names, partial, default, self._styles_key(),
               tuple((id(components.get(name)), getattr(components.get(name), "_cache_key", 0))
                     for name in names))
        kept = self._kept()
        style = kept.get(key)
        if style is None:
            if len(kept) > 64:
                kept.clear()
            style = kept[key] = super().get_component_rich_style(  # type: ignore[misc]
                *names, partial=partial, default=default)
        return style
