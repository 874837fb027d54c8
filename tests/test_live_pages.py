"""The explainer pages answer in the browser: in Chromium against the real server, a dragged slider, a stepped
number or a typed word redraws the page's figures with no message to the server, what the figures then hold
equals core/'s numbers for the value the control shows (1e-9), pointing at a position shows it in the other
figures, and releasing the control writes the link as before."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from core.explain import attention, encodings, order_demo, similarity
from tests import live_server

pytestmark = pytest.mark.slow
WAIT_MS = 60_000
TOLERANCE = 1e-9


@pytest.fixture(scope="module")
def served():
    yield from live_server.served_page({"width": 1400, "height": 900}, default_timeout_ms=WAIT_MS)


class Sent:
    """Counts the websocket frames the page sends to the server."""

    def __init__(self, page):
        self.frames = 0
        page.on("websocket", lambda socket: socket.on("framesent", self._count))

    def _count(self, _frame) -> None:
        self.frames += 1


@pytest.fixture(scope="module")
def browser_page(served):
    page, url = served
    return page, url, Sent(page)


def open_page(page, url: str, path: str) -> None:
    page.goto(f"{url}/{path}")
    page.wait_for_function("() => window.__peLabLive && window.__peLabLive.mount", timeout=WAIT_MS)
    live_server.wait_for_idle(page, WAIT_MS)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length > 0")


def drag(page, key: str, pixels: float, steps: int = 8) -> None:
    """Press a slider's thumb, move it `pixels` to the right in `steps` moves, and hold it still (not released)
    long enough for the page to come to rest."""
    root = page.locator(f".st-key-{key}")
    root.scroll_into_view_if_needed()
    thumb = root.locator('[data-testid="stSliderThumbValue"]').bounding_box()
    x, y = thumb["x"] + thumb["width"] / 2, thumb["y"] + thumb["height"] / 2 + 14
    handle = root.locator("input[type=range]").locator("..").locator("..").bounding_box()
    y = handle["y"] + handle["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, steps + 1):
        page.mouse.move(x + pixels * step / steps, y)
        page.wait_for_timeout(40)
    page.wait_for_timeout(600)  # the live engine makes its heatmaps exact once the controls rest


def drag_quietly(page, sent, key: str, pixels: float) -> dict:
    """`drag` the slider `key`, check the page sent the server nothing meanwhile, and return the values shown."""
    before = sent.frames
    drag(page, key, pixels)
    assert sent.frames == before, f"dragging {key} talked to the server"
    # the value the engine read from the pointer is the one the slider itself shows
    gripped, widget = page.evaluate(
        """key => [window.__peLabLive.grip && window.__peLabLive.grip.value,
                   Number(document.querySelector(`.st-key-${key} input[type=range]`).value)]""",
        key,
    )
    assert gripped == widget, f"{key}: the engine read {gripped} from the pointer, the slider shows {widget}"
    return shown_values(page)


def shown_values(page) -> dict:
    """The control values the page's figures were last drawn for, as the live engine read them from the widgets."""
    return page.evaluate("() => window.__peLabLive.mount.last")


def figure_data(page, name: str) -> list[dict]:
    """The traces of figure `name` as Plotly holds them, once it is on screen (a figure off screen waits until it
    scrolls in) and the page has come to rest."""
    figure = page.locator(f".st-key-fig_{name}")
    if not figure.evaluate("e => { const r = e.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; }"):
        figure.scroll_into_view_if_needed()
        page.wait_for_timeout(600)
    return page.evaluate(
        """name => {
            const plain = v => ArrayBuffer.isView(v) ? Array.from(v) : Array.isArray(v) ? v.map(plain) : v;
            const traces = document.querySelector(`.st-key-fig_${name} .js-plotly-plot`).data;
            return traces.map(t => ({x: plain(t.x), y: plain(t.y), z: plain(t.z), name: t.name}));
        }""",
        name,
    )


def close(browser, core) -> None:
    np.testing.assert_allclose(np.asarray(browser, dtype=float), np.asarray(core, dtype=float), rtol=0, atol=TOLERANCE)


def release_and_wait(page) -> None:
    page.mouse.up()
    page.wait_for_timeout(300)
    live_server.wait_for_idle(page, WAIT_MS)


def test_dragging_positions_redraws_the_matrix_in_the_browser_and_equals_core(browser_page):
    page, url, sent = browser_page
    open_page(page, url, "encoding_matrix")
    shown = drag_quietly(page, sent, "n", 120)
    assert shown["n"] > 128
    rows, cols = encodings.overview_strides(shown["n"], shown["d"], 100_000)
    (heatmap,) = figure_data(page, "encoding_overview")
    close(heatmap["z"], encodings.sinusoidal(shown["n"], shown["d"])[::rows, ::cols])
    release_and_wait(page)
    assert f"n={shown['n']}" in page.url  # on release the link follows, as before


def test_pointing_at_a_row_shows_that_position_in_the_vector_and_the_waves(browser_page):
    page, url, _ = browser_page
    page.set_viewport_size({"width": 1400, "height": 2000})  # the matrix and the vector on screen together
    open_page(page, url, "encoding_matrix?n=128&d=64")
    figure = page.locator(".st-key-fig_encoding_overview .nsewdrag").first
    box = figure.bounding_box()
    # A visitor's pointer keeps moving; one synthetic move can land before the page has attached its hover
    # handlers to the figure (it does so once the figure is drawn), so the pointer moves within the row until
    # the page answers.
    pointed = """() => { const title = document.querySelector('.st-key-figtitle_position_vector strong');
                         return Boolean(title && title.textContent.includes('pointed at')); }"""
    for attempt in range(40):
        page.mouse.move(box["x"] + box["width"] / 2 + attempt % 3, box["y"] + box["height"] * (40.5 / 128))
        if page.evaluate(pointed):
            break
        page.wait_for_timeout(250)
    page.wait_for_function(pointed)
    page.wait_for_timeout(800)  # drawn straight into the SVG at once, made Plotly's own once the pointer rests
    title = page.locator(".st-key-figtitle_position_vector strong").inner_text()
    position = int(title.split("PE(")[1].split(")")[0])
    assert abs(position - 40) <= 1
    (bars,) = figure_data(page, "position_vector")
    close(bars["y"], encodings.sinusoidal(position + 1, 64)[position])
    shapes = page.evaluate(
        "() => document.querySelector('.st-key-fig_encoding_overview .js-plotly-plot').layout.shapes"
    )
    assert shapes and shapes[0]["y0"] == position - 0.5
    page.mouse.move(5, 5)  # leaving the figure puts the chosen position back
    page.wait_for_function(
        "() => !document.querySelector('.st-key-figtitle_position_vector strong').textContent.includes('pointed')"
    )
    page.set_viewport_size({"width": 1400, "height": 900})


def test_dragging_d_model_redraws_the_wavelengths(browser_page):
    page, url, sent = browser_page
    open_page(page, url, "wavelengths")
    shown = drag_quietly(page, sent, "d", -150)
    assert shown["d"] < 512
    lengths, ends, ceiling = figure_data(page, "wavelengths")
    close(lengths["y"], encodings.wavelengths(shown["d"], shown["base"]))
    metric = page.locator(".st-key-live_wavelengths [data-testid=stMetricValue]").nth(1).inner_text()
    assert metric == f"{encodings.wavelengths(shown['d'], shown['base'])[-1]:,.1f}"
    release_and_wait(page)


def test_dragging_d_and_the_offset_redraw_the_similarity_curves_and_the_rotation(browser_page):
    page, url, sent = browser_page
    open_page(page, url, "similarity")
    shown = drag_quietly(page, sent, "d", 90)
    starts, offsets = similarity.curve_starts(shown["n"]), np.arange(shown["kmax"] + 1)
    curves = figure_data(page, "dot_product_vs_offset")
    close([c["y"] for c in curves[:-1]], similarity.dot_product_vs_offset(starts, offsets, shown["d"], shown["base"]))
    close(curves[-1]["y"], similarity.closed_form_dot_product(offsets, shown["d"], shown["base"]))
    release_and_wait(page)
    shown = drag_quietly(page, sent, "k", 200)
    check = similarity.shift_check(shown["t"], shown["k"], shown["d"], shown["base"])
    start, target, shifted = figure_data(page, "shift_matrix_check")
    close(start["y"], check["pe_start"])
    close(target["y"], check["pe_target"])
    close(shifted["y"], check["shifted"])
    assert shifted["name"] == f"M_{shown['k']}·PE({shown['t']})"
    release_and_wait(page)


def test_dragging_the_temperature_redraws_the_row_of_scores(browser_page):
    page, url, sent = browser_page
    open_page(page, url, "softmax_saturation")
    shown = drag_quietly(page, sent, "temp", -120)
    assert shown["temp"] < 1
    row = attention.softmax_row([1.0, 2.0, 3.0, 4.0], shown["dk"], shown["temp"])
    (bars,) = figure_data(page, "softmax_weights")
    close(bars["y"], row.probabilities)
    (gradient,) = figure_data(page, "softmax_gradient")
    close(gradient["z"], row.gradient)
    release_and_wait(page)


def test_typed_words_and_a_stepped_shuffle_redraw_the_home_demo(browser_page):
    page, url, sent = browser_page
    open_page(page, url, "")
    field = page.locator(".st-key-demo_tokens input")
    field.evaluate("e => { e.focus(); e.setSelectionRange(e.value.length, e.value.length); }")  # caret at the end
    before = sent.frames
    field.type(" today", delay=30)  # typed, not yet sent: Streamlit sends a text field on Enter
    page.wait_for_timeout(300)
    assert sent.frames == before
    words = "dog bites man today".split()
    shown = shown_values(page)
    assert shown["demo_tokens"] == "dog bites man today"
    order = order_demo.visible_shuffle(order_demo.random_order(len(words), shown["demo_seed"]))
    demo = order_demo.shuffle_demo(words, order, shown["demo_pe"])
    typed, back = figure_data(page, "shuffle_demo")
    close(typed["z"], demo.outputs)
    close(back["z"], demo.shuffled_back)
    assert page.locator(".st-key-live_shuffled strong").inner_text() == " ".join(words[i] for i in order)
    with live_server.finished_run(page):
        field.press("Enter")
    with live_server.finished_run(page):
        page.locator('.st-key-demo_pe input[type="checkbox"]').locator("..").locator("..").click()
        page.wait_for_function("() => window.__peLabLive.mount.last.demo_pe === true")
    verdict = page.locator(".st-key-live_verdict strong").inner_text()
    assert verdict.startswith("Different"), verdict
    live_server.wait_for_idle(page, WAIT_MS)
    assert json.dumps(True) in json.dumps(shown_values(page)["demo_pe"])
    time.sleep(0.2)
