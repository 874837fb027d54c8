"""Real-browser tests of every page: Debian's Chromium, driven by Playwright, against `streamlit run app.py`.

Skips with a reason where Chromium or Playwright is missing, except under CI (env CI set), where a missing
browser is a failure: CI installs it. One server serves the whole module. A full-length screenshot of every
page lands in test-artifacts/ for a human to look at.

What AppTest cannot see and these tests do: the navigation a shared link lands in, the URL a moved slider
writes, plotly actually drawing, a real file upload, and the Fault lab's background job reaching the page.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import live_server
from ui.page_registry import built_rooms

pytestmark = pytest.mark.slow  # each test drives Chromium against a real server

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips, or fails under CI, and says why
    expect = None

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM, CHROMIUM_FLAGS = live_server.CHROMIUM, live_server.CHROMIUM_FLAGS
ARTIFACTS = ROOT / "test-artifacts"
VIEWPORT = {"width": 1400, "height": 1000}
WAIT_MS = live_server.WAIT_MS
TALLEST_SCREENSHOT = 16_000  # px; the longest page (Softmax saturation) is about half of this


def _unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so the browser tests must run: .ci/run installs chromium)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def server():
    try:
        process, url = live_server.start_streamlit()
    except live_server.ServerDidNotStart as error:
        pytest.fail(str(error))
    yield url
    live_server.stop(process)


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} not found (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -r requirements-dev.txt)")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


def _screenshot(page, name: str):
    """The whole page, not just the viewport: Streamlit scrolls inside its own container, so a
    full_page screenshot alone stops at the window's edge. Grow the window to the content, shoot, shrink."""
    height = page.evaluate(
        "() => Math.max(...['stMain', 'stAppViewContainer'].map("
        'id => document.querySelector(`[data-testid="${id}"]`)?.scrollHeight ?? 0))'
    )
    page.set_viewport_size(
        {"width": VIEWPORT["width"], "height": min(max(height, VIEWPORT["height"]), TALLEST_SCREENSHOT)}
    )
    page.wait_for_timeout(300)  # plotly redraws at the new size
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)
    page.set_viewport_size(VIEWPORT)


@contextmanager
def _opened(browser, url: str, expect_text: str, name: str, plots: int = 0):
    """A fresh session on `url`, once `expect_text` shows, the script has finished and `plots` charts are
    drawn. On a failure the page as it stood is saved as failed-<name>.png before the page closes."""
    page = live_server.new_page(browser, VIEWPORT)
    try:
        live_server.open_page(page, url, expect_text)
        if plots:  # plotly is loaded lazily: wait until the charts are drawn, not just their placeholders
            page.locator(".js-plotly-plot").nth(plots - 1).wait_for(timeout=WAIT_MS)
        yield page
    except Exception:
        try:
            _screenshot(page, f"failed-{name}.png")
        except Exception:  # the page may be gone; the original failure is what matters
            pass
        raise
    finally:
        page.close()


def _assert_no_error_box(page):
    assert page.locator('[data-testid="stException"]').count() == 0
    errors = page.locator('[data-testid="stAlertContentError"]')
    assert errors.count() == 0, errors.all_inner_texts()


def _navigation_titles(page) -> list[str]:
    # A link's text is its material icon's name, then its title.
    return [text.split("\n")[-1] for text in page.locator('[data-testid="stSidebarNavLink"]').all_inner_texts()]


# Plotly keeps a chart's traces on its div as `.data`; a hash of them tells one drawing from another.
# While Streamlit reruns, the old and the new chart can both be in the DOM: read the last one.
FIGURE_SIGNATURE = """selector => {
    const charts = document.querySelectorAll(selector);
    const chart = charts[charts.length - 1];
    if (!chart || !chart.data) return null;
    const text = JSON.stringify(chart.data);
    let hash = 0;
    for (let i = 0; i < text.length; i++) hash = (hash * 31 + text.charCodeAt(i)) | 0;
    return `${text.length}:${hash}`;
}"""


def _figure_selector(figure_key: str) -> str:
    return f".st-key-fig_{figure_key} .js-plotly-plot"  # show_figure keys each chart fig_<name>


def _slider_values(page, key: str):
    return page.locator(f'.st-key-{key} [data-testid="stSliderThumbValue"]')


@dataclass(frozen=True)
class Room:
    path: str  # URL path, no leading slash
    title: str
    key_text: str  # a heading near the end: the page ran through
    plots: int
    deep_link: str  # non-default values as a query
    restored: dict[str, str]  # slider key -> value it shows after opening the deep link
    inputs: dict[str, str]  # other widget key -> value its input shows
    slider: str  # the key (URL parameter) of a slider to move, one step right
    moved_value: str
    figure: str  # a figure that slider redraws


ROOMS = [
    Room(
        "walkthrough",
        "One sentence through attention",
        "The formula",
        2,  # the step's matrix and, shuffled with a position signal, the difference of the weights
        "words=a+b+c&step=weights&shuffle=true&scheme=RoPE",
        {"step": "weights"},
        {"words": "a b c"},
        "step",
        "values",
        "walkthrough_step",
    ),
    Room(
        "encoding_matrix",
        "Encoding matrix",
        "What the naive schemes get wrong",
        4,
        "n=512&d=64&base=1000&zr=100",
        {"n": "512", "d": "64", "base": "1000"},
        {"zr": "100"},
        "n",
        "768",
        "encoding_overview",
    ),
    Room(
        "wavelengths",
        "Wavelengths",
        "The binary-counter analogy",
        2,
        "d=64&base=100&bits=6",
        {"d": "64", "base": "100", "bits": "6"},
        {},
        "d",
        "96",
        "wavelengths",
    ),
    Room(
        "similarity",
        "Similarity vs offset",
        "The same picture for other position schemes",
        7,  # five, and the two beyond the trained length
        "d=64&n=256&kmax=32&scheme=RoPE&s=9",
        {"d": "64", "n": "256", "kmax": "32", "s": "9"},
        {"scheme": "RoPE"},
        "kmax",
        "48",
        "dot_product_vs_offset",
    ),
    Room(
        "softmax_saturation",
        "Softmax saturation",
        "The price of attention",
        7,
        "a=2&dk=64&temp=0.5&scores=3%2C1%2C4",
        {"a": "2", "dk": "64", "temp": "0.5"},
        {"scores": "3,1,4"},
        "temp",
        "0.7",
        "softmax_weights",
    ),
]


# First in the module on purpose: it needs a server that no session has visited yet, as a hosted app is
# after it wakes up and the first visitor arrives through a shared link. Streamlit then still treats the
# pages/ folder as the app (no app.py, no page config, a bare sidebar) unless ui.navigation switches that off.
def test_shared_link_as_first_visit_goes_through_the_app_navigation(server, browser):
    with _opened(browser, f"{server}/wavelengths?d=64", "The binary-counter analogy", "first_visit", plots=2) as page:
        expect(_slider_values(page, "d")).to_have_text(["64"], timeout=WAIT_MS)
        assert page.title() == "PE Lab"  # set by app.py's set_page_config
        assert _navigation_titles(page)[:2] == ["Home", built_rooms()[0].title]


def test_home_page_renders_and_links_every_room(server, browser):
    with _opened(browser, server, "Why attention needs positions at all", "home", plots=6) as page:
        _assert_no_error_box(page)
        demo = page.locator(_figure_selector("shuffle_demo"))
        expect(demo).to_have_count(1)
        expect(demo.locator(".heatmaplayer, .hm, image").first).to_be_attached(
            timeout=WAIT_MS
        )  # drawn, not just placed
        assert page.title() == "PE Lab"
        assert page.get_by_text("0-based").count() >= 1
        rooms = built_rooms()
        assert _navigation_titles(page) == ["Home", *[room.title for room in rooms]]
        links = page.locator('[data-testid="stPageLink"]').all_inner_texts()
        start, rooms_linked = links[0], links[1:]  # "Start here" leads to the first room, then one link per room
        assert rooms[0].title in start, links
        assert len(rooms_linked) == len(rooms) and all(r.title in link for r, link in zip(rooms, rooms_linked)), links
        _screenshot(page, "home.png")


@pytest.mark.parametrize("room", ROOMS, ids=[room.path for room in ROOMS])
def test_shared_link_restores_the_controls_and_a_moved_slider_redraws_its_figure(server, browser, room):
    with _opened(browser, f"{server}/{room.path}?{room.deep_link}", room.key_text, room.path, room.plots) as page:
        _assert_no_error_box(page)
        expect(page.locator("h1").first).to_have_text(room.title)
        expect(page.locator(".js-plotly-plot")).to_have_count(room.plots)
        for key, value in room.restored.items():
            expect(_slider_values(page, key)).to_have_text([value], timeout=WAIT_MS)
        for key, value in room.inputs.items():
            expect(page.locator(f".st-key-{key} input")).to_have_value(value, timeout=WAIT_MS)
        _screenshot(page, f"{room.path}.png")

        figure = _figure_selector(room.figure)
        before = page.evaluate(FIGURE_SIGNATURE, figure)
        assert before is not None, f"figure fig_{room.figure} is not drawn"
        with live_server.finished_run(page):
            page.locator(f".st-key-{room.slider} input[type=range]").press("ArrowRight")
        page.wait_for_url(re.compile(rf"[?&]{room.slider}={re.escape(room.moved_value)}(&|$)"), timeout=WAIT_MS)
        page.wait_for_function(
            f"([selector, before]) => {{ const now = ({FIGURE_SIGNATURE})(selector); return now && now !== before; }}",
            arg=[figure, before],
            timeout=WAIT_MS,
        )
        live_server.wait_for_idle(page)
        _assert_no_error_box(page)


# --- Fault lab --------------------------------------------------------------------------------------

# the short answer's question, two models x two seeds x one epoch: seconds
TINY_RUN = "dataset=csv&models=B-noPE&models=B&epochs=1&n_seeds=2&window=512&layers=1"


def _upload_and_load(page, name: str, content: bytes, more: dict[str, bytes] | None = None):
    uploader = page.locator('.st-key-csv_files [data-testid="stFileUploader"]')
    files = {name: content, **(more or {})}
    with live_server.finished_run(page):  # the uploader reruns the app once its files are on the server
        uploader.locator("input[type=file]").set_input_files(
            files=[{"name": file, "mimeType": "text/csv", "buffer": data} for file, data in files.items()]
        )
    for file in files:
        uploader.locator('[data-testid="stFileChipName"]', has_text=file).wait_for(timeout=WAIT_MS)
    # Load only once the bytes are on the server, or the page would rightly say no file was chosen.
    expect(uploader.locator('[data-testid="stFileChipIconSpinner"]')).to_have_count(0, timeout=WAIT_MS)
    live_server.wait_for_idle(page)
    with live_server.finished_run(page):
        page.get_by_role("button", name="Load", exact=True).click()


def _current_data(page):
    return page.locator('[data-testid="stMarkdownContainer"]', has_text="Current data:")


def test_fault_lab_csv_upload_trains_to_a_results_table_and_verdict(server, browser):
    from core.lab.vibration import example_csv

    with _opened(browser, f"{server}/fault_lab?{TINY_RUN}", "3 · Experiment", "fault_lab", plots=1) as page:
        _assert_no_error_box(page)
        # dataset=csv restored
        expect(page.locator('.st-key-csv_files [data-testid="stFileUploader"]')).to_have_count(1)
        expect(_slider_values(page, "epochs")).to_have_text(["1"])
        expect(_slider_values(page, "n_seeds")).to_have_text(["2"])
        expect(page.locator(".st-key-window input")).to_have_value("512", timeout=WAIT_MS)

        _upload_and_load(page, "example.csv", example_csv())
        page.get_by_text("Loaded 3 recordings from example.csv").wait_for(timeout=WAIT_MS)
        live_server.wait_for_idle(page)
        expect(_current_data(page)).to_contain_text("classes normal, IR007, OR007")

        # the example's 15 test windows are too few for a clear answer: the press asks first
        with live_server.finished_run(page):
            page.get_by_text("Run anyway: I accept an answer this wide").click()
        with live_server.finished_run(page):
            page.get_by_role("button", name="Train and compare").click()
        page.locator(".st-key-table_results_table").wait_for(timeout=WAIT_MS)  # "4 · Results" is there before
        live_server.wait_for_idle(page)
        _assert_no_error_box(page)
        # The grid draws on a canvas; the accessible table underneath holds the same cells.
        table = page.locator('.st-key-table_results_table [data-testid="stDataFrame"]')
        expect(table.locator('td[aria-colindex="1"]')).to_have_text(["B-noPE", "B"], timeout=WAIT_MS)  # a row per model
        expect(table.locator('td[aria-colindex="2"]')).to_have_text(["2", "2"])  # seeds
        header = table.locator("th").all_text_contents()
        accuracy = table.locator(f'td[aria-colindex="{header.index("accuracy %") + 1}"]').all_text_contents()
        # "mean ± sd" in % over the two seeds
        assert len(accuracy) == 2 and all(re.fullmatch(r"\d+\.\d ± \d+\.\d", cell) for cell in accuracy), accuracy
        assert all(0.0 <= float(cell.split(" ± ")[0]) <= 100.0 for cell in accuracy), accuracy
        verdict = page.locator('[data-testid="stAlertContentInfo"]').all_inner_texts()
        primary = [text for text in verdict if re.search(r"\bB\b.*\bB-noPE\b", text)]
        assert primary and "2 seeds on one split" in primary[0], verdict
        _screenshot(page, "fault_lab.png")


def test_fault_lab_bad_upload_shows_its_error_and_keeps_the_data(server, browser):
    with _opened(browser, f"{server}/fault_lab?dataset=csv", "3 · Experiment", "fault_lab_bad_upload", plots=1) as page:
        _upload_and_load(page, "notes.csv", b"these are,not numbers\nat,all\n")
        error = page.locator('[data-testid="stAlertContentError"]')
        error.wait_for(timeout=WAIT_MS)
        live_server.wait_for_idle(page)
        assert error.inner_text().startswith("notes.csv:"), error.inner_text()
        expect(_current_data(page)).to_contain_text("synthetic set")  # the default data stays
        _screenshot(page, "fault_lab_bad_upload.png")


def test_fault_lab_reads_files_of_sensor_columns_as_one_recording_each(server, browser):
    from tests.test_inspect import four_sensor_file

    files = {"healthy_load0.csv": four_sensor_file(0), "faulty_load0.csv": four_sensor_file(1, fault=True)}
    with _opened(
        browser, f"{server}/fault_lab?dataset=csv&window=256", "3 · Experiment", "fault_lab_channels", plots=1
    ) as page:
        name, content = next(iter(files.items()))
        _upload_and_load(page, name, content, dict(list(files.items())[1:]))
        expect(_current_data(page)).to_contain_text("classes healthy_load0, faulty_load0", timeout=WAIT_MS)
        live_server.wait_for_idle(page)
        _assert_no_error_box(page)
        _screenshot(page, "fault_lab_channels.png")
