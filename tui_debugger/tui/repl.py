"""What the console does with a line of Python, as a REPL does: statements run,
and the last expression's value is printed (`import os; os.getpid()` answered
nothing: debugpy runs a line of statements and answers an empty value). The
names the console's own imports bind are its, not the program's: the Variables
pane leaves them out, so an `import os` does not show as a new local."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field


@dataclass
class Line:
    """A console line, split: statements to run first, then an expression to show."""

    statements: str | None
    expression: str | None
    #: names bound by the statements' imports (`import os.path` binds os)
    imported: set[str] = field(default_factory=set)


def split(text: str) -> Line:
    """`text` as statements and a last expression. Not Python (a syntax error), a
    lone expression, or a line whose last statement is no expression: as it is."""
    try:
        tree = ast.parse(text, mode="exec")
    except (SyntaxError, ValueError):
        return Line(None, text)
    body = tree.body
    if not body:
        return Line(None, text)
    imported = {(alias.asname or alias.name).split(".")[0] for node in body
                if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names
                if alias.name != "*"}
    last = body[-1]
    if len(body) == 1:
        return Line(None, text) if isinstance(last, ast.Expr) else Line(text, None, imported)
    if not isinstance(last, ast.Expr):
        return Line(text, None, imported)
    return Line(ast.unparse(ast.Module(body=body[:-1], type_ignores=[])),
                ast.unparse(last.value), imported)


def already_bound(names: set[str]) -> str:
    """An expression: which of `names` the frame has before the console binds them."""
    listed = ", ".join(repr(n) for n in sorted(names))
    return f"[n for n in ({listed},) if n in locals() or n in globals()]"
