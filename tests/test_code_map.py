"""The README's map of the code matches the tree: every path, folder, module and name it points at exists, every
folder of the tree has its line, and every module of core/lab/ (in the layer table), ui/ and ui/lab/ is named, so
a module added, moved or removed without its line fails here."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.apptest_utils import ROOT

TOP_FOLDERS = ("core", "ui", "pages", "tests", "tools", "bench", "results", "docs", ".ci", ".streamlit")


def map_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## How the code is laid out\n")
    return text[start : text.index("\n## ", start + 1)]


def table_rows(first_header: str) -> list[list[str]]:
    """The cells of the map's table whose header starts with `| first_header |`, without its header."""
    lines = map_section().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip()[1:-1].split(" | ")])
    return rows


def quoted(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def tracked_folders() -> set[str]:
    """Every folder holding a tracked file, but the folders inside tests/ and docs/screens/ (data, not code)."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    folders = {str(path.rsplit("/", 1)[0]) for path in files.split() if "/" in path}
    return {folder for folder in folders if not folder.startswith(("tests/", "docs/screens/"))}


def _module_path(dotted_or_path: str) -> tuple[str, list[str]]:
    """`core/lab/training.train` or `core.lab.training.train` -> ("core/lab/training", ["train"])."""
    parts = dotted_or_path.replace("/", ".").split(".")
    for cut in range(len(parts), 0, -1):
        path = "/".join(parts[:cut])
        if (ROOT / f"{path}.py").is_file() or (ROOT / path / "__init__.py").is_file():
            return path, parts[cut:]
    return dotted_or_path, []


def _defines(path: str, name: str) -> bool:
    file = ROOT / f"{path}.py" if (ROOT / f"{path}.py").is_file() else ROOT / path / "__init__.py"
    return re.search(rf"^\s*(def|class) {name}\b|^{name}\b[^=\n]*=", file.read_text(encoding="utf-8"), re.M) is not None


def named_paths() -> list[str]:
    """Every quoted path (a/b, a/b.py, a/) and every quoted dotted name under core., ui. or tests. in the map."""
    names = []
    for word in quoted(map_section()):
        if " " in word or "(" in word or "=" in word:
            continue  # a command, a call, a setting
        if "/" in word or word.startswith(("core.", "ui.", "tests.")):
            names.append(word)
    return names


@pytest.mark.parametrize("name", sorted(set(named_paths())))
def test_every_path_and_name_the_map_gives_exists(name):
    if (ROOT / name.rstrip("/")).exists() or (ROOT / "core" / "lab" / name.rstrip("/")).exists():
        return  # the layer table names the lab's modules from core/lab/
    if not name.startswith(TOP_FOLDERS) and "." not in name:
        name = f"core/lab/{name}"
    module, attributes = _module_path(name)
    assert (ROOT / f"{module}.py").is_file() or (ROOT / module).is_dir(), f"{name}: no such file or module"
    assert not attributes or _defines(module, attributes[0]), f"{name}: {module} defines no {attributes[0]}"


def test_the_map_names_enough_paths_to_be_read():
    assert len(set(named_paths())) >= 60


def test_every_folder_of_the_tree_has_its_line():
    named = {cell.strip("`") for row in table_rows("path") for cell in quoted(row[0])}
    lab_rows = " ".join(row[1] for row in table_rows("layer"))
    explained = {f"core/lab/{word.rstrip('/')}" for word in quoted(lab_rows) if word.endswith("/")}
    missing = []
    for folder in sorted(tracked_folders()):
        if f"{folder}/" in named or folder in explained or (ROOT / folder).parent == ROOT and f"{folder}" in named:
            continue
        missing.append(folder)
    assert missing == [], f"folders without a line in the README's map: {missing}"


def test_every_module_of_the_lab_is_in_its_layer_table():
    modules = {word.rstrip("/") for row in table_rows("layer") for word in quoted(row[1])}
    lab = ROOT / "core" / "lab"
    present = {path.stem for path in lab.glob("*.py") if path.stem != "__init__"}
    present |= {path.name for path in lab.iterdir() if (path / "__init__.py").is_file()}
    assert present - modules == set(), "modules of core/lab missing from the layer table"
    assert modules - present == set(), "the layer table names modules core/lab does not have"


@pytest.mark.parametrize("folder", ["ui", "ui/lab"])
def test_every_module_of_ui_is_named_on_its_line(folder):
    row = next(row for row in table_rows("path") if row[0] == f"`{folder}/`")
    named = set(quoted(row[1]))
    present = {path.stem for path in (ROOT / folder).glob("*.py") if path.stem != "__init__"}
    assert present - named == set(), f"modules of {folder}/ missing from its line"
