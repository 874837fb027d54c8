"""AppTest of pages/wavelengths.py."""

import math

import numpy as np

from core.explain.encodings import wavelengths
from tests.apptest_utils import figures, metrics, run_page, trace_array

PAGE = "pages/wavelengths.py"


def test_defaults_show_the_wavelength_range():
    at = run_page(PAGE)
    shown = metrics(at)
    assert shown["Shortest wavelength (2π)"] == f"{2 * math.pi:.4f}"
    assert shown["Longest wavelength"] == f"{2 * math.pi * 10000 ** (510 / 512):,.1f}"  # 60,610.1
    assert shown["Longest / (base·2π)"] == "0.965"
    lengths = trace_array(figures(at)[0]["data"][0], "y")
    assert np.allclose(lengths, wavelengths(512))


def test_controls_change_the_figures():
    at = run_page(PAGE)
    at.slider(key="d").set_value(64).run()
    assert np.allclose(trace_array(figures(at)[0]["data"][0], "y"), wavelengths(64))
    at.select_slider(key="base").set_value(100).run()
    assert np.allclose(trace_array(figures(at)[0]["data"][0], "y"), wavelengths(64, 100.0))
    assert metrics(at)["Longest wavelength"] == f"{2 * math.pi * 100 ** (62 / 64):,.1f}"
    at.slider(key="bits").set_value(5).run()
    bits = trace_array(figures(at)[1]["data"][0], "z")
    assert bits.shape == (5, 32)  # one row per bit, positions across like the waves below
    assert bits[:, 6].tolist() == [0, 1, 1, 0, 0]  # 6 = 0b00110, lowest bit first
    assert not at.exception


def test_deep_link_restores_the_controls():
    at = run_page(PAGE, {"d": "100", "base": "1000", "bits": "3"})
    assert at.slider(key="d").value == 100
    assert at.select_slider(key="base").value == 1000
    assert at.slider(key="bits").value == 3
    assert metrics(at)["Longest wavelength"] == f"{2 * math.pi * 1000 ** (98 / 100):,.1f}"
