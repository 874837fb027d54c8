"""The first figure first (ui/first_paint.py): on a browser's first page of a session, the explainer pages draw
their first figure at once and the others one run later, asked for by the live view once it has painted; AppTest
and later pages of the same session draw every figure at once. The decision in isolation, then in Chromium."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests import apptest_utils, live_server
from ui import first_paint


@pytest.fixture
def run(monkeypatch):
    """ui.first_paint against a stand-in for Streamlit: `headers` (a browser's, or none as in AppTest) and a
    session state."""

    def start(headers: dict, session: dict | None = None) -> dict:
        session = {} if session is None else session
        monkeypatch.setattr(
            first_paint, "st", SimpleNamespace(context=SimpleNamespace(headers=headers), session_state=session)
        )
        first_paint.new_run()
        first_paint.draw_first_figure_first()
        return session

    return start


BROWSER = {"Host": "localhost:8501", "User-Agent": "Chromium"}


def test_a_browser_that_has_not_painted_gets_the_first_figure_and_a_list_of_the_rest(run):
    run(BROWSER)
    assert [first_paint.draw_now(name) for name in ("curves", "heatmap", "rotation")] == [True, False, False]
    assert first_paint.deferred() == ["heatmap", "rotation"]


def test_once_painted_every_figure_is_drawn(run):
    session = run(BROWSER)
    first_paint.mark_painted()
    assert session == {first_paint.PAINTED: True, first_paint.COMPLETING: True}
    run(BROWSER, session)
    assert all(first_paint.draw_now(name) for name in ("curves", "heatmap", "rotation"))
    assert first_paint.deferred() == []
    # the run that completes the first paint says so once (ui.link_values asks), later runs do not
    assert first_paint.take_completion() and not first_paint.take_completion()


def test_without_a_browser_nothing_waits(run):
    run({})  # AppTest: no request headers, and no live view would ask for the rest
    assert all(first_paint.draw_now(name) for name in ("curves", "heatmap"))
    assert first_paint.deferred() == []


def test_a_page_that_does_not_ask_draws_everything_even_after_one_that_did(run):
    run(BROWSER)
    first_paint.draw_now("curves")
    first_paint.new_run()  # app.py, before the next page (the Fault lab asks for nothing)
    assert all(first_paint.draw_now(name) for name in ("training", "confusion"))
    assert first_paint.deferred() == []


def test_apptest_draws_every_figure_of_an_explainer_page():
    at = apptest_utils.run_page("pages/similarity.py")
    assert len(at.get("plotly_chart")) == 7
    assert not at.get("skeleton")


# In the page, checked at every frame: how many places were held when the first figure painted, the most held at
# any time since the document loaded, and the length of the history when it painted.
WATCH = """(() => {
    window.__peHeld = {atFirstPaint: null, most: 0, history: null};
    const look = () => {
        const held = document.querySelectorAll('[class*="st-key-deferred_"]').length;
        window.__peHeld.most = Math.max(window.__peHeld.most, held);
        if (window.__peHeld.atFirstPaint === null && document.querySelector('.js-plotly-plot .main-svg')) {
            window.__peHeld.atFirstPaint = held;
            window.__peHeld.history = history.length;
        }
        requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
})();"""


@pytest.mark.slow
def test_in_chromium_the_rest_follow_the_first_figure_and_later_pages_wait_for_nothing():
    live_server._require_chromium()
    process, url = live_server.start_streamlit()
    try:
        with live_server.chromium_page({"width": 1400, "height": 900}) as page:
            page.add_init_script(WATCH)
            page.goto(f"{url}/similarity")
            page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length === 7")
            live_server.wait_for_idle(page)
            held = page.evaluate("window.__peHeld")
            assert held["atFirstPaint"] == 6  # the first of seven figures painted, six places held
            assert page.locator(".js-plotly-plot").count() == 7
            assert page.locator('[class*="st-key-deferred_"]').count() == 0
            # the run the live view asked for left the link and the history as they were
            assert page.url.endswith("/similarity")
            assert page.evaluate("history.length") == held["history"]
            # the next page of this session: Plotly is loaded, nothing is held back
            page.evaluate("window.__peHeld.most = 0")
            runs = live_server.runs_finished(page)
            with live_server.finished_run(page):
                page.locator('[data-testid="stSidebarNav"] a[href$="/softmax_saturation"]').click()
            page.wait_for_timeout(1000)  # a run asked for by the live view would have started by now
            live_server.wait_for_idle(page)
            assert live_server.runs_finished(page) == (runs[0], runs[1] + 1)  # one run, no second asked for
            assert page.locator(".js-plotly-plot").count() == 7
            assert page.evaluate("window.__peHeld.most") == 0
    finally:
        live_server.stop(process)
