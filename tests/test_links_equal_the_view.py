"""Links equal the view: a link value a widget cannot take is named in one line, a page's link carries only that
page's own keys, and the browser's Back and Forward step through the views of a page, settings and all.

The browser tests drive Debian's Chromium against `streamlit run app.py` (one server for the module) and skip
with a reason where Chromium or Playwright is missing, except under CI (env CI set), where they must run.
"""

from __future__ import annotations

import ast
import re

import pytest
from streamlit.testing.v1 import AppTest

from core.explain import similarity
from tests import live_server
from tests.apptest_utils import ROOT, TIMEOUT, run_page
from ui.link_values import unusable_choice

EXPLAINER_PAGES = ["home", "walkthrough", "encoding_matrix", "wavelengths", "similarity", "softmax_saturation"]


def bound_widget_keys(page: str) -> set[str]:
    """The key of every widget the page binds to its link (bind="query-params"), read from its source."""
    tree = ast.parse((ROOT / "pages" / f"{page}.py").read_text())
    keys = set()
    for call in (node for node in ast.walk(tree) if isinstance(node, ast.Call)):
        words = {word.arg: word.value for word in call.keywords}
        if isinstance(words.get("bind"), ast.Constant) and words["bind"].value == "query-params":
            keys.add(words["key"].value)
    return keys


# --- every key a page binds is one it names: a forgotten key would be dropped from every link ------------------


@pytest.mark.parametrize("page", EXPLAINER_PAGES)
def test_every_key_an_explainer_page_binds_to_its_link_is_one_it_names(page):
    source = (ROOT / "pages" / f"{page}.py").read_text()
    assert "link_choices=LINK_CHOICES" in source  # the page names every key of its link
    module = {}
    exec(compile(source.split("\nuse_app_navigation(")[0], page, "exec"), module)
    named = {*module.get("LINK_NUMBERS", {}), *module["LINK_CHOICES"]}
    text = set(re.findall(r'link_text=\["(\w+)"\]', source))
    assert bound_widget_keys(page) == named | text
    assert len(bound_widget_keys(page)) >= 2


def test_a_choice_must_be_spelled_as_the_link_writes_one_of_the_options():
    assert not unusable_choice("10000", (10, 100, 10_000)) and unusable_choice("123", (10, 100, 10_000))
    assert unusable_choice("1e4", (10, 100, 10_000)) and unusable_choice("Concatenated", ("concatenated",))
    assert not unusable_choice("TRUE", (False, True)) and unusable_choice("maybe", (False, True))
    assert not unusable_choice("", ("a", "b"))  # an empty value is "nothing chosen", never named


# --- a dropped value says which -------------------------------------------------------------------------------


def test_choices_a_widget_cannot_take_and_a_foreign_key_are_named_in_one_line_and_usable_values_stay():
    at = run_page(
        "pages/similarity.py", {"base": "123", "scheme": "[x](http://e.vil)", "scale": "8", "d": "64", "foo": "1"}
    )
    assert (at.select_slider(key="base").value, at.selectbox(key="scheme").value) == (10_000, "learned (init)")
    assert (at.select_slider(key="scale").value, at.select_slider(key="d").value) == (8, 64)  # usable values stay
    assert [info.value for info in at.info] == [
        "Link values base\\=123, scheme\\=\\[x\\]\\(http\u200b\\://e\\.vil\\) were not usable here and were reset "
        "to their defaults. Link value foo\\=1 is not a setting of this page and was removed."
    ]
    assert dict(at.query_params) == {"scale": "8", "d": "64"}


def test_a_multiselect_keeps_its_usable_link_values_and_names_the_others():
    at = run_page("pages/encoding_matrix.py", {"dims": ["3", "5000", "7"], "layout": "Concatenated"})
    assert at.multiselect(key="dims").value == [3, 7] and at.radio(key="layout").value == "interleaved"
    assert [info.value for info in at.info] == [
        "Link values dims\\=5000, layout\\=Concatenated were not usable here and were reset to their defaults."
    ]


@pytest.mark.parametrize(("value", "on", "line"), [("TRUE", True, False), ("maybe", False, True)])
def test_a_toggle_takes_true_or_false_in_any_case_and_names_anything_else(value, on, line):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["demo_pe"] = value
    at.run()
    assert not at.exception and at.toggle(key="demo_pe").value is on
    expected = ["Link value demo\\_pe\\=maybe was not usable here and was reset to its default."] if line else []
    assert [info.value for info in at.info] == expected


def test_a_valid_link_is_taken_whole_and_shows_no_line():
    at = run_page("pages/softmax_saturation.py", {"dk": "64", "mc": "500", "n": "4096", "a": "2", "scores": "1, 2"})
    assert (at.select_slider(key="dk").value, at.select_slider(key="mc").value) == (64, 500)
    assert (at.select_slider(key="n").value, at.select_slider(key="a").value) == (4096, 2)
    assert not at.info


# --- per-page keys ------------------------------------------------------------------------------------------------


def test_a_setting_of_one_page_does_not_follow_the_visitor_to_another_page_or_its_link():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    at.switch_page("pages/similarity.py").run()
    for key, value in (("d", 64), ("t", 20)):
        at.select_slider(key=key).set_value(value).run()
        at.query_params[key] = str(value)  # as the browser writes a changed value into the address
        at.run()
    assert (at.select_slider(key="d").value, at.select_slider(key="t").value) == (64, 20)
    at.switch_page("pages/encoding_matrix.py").run()
    assert not at.exception
    assert (at.select_slider(key="d").value, at.select_slider(key="t").value) == (128, 10)  # the page's defaults
    assert not at.info  # carried values leave silently (the address itself: the browser test below)
    at.switch_page("pages/wavelengths.py").run()
    assert at.select_slider(key="d").value == 512


def test_a_link_into_a_page_keeps_its_values_when_it_is_the_first_page_of_a_session():
    at = run_page("pages/encoding_matrix.py", {"d": "64", "t": "20"})
    assert (at.select_slider(key="d").value, at.select_slider(key="t").value) == (64, 20) and not at.info


# --- the browser's Back and Forward ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser_page():
    yield from live_server.served_page({"width": 1400, "height": 1000})


def _type(page, key: str, value: int) -> None:
    """Drag the Similarity page's position slider `key` to `value` in one move: one release, one new view."""
    ladder = list(similarity.POSITION_LADDER)
    page.locator(f".st-key-{key}").scroll_into_view_if_needed()
    track = page.locator(f".st-key-{key} [data-testid=stSlider] [data-orientation=horizontal]").nth(1).bounding_box()
    now = ladder.index(int(page.locator(f".st-key-{key} [data-testid=stSliderThumbValue]").inner_text()))
    step = track["width"] / (len(ladder) - 1)
    start_x, y = track["x"] + now * step, track["y"] + track["height"] / 2
    page.mouse.move(start_x, y)
    page.mouse.down()
    page.mouse.move(track["x"] + ladder.index(value) * step, y, steps=5)
    with live_server.finished_run(page):
        page.mouse.up()


def _shows(page, query: str, t: int, k: int) -> None:
    """The address ends in `query`, the sliders show t and k, and the server has drawn that view (the rotation
    figure's title names both): each view is one finished run, as when a visitor looks before changing the next."""
    from playwright.sync_api import expect

    expect(page).to_have_url(re.compile(re.escape(query) + "$"))
    expect(page.locator(".st-key-t [data-testid=stSliderThumbValue]")).to_have_text(str(t))
    expect(page.locator(".st-key-k [data-testid=stSliderThumbValue]")).to_have_text(str(k))
    expect(page.get_by_text(f"One rotation carries PE({t}) to PE({t + k})")).to_be_visible()
    live_server.wait_for_idle(page)


def _back(page) -> None:
    with live_server.finished_run(page):
        page.go_back()


def _forward(page) -> None:
    with live_server.finished_run(page):
        page.go_forward()


@pytest.mark.slow
def test_back_and_forward_on_the_similarity_page_restore_each_previous_view(browser_page):
    page, url = browser_page
    live_server.open_page(page, f"{url}/similarity", "Beyond the trained length")
    _shows(page, "/similarity", t=10, k=5)
    _type(page, "t", 20)
    _shows(page, "/similarity?t=20", t=20, k=5)
    _type(page, "k", 8)
    _shows(page, "/similarity?k=8&t=20", t=20, k=8)
    _back(page)
    _shows(page, "/similarity?t=20", t=20, k=5)  # the view before the last change, not the page before
    _back(page)
    _shows(page, "/similarity", t=10, k=5)
    _forward(page)
    _shows(page, "/similarity?t=20", t=20, k=5)
    _type(page, "k", 12)  # a new change after Back: the visitor's newest view, Back returns to the one before
    _shows(page, "/similarity?k=12&t=20", t=20, k=12)
    _back(page)
    _shows(page, "/similarity?t=20", t=20, k=5)


@pytest.mark.slow
def test_a_changed_setting_stays_on_its_page_when_the_visitor_opens_another(browser_page):
    from playwright.sync_api import expect

    page, url = browser_page
    live_server.open_page(page, f"{url}/similarity", "Beyond the trained length")
    _type(page, "t", 20)
    _shows(page, "/similarity?t=20", t=20, k=5)
    with live_server.finished_run(page):
        page.locator('[data-testid="stSidebarNav"] a[href$="/encoding_matrix"]').click()
    page.get_by_text("What the naive schemes get wrong").first.wait_for()
    expect(page).to_have_url(re.compile("/encoding_matrix$"))
    expect(page.locator(".st-key-t [data-testid=stSliderThumbValue]")).to_have_text("10")  # its own t, default
    expect(page.locator('[data-testid="stAlert"]')).to_have_count(0)
    # Back returns to the page as the visitor left it, settings and all (not first to its defaults), and
    # Forward to the other page again
    _back(page)
    _shows(page, "/similarity?t=20", t=20, k=5)
    _forward(page)
    page.get_by_text("What the naive schemes get wrong").first.wait_for()
    expect(page).to_have_url(re.compile("/encoding_matrix$"))
    expect(page.locator(".st-key-t [data-testid=stSliderThumbValue]")).to_have_text("10")


@pytest.mark.slow
def test_a_page_link_at_the_end_of_a_page_keeps_the_page_it_left_in_the_history(browser_page):
    from playwright.sync_api import expect

    page, url = browser_page
    live_server.open_page(page, f"{url}/similarity", "Beyond the trained length")
    _type(page, "k", 8)
    _shows(page, "/similarity?k=8", t=10, k=8)
    with live_server.finished_run(page):
        page.locator('[data-testid="stPageLink"] a').last.click()  # "Next: ..." in story order
    expect(page).to_have_url(re.compile("/softmax_saturation$"))
    _back(page)
    _shows(page, "/similarity?k=8", t=10, k=8)
