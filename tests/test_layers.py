"""python/nodelay reads bottom-up (docs/architecture.md, "The Python package"): no module
imports, at run time, a module that imports it back, and each protocol constant is written
in one module.

Both checks read the source with `ast`, so they see what a test that imports the package
cannot: an import inside a function runs at run time and counts; one under
``if TYPE_CHECKING:`` never runs and does not.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "nodelay"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    """Every module: the sources, and the compiled extension through its stub (a leaf)."""
    stubs = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.pyi"))}
    sources = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
    return {**stubs, **sources}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _run_time_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below `node` but those under ``if TYPE_CHECKING:`` (its ``else:`` runs)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for branch in child.orelse:
                yield branch
                yield from _run_time_nodes(branch)
            continue
        yield child
        yield from _run_time_nodes(child)


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports at run time, top-level or function-local."""
    found: set[str] = set()
    if path.suffix == ".pyi":
        return found
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in _run_time_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(name, path)
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    found.add(submodule)
                elif source in modules:
                    found.add(source)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as ``[a, b, ..., a]``, or None (an iterative depth-first search)."""
    done: set[str] = set()
    for root in sorted(graph):
        if root in done:
            continue
        path = [root]
        on_path = {root}
        pending = [iter(sorted(graph[root]))]
        while pending:
            step = next(pending[-1], None)
            if step is None:
                pending.pop()
                done.add(path[-1])
                on_path.discard(path.pop())
            elif step in on_path:
                return [*path[path.index(step) :], step]
            elif step not in done:
                path.append(step)
                on_path.add(step)
                pending.append(iter(sorted(graph.get(step, ()))))
    return None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for step in sorted(graph.get(node, ())):
            if step not in index:
                visit(step)
                low[node] = min(low[node], low[step])
            elif step in stack:
                low[node] = min(low[node], index[step])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_checker_sees_function_local_imports_and_skips_type_checking_blocks(
    tmp_path: Path,
) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text(
        "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from .high import H\n"
        "def f():\n    from . import mid\n"
    )
    (package / "mid.py").write_text("from .high import H\n")
    (package / "high.py").write_text("from .low import f\nH = 1\n")
    modules = {_module_name_in(tmp_path, p): p for p in sorted(package.glob("*.py"))}
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    assert graph["pkg.low"] == {"pkg.mid"}
    assert cycles(graph) == [["pkg.high", "pkg.low", "pkg.mid"]]
    (package / "low.py").write_text(
        "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from . import mid\n"
    )
    graph["pkg.low"] = imports_of("pkg.low", package / "low.py", modules)
    assert find_cycle(graph) is None


def _module_name_in(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_no_module_of_the_package_imports_itself_back_at_run_time() -> None:
    graph = import_graph()
    found = cycles(graph)
    assert not found, "run-time import cycles: " + "; ".join(
        f"among {{{', '.join(c)}}}, e.g. "
        + " -> ".join(find_cycle({m: graph[m] & set(c) for m in c}) or c)
        for c in found
    )


#: The package's layers, bottom to top (docs/architecture.md, "The Python package"). A module
#: imports, at run time, only modules of its own layer or of a lower one; the modules not
#: named here (the fronts: ``nodelay``, ``_get``, ``requests``, ``ext``, ``testing``...) sit on
#: top and may import any of them.
LAYERS = [
    (
        "foundation",
        "_core _exceptions _env _tls _proxy _config _engine_options _urls _urltypes _cookies"
        " _streaming _links _codes _retry",
    ),
    ("headers", "_headers"),
    ("content", "_content _upload _prepare"),
    ("redirects", "_redirects"),
    ("models", "_models"),
    ("flow", "_auth _flow"),
    ("clients", "_base _transports _batch _client _async_client _api _asgi _wsgi"),
]


def layer_of() -> dict[str, int]:
    return {
        f"nodelay.{module}": level
        for level, (_, modules) in enumerate(LAYERS)
        for module in modules.split()
    }


def test_every_named_module_exists_and_imports_only_its_layer_and_those_below() -> None:
    graph = import_graph()
    levels = layer_of()
    assert sorted(set(levels) - set(graph)) == []
    top = len(LAYERS)
    upward = [
        f"{module} ({LAYERS[levels[module]][0]}) imports {imported} "
        f"({LAYERS[levels[imported]][0] if imported in levels else 'a front'})"
        for module in sorted(levels)
        for imported in sorted(graph[module])
        if levels.get(imported, top) > levels[module]
    ]
    assert upward == []


# -- every protocol constant once ---------------------------------------------------------------

#: Protocol facts: each may be spelled as a literal in one module only (the others import it
#: from there). A set of numbers matches a literal tuple, list or set of exactly those numbers;
#: a mapping matches every dict literal that holds all of its items.
PROTOCOL_CONSTANTS: dict[str, frozenset[int] | dict[str, int]] = {
    "redirect statuses": frozenset({301, 302, 303, 307, 308}),
    "permanent redirect statuses": frozenset({301, 308}),
    "default ports": {"http": 80, "https": 443},
}


def _literal_numbers(node: ast.AST) -> frozenset[int] | None:
    """The ints of a literal tuple, list or set of ints (or frozenset/set/tuple() of one)."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        if isinstance(node.func, ast.Name) and node.func.id in {"frozenset", "set", "tuple"}:
            node = node.args[0]
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or len(node.elts) < 2:
        return None
    values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
    if len(values) != len(node.elts) or not all(type(v) is int for v in values):
        return None
    return frozenset(values)


def _literal_items(node: ast.AST) -> dict[object, object]:
    """The constant items of a dict literal (``{}`` for anything else)."""
    if not isinstance(node, ast.Dict):
        return {}
    return {
        key.value: value.value
        for key, value in zip(node.keys, node.values, strict=True)
        if isinstance(key, ast.Constant) and isinstance(value, ast.Constant)
    }


def _spells(node: ast.AST, constant: frozenset[int] | dict[str, int]) -> bool:
    if isinstance(constant, dict):
        items = _literal_items(node)
        return all(items.get(key) == value for key, value in constant.items())
    return _literal_numbers(node) == constant


def constant_sites() -> dict[str, list[str]]:
    """For each protocol constant, the ``module:line`` of every literal that spells it."""
    sites: dict[str, list[str]] = {name: [] for name in PROTOCOL_CONSTANTS}
    for name, path in _modules().items():
        if path.suffix == ".pyi":
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            for constant, value in PROTOCOL_CONSTANTS.items():
                site = f"{name}:{getattr(node, 'lineno', 0)}"
                if _spells(node, value) and site not in sites[constant]:
                    sites[constant].append(site)
    return sites


def test_the_constant_check_sees_sets_tuples_and_frozensets() -> None:
    for source in ("(301, 308)", "frozenset((308, 301))", "{301, 308}", "[308, 301]"):
        assert _literal_numbers(ast.parse(source, mode="eval").body) == {301, 308}
    assert _literal_numbers(ast.parse("(301, 'x')", mode="eval").body) is None
    ports = {"http": 80, "https": 443}
    assert _spells(ast.parse("{'https': 443, 'ftp': 21, 'http': 80}", mode="eval").body, ports)
    assert not _spells(ast.parse("{'http': 80}", mode="eval").body, ports)


def test_each_protocol_constant_is_written_in_one_module() -> None:
    copied = {
        constant: where
        for constant, where in constant_sites().items()
        if len({site.rpartition(":")[0] for site in where}) > 1
    }
    assert copied == {}, f"constants written in several modules: {copied}"
