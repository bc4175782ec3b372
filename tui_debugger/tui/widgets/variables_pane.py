"""Variables of the selected frame as a tree: locals (and arguments) expanded,
globals collapsed. Children load lazily, a page at a time; what the person
expanded stays expanded across steps (keyed by scope and path); values that
changed since the last stop are marked with `*` and highlighted.

Enter (or a click on ▶) opens and closes; `e` changes a value (so does a
second click on the highlighted row), never Enter, which is one row off too
easily. Each value shows as its repr, its str or its type alone (`r` `s` `t`,
pudb's keys, per variable); `*` cycles which names are shown: all but pytest's
rewritten assertions' `@py_…` temporaries (the default), public names only, or
every name. debugpy's groups (`special variables`, `function variables`…) come
after the fields and entries, as in VS Code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ...commands.views import VariablesResult, VariableView
from ..format import bound_method, one_line
from ..messages import EditValue, LoadChildren, RunCommand, ShowMemory, ShowStr
from .cursor_tree import CursorTree
from .kept_styles import KeptStyles

Key = tuple[str, str | None]  # (scope name, path); path None is the scope itself
EXPANDED_BY_DEFAULT = {"locals", "local", "arguments", "args", "locals and arguments"}
MAX_LABEL_CHARS = 160
#: debugpy's groups of a value's children: listed after its own fields and entries
GROUPS = ("special variables", "function variables", "class variables", "protected variables")
#: pytest's assertion rewriting leaves these in a test's locals
PYTEST_TEMPORARY = "@py_"
#: which names are shown (`*` cycles): every name but pytest's temporaries,
#: public names only, or every name
NAME_FILTERS = ("default", "public", "all")
FILTER_NOTES = {"default": "every name but pytest's @py_ temporaries and the console's imports",
                "public": "public names only (no _private, no __dunder__)",
                "all": "every name, pytest's @py_ temporaries and the console's imports too"}
#: how a value is shown (`r` `s` `t`)
DISPLAYS = ("repr", "str", "type")


@dataclass
class Spec:
    """A node as a stop's results describe it, before it is in the tree."""

    label: Text
    data: "VarNode"
    expandable: bool = False
    children: list["Spec"] | None = None  # None: not fetched (or a leaf)
    expand: bool = False


@dataclass
class VarNode:
    scope: str
    path: str | None
    kind: Literal["scope", "var", "more", "loading"]
    has_children: bool = False
    loaded: int = 0  # children shown so far
    total: int | None = None
    fetched: bool = False
    value: str = ""


class VariablesPane(KeptStyles, CursorTree[VarNode]):
    BINDINGS = [Binding("e", "edit_value", "Edit", show=True, id="vars.edit",
                        tooltip="change the highlighted value (a second click on it too; "
                        "Enter opens and closes)"),
                Binding("r", "display('repr')", "show the highlighted value's repr", show=False,
                        id="vars.repr"),
                Binding("s", "display('str')", "show the highlighted value's str()", show=False,
                        id="vars.str"),
                Binding("t", "display('type')", "show the highlighted value's type only",
                        show=False, id="vars.type"),
                Binding("asterisk", "cycle_names", "names shown: all / public only / with @py_",
                        show=False, id="vars.names"),
                Binding("m", "show_memory", "memory at the highlighted pointer or array",
                        show=False, id="vars.memory"),
                Binding("w", "watch_value", "stop when the highlighted value changes",
                        show=False, id="vars.watch")]

    COMPONENT_CLASSES = Tree.COMPONENT_CLASSES | {
        "variables--name", "variables--type", "variables--changed", "variables--more",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("variables", id=id)
        self.show_root = False
        self.guide_depth = 2
        #: what the person has open, kept across steps
        self.expanded: set[Key] = set()
        self._seen_scopes: set[str] = set()
        self._var_nodes: dict[Key, TreeNode[VarNode]] = {}
        self.placeholder = "Variables appear when the program stops."
        #: bumped each time a stop's variables are shown (the benchmark waits on it)
        self.filled = 0
        self._first_click = False
        #: which names are shown (NAME_FILTERS); how each value is (DISPLAYS, by key)
        self.name_filter = "default"
        self.shown_as: dict[Key, str] = {}
        #: str() of the values shown as str, by key (the app evaluates them)
        self.str_values: dict[Key, str] = {}
        #: names the console's imports bound (`import os`): the console's, not the program's
        self.console_names: set[str] = set()
        self._last: tuple[list[str], dict[Key, VariablesResult]] | None = None

    # ------------------------------------------------------------------ from the app

    def wanted_keys(self, scopes: list[str]) -> list[Key]:
        """What to fetch for a new stop: each scope that is (or will be) open, then
        every expanded path, parents before children."""
        for scope in scopes:
            if scope not in self._seen_scopes:
                self._seen_scopes.add(scope)
                # let/const blocks (Node) are locals too: open like them.
                if scope.lower() in EXPANDED_BY_DEFAULT or scope.lower().startswith("block") or (
                        scope == scopes[0] and scope.lower() != "globals"):
                    self.expanded.add((scope, None))
        keys = [(s, None) for s in scopes if (s, None) in self.expanded]
        paths = sorted((k for k in self.expanded if k[1] is not None and k[0] in scopes),
                       key=lambda k: (k[0], k[1].count(".") + k[1].count("["), k[1]))
        return keys + paths

    def str_keys(self) -> list[Key]:
        """The values shown as their str(): the app evaluates these at each stop."""
        return [key for key, how in self.shown_as.items() if how == "str"]

    def show(self, scopes: list[str], pages: dict[Key, VariablesResult],
             strs: dict[Key, str] | None = None) -> None:
        """Show a stop's variables in one go: no frame in which the pane is empty.
        When the tree has the same shape as before (the usual step: the same names,
        some new values), only the labels that differ are redrawn; rebuilding the
        tree would cost a layout of the whole screen."""
        if strs is not None:
            self.str_values = dict(strs)
        self._last = (scopes, pages)
        specs = self._specs(scopes, pages)
        if self._same_shape(list(self.root.children), specs):
            self._relabel(list(self.root.children), specs)
        else:
            self._rebuild(specs)
        self.remove_class("-stale")
        self.filled += 1

    def _rebuild(self, specs: list[Spec]) -> None:
        cursor_key = self._cursor_key()
        scroll_y = self.scroll_offset.y
        self.clear()
        self._var_nodes = {}
        self._add_specs(self.root, specs)
        target = self._var_nodes.get(cursor_key) if cursor_key else None
        if target is not None:
            self.move_cursor(target, animate=False)
        self.scroll_to(y=scroll_y, animate=False, immediate=True)

    def add_page(self, key: Key, result: VariablesResult, start: int) -> None:
        """Children fetched after the person expanded a node or asked for more."""
        node = self._var_nodes.get(key)
        if node is None:
            return
        if start == 0:
            node.remove_children()
            node.data.loaded = 0
        else:
            for child in list(node.children):
                if child.data and child.data.kind in ("more", "loading"):
                    child.remove()
        node.data.fetched = True
        if start == 0 and self._last is not None:
            self._last[1][key] = result  # kept for a redraw (a filter or display changed)
        self._add_children(node, result)

    def show_error(self, key: Key, message: str) -> None:
        node = self._var_nodes.get(key)
        if node is None:
            return
        node.remove_children()
        node.add_leaf(Text(one_line(message), style="italic"), data=VarNode(key[0], key[1], "loading"))

    # ------------------------------------------------------------------ building

    def _specs(self, scopes: list[str], pages: dict[Key, VariablesResult]) -> list[Spec]:
        if not scopes:
            return [Spec(Text(self.placeholder), VarNode("", None, "loading"))]
        return [self._spec(Text(scope, style="bold"), VarNode(scope, None, "scope", has_children=True),
                           pages) for scope in scopes]

    def _spec(self, label: Text, data: VarNode, pages: dict[Key, VariablesResult]) -> Spec:
        key = (data.scope, data.path)
        result = pages.get(key)
        if result is None:
            return Spec(label, data, expandable=True)  # children load when it is expanded
        data.fetched = True
        return Spec(label, data, expandable=True, children=self._child_specs(data, result, pages),
                    expand=key in self.expanded)

    def shown(self, name: str) -> bool:
        """Whether a variable of this name is listed under the names filter."""
        if self.name_filter == "all":
            return True
        if name.startswith(PYTEST_TEMPORARY) or name in self.console_names:
            return False
        return self.name_filter != "public" or not name.startswith("_")

    def _child_specs(self, data: VarNode, result: VariablesResult,
                     pages: dict[Key, VariablesResult]) -> list[Spec]:
        children = []
        groups = []
        for var in result.variables:
            if data.kind == "var" and bound_method(var.value):
                continue  # the value's own methods (debugpy lists them inline): not its fields
            if not self.shown(var.name):
                continue
            child = VarNode(data.scope, var.path, "var", has_children=var.has_children,
                            total=var.child_count, value=var.value)
            into = groups if var.name in GROUPS and var.has_children else children
            if var.has_children:
                into.append(self._spec(self._label(var, data.scope), child, pages))
            else:
                into.append(Spec(self._label(var, data.scope), child))
        children += groups  # after the value's own fields and entries, as VS Code does
        data.loaded += len(result.variables)
        data.total = result.total
        if result.total is not None and data.loaded < result.total:
            remaining = result.total - data.loaded
            more = Text(f"… {remaining} more (Enter to load {min(remaining, 100)})",
                        style=self.get_component_rich_style("variables--more", partial=True))
            children.append(Spec(more, VarNode(data.scope, data.path, "more")))
        return children

    def _add_specs(self, parent: TreeNode[VarNode], specs: list[Spec]) -> None:
        for spec in specs:
            if spec.expandable:
                node = parent.add(spec.label, data=spec.data, allow_expand=True)
                self._var_nodes[(spec.data.scope, spec.data.path)] = node
            else:
                node = parent.add_leaf(spec.label, data=spec.data)
            if spec.children is not None:
                self._add_specs(node, spec.children)
                if spec.expand:
                    node.expand()
            elif spec.expandable and (spec.data.scope, spec.data.path) in self.expanded:
                # Opened while this stop's values were on their way: the page
                # fetched for it went with the old tree, so load it again.
                node.expand()

    def _same_shape(self, nodes: list[TreeNode[VarNode]], specs: list[Spec]) -> bool:
        if len(nodes) != len(specs):
            return False
        for node, spec in zip(nodes, specs):
            data = node.data
            if (data is None or (data.scope, data.path, data.kind) !=
                    (spec.data.scope, spec.data.path, spec.data.kind)
                    or node.allow_expand != spec.expandable):
                return False
            if spec.children is None:
                if node.children:
                    return False
            elif (node.is_expanded != spec.expand
                  or not self._same_shape(list(node.children), spec.children)):
                return False
        return True

    def _relabel(self, nodes: list[TreeNode[VarNode]], specs: list[Spec]) -> None:
        for node, spec in zip(nodes, specs):
            node.data = spec.data
            if node.label != spec.label:
                # TreeNode.set_label repaints on a later turn of the loop (call_later),
                # which split a step's second frame in two: the stack's, then the
                # values'. The same steps, with the repaint asked for now.
                node._updates += 1
                node._label = self.process_label(spec.label)
                self._refresh_node(node)
            if spec.children is not None:
                self._relabel(list(node.children), spec.children)

    def _add_children(self, node: TreeNode[VarNode], result: VariablesResult) -> None:
        """A page fetched after the person expanded a node or asked for more."""
        self._add_specs(node, self._child_specs(node.data, result, {}))

    def _label(self, var: VariableView, scope: str = "") -> Text:
        name_style = self.get_component_rich_style("variables--name", partial=True)
        type_style = self.get_component_rich_style("variables--type", partial=True)
        key = (scope, var.path)
        how = self.shown_as.get(key, "repr")
        label = Text()
        if var.name in GROUPS and var.has_children:
            label.append(" ")
            label.append(var.name, type_style)  # a group, not a value: no "= …"
            return label
        # (a Style is false when it sets nothing, as in a pane without styles: test
        # the flag, not the style)
        changed = self.get_component_rich_style("variables--changed", partial=True)
        mark = changed if var.changed else Style.null()
        label.append("*" if var.changed else " ", mark)
        label.append(var.name, name_style + mark)
        if how == "type":
            label.append(": ")
            label.append(var.type or "?", type_style + mark)
            return label
        value = var.value
        if how == "str":
            value = self.str_values.get(key, "…")
        label.append(" = ")
        label.append(one_line(value, MAX_LABEL_CHARS), mark)
        if how == "str":
            label.append("  str", type_style)
        elif var.type:
            label.append(f"  {var.type}", type_style)
        return label

    def _cursor_key(self) -> Key | None:
        node = self.cursor_node
        if node is None or node.data is None:
            return None
        return (node.data.scope, node.data.path)

    # ------------------------------------------------------------------ person's actions

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[VarNode]) -> None:
        event.stop()
        data = event.node.data
        if data is None or data.kind not in ("scope", "var"):
            return
        key = (data.scope, data.path)
        self.expanded.add(key)
        if not data.fetched:
            data.fetched = True
            event.node.add_leaf(Text("loading…", style="italic"),
                                data=VarNode(data.scope, data.path, "loading"))
            self.post_message(LoadChildren(data.scope, data.path, 0))

    def on_tree_node_collapsed(self, event: Tree.NodeCollapsed[VarNode]) -> None:
        event.stop()
        data = event.node.data
        if data is not None and data.kind in ("scope", "var"):
            self.expanded.discard((data.scope, data.path))

    def on_tree_node_selected(self, event: Tree.NodeSelected[VarNode]) -> None:
        event.stop()
        data = event.node.data
        if data is not None and data.kind == "var" and not data.has_children:
            # A second click on the highlighted row changes a plain value, as in the
            # Stack pane; Enter does not (`e` does): one row off, it opened an editor.
            if self._clicked:
                self._clicked = False
                if self._first_click:
                    self._first_click = False
                else:
                    self._edit(data)
            return
        if data is None or data.kind != "more":
            return
        parent = event.node.parent
        if parent is None or parent.data is None:
            return
        event.node.set_label(Text("loading…", style="italic"))
        self.post_message(LoadChildren(parent.data.scope, parent.data.path, parent.data.loaded))

    def _on_click(self, event) -> None:
        # Textual calls each class's own click handler in turn, this one before
        # Tree's (which moves the cursor, toggles, selects): calling it from here
        # as well ran it twice, so a click on ▶ opened the node and closed it again.
        meta = event.style.meta
        line = meta.get("line")
        self._first_click = line is not None and not meta.get("toggle") and line != self.cursor_line
        self._clicked = line is not None

    _clicked = False

    def action_display(self, how: str) -> None:
        """Show the highlighted value as its repr, its str() or its type (pudb's r s t)."""
        node = self.cursor_node
        if node is None or node.data is None or node.data.kind != "var" or not node.data.path:
            return
        key = (node.data.scope, node.data.path)
        if how == "repr":
            self.shown_as.pop(key, None)
        else:
            self.shown_as[key] = how
        if how == "str":
            self.post_message(ShowStr(node.data.scope, node.data.path))
        self.redraw()

    def action_cycle_names(self) -> None:
        self.name_filter = NAME_FILTERS[(NAME_FILTERS.index(self.name_filter) + 1)
                                        % len(NAME_FILTERS)]
        self.redraw()
        self.notify(f"Variables: {FILTER_NOTES[self.name_filter]} (* for the next)",
                    title="Names shown", timeout=3)

    def set_str(self, key: Key, value: str) -> None:
        self.str_values[key] = value
        self.redraw()

    def redraw(self) -> None:
        """The last stop's variables again, with the filter and displays as they are now."""
        if self._last is not None:
            self.show(*self._last)

    def action_edit_value(self) -> None:
        node = self.cursor_node
        if node is not None and node.data is not None and node.data.kind == "var":
            self._edit(node.data)

    def _highlighted_path(self) -> str | None:
        node = self.cursor_node
        if node is not None and node.data is not None and node.data.kind == "var":
            return node.data.path
        return None

    def action_show_memory(self) -> None:
        path = self._highlighted_path()
        if path:
            self.post_message(ShowMemory(path))

    def action_watch_value(self) -> None:
        path = self._highlighted_path()
        if path:
            self.post_message(RunCommand("watch", {"expression": path}))

    def _edit(self, data: VarNode) -> None:
        if data.path:
            self.post_message(EditValue(data.scope, data.path, data.value))
