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


# ============================================================================ the map's rules

#: Each module's layer (docs/architecture.md opens with this map): a module
#: belongs to the first row whose prefix names it. A package's own __init__ of
#: the folders below imports nothing (checked below), so importing a module in
#: it is an edge to that module alone.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("backends", ("backends",)),
    ("entry", ("tui_debugger.__main__", "tui_debugger.cli.main", "tui_debugger.cli.full",
               "tui_debugger.cli.quick", "tui_debugger.cli.screen")),
    ("host", ("tui_debugger.host.daemon", "tui_debugger.host.hub", "tui_debugger.host.server",
              "tui_debugger.host.warm_stay")),
    ("parse", ("tui_debugger.cli.parse",)),
    ("reach", ("tui_debugger.host.start", "tui_debugger.host.early", "tui_debugger.host.wire",
               "tui_debugger.cli.route")),
    ("client", ("tui_debugger.client",)),
    ("front ends", ("tui_debugger.tui", "tui_debugger.mcp", "tui_debugger.web", "tui_debugger.cli",
                    "tui_debugger.dap")),
    ("execute", ("tui_debugger.execute",)),
    ("commands", ("tui_debugger.commands",)),
    ("session", ("tui_debugger.session", "tui_debugger.persist", "tui_debugger.script",
                 "tui_debugger.stops", "tui_debugger.tree")),
    ("ground", ("tui_debugger",)),
]

#: What each layer may import (besides itself). Front ends reach a session only
#: through client/ and host/start (never the host's own modules or the session);
#: a host runs commands and parses the quick client's lines with the parser the
#: command line has (cli/parse) but starts no front end; the session knows no
#: command; nothing but the entry imports a front end.
MAY_IMPORT: dict[str, set[str]] = {
    "backends": set(),
    "ground": {"backends"},
    "session": {"backends", "ground"},
    "commands": {"backends", "ground", "session"},
    "execute": {"backends", "ground", "session", "commands"},
    "reach": {"backends", "ground"},
    "parse": {"backends", "ground", "commands", "execute", "reach"},
    "host": {"backends", "ground", "session", "commands", "execute", "reach", "parse"},
    "client": {"backends", "ground", "commands", "execute", "reach"},
    "front ends": {"backends", "ground", "commands", "reach", "client", "parse"},
    "entry": {"backends", "ground", "session", "commands", "execute", "reach", "parse", "host",
              "client", "front ends"},
}

#: Folders whose __init__ is only a docstring.
EMPTY_PACKAGES = ("tui_debugger.host", "tui_debugger.client", "tui_debugger.cli",
                  "tui_debugger.mcp", "tui_debugger.web", "tui_debugger.dap")


def layer_of(module: str) -> str:
    for layer, prefixes in LAYERS:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return layer
    raise AssertionError(f"{module} is in no layer of the map: add it to LAYERS")


def layer_breaches(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in sorted(graph.items()):
        here = layer_of(module)
        for target in sorted(targets):
            if target in EMPTY_PACKAGES:
                continue
            there = layer_of(target)
            if there != here and there not in MAY_IMPORT[here]:
                found.append(f"{module} ({here}) imports {target} ({there})")
    return found


def test_every_module_keeps_to_its_layer():
    breaches = layer_breaches(import_graph())
    assert not breaches, ("imports across the map's rules (docs/architecture.md, the map):\n"
                          + "\n".join(breaches))


def test_the_layer_rules_catch_a_breach():
    # A session module that imports a command, a front end that reaches into the
    # host's hub, a host that starts the TUI: each is named.
    graph = {"tui_debugger.session.control": {"tui_debugger.commands.registry"},
             "tui_debugger.tui.app": {"tui_debugger.host.hub", "tui_debugger.client.router"},
             "tui_debugger.host.daemon": {"tui_debugger.tui.app", "tui_debugger.cli.parse",
                                          "tui_debugger.cli"}}
    assert layer_breaches(graph) == [
        "tui_debugger.host.daemon (host) imports tui_debugger.tui.app (front ends)",
        "tui_debugger.session.control (session) imports tui_debugger.commands.registry (commands)",
        "tui_debugger.tui.app (front ends) imports tui_debugger.host.hub (host)",
    ]


def test_the_folders_packages_import_nothing():
    # So that a host importing cli/parse does not run the door, and a client
    # importing host/wire does not import the host.
    for package in EMPTY_PACKAGES:
        path = ROOT / Path(*package.split(".")) / "__init__.py"
        tree = ast.parse(path.read_text())
        imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                   and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]
        assert not imports, f"{path.relative_to(ROOT)} imports: keep it a docstring"


def test_no_module_is_over_800_lines():
    long = sorted(f"{p.relative_to(ROOT)}: {n} lines" for pkg in PACKAGES
                  for p in (ROOT / pkg).rglob("*.py")
                  if (n := len(p.read_text().splitlines())) > 800)
    assert not long, "split these by job (docs/architecture.md, the map):\n" + "\n".join(long)
