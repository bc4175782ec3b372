"""The package layout's rules, read from the source: the backends know nothing
of the front end, and no two modules import each other, directly or round a
loop (an import inside a function counts: it is the same dependency, hidden;
so does one under `if TYPE_CHECKING:`, the tie a type annotation makes); and
no part of Session imports the session package that is made of them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("backends", "tui_debugger")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def imported(name: str, path: Path) -> list[tuple[str, list[str]]]:
    """Each import in `name`'s body, anywhere in it: the absolute module it
    names, and the names it takes from that module (none for `import m`)."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((module, [alias.name for alias in node.names]))
    return found


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `name` imports, anywhere in its body."""
    found: set[str] = set()

    def target(module: str) -> None:
        # Importing a.b.c runs a/__init__ and a/b/__init__ first; the importer's
        # own packages are already running, so they are not an edge.
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            candidate = ".".join(parts[:i])
            if candidate in modules and candidate != name and not name.startswith(candidate + "."):
                found.add(candidate)

    for module, names in imported(name, path):
        target(module)
        for alias in names:  # `from . import views` imports a module
            if f"{module}.{alias}" in modules:
                target(f"{module}.{alias}")
    return found


def takes_the_package(package: str, module: str, names: list[str], modules: dict[str, Path]) -> bool:
    """An import that takes `package` itself (its __init__'s names), not only
    a module in it: `from . import Session`, `from .. import session`,
    `import tui_debugger.session`."""
    if module == package:
        return not names or any(f"{module}.{n}" not in modules for n in names)
    parent, _, last = package.rpartition(".")
    return module == parent and last in names


def import_graph() -> dict[str, set[str]]:
    modules = all_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), and
    modules that import themselves."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def test_backends_never_import_the_front_end():
    graph = import_graph()
    crossing = sorted(f"{m} imports {t}" for m, targets in graph.items() if m.startswith("backends")
                      for t in targets if t.startswith("tui_debugger"))
    assert not crossing, "backends/ must not know the front end:\n" + "\n".join(crossing)


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles (break them by moving what both sides need):\n" + "\n".join(
        " <-> ".join(c) for c in found)


def test_the_cycle_finder_finds_a_cycle_and_the_graph_has_edges():
    # A checker that cannot fail proves nothing: a loop is found, a chain is not.
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    graph = import_graph()
    assert "tui_debugger.commands.registry" in graph["tui_debugger.execute"]
    assert "tui_debugger.session" in graph["tui_debugger.commands.context"]
    # An import under `if TYPE_CHECKING:` is an edge too.
    assert "tui_debugger.session" in graph["tui_debugger.commands.registry"]


def test_session_parts_never_import_their_package():
    # Session (session/__init__.py) is made of the mixins beside it: one that
    # imported the package to name Session would import what imports it. Each
    # says what it uses of the others in session/needs.py (Protocols) instead.
    modules = all_modules()
    offenders = sorted(
        f"{name} imports tui_debugger.session" for name, path in modules.items()
        if name.startswith("tui_debugger.session.")
        for module, names in imported(name, path)
        if takes_the_package("tui_debugger.session", module, names, modules))
    assert not offenders, "a part of Session imports its package:\n" + "\n".join(offenders)


def test_the_package_rule_tells_a_module_from_the_package():
    modules = all_modules()
    package = "tui_debugger.session"
    assert takes_the_package(package, package, ["Session"], modules)
    assert takes_the_package(package, package, [], modules)  # import tui_debugger.session
    assert takes_the_package(package, "tui_debugger", ["session"], modules)
    assert not takes_the_package(package, package, ["guards"], modules)  # a module in it
    assert not takes_the_package(package, "tui_debugger.session.guards", ["guarded"], modules)
    assert not takes_the_package(package, "tui_debugger", ["events"], modules)


def test_backends_import_no_front_end_library():
    # Textual, the MCP SDK and the CLI belong to the front ends; a backend that
    # needed one would drag it into every other front end's process.
    offenders = []
    for path in sorted((ROOT / "backends").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                     else [])
            offenders += [f"{path.relative_to(ROOT)} imports {n}" for n in names
                          if n.split(".")[0] in ("textual", "rich", "mcp")]
    assert not offenders, "backends/ must not depend on front-end libraries:\n" + "\n".join(offenders)
