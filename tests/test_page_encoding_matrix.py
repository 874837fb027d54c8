"""AppTest of pages/encoding_matrix.py: defaults, every control, deep links, and the numbers it shows."""

import math

import numpy as np
import pytest

from core.explain.encodings import sinusoidal
from tests.apptest_utils import figures, metrics, run_page, trace_array

PAGE = "pages/encoding_matrix.py"


def heatmap_z(at, index=0):
    return trace_array(figures(at)[index]["data"][0], "z")


def test_defaults_show_the_matrix_waves_vector_and_scoreboard():
    at = run_page(PAGE)
    z = heatmap_z(at)
    assert z.shape == (128, 128)
    assert np.allclose(z, sinusoidal(128, 128), atol=1e-6)  # float32 payload
    shown = metrics(at)
    assert shown["‖PE(pos)‖ = √(d/2) at every position"] == "8.00"
    assert shown["‖raw integer position on every entry‖"] == f"{10 * math.sqrt(128):,.0f}"
    board = at.dataframe[0].value.set_index("scheme")
    assert board.loc["sinusoidal", "unique"] == "yes"  # words, not emoji: no empty boxes without an emoji font
    assert board.loc["pos/(T-1)", "same offset, same distance"] == "no"
    assert board.loc["integer", "bounded"] == "no"
    assert len(figures(at)) == 4
    # one download per section: the overview and the zoom share one (a zip), the waves and the vector one each
    assert [b.proto.id.split("-")[-1] for b in at.get("download_button")] == [
        "csv_encoding_matrix",
        "csv_dimension_waves",
        "csv_position_vector",
    ]
    assert at.get("page_link")[0].proto.label.startswith("Next: **Wavelengths**")


def test_every_control_changes_the_figures():
    at = run_page(PAGE)
    before = heatmap_z(at)
    at.slider(key="n").set_value(300).run()
    assert heatmap_z(at).shape == (300, 128)
    at.number_input(key="zc").set_value(10).run()
    assert trace_array(figures(at)[1]["data"][0], "x")[0] == 10
    at.slider(key="d").set_value(33).run()  # narrower than the zoom window: the window starts at 0
    assert trace_array(figures(at)[1]["data"][0], "x")[0] == 0
    z = heatmap_z(at)
    assert z.shape == (300, 33) and np.allclose(z, sinusoidal(300, 33), atol=1e-6)
    at.select_slider(key="base").set_value(100).run()
    assert np.allclose(heatmap_z(at), sinusoidal(300, 33, base=100.0), atol=1e-6)
    at.radio(key="layout").set_value("concatenated").run()
    assert np.allclose(heatmap_z(at), sinusoidal(300, 33, 100.0, "concatenated"), atol=1e-6)
    at.number_input(key="zr").set_value(200).run()
    assert trace_array(figures(at)[1]["data"][0], "y")[0] == 200
    at.multiselect(key="dims").set_value([3, 40]).run()
    waves = figures(at)[2]["data"]
    assert [t["name"].split(" (")[0] for t in waves] == ["dim 3"]  # 40 >= d_model = 33
    assert any("Ignored dimensions" in w.value for w in at.warning)
    at.number_input(key="t").set_value(250).run()
    vector = trace_array(figures(at)[3]["data"][0], "y")
    assert np.allclose(vector, sinusoidal(300, 33, 100.0, "concatenated")[250])
    assert not at.exception
    assert not np.array_equal(before.shape, heatmap_z(at).shape)


def test_largest_settings_are_strided_and_say_so():
    at = run_page(PAGE, {"n": "4096", "d": "1024"})
    z = heatmap_z(at)
    assert z.size <= 100_000
    assert any("strided" in i.value for i in at.info)
    zoom = trace_array(figures(at)[1]["data"][0], "z")
    assert zoom.shape == (64, 64)


@pytest.mark.parametrize("query", [{"n": "500", "d": "64", "base": "1000", "layout": "concatenated", "t": "7"}])
def test_deep_link_restores_the_controls(query):
    at = run_page(PAGE, query)
    assert at.slider(key="n").value == 500
    assert at.slider(key="d").value == 64
    assert at.select_slider(key="base").value == 1000
    assert at.radio(key="layout").value == "concatenated"
    assert at.number_input(key="t").value == 7
    assert np.allclose(heatmap_z(at), sinusoidal(500, 64, 1000.0, "concatenated"), atol=1e-6)
