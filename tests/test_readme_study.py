"""The README's study section leads with the map: its image first, then the map's sentence and its table exactly as
the shipped version-3 files give them (core.lab.shipped.read_map, core.lab.study.map), so the README cannot drift
from results/."""

from __future__ import annotations

import re

import pytest

from core.lab.shipped import read_map
from core.lab.study.map import map_table
from tests.apptest_utils import ROOT

HEADING = "## The study: does positional encoding help?"
MAP_IMAGE = "docs/screens/fault_lab-map-1400.png"


def _study_section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index(HEADING) + len(HEADING)
    end = readme.find("\n## ", start)
    return readme[start : end if end != -1 else None]


def test_the_study_section_opens_with_the_maps_image_and_the_image_is_there():
    section = _study_section()
    first_image = re.search(r"!\[[^\]]+\]\(([^)]+)\)", section)
    assert first_image is not None and first_image.group(1) == MAP_IMAGE
    assert section.strip().startswith(first_image.group(0))  # the map comes before any text
    assert (ROOT / MAP_IMAGE).is_file()


def test_the_maps_sentence_and_table_in_the_readme_are_what_the_shipped_files_give():
    points, sentence, missing = read_map()
    if not points:
        pytest.skip(f"no version-3 study is shipped in results/ ({', '.join(missing)} missing)")
    section = _study_section()
    assert sentence in " ".join(section.split())
    assert map_table(points) in section
