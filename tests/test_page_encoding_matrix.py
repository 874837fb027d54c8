"""AppTest of pages/encoding_matrix.py: defaults, every control, deep links, and the numbers it shows."""

import math

import numpy as np
import pytest

from core.explain import encodings
from core.explain.encodings import sinusoidal
from tests.apptest_utils import figure_traces, metrics, run_page, trace_array

PAGE = "pages/encoding_matrix.py"


def heatmap_z(at, name="encoding_overview"):
    return trace_array(figure_traces(at, name)[0], "z")


def test_defaults_show_the_matrix_waves_vector_and_scoreboard():
    at = run_page(PAGE)
    z = heatmap_z(at)
    assert z.shape == (128, 128)
    assert np.allclose(z, sinusoidal(128, 128), atol=1e-6)  # float32 payload
    shown = metrics(at)
    assert shown["‖PE(pos)‖ = √(d/2) at every position"] == "8.00"
    assert shown["‖the raw position number on every entry‖"] == f"{10 * math.sqrt(128):,.0f}"
    board = at.dataframe[0].value.set_index("scheme")
    assert board.loc["sinusoidal", "unique"] == "yes"  # words, not emoji: no empty boxes without an emoji font
    assert board.loc["pos/(T-1)", "same offset, same distance"] == "no"
    assert board.loc["integer", "bounded"] == "no"
    assert len(at.get("plotly_chart")) == 4
    # one download per section: the overview and the zoom share one (a zip), the waves and the vector one each
    assert [b.proto.id.split("-")[-1] for b in at.get("download_button")] == [
        "csv_encoding_matrix",
        "csv_position_vector",
        "csv_dimension_waves",
    ]
    assert at.get("page_link")[-1].proto.label.startswith("Next: **Wavelengths**")
    assert any("Going further" in header.value for header in at.header)


def test_the_formula_is_typeset_after_the_plain_idea():
    at = run_page(PAGE)
    assert r"\sin" in at.latex[0].value and "base^{2i/d}" in at.latex[0].value
    assert at.markdown[0].value.startswith("Attention reads a sentence as a bag of words")


def test_the_waves_draw_the_true_curve_and_its_samples_at_whole_positions():
    at = run_page(PAGE)
    curve, dots = figure_traces(at, "dimension_waves")[:2]
    x = trace_array(curve, "x")
    assert x.size == 127 * encodings.SAMPLES_PER_POSITION + 1 and x[-1] == 127
    np.testing.assert_allclose(trace_array(curve, "y"), np.sin(x), atol=1e-12)  # dim 0: sin(pos)
    np.testing.assert_array_equal(trace_array(dots, "x"), np.arange(128))
    np.testing.assert_allclose(trace_array(dots, "y"), sinusoidal(128, 128)[:, 0], atol=1e-6)
    assert curve["line"]["color"] == dots["marker"]["color"]


def test_every_control_changes_the_figures():
    at = run_page(PAGE)
    at.select_slider(key="n").set_value(384).run()
    assert heatmap_z(at).shape == (384, 128)
    at.number_input(key="zc").set_value(10).run()
    assert trace_array(figure_traces(at, "encoding_zoom")[0], "x")[0] == 10
    at.select_slider(key="d").set_value(32).run()  # narrower than the zoom window: the window starts at 0
    assert trace_array(figure_traces(at, "encoding_zoom")[0], "x")[0] == 0
    z = heatmap_z(at)
    assert z.shape == (384, 32) and np.allclose(z, sinusoidal(384, 32), atol=1e-6)
    at.select_slider(key="base").set_value(100).run()
    assert np.allclose(heatmap_z(at), sinusoidal(384, 32, base=100.0), atol=1e-6)
    at.radio(key="layout").set_value("concatenated").run()
    assert np.allclose(heatmap_z(at), sinusoidal(384, 32, 100.0, "concatenated"), atol=1e-6)
    at.number_input(key="zr").set_value(200).run()
    assert trace_array(figure_traces(at, "encoding_zoom")[0], "y")[0] == 200
    at.multiselect(key="dims").set_value([3, 40]).run()
    waves = figure_traces(at, "dimension_waves")
    assert [t["name"].split(" (")[0] for t in waves if t.get("showlegend", True)] == ["dim 3"]  # 40 >= d = 32
    assert any("Ignored dimensions" in w.value for w in at.warning)
    at.select_slider(key="t").set_value(250).run()
    vector = trace_array(figure_traces(at, "position_vector")[0], "y")
    assert np.allclose(vector, sinusoidal(384, 32, 100.0, "concatenated")[250])
    assert not at.exception


def test_the_position_slider_spans_the_positions_shown():
    at = run_page(PAGE, {"n": "16", "t": "12"})
    assert list(at.select_slider(key="t").options) == [str(p) for p in range(16)]
    assert at.select_slider(key="t").value == 12


def test_largest_settings_are_strided_and_say_so():
    at = run_page(PAGE, {"n": "4096", "d": "1024"})
    z = heatmap_z(at)
    assert z.size <= 100_000
    assert any("Drawn at every" in caption.value for caption in at.caption)
    assert heatmap_z(at, "encoding_zoom").shape == (64, 64)


@pytest.mark.parametrize("query", [{"n": "512", "d": "64", "base": "1000", "layout": "concatenated", "t": "7"}])
def test_deep_link_restores_the_controls(query):
    at = run_page(PAGE, query)
    assert at.select_slider(key="n").value == 512
    assert at.select_slider(key="d").value == 64
    assert at.select_slider(key="base").value == 1000
    assert at.radio(key="layout").value == "concatenated"
    assert at.select_slider(key="t").value == 7
    assert np.allclose(heatmap_z(at), sinusoidal(512, 64, 1000.0, "concatenated"), atol=1e-6)


def test_a_link_value_off_the_ladder_is_named_and_reset():
    at = run_page(PAGE, {"n": "500", "d": "63"})
    assert at.select_slider(key="n").value == 128 and at.select_slider(key="d").value == 128
    lines = [info.value.replace("\\", "") for info in at.info]  # the line escapes markdown
    assert any("n=500" in line and "d=63" in line for line in lines)
