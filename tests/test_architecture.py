"""The tree's shape, checked: core's imports form no cycle and never run upward against the layer table of
tools/import_graph.py (type-only and function-local imports included), and the explainer never imports the lab."""

from __future__ import annotations

import contextlib
import io
import sys

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
