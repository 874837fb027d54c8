"""AppTest of pages/softmax_saturation.py: defaults, every control, the displayed numbers, and deep links."""

import math

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.explain import attention
from tests import apptest_utils
from tests.apptest_utils import as_array, figure_traces

PAGE = "pages/softmax_saturation.py"
PUBLISHED_Y3 = {"1": 0.5761168847658291, "10": 0.9999092083843412, "100": 1.0}


def run_page(**query) -> AppTest:
    return apptest_utils.run_page(PAGE, query)


def metric(app: AppTest, label_start: str) -> float:
    """The metric labelled exactly so, else the one whose label starts so, as a number (units dropped)."""
    matches = [m for m in app.metric if m.label == label_start] or [
        m for m in app.metric if m.label.startswith(label_start)
    ]
    assert len(matches) == 1, [m.label for m in app.metric]
    return float(matches[0].value.split()[0])


def variance_caption(app: AppTest) -> tuple[float, float]:
    """Var(q·k) and Var(q·k/√d_k) at d_k = 1024 as the caption under the variance figure states them."""
    (caption,) = [c.value for c in app.caption if c.value.startswith("At d_k = 1024")]
    unscaled = float(caption.split("Var(q·k) = ")[1].split(" ")[0])
    scaled = float(caption.split("Var(q·k/√d_k) = ")[1].split(" ")[0])
    return unscaled, scaled


def test_defaults_state_the_published_numbers():
    app = run_page()
    text = " ".join(m.value for m in app.markdown)
    assert f"y3 = {PUBLISHED_Y3['10']:.5f} at a = 10" in text  # 0.99991, the paper's example, rounded to read
    # a = 10: the largest Jacobian entry is 2·p·q with p = 1/(2 + e^10), q = 1/(1 + 2e^(−10))
    p, q = 1 / (2 + math.exp(10)), 1 / (1 + 2 * math.exp(-10))
    assert metric(app, "largest |∂y_i/∂s_j| at this a") == pytest.approx(2 * p * q, rel=1e-3)
    variance, scaled = variance_caption(app)
    assert abs(variance - 1024) < 4 * math.sqrt((2 * 1024**2 + 6 * 1024) / 2000)  # 4 standard errors
    assert scaled == pytest.approx(variance / 1024, abs=0.01)
    # scores 1, 2, 3, 4 at d_k = 1, temperature 1: the weights are e^i / Σ e^j
    weights = np.exp([1.0, 2.0, 3.0, 4.0]) / np.exp([1.0, 2.0, 3.0, 4.0]).sum()
    assert metric(app, "largest weight") == pytest.approx(weights.max(), abs=1e-4)
    assert metric(app, "entropy (nats)") == pytest.approx(-(weights * np.log(weights)).sum(), abs=1e-4)
    bars = figure_traces(app, "softmax_weights")[0]
    np.testing.assert_allclose(as_array(bars["y"]), weights, rtol=1e-12)
    assert metric(app, "n×n scores at n = 1024") == 4  # 1024² float32 = 4 MiB
    cost = figure_traces(app, "attention_cost")
    np.testing.assert_array_equal(as_array(cost[0]["x"]), [64, 128, 256, 512, 1024])


def test_a_control_moves_the_marker_and_the_jacobian_numbers():
    app = run_page()
    app.select_slider(key="a").set_value(100).run()
    assert not app.exception
    assert metric(app, "largest |∂y_i/∂s_j| at this a") == pytest.approx(2 * math.exp(-100), rel=1e-3)
    for name in ("softmax_saturation", "jacobian_collapse"):
        np.testing.assert_array_equal(as_array(figure_traces(app, name)[-1]["x"]), [100.0, 100.0])
    app.select_slider(key="a").set_value(1000).run()  # no overflow: the page still renders
    assert not app.exception
    assert metric(app, "largest |∂y_i/∂s_j| at this a") == 0.0


def test_every_step_of_a_moves_the_marker_visibly():
    steps = attention.A_CHOICES
    assert all(later / earlier <= 2.5 for earlier, later in zip(steps, steps[1:]))  # 1-2-5: no invisible step
    assert steps[0] == 0.01 and steps[-1] == 1000
    assert [str(step) for step in steps[6:9]] == ["1", "2", "5"]  # as a link writes them


def test_monte_carlo_samples_control():
    app = run_page()
    before, _ = variance_caption(app)
    app.select_slider(key="mc").set_value(500).run()
    assert not app.exception
    after, _ = variance_caption(app)
    assert after != before
    assert abs(after - 1024) < 4 * math.sqrt((2 * 1024**2 + 6 * 1024) / 500)


def test_score_row_controls():
    app = run_page()
    app.text_input(key="scores").input("0, 0").run()
    assert not app.exception
    assert metric(app, "largest weight") == 0.5
    assert metric(app, "entropy (nats)") == pytest.approx(math.log(2), abs=1e-4)
    assert metric(app, "largest |∂y_i/∂s_j|") == pytest.approx(0.25, rel=1e-3)  # y(1 − y) at y = 1/2
    app.text_input(key="scores").input("0, 4").run()
    app.select_slider(key="dk").set_value(4).run()
    app.select_slider(key="temp").set_value(2).run()
    assert not app.exception
    # logits 0 and 4/(2·√4) = 1: the larger weight is e/(1 + e)
    assert metric(app, "largest weight") == pytest.approx(math.e / (1 + math.e), abs=1e-4)


def test_bad_scores_show_an_error_not_an_exception():
    app = run_page()
    app.text_input(key="scores").input("1, two, 3").run()
    assert not app.exception
    assert any("could not read" in error.value for error in app.error)


def test_randomise_replaces_the_scores():
    app = run_page()
    app.button[0].click().run()
    assert not app.exception
    text = app.text_input(key="scores").value
    assert text != "1, 2, 3, 4" and len(text.split(",")) == 6
    assert len(as_array(figure_traces(app, "softmax_weights")[0]["y"])) == 6


def test_sequence_length_control():
    app = run_page()
    app.select_slider(key="n").set_value(512).run()
    assert not app.exception
    assert metric(app, "n×n scores at n = 512") == 1
    cost = figure_traces(app, "attention_cost")
    np.testing.assert_array_equal(as_array(cost[0]["x"]), [64, 128, 256, 512])
    explicit_bytes = as_array(cost[2]["y"])
    n = np.array([64, 128, 256, 512])
    np.testing.assert_array_equal(explicit_bytes, 2 * n * n * 4 + n * 64 * 4)


def test_deep_link_restores_every_control():
    app = run_page(a="2", mc="1000", scores="3, 1", dk="16", temp="0.5", n="512")
    assert app.select_slider(key="a").value == 2
    assert app.select_slider(key="mc").value == 1000
    assert app.text_input(key="scores").value == "3, 1"
    assert app.select_slider(key="dk").value == 16
    assert app.select_slider(key="temp").value == 0.5
    assert app.select_slider(key="n").value == 512
    # logits 3/(0.5·4) = 1.5 and 0.5: the larger weight is 1/(1 + e^(−1))
    assert metric(app, "largest weight") == pytest.approx(1 / (1 + math.exp(-1)), abs=1e-4)
