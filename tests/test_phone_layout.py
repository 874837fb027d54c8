"""Phones and no hovering: the explainer pages at 390 x 844 in Debian's Chromium (text boxes of a figure never
overlap or leave the figure, no figure under the sidebar), the one signed colour convention, and the contrast of
the figures' text against the app's background (WCAG 2 formula).

The Chromium test skips with a reason where Chromium or Playwright is missing, except under CI (env CI set).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from core.explain.figures import encoding, home
from core.explain.order_demo import for_figure, random_order, shuffle_demo
from core.plotting import HOUSE_TEMPLATE, PLOT_BACKGROUND, SIGNED_COLORSCALE
from tests import live_server

ROOT = Path(__file__).resolve().parents[1]
PHONE = {"width": 390, "height": 844}
WAIT_MS = live_server.WAIT_MS
# one figure a page: (URL path, the key of its chart, a text that shows once the page ran to its end)
PHONE_FIGURES = [
    ("", "shuffle_demo", "The rooms of the lab"),
    ("encoding_matrix", "encoding_overview", "What the naive schemes get wrong"),
    ("wavelengths", "binary_counter", "The binary-counter analogy"),
    ("similarity", "dot_product_vs_offset", "Beyond the trained length"),
    ("softmax_saturation", "attention_cost", "The price of attention"),
    ("fault_lab", "windows_per_class", "5 · Study"),
]
# Every text of a figure a reader must read: titles, axis titles, tick labels, legend entries, panel titles.
TEXT_BOXES = """chart => {
    const selector = ['text.gtitle', 'text[class$="title"]', 'g[class$="tick"] > text', 'g[class$="tick2"] > text',
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


@pytest.fixture(scope="module")
def phone_page():
    yield from live_server.served_page(PHONE, is_mobile=True, has_touch=True)


@pytest.mark.slow
def test_at_390_px_no_figure_text_overlaps_and_no_figure_lies_under_the_sidebar(phone_page):
    page, url = phone_page
    for path, key, last_text in PHONE_FIGURES:
        live_server.open_page(page, f"{url}/{path}", last_text)
        chart = page.locator(f".st-key-fig_{key} .js-plotly-plot").last
        chart.scroll_into_view_if_needed(timeout=WAIT_MS)
        chart.locator("g.xtick").first.wait_for(timeout=WAIT_MS)  # drawn, not just placed
        boxes = chart.evaluate(TEXT_BOXES)
        assert len(boxes) >= 6, (path, boxes)  # a title, axis titles and ticks at the least
        assert _overlaps(boxes) == [], (path, key)
        assert _outside(boxes, chart.bounding_box()) == [], (path, key)  # nothing cut at the edge
        sidebar = page.locator('[data-testid="stSidebar"]')
        box = sidebar.bounding_box() if sidebar.count() else None
        if box and sidebar.get_attribute("aria-expanded") == "true" and box["x"] + box["width"] > 0:
            for figure in page.locator(".js-plotly-plot").all():
                other = figure.bounding_box()
                assert other is None or other["x"] >= box["x"] + box["width"], (path, "a figure under the sidebar")
