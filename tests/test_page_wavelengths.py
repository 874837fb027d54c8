"""AppTest of pages/wavelengths.py."""

import math

import numpy as np

from core.explain.encodings import wavelengths
from tests.apptest_utils import figure_traces, metrics, run_page, trace_array

PAGE = "pages/wavelengths.py"


def test_defaults_show_the_wavelength_range():
    at = run_page(PAGE)
    shown = metrics(at)
    assert shown["Shortest wavelength (2π)"] == f"{2 * math.pi:.4f}"
    assert shown["Longest wavelength"] == f"{2 * math.pi * 10000 ** (510 / 512):,.1f}"  # 60,611.5
    assert shown["Longest / (base·2π)"] == "0.965"
    lengths, ends, ceiling = figure_traces(at, "wavelengths")
    assert np.allclose(trace_array(lengths, "y"), wavelengths(512))
    assert ends["text"] == ["shortest 6.28", "longest 60,611"]
    assert trace_array(ceiling, "y").tolist() == [2 * math.pi * 10_000] * 2
    assert r"2\pi \cdot base^{2i/d}" in at.latex[0].value


def test_the_ceiling_label_and_the_longest_label_sit_at_opposite_ends():
    at = run_page(PAGE)
    _, ends, ceiling = figure_traces(at, "wavelengths")
    assert ceiling["text"][0].startswith("base·2π") and ceiling["text"][1] == ""  # labelled at the left end
    assert ends["textposition"][1] == "bottom left"  # the longest label hangs below its marker, at the right
    layout_range = at.get("plotly_chart")[0].proto.spec
    assert '"type":"log"' in layout_range.replace(" ", "")


def test_controls_change_the_figures():
    at = run_page(PAGE)
    at.select_slider(key="d").set_value(64).run()
    assert np.allclose(trace_array(figure_traces(at, "wavelengths")[0], "y"), wavelengths(64))
    at.select_slider(key="base").set_value(100).run()
    assert np.allclose(trace_array(figure_traces(at, "wavelengths")[0], "y"), wavelengths(64, 100.0))
    assert metrics(at)["Longest wavelength"] == f"{2 * math.pi * 100 ** (62 / 64):,.1f}"
    at.slider(key="bits").set_value(5).run()
    bits = trace_array(figure_traces(at, "binary_counter")[0], "z")
    assert bits.shape == (5, 32)  # one row per bit, positions across like the waves below
    assert bits[:, 6].tolist() == [0, 1, 1, 0, 0]  # 6 = 0b00110, lowest bit first
    assert not at.exception


def test_deep_link_restores_the_controls():
    at = run_page(PAGE, {"d": "96", "base": "1000", "bits": "3"})
    assert at.select_slider(key="d").value == 96
    assert at.select_slider(key="base").value == 1000
    assert at.slider(key="bits").value == 3
    assert metrics(at)["Longest wavelength"] == f"{2 * math.pi * 1000 ** (94 / 96):,.1f}"
