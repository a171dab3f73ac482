"""The layering rules of the package (docs/code-map.md#layers), read from the imports of every module under
src/anachron.

* the packages form layers (:data:`LAYERS`, bottom first) and every import points down or sideways
  within a layer: no module imports a package of a higher layer, deferred imports and registry
  strings included, with no exception;

* no import cycle between modules: neither among the imports that run when a module is loaded
  (top level, class bodies, ``if``/``try`` blocks) nor once the imports deferred into function
  bodies are added (a deferred import that closes a cycle only hides it). ``if TYPE_CHECKING:``
  blocks never run. Importing ``a.b.c`` also runs the package ``a.b``, so it counts as an import of
  ``a.b`` too, unless ``a.b`` is a package the importer itself lives in;
* ``metrics/`` is pure: nothing from ``anachron.llm`` or ``anachron.methods``, anywhere in a module;
* ``store`` knows no method and computes nothing: nothing from ``anachron.methods`` or ``anachron.metrics``;
* the package never imports ``snakemake``;
* no source reader imports another: what readers share lives in a module named for it
  (``sources/signings.py``, ``sources/dockets.py``, ...), a reader being a module or package
  ``anachron.sources.<name>`` that defines a ``SourceReader`` subclass.

A registry's ``"module:Class"`` strings count as deferred imports (they are imported at run time).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path


from conftest import REPO

#: The package's layers, bottom first (docs/code-map.md#layers). A package may import its own layer and
#: the layers below it. ``anachron`` itself (``__version__``) is a building block.
LAYERS: tuple[tuple[str, ...], ...] = (
    # building blocks: errors, files, logs and progress, HTTP, dates, money, names, the tables' schema,
    # table helpers (missing values, required columns) and the shared word lists
    ("anachron", "anachron.errors", "anachron.io", "anachron.logs", "anachron.progress", "anachron.http",
     "anachron.dates", "anachron.money", "anachron.names", "anachron.cost", "anachron.tables", "anachron.frames",
     "anachron.plugins", "anachron.words", "anachron.variants"),
    ("anachron.sources",),
    ("anachron.retrieval",),
    ("anachron.llm",),
    ("anachron.verify",),
    ("anachron.tasks",),
    ("anachron.methods",),
    ("anachron.metrics",),
    ("anachron.attribution", "anachron.training"),
    ("anachron.store",),
    ("anachron.report", "anachron.compare"),
    ("anachron.config", "anachron.plan", "anachron.estimate"),
    ("anachron.cli",),
)

SRC = REPO / "src"
PACKAGE = "anachron"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(body: list[ast.stmt], *, load_time_only: bool) -> list[ast.Import | ast.ImportFrom]:
    """Import statements in ``body``: those that run at load time, or (``load_time_only=False``) all."""
    out: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if not load_time_only:
                out += [n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))]
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            if not load_time_only:
                out += _import_nodes(node.body, load_time_only=False)
            out += _import_nodes(node.orelse, load_time_only=load_time_only)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    out += _import_nodes([n for n in inner if isinstance(n, ast.stmt)], load_time_only=load_time_only)
                    for h in inner:
                        if isinstance(h, ast.ExceptHandler):
                            out += _import_nodes(h.body, load_time_only=load_time_only)
    return out


def _imported(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Absolute names a statement imports (``from x import y`` gives ``x.y`` when that is a module)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        pkg = module if _is_package(module) else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            pkg = pkg.rpartition(".")[0]
        base = f"{pkg}.{base}" if base else pkg
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]


@functools.cache
def imports(module: str, *, load_time_only: bool) -> frozenset[str]:
    """Every absolute name ``module`` imports (third-party ones included)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    names = {name for node in _import_nodes(tree.body, load_time_only=load_time_only) for name in _imported(module, node)}
    if not load_time_only:
        names |= _registry_targets(tree)
    return frozenset(names)


def _registry_targets(tree: ast.Module) -> set[str]:
    """Modules a registry names as strings (``"anachron.tasks.stock:StockTask"``, or a module path)
    and imports at run time with importlib: edges a cycle can close through, like any import."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value.split(":", 1)[0]
            if name.startswith(PACKAGE + ".") and name in MODULES:
                out.add(name)
    return out


def import_graph(*, load_time_only: bool) -> dict[str, set[str]]:
    """module -> the package modules it imports (at load time, or anywhere; see the module docstring)."""
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        own = {module.rsplit(".", k)[0] for k in range(module.count(".") + 1)}
        targets: set[str] = set()
        for name in imports(module, load_time_only=load_time_only):
            parts = name.split(".")
            for k in range(1, len(parts) + 1):
                target = ".".join(parts[:k])
                if target in MODULES and target not in own:
                    targets.add(target)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _offenders(package: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{m} imports {name}"
        for m in MODULES
        if _in(m, package)
        for name in imports(m, load_time_only=False)
        if any(_in(name, f) for f in forbidden)
    )


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of the package that holds ``module`` (its longest listed prefix)."""
    best, where = "", -1
    for k, names in enumerate(LAYERS):
        for name in names:
            if (_in(module, name) if name != PACKAGE else module == PACKAGE) and len(name) > len(best):
                best, where = name, k
    return where


def test_the_graph_sees_the_package():
    graph = import_graph(load_time_only=True)
    assert {"anachron.tables", "anachron.metrics.core", "anachron.verify.pipeline"} <= set(graph)
    assert "anachron.tables" in graph["anachron.metrics.core"]
    assert "anachron.verify" in graph["anachron.tasks.base"]  # importing verify.task_rules runs verify/__init__
    assert "anachron.verify" not in graph["anachron.verify.pipeline"]  # its own package
    full = import_graph(load_time_only=False)
    assert any(full[m] - graph[m] for m in graph)  # imports inside functions are seen too
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_at_load_time():
    found = cycles(import_graph(load_time_only=True))
    assert not found, f"import cycles: {found}"


def test_no_import_cycle_with_deferred_imports():
    found = cycles(import_graph(load_time_only=False))
    assert not found, f"import cycles: {found}"


def test_metrics_are_pure():
    assert _offenders("anachron.metrics", ("anachron.llm", "anachron.methods")) == []


def test_store_knows_no_method_and_computes_nothing():
    # the store reads and writes; the aggregates are the metrics' (handed in as the derive hook)
    assert _offenders("anachron.store", ("anachron.methods", "anachron.metrics")) == []


def test_the_package_never_imports_snakemake():
    assert _offenders(PACKAGE, ("snakemake",)) == []


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer_of(m) < 0] == []
    assert layer_of("anachron.tasks.stock.task") == layer_of("anachron.tasks") > layer_of("anachron.verify")
    assert layer_of("anachron") == 0 and layer_of("anachron.cli") == len(LAYERS) - 1


def test_no_package_imports_a_higher_layer():
    graph = import_graph(load_time_only=False)
    upward = sorted(
        f"{m} (layer {layer_of(m)}) imports {t} (layer {layer_of(t)})"
        for m, targets in graph.items()
        for t in targets
        if layer_of(t) > layer_of(m)
    )
    assert upward == [], "imports against the layers:\n" + "\n".join(upward)


def _source_unit(module: str) -> str:
    """``anachron.sources.<name>`` of a module under it (the module itself, or its package)."""
    return ".".join(module.split(".")[:3])


def _reader_units() -> set[str]:
    """The ``anachron.sources.<name>`` modules and packages that define a ``SourceReader`` subclass."""
    units = set()
    for module, path in MODULES.items():
        if not module.startswith(f"{PACKAGE}.sources."):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                getattr(b, "id", None) == "SourceReader" or getattr(b, "attr", None) == "SourceReader" for b in node.bases
            ):
                units.add(_source_unit(module))
    return units


def test_no_source_reader_imports_another():
    units = _reader_units()
    assert {"anachron.sources.prosports", "anachron.sources.courtlistener", "anachron.sources.oyez"} <= units
    assert "anachron.sources.base" not in units
    found = {
        (_source_unit(m), _source_unit(name))
        for m in MODULES
        if _source_unit(m) in units
        for name in imports(m, load_time_only=False)
        if name.startswith(f"{PACKAGE}.sources.") and _source_unit(name) in units and _source_unit(name) != _source_unit(m)
    }
    assert not found, f"readers importing readers: {sorted(found)}"
