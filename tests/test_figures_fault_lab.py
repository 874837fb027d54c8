"""core.lab.figures.fault_lab: the figures carry exactly the numbers they are given."""

import numpy as np

from core.lab.figures import fault_lab as figures


def test_confusion_matrices_are_row_normalised_with_counts_on_hover():
    counts = np.array([[8, 2], [0, 0]])
    figure = figures.confusion_matrices({"A": counts, "B": np.eye(2) * 5}, ["normal", "IR007"])
    first = figure.data[0]
    assert np.allclose(first.z, [[0.8, 0.2], [0.0, 0.0]])  # an empty row stays 0, not NaN
    assert np.array_equal(first.customdata, counts)
    assert [trace.showscale for trace in figure.data] == [False, True]


def test_metric_bars_show_percent_means_with_sd_error_bars():
    summary = {
        "A": {m: {"mean": 0.9, "sd": 0.01, "n": 3} for m in ("accuracy", "f1")},
        "B": {m: {"mean": 0.8, "sd": None, "n": 1} for m in ("accuracy", "f1")},
    }
    figure = figures.metric_bars(summary, ["accuracy", "f1"])
    assert np.allclose(figure.data[0].y, [90, 90]) and np.allclose(figure.data[0].error_y.array, [1, 1])
    assert np.allclose(figure.data[1].error_y.array, [0, 0])  # one seed: no spread to draw
    assert figure.data[0].name == "A (n=3)"


def test_spectrum_is_cut_at_max_hz_and_marks_the_fault_rates():
    f = np.linspace(0, 6000, 6001)
    figure = figures.spectrum(f, np.ones_like(f), "envelope", markers={"BPFI": 162.2, "2×BPFI": 324.4}, max_hz=500)
    assert figure.data[0].x.max() == 500
    assert [shape.x0 for shape in figure.layout.shapes] == [162.2, 324.4]


def test_long_lines_are_thinned_below_the_point_budget():
    t = np.arange(120_000) / 12_000
    figure = figures.waveform(t, np.sin(t), "wave")
    assert len(figure.data[0].x) <= figures.MAX_LINE_POINTS
    assert figure.data[0].x[1] == t[20]


def test_training_curves_one_legend_entry_per_model():
    history = [{"epoch": e, "train_loss": 1.0 / e, "val_loss": 1.2 / e, "val_accuracy": 0.5} for e in (1, 2)]
    figure = figures.training_curves({"A · seed 0": history, "A · seed 1": history, "B · seed 0": history})
    legend = [trace.name for trace in figure.data if trace.showlegend is not False]
    assert legend == ["A", "B"]
    assert list(figure.data[2].y) == [50, 50]


def test_windows_per_class_and_noise_curve():
    counts = {"train": {"a": 7, "b": 6}, "val": {"a": 2}, "test": {"a": 1, "b": 1}}
    figure = figures.windows_per_class(counts, ["a", "b"])
    assert [list(trace.x) for trace in figure.data] == [[7, 6], [2, 0], [1, 1]]  # windows along x
    assert [list(trace.y) for trace in figure.data] == [["a", "b"]] * 3 and figure.data[0].orientation == "h"
    curve = figures.noise_curve([-4, 0, 4], {"A": [0.5, 0.7, 0.9]}, {"A": [0.1, 0.0, 0.02]})
    assert list(curve.data[0].y) == [50, 70, 90]
    assert np.allclose(curve.data[0].error_y.array, [10, 0, 2])
