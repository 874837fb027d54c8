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


def caption_gap(app: AppTest, start: str) -> float:
    """The number after "largest gap" in the one caption starting with `start`."""
    (caption,) = [c.value for c in app.caption if c.value.startswith(start)]
    return float(caption.split("largest gap ")[1].split(")")[0])


def test_defaults_show_offset_only_dependence_and_exact_shift():
    app = run_page()
    (gaps,) = [c.value for c in app.caption if c.value.startswith("Largest gap between the starts")]
    assert "equal up to rounding" in gaps
    assert float(gaps.split("starts ")[1].split(",")[0]) < 1e-9
    assert caption_gap(app, "The red crosses M_5·PE(10)") < 1e-9
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
    learned = figure_traces(app, "scheme_vs_offset")
    assert similarity.spread_across_starts(np.array([as_array(t["y"]) for t in learned[:4]])) > 1e-3  # no structure


def test_coinciding_curves_say_so_inside_the_figure_and_stay_visible():
    app = run_page()
    lines = [m.value.replace("\\", "") for m in app.markdown]  # the title line escapes markdown
    note = "the 4 starts give one curve and the closed form, equal up to rounding"
    assert f"**PE(t)·PE(t+k) from 4 starts: {note}**" in lines
    widths = [t["line"]["width"] for t in figure_traces(app, "dot_product_vs_offset")[:4]]
    assert widths == sorted(widths, reverse=True) and len(set(widths)) == 4  # widest first: each shows
    assert not any(line.startswith("**learned (init), from 4 starts:") for line in lines)


def test_d_model_and_base_change_the_curves():
    app = run_page()
    before = as_array(figure_traces(app, "dot_product_vs_offset")[0]["y"]).copy()
    app.select_slider(key="d").set_value(256).run()
    assert not app.exception
    assert as_array(figure_traces(app, "dot_product_vs_offset")[0]["y"])[0] == pytest.approx(128.0)
    app.select_slider(key="base").set_value(100).run()
    assert not app.exception
    after = as_array(figure_traces(app, "dot_product_vs_offset")[-1]["y"])
    np.testing.assert_allclose(after, similarity.closed_form_dot_product(np.arange(65), 256, 100.0), rtol=1e-12)
    assert not np.allclose(after, before * 2)


def test_positions_and_offsets_controls():
    app = run_page()
    app.select_slider(key="n").set_value(768)
    app.select_slider(key="kmax").set_value(16).run()
    assert not app.exception
    curves = figure_traces(app, "dot_product_vs_offset")
    np.testing.assert_array_equal(as_array(curves[0]["x"]), np.arange(17))
    assert [trace["name"] for trace in curves][:4] == ["t = 0", "t = 256", "t = 511", "t = 767"]
    heatmap = figure_traces(app, "cosine_similarity")[0]
    assert as_array(heatmap["z"]).shape == (256, 256)  # 768 positions strided by 3
    assert any("keeps every 3. position" in caption.value for caption in app.caption)


def test_shift_controls_keep_the_error_at_rounding_level():
    app = run_page()
    app.select_slider(key="t").set_value(1024)
    app.select_slider(key="k").set_value(1024).run()
    assert not app.exception
    assert caption_gap(app, "The red crosses M_1024·PE(1024)") < 1e-9
    traces = figure_traces(app, "shift_matrix_check")
    assert [trace["name"] for trace in traces] == ["PE(1024)", "PE(2048)", "M_1024·PE(1024)"]
    np.testing.assert_allclose(as_array(traces[2]["y"]), as_array(traces[1]["y"]), atol=1e-9)


@pytest.mark.parametrize("scheme", ["RoPE", "ALiBi", "complex (Wang et al.)"])
def test_relative_schemes_show_no_gap_between_starts(scheme):
    app = run_page(scheme=scheme)
    curves = np.array([as_array(t["y"]) for t in figure_traces(app, "scheme_vs_offset")[:4]])
    assert similarity.spread_across_starts(curves) < 1e-9
    assert figure_traces(app, "scheme_matrix")[0]["type"] == "heatmap"


def test_rope_shift_control():
    app = run_page(scheme="RoPE")
    (caption,) = [c.value for c in app.caption if c.value.startswith("Shift query and key together by 7")]
    assert float(caption.split("largest change ")[1].split(",")[0]) < 1e-9
    app.slider(key="s").set_value(300).run()
    assert not app.exception
    (caption,) = [c.value for c in app.caption if c.value.startswith("Shift query and key together by 300")]
    assert float(caption.split("largest change ")[1].split(",")[0]) < 1e-9


def test_deep_link_restores_every_control():
    app = run_page(d="256", base="100", n="384", kmax="24", t="8", k="3", scheme="ALiBi")
    assert app.select_slider(key="d").value == 256
    assert app.select_slider(key="base").value == 100
    assert app.select_slider(key="n").value == 384
    assert app.select_slider(key="kmax").value == 24
    assert app.select_slider(key="t").value == 8
    assert app.select_slider(key="k").value == 3
    assert app.selectbox(key="scheme").value == "ALiBi"
    assert caption_gap(app, "The red crosses M_3·PE(8)") < 1e-9
    np.testing.assert_array_equal(as_array(figure_traces(app, "scheme_vs_offset")[0]["y"]), -0.5 * np.arange(25))


def test_an_odd_d_model_in_a_link_is_named_and_reset_to_the_even_default():
    app = run_page(d="127")
    assert any("d\\=127" in info.value for info in app.info)
    assert as_array(figure_traces(app, "dot_product_vs_offset")[0]["y"])[0] == pytest.approx(64.0)


def test_beyond_the_trained_length_shows_at_defaults_and_follows_its_controls():
    at = run_page()
    assert "Beyond the trained length" in [s.value for s in at.subheader]
    assert "Going further" in [h.value for h in at.header]
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
