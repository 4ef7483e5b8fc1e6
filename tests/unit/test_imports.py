"""The package's layers, checked from the source: no import cycle, and who may import what.

The graph is built from every ``import`` statement of every module (including
those under ``if TYPE_CHECKING:`` and inside functions), so a cycle can't be
hidden by moving an import. Importing ``a.b.c`` also runs ``a/__init__`` and
``a/b/__init__``: an edge to a package's ``__init__`` is added for each package
the target lives in that the importing module does not live in itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import jupyter_cluster
from tests.support.graphs import strongly_connected
from tests.support.sources import parse_files

PACKAGE = Path(jupyter_cluster.__file__).parent
TOP = "jupyter_cluster"
#: Third-party libraries that do IO or belong to a front end: never in core.
IO_LIBRARIES = {
    "aiodocker",
    "aiohttp",
    "asyncssh",
    "sqlite3",
    "tornado",
    "jupyter_server",
    "jupyter_client",
    "jupyter_core",
    "ipywidgets",
    "IPython",
    "traitlets",
    "subprocess",
    "socket",
}


def modules() -> dict[str, Path]:
    """Dotted module name → source file, for every module of the package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if "labextension" in path.parts:
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = modules()
#: Parsed at collection, before any test runs a thread (see tests.support.sources).
TREES = parse_files(MODULES.values())


def imported_names(name: str, path: Path) -> set[str]:
    """Every absolute module name that ``name``'s import statements name."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    names: set[str] = set()
    for node in ast.walk(TREES[path]):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def graph() -> dict[str, set[str]]:
    """Module → the package modules (and package ``__init__``s) importing it runs."""
    edges: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
        targets = set()
        for target in imported_names(name, path):
            if target not in MODULES:
                continue
            targets.add(target)
            parts = target.split(".")
            targets.update(".".join(parts[:i]) for i in range(1, len(parts)))
        edges[name] = targets - own
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module."""
    nodes = set(edges) | {w for targets in edges.values() for w in targets}
    graph = {v: sorted(edges.get(v, ())) for v in nodes}
    return [c for c in strongly_connected(graph) if len(c) > 1]


def third_party(name: str) -> set[str]:
    """Top-level names of what ``name`` imports from outside the package."""
    return {t.split(".")[0] for t in imported_names(name, MODULES[name]) if not t.startswith(TOP)}


def reaches(edges: dict[str, set[str]], start: str) -> set[str]:
    """Every package module importing ``start`` runs, directly or not."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for w in edges.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def test_the_graph_sees_the_whole_package() -> None:
    edges = graph()
    assert {"jupyter_cluster.core.models", "jupyter_cluster.engine.manager"} <= set(edges)
    assert "jupyter_cluster.core.models" in edges["jupyter_cluster.engine.manager"]
    # an import of engine.agents.base from outside engine runs engine/__init__ too
    assert "jupyter_cluster.engine" in edges["jupyter_cluster.runtime.files"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_core_is_pure() -> None:
    core = [name for name in MODULES if name.startswith(f"{TOP}.core")]
    assert len(core) >= 8
    for name in core:
        assert not third_party(name) & IO_LIBRARIES, f"{name} imports {third_party(name)}"
        inside = {t for t in imported_names(name, MODULES[name]) if t in MODULES}
        allowed = {t for t in inside if t.startswith(f"{TOP}.core") or t == f"{TOP}.errors"}
        assert inside <= allowed | {TOP}, f"{name} imports {inside - allowed}"


#: The front ends' modules at the top of the package (besides cli/ and provisioning/).
FRONT_END_MODULES = {
    f"{TOP}.{name}" for name in ("session", "background_engine", "widgets", "magics", "config")
}


def test_no_front_end_imports_the_server() -> None:
    edges = graph()
    front_ends = [
        name
        for name in MODULES
        if name.startswith((f"{TOP}.cli", f"{TOP}.provisioning")) or name in FRONT_END_MODULES
    ]
    assert len(front_ends) >= 9
    for name in front_ends:
        server = {m for m in reaches(edges, name) if m.startswith(f"{TOP}.server")}
        assert not server, f"{name} imports the server extension: {sorted(server)}"


def test_the_engine_imports_no_front_end() -> None:
    edges = graph()
    for name in (m for m in MODULES if m.startswith(f"{TOP}.engine")):
        bad = {
            m
            for m in reaches(edges, name)
            if m.startswith((f"{TOP}.server", f"{TOP}.cli", f"{TOP}.provisioning"))
            or m in FRONT_END_MODULES
        }
        assert not bad, f"{name} imports front ends: {sorted(bad)}"


def test_the_top_package_imports_nothing_eagerly() -> None:
    """``import jupyter_cluster`` (done by every submodule) must stay cheap and acyclic."""
    tree = TREES[PACKAGE / "__init__.py"]
    eager = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.level]
    assert eager == []


ENGINE = f"{TOP}.engine"
STORE = f"{ENGINE}.store"
AGENTS = f"{ENGINE}.agents"
LAUNCH = f"{ENGINE}.launch"


def engine_modules_imported_by(name: str) -> set[str]:
    """The engine modules ``name``'s own import statements name (not transitively)."""
    inside = {t for t in imported_names(name, MODULES[name]) if t in MODULES}
    return {t for t in inside if t.startswith(f"{ENGINE}.")}


def in_folder(name: str, folder: str) -> bool:
    return name == folder or name.startswith(f"{folder}.")


@pytest.mark.parametrize("folder", [STORE, AGENTS])
def test_the_store_and_the_agents_import_nothing_else_of_the_engine(folder: str) -> None:
    members = [m for m in MODULES if in_folder(m, folder)]
    assert len(members) >= 5
    for name in members:
        outside = {t for t in engine_modules_imported_by(name) if not in_folder(t, folder)}
        assert not outside, f"{name} imports {sorted(outside)}"


def test_the_launch_path_imports_only_the_store_and_the_agents() -> None:
    members = [m for m in MODULES if in_folder(m, LAUNCH)]
    assert len(members) >= 7
    for name in members:
        bad = {
            t
            for t in engine_modules_imported_by(name)
            if not any(in_folder(t, f) for f in (LAUNCH, STORE, AGENTS))
        }
        assert not bad, f"{name} imports {sorted(bad)}"


def test_nothing_outside_the_engine_imports_the_launch_path() -> None:
    outside = [m for m in MODULES if not in_folder(m, ENGINE)]
    for name in outside:
        bad = {t for t in imported_names(name, MODULES[name]) if in_folder(t, LAUNCH)}
        assert not bad, f"{name} imports {sorted(bad)}"


def test_the_agent_seam_depends_on_no_traitlets_module() -> None:
    base = f"{AGENTS}.base"
    assert "traitlets" not in third_party(base)
    reached = reaches(graph(), base)
    configurable = {m for m in reached if m in MODULES and "traitlets" in third_party(m)}
    assert not configurable, f"the Agent protocol loads {sorted(configurable)}"
