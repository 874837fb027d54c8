"""The import graph of core/: every import between its modules (module level, under TYPE_CHECKING and inside
functions alike), its cycles, and the imports that run upward against the layer table below.

    python tools/import_graph.py            # summary: modules, edges, cycles, upward imports
    python tools/import_graph.py --edges    # every edge, "importer -> imported"
    python tools/import_graph.py --dot      # Graphviz text (dot -Tsvg > graph.svg)

Exit status 1 when there is a cycle or an upward import (tests/test_architecture.py runs it).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from scipy.sparse import coo_array
from scipy.sparse.csgraph import connected_components

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "core"
# Layers, lowest first: a module may import from its own layer or any layer below, never above. A module is
# placed by the longest prefix that names it.
LAYERS: list[tuple[str, ...]] = [
    ("core", "core.limits", "core.safe_text", "core.fingerprint", "core.plotting"),
    ("core.explain",),  # the explainer: never imports the lab
    (
        "core.lab.names",
        "core.lab.vibration",
        "core.lab.data_roots",
        "core.lab.contract",
        "core.lab.stats",
        "core.lab.report",
    ),
    # the engine; a run ends with the order test of its restored model, so the probes share the row
    (
        "core.lab.data_spec",
        "core.lab.models",
        "core.lab.encoder_kernels",
        "core.lab.scores",
        "core.lab.epochs",
        "core.lab.training",
        "core.lab.spectrum_baseline",
        "core.lab.probes",
        "core.lab.explorer",
        "core.lab.sweep_fields",
    ),
    ("core.lab.side_by_side", "core.lab.backends", "core.lab.cli_args", "core.lab.runs"),
    ("core.lab.study", "core.lab.wait"),  # below the evaluations and the experiment: the study never imports them
    ("core.lab.evaluations",),
    ("core.lab.experiment",),
    ("core.lab", "core.lab.jobs", "core.lab.reopen", "core.lab.figures", "core.lab.shipped"),
    ("core.experiment", "core.study"),  # the thin entry modules of the two CLIs
]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """The modules of `known` that `path` (module `name`) imports, at any depth of its code."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # a submodule imported from its package counts as that submodule alone, a name as the module
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the core modules it imports."""
    files = {module_name(path): path for path in sorted((root / PACKAGE).rglob("*.py"))}
    known = set(files)
    return {name: imports_of(path, name, known) for name, path in files.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (scipy's csgraph), each sorted."""
    nodes = sorted(set(edges).union(*edges.values()))
    position = {node: i for i, node in enumerate(nodes)}
    pairs = [(position[source], position[target]) for source, targets in edges.items() for target in targets]
    rows, columns = (list(ends) for ends in zip(*pairs)) if pairs else ([], [])
    links = coo_array((np.ones(len(pairs)), (rows, columns)), shape=(len(nodes), len(nodes)))
    _, labels = connected_components(links, directed=True, connection="strong")
    components: dict[int, list[str]] = {}
    for node, label in zip(nodes, labels):
        components.setdefault(int(label), []).append(node)
    return sorted(sorted(component) for component in components.values() if len(component) > 1)


def layer_of(name: str) -> int | None:
    best: tuple[int, int] | None = None
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if name == prefix or name.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (rank, len(prefix))
    return None if best is None else best[0]


def upward(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports from a lower layer into a higher one (package __init__ files that re-export are layered too)."""
    return sorted(
        (a, b)
        for a, targets in edges.items()
        for b in targets
        if layer_of(a) is not None and layer_of(b) is not None and layer_of(b) > layer_of(a)
    )


def unlayered(edges: dict[str, set[str]]) -> list[str]:
    return sorted(name for name in edges if layer_of(name) is None and name != PACKAGE)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edges", action="store_true", help="print every edge")
    parser.add_argument("--dot", action="store_true", help="print Graphviz text")
    args = parser.parse_args(list(argv) if argv is not None else None)
    edges = graph()
    if args.dot:
        print("digraph core {")
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(f'  "{a}" -> "{b}";')
        print("}")
        return 0
    if args.edges:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(f"{a} -> {b}")
    found_cycles, found_upward, loose = cycles(edges), upward(edges), unlayered(edges)
    print(f"{len(edges)} modules, {sum(len(t) for t in edges.values())} imports between them")
    print(f"cycles: {len(found_cycles)}")
    for component in found_cycles:
        print("  " + " <-> ".join(component))
    print(f"upward imports: {len(found_upward)}")
    for a, b in found_upward:
        print(f"  {a} -> {b}")
    if loose:
        print(f"modules in no layer: {', '.join(loose)}")
    return 1 if found_cycles or found_upward or loose else 0


if __name__ == "__main__":
    sys.exit(main())
