"""bench/screens.py: a screenshot of every page the navigation lists, each written within 300 kB."""

from __future__ import annotations

import sys

import numpy as np
from PIL import Image

from tests.apptest_utils import ROOT
from ui.page_registry import built_rooms

sys.path.insert(0, str(ROOT / "bench"))
import screens  # noqa: E402


def test_the_screenshots_cover_the_home_page_and_every_room_of_the_navigation():
    rooms = [room.path.removeprefix("pages/").removesuffix(".py") for room in built_rooms()]
    assert screens.pages() == {"home": "", **{name: name for name in rooms}}


def test_a_screenshot_over_the_limit_is_written_again_within_it_and_one_under_it_is_left_alone(tmp_path):
    noisy = np.random.default_rng(0).integers(0, 256, (300, 400, 3), dtype=np.uint8)  # no zlib gets this small
    target = tmp_path / "page-390.png"
    Image.fromarray(noisy).save(target)
    before = target.stat().st_size
    assert before > 300_000
    assert screens.shrink(target) == target.stat().st_size <= 300_000
    with Image.open(target) as image:
        assert image.size == (400, 300)
    small = tmp_path / "flat.png"
    Image.new("RGB", (390, 844), "white").save(small)
    unchanged = small.read_bytes()
    assert screens.shrink(small) == len(unchanged) and small.read_bytes() == unchanged
