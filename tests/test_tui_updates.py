"""How the panes take new data: the output pane under a flood of lines, the
variables tree relabelled in place for a step of the same shape, the tables left
alone or updated cell by cell. These are the update paths that keep a step from
repainting (or laying out) the whole screen; their speed is measured by
benchmarks/tui_step.py and benchmarks/tui_vs_pudb.py."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import DataTable

from tui_debugger.commands.views import VariablesResult, VariableView
from tui_debugger.tui.widgets.output_log import MAX_LINE_CHARS, OutputLog
from tui_debugger.tui.widgets.output_pane import MAX_LINES, OutputPane
from tui_debugger.tui.widgets.tables import refill
from tui_debugger.tui.widgets.variables_pane import VariablesPane

from tests.support.tui import find_node, tree_labels, wait_until


def row_text(log: OutputLog, y: int) -> str:
    return "".join(segment.text for segment in log.render_line(y)).rstrip()


class OneWidget(App[None]):
    def __init__(self, widget) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield self.widget


async def test_output_flood_keeps_the_tail_and_a_bounded_scrollback():
    pane = OutputPane()
    async with OneWidget(pane).run_test(size=(100, 20)) as pilot:
        log = pane.log_view
        # As debugpy sends it: chunks of many lines, a line split across two chunks.
        for chunk in range(1_000):
            pane.append("stdout", "".join(f"line {chunk * 50 + n}\n" for n in range(49)) + "line ")
            pane.append("stdout", f"{chunk * 50 + 49}\n")
        assert len(pane.lines) == len(log.lines) == MAX_LINES  # bounded
        assert pane.lines[-1] == ("stdout", "line 49999")
        await wait_until(pilot, lambda: row_text(log, log.size.height - 1) == "line 49999",
                         what="the tail on screen")
        assert row_text(log, 0) == f"line {50_000 - log.size.height}"

        # Scrolled up, new lines do not pull the view back to the tail.
        log.scroll_to(y=0, animate=False, immediate=True)
        pane.append("stderr", "late\n")
        await pilot.pause(0.1)
        assert row_text(log, 0) == f"line {50_000 - MAX_LINES + 1}"

        # A search narrows to matching lines, highlighted; Escape shows them all again.
        pane._apply_search("4999")
        assert pane.border_subtitle == "11 matching"  # of the 10,000 kept: 44999, 49990-49999
        await pilot.pause(0.1)
        assert row_text(log, 0) == "line 44999"
        pane.action_close_search()
        assert len(log.lines) == MAX_LINES

        # A minified line is cut, not laid out whole.
        pane.append("stdout", "x" * (MAX_LINE_CHARS * 3) + "\n")
        assert len(log.lines[-1][1]) == MAX_LINE_CHARS


def page(scope: str, values: dict[str, str], path: str | None = None, changed=(),
         children=()) -> VariablesResult:
    return VariablesResult(
        frame_index=0, scope=scope, path=path, scopes=["Locals", "Globals"], total=len(values),
        variables=[VariableView(name=name, value=value, type="int", path=name if path is None
                                else f"{path}.{name}", has_children=name in children,
                                changed=name in changed)
                   for name, value in values.items()])


async def test_a_step_of_the_same_shape_relabels_the_tree_in_place():
    tree = VariablesPane()
    async with OneWidget(tree).run_test(size=(80, 20)) as pilot:
        scopes = ["Locals", "Globals"]
        tree.wanted_keys(scopes)
        tree.show(scopes, {("Locals", None): page("Locals", {"i": "0", "total": "0"})})
        await pilot.pause()
        node = find_node(tree, "total")
        tree.show(scopes, {("Locals", None): page("Locals", {"i": "0", "total": "5"},
                                                      changed={"total"})})
        await pilot.pause()
        assert find_node(tree, "total") is node  # the same node, a new label
        assert tree_labels(tree) == ["Locals", "   i = 0  int", "  *total = 5  int", "Globals"]
        assert tree.filled == 2

        # A new name changes the shape: the tree is rebuilt, with the new one in it.
        tree.show(scopes, {("Locals", None): page("Locals", {"i": "1", "n": "2", "total": "5"})})
        await pilot.pause()
        assert find_node(tree, "total") is not node
        assert [label.strip() for label in tree_labels(tree)] == [
            "Locals", "i = 1  int", "n = 2  int", "total = 5  int", "Globals"]


async def test_the_cursor_goes_to_a_node_added_a_moment_ago():
    """Tree.move_cursor goes to the line a node had when the tree last built its
    lines (on its idle turn): a node added since has none, and the cursor went
    to the first row. A stop that rebuilt the tree left the person's value for
    "Locals", and a Space meant for a child just loaded closed Locals (the
    loaded run of tests/test_tui_app.py timed out waiting for its children)."""
    tree = VariablesPane()
    async with OneWidget(tree).run_test(size=(80, 20)) as pilot:
        scopes = ["Locals", "Globals"]
        tree.wanted_keys(scopes)
        tree.show(scopes, {("Locals", None): page("Locals", {"i": "0", "total": "0"},
                                                      children={"total"})})
        await pilot.pause()
        tree.move_cursor(find_node(tree, "total"))
        # A new shape rebuilds the tree: the cursor stays on the value it was on.
        tree.show(scopes, {("Locals", None): page("Locals", {"i": "1", "n": "2", "total": "5"},
                                                      children={"total"})})
        assert tree.cursor_node is find_node(tree, "total")
        # Children loaded for an expanded node, the cursor moved to one at once.
        tree.add_page(("Locals", "total"), page("Locals", {"real": "5"}, path="total"), 0)
        find_node(tree, "total").expand()
        tree.move_cursor(find_node(tree, "total.real"))
        assert tree.cursor_node is find_node(tree, "total.real")


async def test_tables_leave_the_same_rows_alone_and_update_cells_in_place():
    table: DataTable = DataTable()
    async with OneWidget(table).run_test(size=(60, 10)):
        headers = ["#", "function", "where"]
        assert refill(table, headers, [("0", ["▶0", "work", "small.py:4"])])
        widths = [column.width for column in table.columns.values()]
        assert not refill(table, headers, [("0", ["▶0", "work", "small.py:4"])])  # nothing to do
        assert refill(table, headers, [("0", ["▶0", "work", "small.py:3"])])
        assert table.get_cell("0", "where") == "small.py:3"
        # Shorter cells keep the column's width: the table is not reflowed.
        assert refill(table, headers, [("0", ["▶0", "w", "s.py:3"])])
        assert [column.width for column in table.columns.values()] == widths
        assert table.get_cell("0", "function") == "w"
        # Other rows: filled anew.
        assert refill(table, headers, [("0", ["▶0", "work", "small.py:3"]),
                                       ("1", [" 1", "<module>", "small.py:8"])])
        assert table.row_count == 2


async def test_the_frame_pacer_paints_a_stop_and_its_panes_at_once_and_a_flood_at_the_frame_rate():
    """Textual's grid timer put the second update of a burst (a stop's stack and
    variables after its source line) two frames after the first. The pacer
    paints two updates at once after idle, and over time no more than one a
    period."""
    import asyncio

    from tui_debugger.tui.frames import FramePacer, PacedScreen

    fired: list[float] = []
    loop = asyncio.get_running_loop()
    pacer = FramePacer(lambda: fired.append(loop.time()), on_error=lambda error: None,
                       period=0.05, burst=2)
    pacer.resume()
    assert not isinstance(pacer._handle, asyncio.TimerHandle)  # idle: the next turn of the loop
    pacer.resume()  # already on its way: one update, not two
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert len(fired) == 1
    pacer.resume()  # the second of a burst: at once too
    assert not isinstance(pacer._handle, asyncio.TimerHandle)
    await asyncio.sleep(0)
    assert len(fired) == 2
    pacer.resume()  # the allowance is spent: a period's worth must accrue
    assert isinstance(pacer._handle, asyncio.TimerHandle)
    assert fired[1] + 0.04 < pacer._handle.when() <= fired[1] + 0.05 + 1e-6
    pacer.pause()
    await asyncio.sleep(0.06)
    assert len(fired) == 2  # paused: nothing was painted
    pacer.resume()  # a period has passed: at once again
    assert not isinstance(pacer._handle, asyncio.TimerHandle)
    await asyncio.sleep(0)
    assert len(fired) == 3

    # A flood: updates wanted all the time are painted one a period.
    flood: list[float] = []
    busy = FramePacer(lambda: flood.append(loop.time()), on_error=lambda error: None,
                      period=0.01, burst=2)
    started = loop.time()
    while loop.time() - started < 0.2:
        busy.resume()
        await asyncio.sleep(0.001)
    assert len(flood) <= 2 + 0.2 / 0.01 + 1

    nothing = FramePacer(lambda: False, on_error=lambda error: None, period=0.05)
    nothing.resume()
    await asyncio.sleep(0)
    nothing.resume()  # nothing was painted: the next update need not wait a frame
    assert not isinstance(nothing._handle, asyncio.TimerHandle)

    errors: list[BaseException] = []
    failing = FramePacer(lambda: 1 / 0, on_error=errors.append)
    failing.resume()
    await asyncio.sleep(0)
    assert isinstance(errors[0], ZeroDivisionError)  # shown by the app, as Textual's timer does

    from tui_debugger.tui.app import DebuggerApp
    assert isinstance(DebuggerApp("join").get_default_screen(), PacedScreen)


class ManyPanes(App[None]):
    """A layout like the debugger's: a top row, panes side by side, tab bars,
    a table, a footer."""

    def compose(self) -> ComposeResult:
        from textual.containers import Horizontal, Vertical
        from textual.widgets import Footer, Static, TabbedContent, TabPane

        yield Static("status " * 20, id="status")
        with Horizontal():
            with Vertical():
                yield Static("\n".join(f"source line {n} " * 4 for n in range(40)), id="code")
                with TabbedContent():
                    with TabPane("Output"):
                        yield Static("out\n" * 10)
                    with TabPane("Console"):
                        yield Static("console", id="console-text")
            with Vertical():
                with TabbedContent():
                    with TabPane("Variables"):
                        yield DataTable(id="vars")
                    with TabPane("Watches"):
                        yield Static("watches")
        yield Footer()

    def get_default_screen(self):
        from tui_debugger.tui.frames import PacedScreen

        return PacedScreen(id="_default")


async def test_a_focused_partial_update_writes_what_textuals_own_writes():
    """The compositor renders only the widgets and rows under the changed
    regions; what it sends to the terminal is byte for byte Textual's."""
    import random

    from rich.console import Console
    from textual._compositor import Compositor
    from textual.geometry import Region

    from tui_debugger.tui.frames import FocusedCompositor

    app = ManyPanes()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one("#vars", DataTable)
        table.add_columns("name", "value")
        for n in range(30):
            table.add_row(f"v{n}", str(n * n))
        app.notify("a toast over the panes")
        await pilot.pause(0.2)
        compositor = app.screen._compositor
        assert isinstance(compositor, FocusedCompositor)
        console = Console(width=120, height=40, color_system="truecolor", force_terminal=True)
        rng = random.Random(7)
        for _ in range(60):
            # As Textual makes them: a changed widget's region, within the screen.
            regions = {Region(rng.randrange(120), rng.randrange(40), rng.randrange(1, 60),
                              rng.randrange(1, 12)).intersection(Region(0, 0, 120, 40))
                       for _ in range(rng.randrange(1, 5))}
            compositor._dirty_regions = set(regions)
            theirs = Compositor.render_partial_update(compositor)
            compositor._dirty_regions = set(regions)
            ours = compositor.render_partial_update()
            assert ours is not None and theirs is not None
            assert ours.render_segments(console) == theirs.render_segments(console), regions


async def test_an_update_of_a_hidden_tab_alone_paints_nothing_and_runs_what_waits_for_it():
    """A change in a hidden tab is left out of the screen update; what waits for
    that update (call_after_refresh) still runs."""
    from textual.widgets import Static

    app = ManyPanes()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        real = screen._compositor_refresh
        paints: list[int] = []
        screen._compositor_refresh = lambda: (paints.append(1), real())[1]
        # The first screen's own updates done (its layout, the tab bars' underline
        # sliding in): on a busy machine they can outlast any fixed pause.
        await pilot.wait_for_scheduled_animations()
        for _ in range(100):
            paints.clear()
            await pilot.pause(0.1)
            if not paints:
                break
        assert paints == [], "the first screen never settled"
        hidden = app.query_one("#console-text", Static)
        assert not hidden.is_on_screen
        ran: list[bool] = []
        for _ in range(3):
            hidden.refresh()  # as a table in a hidden tab does when a cell changes
            hidden.call_after_refresh(lambda: ran.append(True))
            await pilot.pause(0.05)
        assert len(ran) == 3
        assert paints == []  # nothing on screen changed
        # The update itself runs what waits for it, not a later idle that may not come.
        import asyncio

        await pilot.pause(0.05)
        hidden.refresh()
        screen._callbacks.append((lambda: ran.append(True), hidden))  # as call_after_refresh
        assert screen._on_timer_update() is False
        await asyncio.sleep(0.05)
        assert len(ran) == 4
        app.query_one("#status", Static).update("shown")
        await pilot.pause(0.05)
        assert paints  # a visible change is painted


async def test_paint_now_paints_a_repaint_in_the_same_turn_and_leaves_a_layout_to_textual():
    """A stop is painted by the code that shows it (PacedScreen.paint_now), not
    four turns of the loop later; a change that needs a layout is left to
    Textual's own way, and nothing is painted twice."""
    from textual.widgets import Static

    app = ManyPanes()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.2)
        screen = app.screen
        painted: list[list[str]] = []
        real = screen._compositor_refresh
        screen._compositor_refresh = lambda: (
            painted.append(sorted(str(w.id) for w in screen._dirty_widgets)), real())[1]
        status, code = app.query_one("#status", Static), app.query_one("#code", Static)
        status.refresh()
        code.refresh()
        assert screen.paint_now() is True
        assert painted == [["code", "status"]]  # before paint_now returned: one frame
        await pilot.pause(0.1)
        assert painted == [["code", "status"]]  # and not again when Textual's turn comes

        assert screen.paint_now() is False  # nothing to paint
        status.refresh(layout=True)
        assert screen.paint_now() is False  # a layout goes Textual's way
        await pilot.pause(0.1)
        assert len(painted) == 2
        # Past the frame allowance (three back to back), the paint waits for the
        # pacer. The allowance does not come back during the loop (on a busy
        # machine the loop can take longer than a frame, which gave a fourth).
        import asyncio

        pacer, period = screen._pacer, screen._pacer._period
        pacer._period = 60.0
        pacer._tokens, pacer._tokens_at = 3.0, asyncio.get_running_loop().time()
        for _ in range(4):
            status.refresh()
            screen.paint_now()
        assert len(painted) == 2 + 3
        pacer._period = period
        pacer.pause()
        pacer.resume()  # the wait worked out again with a frame's real length
        await wait_until(pilot, lambda: not screen._dirty_widgets, what="the paced paints")
        assert len(painted) == 2 + 4


async def test_a_relabelled_variable_is_repainted_with_the_frame_it_is_shown_in():
    """TreeNode.set_label repaints on a later turn of the loop; the pane asks
    for the repaint at once, so a step's stack and values share one frame."""
    tree = VariablesPane()
    async with OneWidget(tree).run_test(size=(80, 20)) as pilot:
        scopes = ["Locals", "Globals"]
        tree.wanted_keys(scopes)
        tree.show(scopes, {("Locals", None): page("Locals", {"i": "0", "total": "0"})})
        await pilot.pause(0.1)
        assert not tree._repaint_required
        tree.show(scopes, {("Locals", None): page("Locals", {"i": "1", "total": "0"})})
        assert tree._repaint_required  # asked for now, not on a later turn
        await pilot.pause(0.1)
        assert "   i = 1  int" in tree_labels(tree)


# ---------------------------------------------------------------------------- Textual's internals

def _fingerprint(qualified: str) -> str:
    """As tui/frames.py records them: sha256 of the function's `ast.unparse`,
    docstring left out, read from the installed Textual's source file."""
    import ast
    import hashlib
    import importlib
    import inspect

    module_name, class_name, function_name = qualified.rsplit(".", 2)
    source = inspect.getsource(importlib.import_module(module_name))
    klass = next(node for node in ast.parse(source).body
                 if isinstance(node, ast.ClassDef) and node.name == class_name)
    function = next((node for node in klass.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and node.name == function_name), None)
    assert function is not None, f"{qualified} is gone from Textual: tui/frames.py relies on it"
    if function.body and isinstance(function.body[0], ast.Expr) \
            and isinstance(function.body[0].value, ast.Constant):
        function.body = function.body[1:]
    return hashlib.sha256(ast.unparse(function).encode()).hexdigest()[:16]


def test_textual_is_the_release_whose_internals_frames_copies():
    """tui/frames.py copies two of Textual's compositor functions and replaces
    the screen's update timer. Textual is pinned exactly for it; another
    release, or the same functions changed, must fail here, loudly, not fall
    back or paint wrongly."""
    import importlib.metadata
    import tomllib
    from pathlib import Path

    from tui_debugger.tui import frames

    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    pins = [d for d in pyproject["project"]["dependencies"] if d.startswith("textual")
            and not d.startswith("textual-")]
    assert pins == [f"textual=={frames.TEXTUAL_VERSION}"], \
        "pyproject.toml must pin the Textual whose internals tui/frames.py copies"
    installed = importlib.metadata.version("textual")
    assert installed == frames.TEXTUAL_VERSION, (
        f"Textual {installed} is installed; tui/frames.py was written against "
        f"{frames.TEXTUAL_VERSION} (see its docstring before upgrading)")
    changed = {name: (recorded, _fingerprint(name)) for name, recorded in frames.TEXTUAL_SOURCES.items()
               if _fingerprint(name) != recorded}
    assert not changed, (
        "Textual's source changed where tui/frames.py copies or overrides it "
        f"(name: (recorded, installed)): {changed}. Port the change, measure, record the new fingerprints.")


def test_textuals_internals_that_frames_uses_are_there_and_shaped_as_expected():
    """The names the pacer and the focused compositor use, with the shapes they
    use them in: the fingerprints above say the code is the same; this says
    what it is used for still holds."""
    import ast
    import inspect
    from pathlib import Path

    import textual
    from textual._compositor import ChopsUpdate, Compositor
    from textual.screen import Screen

    from tui_debugger.tui.frames import FocusedCompositor, PacedScreen

    # The screen's update timer is only ever paused and resumed: that is all of
    # Timer's interface FramePacer stands in for.
    uses = []
    for path in Path(textual.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "_update_timer":
                use = parents.get(node)
                called = isinstance(use, ast.Attribute) and isinstance(parents.get(use), ast.Call)
                uses.append((path.name, use.attr if called else ast.unparse(use or node)))
    assert uses and {attr for _, attr in uses} <= {"pause", "resume"}, uses

    # What PacedScreen._on_timer_update reads and calls.
    screen = PacedScreen(id="_default")
    for name in ("_dirty_widgets", "_layout_required", "_scroll_required", "_repaint_required",
                 "_recompose_required", "_callbacks", "_compositor"):
        assert hasattr(screen, name), f"Screen.{name} is gone"
    assert isinstance(Screen.__dict__["_update_timer"], property)
    assert list(inspect.signature(Screen._on_timer_update).parameters) == ["self"]
    assert inspect.iscoroutinefunction(Screen._invoke_and_clear_callbacks)
    assert callable(getattr(screen, "_compositor_refresh", None))

    # What PacedScreen.paint_now reads of the screen, its widgets and the app.
    from textual.app import App
    from textual.widget import Widget
    from textual.widgets import Tree

    widget = Widget()
    for name in ("_layout_required", "_scroll_required", "_refresh_styles_required",
                 "_recompose_required", "_repaint_required"):
        assert isinstance(getattr(widget, name, None), bool), f"Widget.{name} is gone"
    assert "_batch_count" in vars(App()), "App._batch_count is gone"
    assert isinstance(getattr(Screen, "is_current", None), property)
    # ... and what VariablesPane._relabel does of TreeNode.set_label.
    tree: Tree[None] = Tree("root")
    assert isinstance(tree.root._updates, int) and tree.root._label is not None
    assert list(inspect.signature(tree._refresh_node).parameters) == ["node"]
    assert callable(tree.process_label)

    # What FocusedCompositor reads, and the update it builds.
    compositor = screen._compositor
    assert isinstance(compositor, FocusedCompositor) and isinstance(compositor, Compositor)
    for name in ("cuts", "visible_widgets"):
        assert isinstance(getattr(Compositor, name, None), property), f"Compositor.{name} is gone"
    for name in ("_dirty_regions", "size"):
        assert name in vars(compositor), f"Compositor.{name} is gone"
    assert list(inspect.signature(compositor._regions_to_spans).parameters) == ["regions"]
    assert list(inspect.signature(ChopsUpdate).parameters) == ["chops", "spans", "chop_ends"]


class StartsLikeTheDebugger(ManyPanes):
    """ManyPanes with the debugger's screen and key bar, and keys to show."""

    BINDINGS = [(f"f{n}", f"noop({n})", f"Key {n}") for n in range(1, 13)]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    def compose(self) -> ComposeResult:
        from tui_debugger.tui.widgets.footer import KeyFooter

        for widget in super().compose():
            yield KeyFooter() if type(widget).__name__ == "Footer" else widget

    def get_default_screen(self):
        from tui_debugger.tui.app import DebuggerApp

        return DebuggerApp.get_default_screen(self)

    def action_noop(self, n: int) -> None:
        pass


async def test_the_screen_is_styled_and_laid_out_once_as_it_starts(monkeypatch):
    """Textual's start-up styled the whole screen three times (each node as it
    mounted, then all of it again at its first show, then again when the first
    resize added its width class) and laid it out three times at the same size;
    the key bar restyled each of its keys twice as it mounted them. On the
    debugger's screen that was 200-300 ms of its start, the first stop waiting
    to be shown. Now the screen and the keys are styled once, and the size the
    screen is laid out at does not lay it out again."""
    from textual.css.stylesheet import Stylesheet
    from textual.widgets._footer import FooterKey

    from tui_debugger.tui.frames import PacedScreen

    restyled: list[str] = []
    original = Stylesheet.update_nodes

    def update_nodes(self, nodes, animate=False):
        nodes = list(nodes)
        restyled.extend(type(node).__name__ for node in nodes)
        return original(self, nodes, animate)

    monkeypatch.setattr(Stylesheet, "update_nodes", update_nodes)
    layouts: list[object] = []
    laid_out = PacedScreen._refresh_layout

    def refresh_layout(self, size=None, scroll=False):
        layouts.append(size)
        return laid_out(self, size, scroll)

    monkeypatch.setattr(PacedScreen, "_refresh_layout", refresh_layout)
    app = StartsLikeTheDebugger()
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        keys = [key for key in app.query(FooterKey) if not key.has_class("-command-palette")]
        assert len(keys) == 12 and not any(key.has_class("-compact") for key in keys)
        assert app.query_one(".-command-palette").has_class("-compact")  # as Textual makes it
        assert app.screen.has_class("-wide") and not app.screen.has_class("-narrow")
        assert "PacedScreen" not in restyled and "FooterKey" not in restyled, restyled

        # The size it is laid out at lays nothing out again; a new one does, with its class.
        before = len(layouts)
        app.screen._screen_resized(app.size)
        await pilot.pause()
        assert len(layouts) == before, layouts[before:]
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: app.screen.has_class("-narrow"), what="the narrow class")
        assert any(size == (80, 24) for size in layouts[before:]), layouts[before:]
        assert not app.screen.has_class("-wide")


class OneSource(App):
    def compose(self) -> ComposeResult:
        from tui_debugger.tui.widgets.source_view import SourceView

        yield SourceView(id="source", cwd="/")


async def test_the_programs_first_lines_are_highlighted_before_its_first_stop(tmp_path):
    """The thread that builds the lexer while the screen waits for the first
    stop also reads the program and highlights its first block; the stop's
    paint uses it, unless the file changed since."""
    import os

    from tui_debugger.tui.widgets.source_view import SourceView

    program = tmp_path / "prog.py"
    program.write_text("import os\n\n\ndef main():\n    return 'x'  # note\n")
    app = OneSource()
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(SourceView)
        view.prepare_for(str(program))
        await wait_until(pilot, lambda: view._first_block is not None, what="the prepared block")
        prepared = view._first_block[1]
        assert view.open_file(str(program))
        assert view._blocks[0] is prepared
        fresh = view._lex(view.file.lines)
        assert [t.plain for t in prepared] == [t.plain for t in fresh]
        assert [t.spans for t in prepared] == [t.spans for t in fresh]  # the same colours

        # Changed after it was prepared: read and highlighted again.
        other = tmp_path / "other.py"
        other.write_text("x = 1\n")
        view.prepare_for(str(other))
        await wait_until(pilot, lambda: view._first_block is not None, what="the prepared block")
        other.write_text("y = 2\n")
        os.utime(other, (1, 1))
        assert view.open_file(str(other))
        assert view._blocks.get(0) is None and view.file.lines == ["y = 2"]
