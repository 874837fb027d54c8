"""AppTest of app.py: navigation, the home page's story, and every registered page running without error."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui import page_registry as rooms

ROOT = Path(__file__).resolve().parents[1]
# the page files are a public contract: written out here, not read from ui.page_registry, so a dropped room fails
PAGE_FILES = [
    "pages/home.py",
    "pages/walkthrough.py",
    "pages/encoding_matrix.py",
    "pages/wavelengths.py",
    "pages/similarity.py",
    "pages/softmax_saturation.py",
    "pages/fault_lab.py",
]


def test_every_page_file_exists_and_is_a_room_in_story_order():
    assert all((ROOT / page).is_file() for page in PAGE_FILES)
    assert [room.path for room in rooms.built_rooms()] == PAGE_FILES[1:]


def test_a_missing_page_script_stops_the_app_instead_of_hiding_the_room(monkeypatch):
    missing = rooms.Room("pages/no_such_room.py", "Nowhere", ":material/close:", "Story", "a page never written")
    monkeypatch.setattr(rooms, "ROOMS", (*rooms.ROOMS, missing))
    with pytest.raises(FileNotFoundError, match="pages/no_such_room.py"):
        rooms.built_rooms()


def test_home_tells_the_story_and_links_every_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    headers = [h.value for h in at.header]
    # the demo, then the path, then the side topics, each under one heading at the end
    assert headers == ["Shuffle the words: self-attention does not notice", "The path through the lab", "Going further"]
    subheaders = [h.value for h in at.subheader]
    assert "Why attention needs positions at all" in subheaders
    assert any("context" in h for h in subheaders)
    text = " ".join(m.value for m in at.markdown)
    assert "0-based" in text and "Transformer-XL" in text and "parallel" in text
    start, *links = [link.proto.label for link in at.get("page_link")]
    assert start.startswith(f"**Start here**: {rooms.ROOMS[0].title}")  # the first line of the guided path
    assert [label.split("**")[1] for label in links] == [room.title for room in rooms.ROOMS]  # every page, in order


def test_every_page_runs_through_navigation():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    for page in PAGE_FILES[1:]:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.message for e in at.exception])
        assert at.title, page


def test_each_explainer_page_ends_with_a_link_to_the_next_room_in_story_order():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    titles = {room.path: room.title for room in rooms.ROOMS}
    for page, following in zip(PAGE_FILES[1:6], PAGE_FILES[2:7]):  # the last explainer leads to the Fault lab
        at.switch_page(page).run()
        assert not at.exception, (page, [e.message for e in at.exception])
        last = at.get("page_link")[-1].proto
        assert last.label.startswith(f"Next: **{titles[following]}**"), (page, last.label)
        assert last.page.endswith(following.removeprefix("pages/").removesuffix(".py")), (page, last.page)


def verdict(at: AppTest) -> str:
    """The demo's sentence under its figure, in words."""
    return next(m.value for m in at.markdown if m.value.startswith(("**Identical", "**Different"))).strip("*")


def test_home_opens_with_the_live_demo_of_order_blindness():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert at.header[0].value.startswith("Shuffle the words")
    assert verdict(at).startswith("Identical up to rounding")  # no position signal: the same outputs, shuffled
    at.text_input(key="demo_tokens").set_value("the cat sat on the mat today").run()
    assert not at.exception and verdict(at).startswith("Identical up to rounding")
    shuffled = next(m.value for m in at.markdown if m.value.startswith("Shuffled:"))
    assert sorted(shuffled.removeprefix("Shuffled: **").removesuffix("**").split()) == sorted(
        "the cat sat on the mat today".split()
    )
    at.number_input(key="demo_seed").set_value(5).run()
    reshuffled = next(m.value for m in at.markdown if m.value.startswith("Shuffled:"))
    assert reshuffled != shuffled and verdict(at).startswith("Identical up to rounding")
    at.toggle(key="demo_pe").set_value(True).run()
    assert verdict(at).startswith("Different: moving the words changes their outputs by up to")
    assert float(verdict(at).split("up to ")[1].rstrip(".*")) > 1e-3  # the position signal moves the outputs
    at.text_input(key="demo_tokens").set_value("alone").run()
    assert [e.value for e in at.error] == ["Type at least two words."]
