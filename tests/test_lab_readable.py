"""The Fault lab's figures read without hovering: every figure function of core.lab.figures, built from small
arrays, titles every axis that shows tick labels, shows a legend (or a title on each panel) when it draws more
than one trace, carries the house style, and draws a signed heatmap on the one diverging scale."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from core.lab.figures import fault_lab, inside, study
from core.plotting import SIGNED_COLORSCALE, is_house_style

HISTORY = [{"epoch": e, "train_loss": 1.0 / e, "val_loss": 1.2 / e, "val_accuracy": 0.5} for e in (1, 2)]
SUMMARY = {m: {k: {"mean": 0.9, "sd": 0.01, "n": 3} for k in ("accuracy", "f1")} for m in ("A", "B")}
COMPARISONS = [
    {"a": "A", "b": "B", "margin": 2.0, "diff": 1.0, "ci95": [-1.0, 3.0], "ci90": [-0.5, 2.5], "verdict": "x"},
    {"a": "B-noPE", "b": "B", "margin": 2.0, "diff": -0.5, "ci95": [-2.0, 1.0], "ci90": None, "verdict": "y"},
]
TIME = np.arange(50) / 1000

BUILDERS = {
    "fault_lab.waveform": lambda: fault_lab.waveform(TIME, np.sin(TIME), "wave"),
    "fault_lab.spectrum": lambda: fault_lab.spectrum(TIME * 1e4, np.abs(np.sin(TIME)), "s", {"BPFI": 162.0}),
    "fault_lab.windows_per_class": lambda: fault_lab.windows_per_class(
        {"train": {"a": 7, "b": 6}, "val": {"a": 2}, "test": {"a": 1}}, ["a", "b"]
    ),
    "fault_lab.training_curves": lambda: fault_lab.training_curves({"A · seed 0": HISTORY, "B · seed 0": HISTORY}),
    "fault_lab.metric_bars": lambda: fault_lab.metric_bars(SUMMARY, ["accuracy", "f1"]),
    "fault_lab.confusion_matrices": lambda: fault_lab.confusion_matrices(
        {"A": np.eye(2) * 3, "B": np.ones((2, 2))}, ["normal", "IR"]
    ),
    "fault_lab.per_class_f1": lambda: fault_lab.per_class_f1({"A": [0.9, 0.8], "B": [0.7, 1.0]}, ["normal", "IR"]),
    "fault_lab.noise_curve": lambda: fault_lab.noise_curve([0, 8], {"A": [0.5, 0.9], "B": [0.6, None]}),
    "inside.attention_by_offset": lambda: inside.attention_by_offset({"A": np.ones((2, 5)) / 5, "B": np.eye(2, 5)}),
    "inside.attention_maps": lambda: inside.attention_maps({"A": np.eye(4), "B": np.ones((4, 4)) / 4}),
    "inside.position_similarity": lambda: inside.position_similarity(
        {"sinusoidal": np.array([1.0, 0.5]), "B-learned (learned)": np.array([1.0, 0.1])}
    ),
    "inside.similarity_matrix": lambda: inside.similarity_matrix(np.array([[1.0, -0.4], [-0.4, 1.0]]), "table"),
    "study.equivalence": lambda: study.equivalence(COMPARISONS),
    "study.paired_differences": lambda: study.paired_differences(
        pd.DataFrame({"fold": ["1", "2"], "seed": [0, 0], "difference": [1.0, -2.0]}), "A", "B"
    ),
    "study.fold_heatmap": lambda: study.fold_heatmap(
        pd.DataFrame([[90.0, 80.0], [85.0, 95.0]], index=["A", "B"], columns=["fold 1", "fold 2"])
    ),
    "study.half_width_curves": lambda: study.half_width_curves(
        pd.DataFrame({"folds": [3, 3, 5, 5], "seeds": [1, 2, 1, 2], "half_width": [4.0, 3.0, 3.5, 2.5]})
    ),
    "study.order_map": lambda: study.order_map(
        [
            {"tag": "level 0", "label": "level 0", "kind": "control level", "x": -1.0, "y": 0.5, "ci95": [-1.0, 2.0]}
            | {"verdict": "v"},
            {"tag": "1", "label": "CWRU", "kind": "real task", "x": 3.0, "y": -0.5, "ci95": None, "verdict": "w"},
        ]
    ),
}


def _figure_functions() -> set[str]:
    return {
        f"{module.__name__.rsplit('.', 1)[-1]}.{name}"
        for module in (fault_lab, inside, study)
        for name, function in inspect.getmembers(module, inspect.isfunction)
        if function.__module__ == module.__name__ and not name.startswith("_")
    }


def _axes(figure: go.Figure) -> list:
    """Every x and y axis of the figure's layout (subplots add xaxis2, yaxis2, ...)."""
    return [figure.layout[name] for name in figure.layout if name.startswith(("xaxis", "yaxis"))]


def test_every_figure_function_of_the_fault_lab_is_built_here():
    assert _figure_functions() == set(BUILDERS)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_every_axis_that_shows_ticks_has_a_title(name):
    figure = BUILDERS[name]()
    untitled = [axis.plotly_name for axis in _axes(figure) if axis.showticklabels is not False and not axis.title.text]
    assert untitled == [], name
    assert is_house_style(figure), name


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_a_chart_of_several_traces_shows_a_legend_or_a_title_on_each_panel(name):
    figure = BUILDERS[name]()
    if len(figure.data) < 2:
        return
    if all(isinstance(trace, go.Heatmap) for trace in figure.data):  # side-by-side panels: direct labels
        titles = [note.text for note in figure.layout.annotations]
        assert len(titles) == len(figure.data) and all(titles), name
    else:
        in_legend = {trace.name for trace in figure.data if trace.showlegend is not False and trace.name}
        assert figure.layout.showlegend is True and len(in_legend) >= 2, (name, in_legend)


def test_the_legend_names_what_each_multi_trace_chart_compares():
    assert [t.name for t in BUILDERS["fault_lab.windows_per_class"]().data] == ["train", "val", "test"]
    shown = [t.name for t in BUILDERS["study.equivalence"]().data if t.showlegend is not False]
    assert shown == ["95 % CI", "90 % CI", "difference"]
    assert [t.name for t in BUILDERS["study.half_width_curves"]().data] == ["3 folds", "5 folds"]
    assert [t.name for t in BUILDERS["inside.attention_by_offset"]().data] == [
        "A, layer 1",
        "A, layer 2",
        "B, layer 1",
        "B, layer 2",
    ]


def test_the_signed_similarity_heatmap_uses_the_one_diverging_scale_centred_on_zero():
    (heatmap,) = BUILDERS["inside.similarity_matrix"]().data
    assert tuple(tuple(stop) for stop in heatmap.colorscale) == SIGNED_COLORSCALE
    assert (heatmap.zmin, heatmap.zmax) == (-1, 1)
    assert np.allclose(heatmap.z, [[1.0, -0.4], [-0.4, 1.0]])


def test_heatmap_panels_title_their_axes_and_name_their_colour_bar():
    confusion = BUILDERS["fault_lab.confusion_matrices"]()
    assert (confusion.layout.xaxis.title.text, confusion.layout.yaxis.title.text) == ("predicted", "true")
    assert confusion.layout.xaxis2.title.text == "predicted" and confusion.layout.yaxis2.showticklabels is False
    assert confusion.data[1].colorbar.title.text == "share of row"
    folds = BUILDERS["study.fold_heatmap"]()
    assert (folds.layout.xaxis.title.text, folds.layout.yaxis.title.text) == ("fold", "model")
    assert list(folds.data[0].y) == ["A", "B"]
