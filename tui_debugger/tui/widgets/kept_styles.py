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

from typing import Any, Callable

from rich.style import Style


class KeptStyles:
    """Mixed in before the Textual widget class."""

    def _styles_key(self) -> tuple[int, ...]:
        return tuple(node.styles._cache_key for node in self.ancestors_with_self)  # type: ignore[attr-defined]

    def _keep(self, key: Any, make: Callable[[], Style]) -> Style:
        kept = self.__dict__.setdefault("_kept_styles", {})
        style = kept.get(key)
        if style is None:
            if len(kept) > 64:  # old keys: styles that changed since
                kept.clear()
            style = kept[key] = make()
        return style

    @property
    def rich_style(self) -> Style:  # type: ignore[override]
        return self._keep(("", self._styles_key()), lambda: super(KeptStyles, self).rich_style)

    def get_component_rich_style(self, *names: str, partial: bool = False,
                                 default: Style | None = None) -> Style:
        components = [self._component_styles.get(name) for name in names]  # type: ignore[attr-defined]
        key = (names, partial, default, self._styles_key(),
               tuple((id(c), getattr(c, "_cache_key", 0)) for c in components))
        return self._keep(key, lambda: super(KeptStyles, self).get_component_rich_style(  # type: ignore[misc]
            *names, partial=partial, default=default))
