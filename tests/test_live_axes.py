"""While a control moves, an axis whose range must change is drawn by ui/live/axes.js (fastAxes), not by Plotly:
its labels must be the ones Plotly draws for that range once the controls rest, or every drag ends with the axis
jumping. Plotly itself (the copy plotly.py ships) draws each range here in Chromium, and fastAxes' labels for the
same axis and range must read the same."""

from __future__ import annotations

import json
from pathlib import Path

import plotly
import pytest

from tests import live_server
from ui.live import _HERE as LIVE_DIR

pytestmark = pytest.mark.slow
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"

# (axis type, range in the axis's units: decades on a log axis, which axis, its length in pixels)
CASES = [
    ("linear", [-0.5, 127.5], "x", 800),
    ("linear", [-0.5, 3071.5], "y", 400),
    ("linear", [0, 1], "y", 300),
    ("linear", [-1.05, 1.05], "y", 300),
    ("linear", [-3.8, 67.8], "x", 888),
    ("linear", [26.01, 66.4], "y", 330),
    ("linear", [-0.5, 40959.5], "x", 900),
    ("linear", [-1234.5, 98765.4], "y", 420),
    ("linear", [0.001, 0.0042], "x", 600),
    ("log", [0, 5.4], "y", 360),
    ("log", [0.5, 9.7], "y", 360),
    ("log", [-0.2, 1.3], "y", 200),
    ("log", [-2.5, 0.8], "x", 700),
]


@pytest.fixture(scope="module")
def page():
    pages = live_server.blank_page()
    page = next(pages)
    page.set_content("<html><body><div id='plot' style='width:1000px;height:600px'></div></body></html>")
    page.add_script_tag(path=str(PLOTLY_JS))
    page.add_script_tag(content=(LIVE_DIR / "axes.js").read_text(encoding="utf-8") + "\nwindow.fastAxes = fastAxes;")
    yield page
    pages.close()


@pytest.mark.parametrize(("kind", "span", "letter", "length"), CASES)
def test_fast_axis_labels_are_the_ones_plotly_draws_for_the_range(page, kind, span, letter, length):
    across = letter == "x"
    layout = {
        "width": (length if across else 500) + 120,
        "height": (400 if across else length) + 100,
        "margin": {"l": 80, "r": 40, "t": 40, "b": 60, "autoexpand": False},
        "xaxis": {"type": kind if across else "linear", "range": span if across else [0, 1]},
        "yaxis": {"type": "linear" if across else kind, "range": [0, 1] if across else span},
    }
    shown = page.evaluate(
        """([layout, name, range]) => {
            const gd = document.getElementById('plot');
            Plotly.purge(gd);
            return Plotly.newPlot(gd, [{x: [0], y: [0], type: 'scatter'}], layout).then(() => {
              const axis = gd._fullLayout[name];
              const plotly = [...gd.querySelectorAll(`g.${axis._id}tick text`)].map((t) => t.textContent);
              const ours = fastAxes.ticksFor(axis, range).map((t) => t.text);
              return {plotly, ours};
            });
        }""",
        [layout, f"{letter}axis", span],
    )
    assert shown["plotly"], json.dumps(shown)
    assert shown["ours"] == shown["plotly"], json.dumps(shown)
