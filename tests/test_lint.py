"""The tree stays lint-clean and formatted: `ruff check` and `ruff format --check`, as configured in
pyproject.toml, must pass for the whole repository; and that configuration holds every function of the tree,
tests, bench/ and tools/ included, to a McCabe complexity of at most 10 (C901), with no file or line let off."""

import re
import subprocess
import sys
import tomllib

import pytest

from tests.apptest_utils import ROOT


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["check", "format"])
def test_ruff_finds_nothing(command):
    result = subprocess.run([sys.executable, "-m", "ruff", *command], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"ruff {' '.join(command)} failed:\n{result.stdout}{result.stderr}"


def test_the_configuration_holds_every_function_of_the_tree_to_a_complexity_of_ten():
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "C901" in lint["select"] and lint["mccabe"]["max-complexity"] == 10
    let_off = {pattern: rules for pattern, rules in lint.get("per-file-ignores", {}).items() if "C901" in rules}
    assert let_off == {}
    assert "C901" not in lint.get("ignore", []) and not (ROOT / "ruff.toml").exists()
    waived = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in ROOT.rglob("*.py")
        if ".venv" not in path.parts
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"noqa:[^#]*C901", line)
    ]
    assert waived == []
