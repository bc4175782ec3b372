"""A Textual `Tree` whose `move_cursor` goes to the node it is given, even one
added a moment ago: the base of the trees of values (the Variables pane, the
console's results)."""

from __future__ import annotations

from typing import TypeVar

from textual.widgets import Tree
from textual.widgets.tree import TreeNode

NodeData = TypeVar("NodeData")


class CursorTree(Tree[NodeData]):
    def move_cursor(self, node: TreeNode[NodeData] | None, animate: bool = False) -> None:
        """Tree.move_cursor goes to `node.line`, which the tree works out only
        when it next builds its lines (its idle turn, or a render): a node added
        or re-added since has line -1, so the cursor landed on the first row
        instead. After a stop that rebuilt the Variables pane the cursor left the
        value it was on for "Locals", and a Space meant for a value just loaded
        closed Locals. The lines are built first (tui/frames.py fingerprints the
        Textual code this leans on)."""
        if node is not None:
            self._tree_lines  # noqa: B018 - the property builds the lines, setting each node's line
        super().move_cursor(node, animate)
