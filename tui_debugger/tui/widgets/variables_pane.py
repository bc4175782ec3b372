"""Variables of the selected frame as a tree: locals (and arguments) expanded,
globals collapsed. Children load lazily, a page at a time; what the person
expanded stays expanded across steps (keyed by scope and path); values that
changed since the last stop are marked with `*` and highlighted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ...commands.views import VariablesResult, VariableView
from ..format import one_line
from ..messages import LoadChildren

Key = tuple[str, str | None]  # (scope name, path); path None is the scope itself
EXPANDED_BY_DEFAULT = {"locals", "local", "arguments", "args", "locals and arguments"}
MAX_LABEL_CHARS = 160


@dataclass
class VarNode:
    scope: str
    path: str | None
    kind: Literal["scope", "var", "more", "loading"]
    has_children: bool = False
    loaded: int = 0  # children shown so far
    total: int | None = None
    fetched: bool = False


class VariablesPane(Tree[VarNode]):
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

    # ------------------------------------------------------------------ from the app

    def wanted_keys(self, scopes: list[str]) -> list[Key]:
        """What to fetch for a new stop: each scope that is (or will be) open, then
        every expanded path, parents before children."""
        for scope in scopes:
            if scope not in self._seen_scopes:
                self._seen_scopes.add(scope)
                if scope.lower() in EXPANDED_BY_DEFAULT or (scope == scopes[0] and
                                                            scope.lower() != "globals"):
                    self.expanded.add((scope, None))
        keys = [(s, None) for s in scopes if (s, None) in self.expanded]
        paths = sorted((k for k in self.expanded if k[1] is not None and k[0] in scopes),
                       key=lambda k: (k[0], k[1].count(".") + k[1].count("["), k[1]))
        return keys + paths

    def show(self, scopes: list[str], pages: dict[Key, VariablesResult]) -> None:
        """Replace the tree in one go: no frame in which the pane is empty."""
        cursor_key = self._cursor_key()
        scroll_y = self.scroll_offset.y
        self.clear()
        self._var_nodes = {}
        for scope in scopes:
            node = self.root.add(Text(scope, style="bold"),
                                 data=VarNode(scope, None, "scope", has_children=True))
            self._var_nodes[(scope, None)] = node
            self._fill(node, pages)
        if not scopes:
            self.root.add_leaf(self.placeholder, data=VarNode("", None, "loading"))
        self.remove_class("-stale")
        self.filled += 1
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
        self._add_children(node, result, {})

    def show_error(self, key: Key, message: str) -> None:
        node = self._var_nodes.get(key)
        if node is None:
            return
        node.remove_children()
        node.add_leaf(Text(one_line(message), style="italic"), data=VarNode(key[0], key[1], "loading"))

    # ------------------------------------------------------------------ building

    def _fill(self, node: TreeNode[VarNode], pages: dict[Key, VariablesResult]) -> None:
        data = node.data
        key = (data.scope, data.path)
        result = pages.get(key)
        if result is None:
            return  # collapsed and never fetched: children load when it is expanded
        data.fetched = True
        self._add_children(node, result, pages)
        if key in self.expanded:
            node.expand()

    def _add_children(self, node: TreeNode[VarNode], result: VariablesResult,
                      pages: dict[Key, VariablesResult]) -> None:
        data = node.data
        for var in result.variables:
            label = self._label(var)
            child_data = VarNode(data.scope, var.path, "var", has_children=var.has_children,
                                 total=var.child_count)
            if var.has_children:
                child = node.add(label, data=child_data, allow_expand=True)
                self._var_nodes[(data.scope, var.path)] = child
                self._fill(child, pages)
            else:
                node.add_leaf(label, data=child_data)
        data.loaded += len(result.variables)
        data.total = result.total
        if result.total is not None and data.loaded < result.total:
            remaining = result.total - data.loaded
            more = Text(f"… {remaining} more (Enter to load {min(remaining, 100)})",
                        style=self.get_component_rich_style("variables--more", partial=True))
            node.add_leaf(more, data=VarNode(data.scope, data.path, "more"))

    def _label(self, var: VariableView) -> Text:
        name_style = self.get_component_rich_style("variables--name", partial=True)
        label = Text()
        if var.changed:
            changed = self.get_component_rich_style("variables--changed", partial=True)
            label.append("*", changed)
            label.append(var.name, name_style + changed)
            label.append(" = ")
            label.append(one_line(var.value, MAX_LABEL_CHARS), changed)
        else:
            label.append(" ")
            label.append(var.name, name_style)
            label.append(" = ")
            label.append(one_line(var.value, MAX_LABEL_CHARS))
        if var.type:
            label.append(f"  {var.type}", self.get_component_rich_style("variables--type", partial=True))
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
        if data is None or data.kind != "more":
            return
        parent = event.node.parent
        if parent is None or parent.data is None:
            return
        event.node.set_label(Text("loading…", style="italic"))
        self.post_message(LoadChildren(parent.data.scope, parent.data.path, parent.data.loaded))
