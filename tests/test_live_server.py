"""The real-browser tests wait for the page, not the clock: every page they drive comes from live_server.new_page
(which counts the app's runs and gives every wait and `expect` the long timeout), and every interaction that
reruns the app sits in `with live_server.finished_run(page):`. A fixed 5 s once failed on a busy machine while
the page had not yet drawn its widgets."""

from __future__ import annotations

import ast
import re

import pytest

from tests.apptest_utils import ROOT

BROWSER_TESTS = sorted(
    path
    for path in (ROOT / "tests").glob("test_*.py")
    if re.search(r"^from tests import live_server$", path.read_text(encoding="utf-8"), re.MULTILINE)
)
# what a test does to the page that reruns the app (fill() only types: Enter or leaving the box commits)
RERUNS = {"click", "press", "go_back", "go_forward", "set_input_files", "check", "select_option"}


def _inside_finished_run(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.With) and any(
            isinstance(item.context_expr, ast.Call) and ast.unparse(item.context_expr.func).endswith("finished_run")
            for item in node.items
        ):
            return True
    return False


def unwaited_interactions(source: str) -> list[str]:
    """Each call in `source` that reruns the app outside a `finished_run` block, as "line: code"."""
    tree = ast.parse(source)
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    return [
        f"{node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in RERUNS
        and not _inside_finished_run(node, parents)
    ]


def test_the_check_finds_an_interaction_outside_a_finished_run_block():
    source = (
        "def t(page):\n"
        "    page.go_back()\n"
        "    with live_server.finished_run(page):\n"
        "        page.locator('a').click()\n"
        "    box.fill('3')\n"
    )
    assert unwaited_interactions(source) == ["2: page.go_back()"]


def test_the_browser_tests_are_found():
    assert {path.name for path in BROWSER_TESTS} >= {
        "test_browser.py",
        "test_links_equal_the_view.py",
        "test_phone_layout.py",
    }


@pytest.mark.parametrize("path", BROWSER_TESTS, ids=[path.stem for path in BROWSER_TESTS])
def test_every_browser_test_waits_for_the_run_each_interaction_starts(path):
    source = path.read_text(encoding="utf-8")
    assert unwaited_interactions(source) == []
    assert "browser.new_page(" not in source and ".new_page(" not in source.replace("live_server.new_page(", "")
    assert "data-test-script-state" not in source  # the one definition of "idle" lives in tests/live_server.py
