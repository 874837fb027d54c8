"""The hosted deployment's dependency file (Pipfile) against requirements.txt: the host gets PyTorch's CPU build
and otherwise the same version bounds, while a clone's commands and CI keep installing requirements.txt."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# Streamlit Community Cloud installs the first of these it finds (its "App dependencies" page).
HOST_ORDER = ("uv.lock", "Pipfile", "environment.yml", "requirements.txt", "pyproject.toml")


def pipfile() -> dict:
    return tomllib.loads((ROOT / "Pipfile").read_text())


def requirements() -> dict[str, Requirement]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    parsed = [Requirement(line.split("#")[0].strip()) for line in lines if line.split("#")[0].strip()]
    return {canonicalize_name(requirement.name): requirement for requirement in parsed}


def pipfile_packages() -> dict[str, str | dict]:
    return {canonicalize_name(name): spec for name, spec in pipfile()["packages"].items()}


def readme_commands() -> list[str]:
    """The fenced commands under the README's "Run the app" and "Run the tests"."""
    readme = (ROOT / "README.md").read_text()
    commands = []
    for heading in ("## Run the app", "## Run the tests"):
        section = readme.split(heading, 1)[1].split("\n## ", 1)[0]
        commands += re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    return commands


def test_the_host_reads_the_pipfile_because_no_file_it_prefers_exists():
    present = [name for name in HOST_ORDER if (ROOT / name).exists()]
    assert present[0] == "Pipfile", present
    assert "requirements.txt" in present[1:]


def test_the_pipfile_names_the_same_packages_as_requirements_txt():
    assert sorted(pipfile_packages()) == sorted(requirements())
    assert "torch" in pipfile_packages()


def test_every_package_but_torch_has_the_same_version_bounds_and_comes_from_pypi():
    sources = pipfile()["source"]
    assert sources[0]["url"].rstrip("/") == "https://pypi.org/simple"  # pipenv's default source
    expected = requirements()
    for name, spec in pipfile_packages().items():
        if name == "torch":
            continue
        assert isinstance(spec, str), f"{name} must be a plain version bound (from the default index): {spec!r}"
        assert SpecifierSet(spec) == expected[name].specifier, name
        assert str(expected[name].specifier), f"requirements.txt leaves {name} unbounded"


def test_torch_is_the_same_version_pinned_to_pytorchs_cpu_index():
    torch = pipfile_packages()["torch"]
    assert isinstance(torch, dict), torch
    index = {source["name"]: source["url"].rstrip("/") for source in pipfile()["source"]}
    assert index[torch["index"]] == CPU_INDEX
    pinned = list(SpecifierSet(torch["version"]))
    wanted = list(requirements()["torch"].specifier)
    assert [s.operator for s in pinned] == ["=="] and [s.operator for s in wanted] == ["=="]
    # the CPU index's Linux wheel carries the local label "+cpu"; the public version must be the same
    assert Version(pinned[0].version).public == Version(wanted[0].version).public
    assert Version(pinned[0].version).local in (None, "cpu")


def test_ci_and_the_readme_commands_install_requirements_txt_and_never_the_pipfile():
    ci = (ROOT / ".ci" / "run").read_text()
    commands = readme_commands()
    assert len(commands) == 2, commands
    for text in (ci, *commands):
        assert "-r requirements.txt" in text
        assert "pipfile" not in text.lower() and "pipenv" not in text.lower()
