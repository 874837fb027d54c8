"""AppTest of pages/similarity.py: defaults, every control, the displayed numbers, and deep links."""

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.explain import similarity
from tests import apptest_utils
from tests.apptest_utils import as_array, figure_traces, trace_array

PAGE = "pages/similarity.py"


def run_page(**query) -> AppTest:
    return apptest_utils.run_page(PAGE, query)


def metric(app: AppTest, label_start: str) -> float:
    """The one metric whose label starts with label_start, as a number."""
    matches = [m for m in app.metric if m.label.startswith(label_start)]
    assert len(matches) == 1, [m.label for m in app.metric]
    return float(matches[0].value)


def test_defaults_show_offset_only_dependence_and_exact_shift():
    app = run_page()
    assert metric(app, "Largest gap between starts") < 1e-9
    assert metric(app, "Largest gap to Σ cos") < 1e-9
    assert metric(app, "max |M_5·PE(10) − PE(15)|") < 1e-9
    assert metric(app, "max |M_5ᵀ·M_5 − I|") < 1e-12
    curves = figure_traces(app, "dot_product_vs_offset")
    assert [trace["name"] for trace in curves] == ["t = 0", "t = 42", "t = 85", "t = 127", "Σ_i cos(k·ω_i)"]
    np.testing.assert_array_equal(as_array(curves[0]["x"]), np.arange(65))
    np.testing.assert_allclose(
        as_array(curves[-1]["y"]), similarity.closed_form_dot_product(np.arange(65), 128), rtol=1e-12
    )
    assert as_array(curves[0]["y"])[0] == pytest.approx(64.0)  # k = 0: ‖PE‖² = d/2
    heatmap = figure_traces(app, "cosine_similarity")[0]
    assert as_array(heatmap["z"]).shape == (128, 128)
    assert app.selectbox(key="scheme").value == "learned (init)"
    assert metric(app, "learned (init): largest gap between starts") > 1e-3  # no structure at initialisation


def test_d_model_and_base_change_the_curves():
    app = run_page()
    before = as_array(figure_traces(app, "dot_product_vs_offset")[0]["y"]).copy()
    app.slider(key="d").set_value(256).run()
    assert not app.exception
    assert as_array(figure_traces(app, "dot_product_vs_offset")[0]["y"])[0] == pytest.approx(128.0)
    app.select_slider(key="base").set_value(100).run()
    assert not app.exception
    after = as_array(figure_traces(app, "dot_product_vs_offset")[-1]["y"])
    np.testing.assert_allclose(after, similarity.closed_form_dot_product(np.arange(65), 256, 100.0), rtol=1e-12)
    assert not np.allclose(after, before * 2)


def test_positions_and_offsets_controls():
    app = run_page()
    app.slider(key="n").set_value(600)
    app.slider(key="kmax").set_value(10).run()
    assert not app.exception
    curves = figure_traces(app, "dot_product_vs_offset")
    np.testing.assert_array_equal(as_array(curves[0]["x"]), np.arange(11))
    assert [trace["name"] for trace in curves][:4] == ["t = 0", "t = 200", "t = 399", "t = 599"]
    heatmap = figure_traces(app, "cosine_similarity")[0]
    assert as_array(heatmap["z"]).shape == (200, 200)  # 600 positions strided by 3
    assert any("strided" in info.value for info in app.info)


def test_shift_controls_keep_the_error_at_rounding_level():
    app = run_page()
    app.number_input(key="t").set_value(1000)
    app.number_input(key="k").set_value(1024).run()
    assert not app.exception
    assert metric(app, "max |M_1024·PE(1000) − PE(2024)|") < 1e-9
    traces = figure_traces(app, "shift_matrix_check")
    assert [trace["name"] for trace in traces] == ["PE(1000)", "PE(2024)", "M_1024·PE(1000)"]
    np.testing.assert_allclose(as_array(traces[2]["y"]), as_array(traces[1]["y"]), atol=1e-9)


@pytest.mark.parametrize("scheme", ["RoPE", "ALiBi", "complex (Wang et al.)"])
def test_relative_schemes_show_no_gap_between_starts(scheme):
    app = run_page(scheme=scheme)
    assert metric(app, f"{scheme}: largest gap between starts") < 1e-9
    assert figure_traces(app, "scheme_matrix")[0]["type"] == "heatmap"


def test_rope_shift_control():
    app = run_page(scheme="RoPE")
    assert metric(app, "max |q_m·k_n − q_(m+7)·k_(n+7)|") < 1e-9
    app.slider(key="s").set_value(300).run()
    assert not app.exception
    assert metric(app, "max |q_m·k_n − q_(m+300)·k_(n+300)|") < 1e-9


def test_deep_link_restores_every_control():
    app = run_page(d="256", base="100", n="300", kmax="20", t="7", k="3", scheme="ALiBi")
    assert app.slider(key="d").value == 256
    assert app.select_slider(key="base").value == 100
    assert app.slider(key="n").value == 300
    assert app.slider(key="kmax").value == 20
    assert app.number_input(key="t").value == 7
    assert app.number_input(key="k").value == 3
    assert app.selectbox(key="scheme").value == "ALiBi"
    assert metric(app, "max |M_3·PE(7) − PE(10)|") < 1e-9
    np.testing.assert_array_equal(as_array(figure_traces(app, "scheme_vs_offset")[0]["y"]), -0.5 * np.arange(21))


def test_odd_d_model_in_a_link_falls_back_to_even():
    app = run_page(d="127")
    assert any("odd" in warning.value for warning in app.warning)
    assert as_array(figure_traces(app, "dot_product_vs_offset")[0]["y"])[0] == pytest.approx(63.0)


def test_beyond_the_trained_length_shows_at_defaults_and_follows_its_controls():
    at = run_page()
    assert "Beyond the trained length" in [s.value for s in at.subheader]
    rope = figure_traces(at, "beyond_rope")
    assert [t["name"] for t in rope] == ["plain extrapolation", "position interpolation", "NTK-aware scaling"]
    assert trace_array(rope[0], "x").size == 4 * 128 + 1
    at.slider(key="train_len").set_value(64).run()
    at.select_slider(key="scale").set_value(2).run()
    assert not at.exception
    assert trace_array(figure_traces(at, "beyond_sinusoidal")[0], "x").size == 2 * 64 + 1
    largest = [c.value for c in at.caption if c.value.startswith("At the largest offset")]
    assert len(largest) == 1 and largest[0].startswith("At the largest offset, s·L = 128"), largest
    linked = run_page(train_len="256", scale="8")
    assert trace_array(figure_traces(linked, "beyond_rope")[1], "x")[-1] == 2048
