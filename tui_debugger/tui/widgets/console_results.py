"""The console's structured results (a dict, a list, an object) as a tree, under
the transcript: each opens like a variable, its children loaded a page at a time
by the expression that reaches them (`cfg['sizes'][0]`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ...commands.views import EvaluateResult, VariableView
from ..format import bound_method, one_line
from ..messages import ExpandResult
from .cursor_tree import CursorTree

MAX_LABEL_CHARS = 160
#: results kept; the oldest go first
KEPT = 20


@dataclass
class ResultNode:
    expression: str
    kind: Literal["value", "more", "loading"]
    fetched: bool = False
    loaded: int = 0
    total: int | None = None


class ConsoleResults(CursorTree[ResultNode]):
    COMPONENT_CLASSES = Tree.COMPONENT_CLASSES | {"results--name", "results--type", "results--more"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("results", id=id)
        self.show_root = False
        self.guide_depth = 2
        self.display = False

    def add_result(self, expression: str, result: EvaluateResult, page: int) -> TreeNode[ResultNode]:
        """A result with children: the first page came with it (the expression is
        not evaluated again to open it)."""
        while len(self.root.children) >= KEPT:
            self.root.children[0].remove()
        label = self._label(expression, result.value, result.type, prompt=True)
        node = self.root.add(label, data=ResultNode(expression, "value", fetched=True), allow_expand=True)
        self._add_page(node, result, page)
        self.display = True
        self.move_cursor(node, animate=False)
        return node

    def add_page(self, node: TreeNode[ResultNode], result: EvaluateResult, start: int, page: int) -> None:
        if node.tree is not self or node.data is None:
            return  # dropped meanwhile
        for child in list(node.children):
            if child.data is not None and child.data.kind in ("more", "loading"):
                child.remove()
        if start == 0:
            node.remove_children()
            node.data.loaded = 0
        self._add_page(node, result, page)

    def show_error(self, node: TreeNode[ResultNode], message: str) -> None:
        if node.tree is not self or node.data is None:
            return
        for child in list(node.children):
            if child.data is not None and child.data.kind == "loading":
                child.remove()
        node.add_leaf(Text(one_line(message), style="italic"),
                      data=ResultNode(node.data.expression, "loading"))

    def _add_page(self, node: TreeNode[ResultNode], result: EvaluateResult, page: int) -> None:
        data = node.data
        for var in result.children:
            if var.has_children and " " in var.name:
                continue  # debugpy's "special variables" and such: no expression reaches them
            if bound_method(var.value):
                continue  # the value's own methods (debugpy shows them inline now): not its items
            self._add_child(node, var)
        data.loaded += len(result.children)
        data.total = result.children_total
        data.fetched = True
        if data.total is not None and data.loaded < data.total:
            remaining = data.total - data.loaded
            more = Text(f"… {remaining} more (Enter to load {min(remaining, page)})",
                        style=self.get_component_rich_style("results--more", partial=True))
            node.add_leaf(more, data=ResultNode(data.expression, "more"))

    def _add_child(self, node: TreeNode[ResultNode], var: VariableView) -> None:
        label = self._label(var.name, var.value, var.type)
        if var.has_children:
            node.add(label, data=ResultNode(var.path, "value"), allow_expand=True)
        else:
            node.add_leaf(label, data=ResultNode(var.path, "value", fetched=True))

    def _label(self, name: str, value: str, type_name: str | None, prompt: bool = False) -> Text:
        label = Text()
        if prompt:
            label.append(">>> ", "bold")
        label.append(name, self.get_component_rich_style("results--name", partial=True))
        label.append(" = ")
        label.append(one_line(value, MAX_LABEL_CHARS))
        if type_name:
            label.append(f"  {type_name}", self.get_component_rich_style("results--type", partial=True))
        return label

    # ------------------------------------------------------------------ person's actions

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[ResultNode]) -> None:
        event.stop()
        data = event.node.data
        if data is None or data.kind != "value" or data.fetched:
            return
        data.fetched = True
        event.node.add_leaf(Text("loading…", style="italic"), data=ResultNode(data.expression, "loading"))
        self.post_message(ExpandResult(event.node, data.expression, 0))

    def on_tree_node_selected(self, event: Tree.NodeSelected[ResultNode]) -> None:
        event.stop()
        data = event.node.data
        parent = event.node.parent
        if data is None or data.kind != "more" or parent is None or parent.data is None:
            return
        event.node.set_label(Text("loading…", style="italic"))
        event.node.data.kind = "loading"
        self.post_message(ExpandResult(parent, parent.data.expression, parent.data.loaded))
