"""Phones and no hovering: every page of the app at 390 x 844 in Debian's Chromium (nothing wider than the screen,
no text cut off by its box, no figure's text boxes overlapping or leaving the figure, no figure under the sidebar;
the Fault lab short, its commands wrapped and its short answer's links leading to their verdicts), the one signed
colour convention, and the contrast of the figures' text against the app's background (WCAG 2 formula).

The Chromium test skips with a reason where Chromium or Playwright is missing, except under CI (env CI set).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest

from core.explain.figures import encoding, home
from core.explain.order_demo import for_figure, random_order, shuffle_demo
from core.plotting import HOUSE_TEMPLATE, PLOT_BACKGROUND, SIGNED_COLORSCALE
from tests import live_server
from ui.page_registry import built_rooms

ROOT = Path(__file__).resolve().parents[1]
PHONE = {"width": 390, "height": 844}
WAIT_MS = 60_000
# Every text of a figure a reader must read: titles, axis titles, tick labels, legend entries, panel titles.
TEXT_BOXES = """chart => {
    const selector = ['text.gtitle', 'text[class$="title"]', 'g[class$="tick"] > text', 'g[class$="tick2"] > text',
                      'g.textpoint > text',
                      'text.legendtext', 'g.annotation text'].join(', ');
    return [...chart.querySelectorAll(selector)]
        .filter(text => text.textContent.trim())
        .map(text => { const r = text.getBoundingClientRect();
                       return {text: text.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom}; })
        .filter(box => box.right - box.left > 0 && box.bottom - box.top > 0);
}"""


def _theme() -> dict:
    return tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["theme"]


def _luminance(colour: str) -> float:
    channels = np.array([int(colour.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)])
    linear = np.where(channels <= 0.04045, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    return float(linear @ [0.2126, 0.7152, 0.0722])


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2's (L1 + 0.05) / (L2 + 0.05), L the relative luminance of the lighter and the darker colour."""
    light, dark = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_the_contrast_formula_gives_the_known_ratios():
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the classic just-fails grey
    assert contrast_ratio("#444444", "#e5ecf6") == pytest.approx(8.0, abs=0.2)


def test_figure_text_reaches_wcag_aa_against_the_app_background_and_the_plot_area():
    theme, layout = _theme(), HOUSE_TEMPLATE.layout
    assert layout.paper_bgcolor == theme["backgroundColor"]  # the figures sit on the app's own background
    texts = {
        "font": layout.font.color,
        "title": layout.title.font.color,
        "x ticks": layout.xaxis.tickfont.color,
        "y ticks": layout.yaxis.tickfont.color,
        "x title": layout.xaxis.title.font.color,
        "y title": layout.yaxis.title.font.color,
        "legend": layout.legend.font.color,
    }
    for name, colour in texts.items():
        for background in (theme["backgroundColor"], PLOT_BACKGROUND):
            assert contrast_ratio(colour, background) >= 4.5, (name, colour, background)
    assert contrast_ratio(layout.font.color, theme["backgroundColor"]) > 13  # the app's text colour itself


def test_home_and_encoding_matrix_heatmaps_share_one_signed_scale_with_plus_one_at_the_red_end():
    demo = shuffle_demo(["the", "dog", "bites", "man"], random_order(4, 0), with_position=True)
    figures = [
        home.shuffle_demo(for_figure(demo)),
        home.position_heatmap(np.eye(4) * 2 - 1),
        encoding.encoding_heatmap(np.eye(4) * 2 - 1, np.arange(4), np.arange(4), "PE"),
    ]
    for figure in figures:
        heatmap = figure.data[0]
        assert tuple(tuple(stop) for stop in heatmap.colorscale) == SIGNED_COLORSCALE
        assert not heatmap.reversescale and heatmap.zmin == -heatmap.zmax < 0  # centred: 0 is white, +zmax red
    assert SIGNED_COLORSCALE[-1][1] == "rgb(103,0,31)" and SIGNED_COLORSCALE[0][1] == "rgb(5,48,97)"  # red, blue


def _overlaps(boxes: list[dict], slack: float = 1.0) -> list[tuple[str, str]]:
    clashes = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            width = min(a["right"], b["right"]) - max(a["left"], b["left"])
            height = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
            if width > slack and height > slack:
                clashes.append((a["text"], b["text"]))
    return clashes


def _outside(boxes: list[dict], frame: dict, slack: float = 2.0) -> list[str]:
    return [
        box["text"]
        for box in boxes
        if box["left"] < frame["x"] - slack or box["right"] > frame["x"] + frame["width"] + slack
    ]


# Every page of the app, from the one list the navigation reads (ui.page_registry), so a page added later is covered
# too: (name, URL path). The home page is app.py's default page.
PAGES = [("home", ""), *((Path(room.path).stem, Path(room.path).stem) for room in built_rooms())]
# What a page still gets wrong at 390 px, measured by these tests: an entry is expected to fail, named why, and comes
# off when its page passes. check -> {page: what was measured}
KNOWN_PHONE_DEFECTS: dict[str, dict[str, str]] = {"cut": {}, "wide": {}, "figures": {}}
# The Fault lab at 390 px with nothing trained, in px: 9,755 before issue 33 folded its secondary parts away
# 6,500 before protocol 3's table of every model's accuracy joined the study; 6,800 before the map opened the page;
# 7,600 before the one pipeline's merge (issue 34) made it 7,919 px: measured, not yet explained; 8,025 px once the
# order-dose curve's four points joined the map and its clause the map's sentence; 8,044 px measured before the
# curve on a machine busy with two studies (what grows under load is not traced yet); 8,886 px once version 3's
# studies led the page (three version-3 lines in the short answer with their leads, five version-3 verdicts, the map's
# key and the curve's checks under it) and version 2's verdicts were folded away
FAULT_LAB_PHONE_HEIGHT = 9_000


def _pages(check: str) -> list:
    """PAGES as pytest parameters, a page with a known defect of `check` expected to fail (and named why)."""
    known = KNOWN_PHONE_DEFECTS[check]
    return [
        pytest.param(
            path, id=name, marks=[pytest.mark.xfail(reason=known[name], strict=False)] if name in known else []
        )
        for name, path in PAGES
    ]


# Elements of the page (stMain) reaching past the viewport's right edge, except inside an element that scrolls
# sideways on purpose (a table's grid, a code block) and itself fits; hidden ones (a closed expander, a tab not
# shown) are not drawn and do not count.
WIDE_ELEMENTS = """() => {
    const width = document.documentElement.clientWidth;
    const main = document.querySelector('[data-testid="stMain"]');
    const frame = new Set([main, document.querySelector('[data-testid="stAppViewContainer"]'),
                           document.querySelector('[data-testid="stApp"]'), document.body, document.documentElement]);
    const scroller = element => {
        for (let parent = element.parentElement; parent && !frame.has(parent); parent = parent.parentElement) {
            const style = getComputedStyle(parent);
            // a scroller on purpose, or a box that clips what overflows it (a formula's square-root sign is an
            // SVG path thousands of px wide, cut to its box): what lies past its edge is not drawn
            const scrolls = ['auto', 'scroll', 'hidden', 'clip'].includes(style.overflowX);
            const past = element.getBoundingClientRect().right > parent.getBoundingClientRect().right + 1;
            if (scrolls && (parent.scrollWidth > parent.clientWidth + 1 || past)) return parent;
        }
        return null;
    };
    const wide = [];
    for (const element of main.querySelectorAll('*')) {
        if (!element.checkVisibility({visibilityProperty: true})) continue;
        if (element.closest('details:not([open])') && !element.closest('summary')) continue;
        if (unseen(element, main)) continue;
        const box = element.getBoundingClientRect();
        if (box.width === 0 || box.height === 0 || box.right <= width + 1) continue;
        const inside = scroller(element);
        if (inside && inside.getBoundingClientRect().right <= width + 1) continue;
        wide.push(`${element.tagName.toLowerCase()} ${where(element, main)}: right edge ${Math.round(box.right)} px, `
                  + `${Math.round(box.width)} px wide, "${(element.textContent || '').trim().slice(0, 40)}"`);
    }
    return {scrollWidth: Math.max(document.documentElement.scrollWidth, main.scrollWidth), wide};
}"""
# Text cut off by its own box: an element that clips (overflow hidden or clip, or an ellipsis) holding more text than
# it shows; figures and table grids draw their own text and are checked apart.
CUT_TEXT = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const cut = [];
    for (const element of main.querySelectorAll('*')) {
        if (element.closest('svg, canvas, .js-plotly-plot, [data-testid="stDataFrame"]')) continue;
        if (!element.checkVisibility({visibilityProperty: true})) continue;
        if (element.closest('details:not([open])') && !element.closest('summary')) continue;
        if (unseen(element, main)) continue;
        const style = getComputedStyle(element);
        if (!['hidden', 'clip'].includes(style.overflowX) && style.textOverflow !== 'ellipsis') continue;
        if (element.scrollWidth <= element.clientWidth + 1 || !(element.textContent || '').trim()) continue;
        cut.push(`${element.tagName.toLowerCase()} ${where(element, main)}: ${element.scrollWidth} px of text in `
                 + `${element.clientWidth} px, "${element.textContent.trim().slice(0, 40)}"`);
    }
    return cut;
}"""
# where an element sits, by the test ids and widget keys around it, innermost first; and whether it is drawn for
# assistive technology only (clipped to nothing: a slider's hidden input, a formula's MathML twin)
WHERE = r"""function unseen(element, main) {
    for (let node = element; node && node !== main; node = node.parentElement) {
        const style = getComputedStyle(node);
        if (style.clipPath.startsWith('inset(50%') || /rect\((0|1)px/.test(style.clip)) return true;
        if (node.classList && node.classList.contains('katex-mathml')) return true;
    }
    return false;
}
function where(element, main) {
    const names = [];
    for (let node = element; node && node !== main; node = node.parentElement) {
        const id = node.getAttribute && node.getAttribute('data-testid');
        const key = [...(node.classList || [])].find(name => name.startsWith('st-key-'));
        if (key) names.push(key); else if (id) names.push(id);
    }
    return names.slice(0, 4).join(' < ');
}"""
MAIN_HEIGHT = "() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight"


def _with_where(script: str) -> str:
    return f"() => {{ {WHERE}; return ({script})(); }}"


@pytest.fixture(scope="module")
def phone_page():
    yield from live_server.served_page(PHONE, WAIT_MS, is_mobile=True, has_touch=True)


def _open(page, url: str, path: str) -> None:
    """The page at `path`, its script run to its end and every figure it shows drawn."""
    page.goto(f"{url}/{path}", wait_until="domcontentloaded", timeout=WAIT_MS)
    _settle(page)


def _settle(page) -> None:
    live_server.wait_for_idle(page, WAIT_MS)
    page.wait_for_timeout(1_000)  # a rerun a widget's first value starts
    live_server.wait_for_idle(page, WAIT_MS)
    for chart in _shown_charts(page):
        chart.scroll_into_view_if_needed(timeout=WAIT_MS)
        chart.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=WAIT_MS)  # drawn, not just placed


def _shown_charts(page) -> list:
    charts = page.locator('[data-testid="stMain"] [data-testid="stPlotlyChart"]').all()
    return [chart for chart in charts if chart.evaluate("element => element.checkVisibility()")]


def _wide(page) -> tuple[int, list[str]]:
    found = page.evaluate(_with_where(WIDE_ELEMENTS))
    return found["scrollWidth"], found["wide"]


@pytest.mark.slow
@pytest.mark.parametrize("path", _pages("wide"))
def test_at_390_px_no_element_is_wider_than_the_screen(phone_page, path):
    page, url = phone_page
    _open(page, url, path)
    scroll_width, wide = _wide(page)
    assert (scroll_width, wide) == (PHONE["width"], [])


@pytest.mark.slow
@pytest.mark.parametrize("path", _pages("cut"))
def test_at_390_px_no_text_is_cut_off_by_its_box(phone_page, path):
    page, url = phone_page
    _open(page, url, path)
    assert page.evaluate(_with_where(CUT_TEXT)) == []


@pytest.mark.slow
@pytest.mark.parametrize("path", _pages("figures"))
def test_at_390_px_no_figure_text_overlaps_or_leaves_its_figure_and_no_figure_lies_under_the_sidebar(phone_page, path):
    page, url = phone_page
    _open(page, url, path)
    clashes = []  # every figure's, so a failure names them all
    for chart in _shown_charts(page):
        chart.scroll_into_view_if_needed(timeout=WAIT_MS)
        plot = chart.locator(".js-plotly-plot").last
        boxes = _settled_boxes(page, plot)
        name = chart.evaluate("element => element.closest('[class*=\"st-key-\"]')?.className.match(/st-key-\\S+/)?.[0]")
        overlapping, outside = _overlaps(boxes), _outside(boxes, plot.bounding_box())  # outside: cut at the edge
        clashes += [(name, "overlap", pair) for pair in overlapping] + [(name, "outside", text) for text in outside]
    assert clashes == [], clashes
    sidebar = page.locator('[data-testid="stSidebar"]')
    box = sidebar.bounding_box() if sidebar.count() else None
    if box and sidebar.get_attribute("aria-expanded") == "true" and box["x"] + box["width"] > 0:
        for figure in page.locator(".js-plotly-plot").all():
            other = figure.bounding_box()
            assert other is None or other["x"] >= box["x"] + box["width"], (path, "a figure under the sidebar")


def _settled_boxes(page, plot, tries: int = 10) -> list[dict]:
    """The figure's text boxes once two readings 250 ms apart agree: a figure scrolled into view may still be
    redrawing at its final width, and its half-moved text must not count as a clash."""
    boxes = plot.evaluate(TEXT_BOXES)
    for _ in range(tries):
        page.wait_for_timeout(250)
        again = plot.evaluate(TEXT_BOXES)
        if again == boxes:
            break
        boxes = again
    return boxes


# --- the Fault lab's own checks ------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_fault_lab_at_390_px_is_short_and_its_results_and_commands_fit_the_screen(phone_page):
    page, url = phone_page
    _open(page, url, "fault_lab")
    height = page.evaluate(MAIN_HEIGHT)
    assert height <= FAULT_LAB_PHONE_HEIGHT, f"the Fault lab is {height} px tall at 390 px"
    saved = json.loads((ROOT / "tests" / "data" / "pipeline_every_evaluation.json").read_text())["results"]
    live_server.open_expander(page, "Open a saved results or study file")
    with live_server.finished_run(page):
        page.locator(".st-key-open_json input[type=file]").set_input_files(
            files=[{"name": "saved.json", "mimeType": "application/json", "buffer": json.dumps(saved).encode()}]
        )
    page.locator('.st-key-open_json [data-testid="stFileChipName"]').wait_for(timeout=WAIT_MS)
    with live_server.finished_run(page):
        page.locator(".st-key-open_file button").click()
    page.get_by_text("Reproduce these numbers headless").wait_for(timeout=WAIT_MS)
    live_server.open_expander(page, "Run a study on the current data")  # its command, shown too
    _settle(page)
    assert _wide(page) == (PHONE["width"], [])
    assert page.evaluate(_with_where(CUT_TEXT)) == []
    codes = page.locator('[data-testid="stMain"] [data-testid="stCode"] pre').all()
    assert len(codes) >= 2  # the reproduce command and the study's
    for code in codes:  # each command wraps inside its box: no scrolling sideways through a 3,000 px line
        assert code.evaluate("element => element.scrollWidth <= element.clientWidth + 1"), code.inner_text()[:60]


@pytest.mark.slow
def test_every_link_of_the_short_answer_leads_to_the_heading_of_its_verdict(phone_page):
    page, url = phone_page
    _open(page, url, "fault_lab")
    links = page.locator('[data-testid="stMain"] a[href^="#"]', has_text="details")
    anchors = [link.get_attribute("href")[1:] for link in links.all()]
    assert len(anchors) == 3
    for anchor in anchors:
        heading = page.locator(f"h5[id='{anchor}']")
        assert heading.count() == 1, anchor
        assert "B − B-noPE" not in heading.inner_text()  # a short heading; its verdict sentence follows
    live_server.follow_anchor(page.locator('[data-testid="stMain"] a[href^="#"]', has_text="details").first)
    page.wait_for_function(
        "id => { const r = document.getElementById(id).getBoundingClientRect(); return r.top >= 0 && r.top < 844; }",
        arg=anchors[0],
        timeout=WAIT_MS,
    )
