"""The tree's shape, checked: core's imports form no cycle and never run upward against the layer table of
tools/import_graph.py (type-only and function-local imports included), and the explainer never imports the lab."""

from __future__ import annotations

import ast
import contextlib
import io
import sys
import tomllib

from tests.apptest_utils import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import import_graph  # noqa: E402


def test_core_has_no_import_cycle_and_no_upward_import():
    edges = import_graph.graph()
    assert import_graph.cycles(edges) == []
    assert import_graph.upward(edges) == []
    assert import_graph.unlayered(edges) == []
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert import_graph.main([]) == 0
    assert "cycles: 0" in printed.getvalue() and "upward imports: 0" in printed.getvalue()


def test_the_explainer_never_imports_the_lab():
    edges = import_graph.graph()
    explainer = {name: targets for name, targets in edges.items() if name.startswith("core.explain")}
    assert len(explainer) >= 10
    assert not [(a, b) for a, targets in explainer.items() for b in targets if b.startswith("core.lab")]


def test_the_checker_finds_a_cycle_and_an_upward_import_when_there_is_one():
    edges = {"core.lab.runs": {"core.lab.study.runner"}, "core.lab.study.runner": {"core.lab.runs"}}
    assert import_graph.cycles(edges) == [["core.lab.runs", "core.lab.study.runner"]]
    assert import_graph.upward(edges) == [("core.lab.runs", "core.lab.study.runner")]


MAX_FUNCTION_LINES = 60


def _python_files(*folders: str):
    for folder in folders:
        yield from sorted((ROOT / folder).rglob("*.py"))


def _functions(tree: ast.AST):
    return [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_no_function_in_core_or_ui_is_over_sixty_lines():
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in _python_files("core", "ui")
        for node in _functions(ast.parse(path.read_text(encoding="utf-8")))
        if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


def _public_definitions(tree: ast.Module):
    """Module-level functions and classes, and the public methods of public classes, not starting with "_"."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            yield node
            if isinstance(node, ast.ClassDef):
                yield from (
                    item
                    for item in node.body
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not item.name.startswith("_")
                )


def test_every_public_definition_in_core_has_a_docstring():
    missing = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
        for path in _python_files("core")
        for node in _public_definitions(ast.parse(path.read_text(encoding="utf-8")))
        if not ast.get_docstring(node)
    ]
    assert missing == []


def test_the_complexity_limit_is_part_of_the_pinned_lint_configuration():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "C901" in config["select"] and config["mccabe"]["max-complexity"] == 10
    assert not any(
        "C901" in ignored
        for pattern, ignored in config.get("per-file-ignores", {}).items()
        if pattern.startswith(("core", "ui", "pages"))
    )


def test_the_size_checks_find_a_long_function_and_a_missing_docstring():
    long_body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    tree = ast.parse(f"def public():\n{long_body}\n\nclass Shown:\n    def method(self):\n        return 1\n")
    lengths = [node.end_lineno - node.lineno + 1 for node in _functions(tree)]
    assert max(lengths) == MAX_FUNCTION_LINES + 1
    assert [node.name for node in _public_definitions(tree) if not ast.get_docstring(node)] == [
        "public",
        "Shown",
        "method",
    ]
