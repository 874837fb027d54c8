"""The tree stays lint-clean and formatted: `ruff check` and `ruff format --check`, as configured in
pyproject.toml, must pass for the whole repository."""

import subprocess
import sys

import pytest

from tests.apptest_utils import ROOT


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["check", "format"])
def test_ruff_finds_nothing(command):
    result = subprocess.run([sys.executable, "-m", "ruff", *command], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"ruff {' '.join(command)} failed:\n{result.stdout}{result.stderr}"
