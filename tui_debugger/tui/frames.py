"""How the main screen is updated: when (a frame pacer) and what is rendered
(only what lies under the changed regions).

Pacing: at most `MAX_FPS` screen updates a second, but a few at once after idle.

Textual paints a screen from a repeating timer on a fixed grid (60 Hz), paused
while nothing is dirty. After an idle spell its first tick comes at once, but the
timer then skips to the grid point after the next one, so the second update of a
burst (a stop's stack and variables, a few milliseconds after its source line)
waits 17–33 ms. A debugger's screen is idle between steps and every step is such a
burst: that wait was most of the time from the key to the settled screen.

`FramePacer` keeps the promise the grid was for (at most `MAX_FPS` updates a
second, over time) without the grid, as a token bucket: a frame's worth of
allowance accrues every 1/MAX_FPS seconds, up to `BURST` frames, and an update
runs as soon as a whole frame's allowance is there. So a step after idle paints
its source line the moment the stop arrives and its stack and variables the
moment they arrive, and a flood of output still paints at most 60 times a
second. It stands in for the screen's update timer, of which Textual uses
`pause` and `resume` only.

Rendering: Textual renders, for a partial update, every widget under the
bounding box of the changed regions, whole. A stop changes the status bar (the
top row), two rows of the source, the stack (bottom right) and the variables
(top right): the box is the whole screen, so all ~60 widgets were rendered
(tab bars, containers, the footer), 10-14 ms a stop. `FocusedCompositor`
renders only the widgets that overlap a changed region, and of each only the
rows that do. Every span written to the terminal lies in a changed region, so
each of its cells still comes from the front-most widget there.

Both lean on Textual's internals, so Textual is pinned exactly (pyproject.toml):
the copies and overrides below are of `TEXTUAL_VERSION`'s source, and
tests/test_tui_updates.py fails, naming what moved, when the installed Textual
is another release or its source differs from the fingerprints recorded here.
Upgrading Textual means reading what changed in those functions, porting it,
measuring again, and recording the new fingerprints.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from textual import constants, events
from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region, Size
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget

#: The Textual release pyproject.toml pins: the one whose source is copied here.
TEXTUAL_VERSION = "8.2.8"
#: What of Textual's source this module copies or overrides, by a fingerprint of
#: each function (the first 16 hex digits of the sha256 of its `ast.unparse`,
#: docstring left out: formatting and comments do not count, code does).
TEXTUAL_SOURCES = {
    # copied into FocusedCompositor.render_partial_update
    "textual._compositor.Compositor.render_partial_update": "cd25a2bce076224a",
    # copied into FocusedCompositor._focused_chops, with what it renders from _get_renders
    "textual._compositor.Compositor._render_chops": "395572f64657beeb",
    "textual._compositor.Compositor._get_renders": "15704cdc5497f3d9",
    # overridden by PacedScreen: the timer it replaces, the update it wraps
    "textual.screen.Screen._update_timer": "0fdf304ef57a03f3",
    "textual.screen.Screen._on_timer_update": "63e2c1dbbefb1c5d",
    # what PacedScreen.paint_now does in their stead: a widget's repaint handed
    # to the screen, and the screen noting it
    "textual.widget.Widget._check_refresh": "2545f8900b7eebfd",
    "textual.screen.Screen._on_update": "656eca607549b316",
    # copied into VariablesPane._relabel, with the repaint asked for at once
    "textual.widgets._tree.TreeNode.set_label": "afe2a7d736f2a22d",
    # overridden by CursorTree.move_cursor (tui/widgets/cursor_tree.py), which
    # builds the tree's lines first: the property that builds them, and what it sets
    "textual.widgets._tree.Tree.move_cursor": "7e5664ed6bab2813",
    "textual.widgets._tree.Tree._tree_lines": "f13275e649670149",
    "textual.widgets._tree.Tree._build": "dda89f87e4176655",
    # what PacedScreen's first show and same-size resize leave out, and the
    # width class the app's default screen starts with (app.get_default_screen)
    "textual.screen.Screen._on_screen_resume": "4cad35ced98a110e",
    "textual.screen.Screen._screen_resized": "b427408d70a6e7df",
    "textual.screen.Screen._on_resize": "559c00202f144e3a",
    # the keys KeyFooter (tui/widgets/footer.py) makes with their compact set
    "textual.widgets._footer.Footer.compose": "6997660d382a59e1",
    "textual.widgets._footer.FooterKey._watch_compact": "d9e3921eb866b780",
    # what KeyFooter.bindings_changed does with one remake of the keys queued at a time
    "textual.widgets._footer.Footer.bindings_changed": "ffce901968586d84",
    # how KeyFooter._remake makes the footer the active message pump for its compose
    "textual.message_pump.MessagePump._context": "d9f98380d6cdfdb8",
    # the focused widget's bindings, keymap applied, that Tab and Shift+Tab
    # (priority bindings) run first (PaneActions.action_focus_step)
    "textual.screen.Screen._binding_chain": "b030efd15cba19de",
    "textual.screen.Screen._modal_binding_chain": "2a73ec596c1e0deb",
    # how a widget's own Tab is handed to it as a forwarded key
    "textual.widget.Widget._forward_event": "c6a2200579414a4e",
}


#: Frames that may be painted back to back after idle: a stop's line, its panes,
#: and one to spare for an event that lands between them (a breakpoint's hit count).
BURST = 3


class FramePacer:
    """A one-shot "update soon", paced by a token bucket of frames."""

    def __init__(self, callback: Callable[[], bool | None], on_error: Callable[[BaseException], None],
                 period: float = 1 / constants.MAX_FPS, burst: int = BURST):
        self._callback = callback
        self._on_error = on_error
        self._period = period
        self._burst = float(burst)
        self._tokens = float(burst)
        self._tokens_at = float("-inf")  # when _tokens was last worked out
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None

    def _tokens_now(self, now: float) -> float:
        if self._tokens_at == float("-inf"):
            return self._burst
        return min(self._burst, self._tokens + (now - self._tokens_at) / self._period)

    def resume(self) -> None:
        """An update is wanted: schedule one unless one is already on its way."""
        if self._handle is not None:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        tokens = self._tokens_now(now)
        if tokens >= 1:
            self._handle = loop.call_soon(self._fire)
        else:
            self._handle = loop.call_at(now + (1 - tokens) * self._period, self._fire)

    def fire_now(self) -> bool:
        """Update in this turn of the loop if a frame's allowance is there (an
        update already scheduled is taken over); else as `resume` does. True
        when it updated."""
        loop = asyncio.get_running_loop()
        if self._tokens_now(loop.time()) < 1:
            self.resume()
            return False
        self.pause()
        self._fire()
        return True

    def pause(self) -> None:
        """Nothing to update after all (the screen was laid out another way)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None
        now = asyncio.get_running_loop().time()
        try:
            painted = self._callback() is not False  # False: nothing was painted
        except Exception as error:  # as Textual's timer does: the app shows it and exits
            self._on_error(error)
            painted = True
        if painted:
            self._tokens = max(0.0, self._tokens_now(now) - 1)
            self._tokens_at = now


class FocusedCompositor(Compositor):
    """A compositor whose partial updates render only what changed (see above).

    The rest is Textual's own: `render_partial_update` and `_render_chops` with
    the set of widgets and rows narrowed."""

    def render_partial_update(self) -> ChopsUpdate | None:
        screen_region = self.size.region
        update_regions = self._dirty_regions.copy()
        self._dirty_regions.clear()
        if not update_regions:
            return None
        spans = list(self._regions_to_spans(update_regions))
        is_rendered_line = {y for y, _, _ in spans}.__contains__
        chops = self._focused_chops(
            [region.intersection(screen_region) for region in update_regions], is_rendered_line)
        chop_ends = [cut_set[1:] for cut_set in self.cuts]
        return ChopsUpdate(chops, spans, chop_ends)

    def _focused_chops(self, regions: list[Region], is_rendered_line: Callable[[int], bool]
                       ) -> list[dict[int, Strip | None]]:
        """Textual's `_render_chops`, front to back, for the widgets that overlap
        a changed region: each renders its visible part narrowed to the rows the
        changed regions cover, unless the widgets in front already cover those
        rows (the containers behind a pane)."""
        cuts = self.cuts
        chops: list[dict[int, Strip | None]] = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
        for widget, (region, clip) in self.visible_widgets.items():
            visible = region.intersection(clip)
            if not visible:
                continue
            top = bottom = None
            for changed in regions:
                part = visible.intersection(changed)
                if part:
                    top = part.y if top is None else min(top, part.y)
                    bottom = part.bottom if bottom is None else max(bottom, part.bottom)
            if top is None or bottom is None:
                continue
            # The full width of the visible part: the line's cuts start at its edges.
            render_region = Region(visible.x, top, visible.width, bottom - top)
            render_x = render_region.x
            first_cut, last_cut = render_region.column_span
            line_cuts = {y: [cut for cut in cuts[y] if last_cut >= cut >= first_cut]
                         for y in render_region.line_range if is_rendered_line(y)}
            if all(chops[y].get(cut) is not None for y, final_cuts in line_cuts.items()
                   for cut in final_cuts[:-1] if cut < last_cut):
                continue  # hidden behind what is already rendered
            strips = widget.render_lines(Region(render_x - region.x, top - region.y,
                                                render_region.width, render_region.height))
            for y, strip in zip(render_region.line_range, strips):
                final_cuts = line_cuts.get(y)
                if final_cuts is None:
                    continue
                chops_line = chops[y]
                cut_strips = strip.divide([cut - render_x for cut in final_cuts[1:]])
                # Front to back, as Textual paints: the first strip for a cut wins.
                for cut, cut_strip in zip(final_cuts, cut_strips):
                    if chops_line.get(cut) is None:
                        chops_line[cut] = cut_strip
        return chops


class PacedScreen(Screen):
    """The main screen, updated by a `FramePacer` instead of Textual's grid timer.

    A widget in a hidden tab (the threads or breakpoints of a stop, while the
    stack is shown) is left out of the update: Textual takes a dirty widget it
    does not see for a new one and maps the whole screen again (1-3 ms a frame
    here). Its own caches are already cleared, and showing it lays it out anew."""

    _pacer: FramePacer | None = None
    _shown_once = False
    _laid_out_at: Size | None = None
    #: the first layout waits (hold_first_layout): the timer that ends the wait
    _hold: asyncio.TimerHandle | None = None
    _released: asyncio.Event | None = None
    #: run between the held first layout and its paint (after_first_layout;
    #: made by hold_first_layout, read only while held)
    _laid_out_hooks: list[Callable[[], object]]

    def __init__(self, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._compositor = FocusedCompositor()

    @property
    def _update_timer(self) -> FramePacer:  # type: ignore[override]
        if self._pacer is None:
            self._pacer = FramePacer(self._on_timer_update, self.app._handle_exception)
        return self._pacer

    def hold_first_layout(self, seconds: float) -> None:
        """Lay out and paint the screen first when what it is to show is in
        (`release`), or after `seconds`, not as soon as it is mounted. A cold
        `run` mounts the screen about when the program's entry stop reaches the
        host: Textual's first layout and full paint of the empty panes (55-75
        ms of the TUI's CPU) ran while the stop's events waited, then the stop
        took a layout and a paint of its own (docs/performance.md). Held, the
        stop fills the panes first, and one layout paints them. Only before
        the first layout."""
        if self._laid_out_at is not None or self._hold is not None:
            return
        self._released = asyncio.Event()
        self._laid_out_hooks = []
        self._hold = asyncio.get_running_loop().call_later(seconds, self.release)

    @property
    def held(self) -> bool:
        return self._hold is not None

    def after_first_layout(self, callback: Callable[[], object]) -> None:
        """Run `callback` once the held first layout has given the widgets
        their sizes, before that layout is painted (a pane placing a line a
        third of its height from the top); at once when nothing is held."""
        if self._hold is None:
            callback()
        else:
            self._laid_out_hooks.append(callback)

    async def released(self) -> None:
        """Once the held first layout is done (at once when none is held)."""
        if self._hold is not None and self._released is not None:
            await self._released.wait()

    def release(self) -> None:
        """The held first layout, now: everything it was asked for meanwhile
        (sizes, repaints, scrolls) is in this one."""
        if self._hold is None:
            return
        self._hold.cancel()
        self._hold = None
        if self._released is not None:
            self._released.set()
        hooks, self._laid_out_hooks = self._laid_out_hooks, []
        if self.is_attached and self.is_current:
            self._update_timer.pause()
            # Laid out now, painted whole once the hooks have seen the sizes:
            # within a batch, Textual queues the paint instead of doing it.
            with self.app.batch_update():
                self._refresh_layout(self.app.size)
            self._layout_required = self._scroll_required = self._repaint_required = False
            self._dirty_widgets.clear()
        for hook in hooks:
            hook()
        if self._callbacks:  # what waited for a refresh (call_after_refresh) runs now
            self.call_next(self._invoke_and_clear_callbacks)

    def _on_timer_update(self) -> bool:  # type: ignore[override]
        """Update the screen; False when there was nothing to paint (a hidden
        widget's change only), which the pacer does not count as a frame."""
        if self._hold is not None:  # what is asked is kept for the first layout
            self._update_timer.pause()
            return False
        dirty = self._dirty_widgets
        if dirty and not self._layout_required:
            visible = self._compositor.visible_widgets
            for widget in [w for w in dirty if w not in visible and _in_hidden_part(w, self)]:
                dirty.discard(widget)
        if not (dirty or self._layout_required or self._scroll_required
                or self._repaint_required or self._recompose_required):
            self._update_timer.pause()
            if self._callbacks:  # what waits for this update (call_after_refresh) runs now
                self.call_next(self._invoke_and_clear_callbacks)
            return False
        super()._on_timer_update()
        return True

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        """Its first show restyles nothing: every node of it was styled as it
        was mounted, just before, and Textual's own handler (which runs after
        this one, with the event as left here) would style the whole screen
        again, ~65 nodes: 60-135 ms of the TUI's start-up, while the program's
        first stop waited to be shown (docs/performance.md). Later resumes (after
        a dialog) restyle as Textual does."""
        if not self._shown_once:
            self._shown_once = True
            event.refresh_styles = False

    def _screen_resized(self, size: Size) -> None:  # type: ignore[override]
        """A new size lays the screen out anew; the size it is already laid out
        at does not: Textual's start-up hands the first size over three times
        (two from the app, one as the terminal's first Resize), each a full
        layout and paint of every pane (15-40 ms each while the first stop
        waited). What else changed is already marked and painted by the pacer."""
        if size == self._laid_out_at and not self._layout_required:
            return
        super()._screen_resized(size)

    def _refresh_layout(self, size: Size | None = None, scroll: bool = False) -> None:  # type: ignore[override]
        if self._hold is not None:
            self._layout_required = True  # done at the release (the first show's, a resize's)
            return
        super()._refresh_layout(size, scroll)
        self._laid_out_at = self._compositor.size

    def paint_now(self) -> bool:
        """Paint what the code that just ran changed, before returning, rather
        than after the hops Textual takes to learn of it (the widget's idle
        turn posts an Update to the screen, whose idle turn resumes the
        timer): four turns of the event loop, 4-6 ms of a step's 30 here while
        the stop's other events and the panes' requests run between them.
        Only widgets that want a repaint and nothing else are taken over: one
        that wants a layout, a scroll or new styles, or a screen that does,
        takes Textual's own way. True when it painted."""
        if not self.is_current or self.app._batch_count or self._layout_required \
                or self._scroll_required or self._recompose_required:
            return False
        wanted = []
        for widget in self._compositor.visible_widgets:
            if widget._layout_required or widget._scroll_required or \
                    widget._refresh_styles_required or widget._recompose_required:
                return False
            if widget._repaint_required:
                wanted.append(widget)
        if not wanted:
            return False
        for widget in wanted:  # what Widget._check_refresh and Screen._on_update do
            widget._repaint_required = False
            self._dirty_widgets.add(widget)
        return self._update_timer.fire_now()

    def _on_unmount(self) -> None:
        if self._hold is not None:
            self._hold.cancel()
            self._hold = None
            if self._released is not None:
                self._released.set()
        if self._pacer is not None:
            self._pacer.pause()
        super()._on_unmount()


def _in_hidden_part(widget: Widget, screen: Screen) -> bool:
    """Whether the widget or a container of it is not displayed."""
    node: Any = widget
    while node is not None and node is not screen:
        if not node.display:
            return True
        node = node._parent
    return False

