"""Figures of the Fault lab: the signal explorer, training progress, and the model comparison.

Every function takes plain arrays or the results JSON pieces (core.lab.experiment.results) and returns a
plotly Figure. Class names, model names and titles may come from a visitor's files: they reach a figure through
core.safe_text.plotly_literal, so Plotly shows them as typed and never as its HTML subset.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.plotting import PALETTE, house_layout, labels, model_colours
from core.plotting import standard_layout as _layout
from core.safe_text import plotly_literal

MAX_LINE_POINTS = 6_000  # a line with more points than screen pixels only costs payload


def _thin(x: np.ndarray, y: np.ndarray, max_points: int = MAX_LINE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Keep every k-th point of a long line so the figure stays small; min/max envelopes are not needed
    for the short excerpts and spectra drawn here."""
    step = max(1, int(np.ceil(len(x) / max_points)))
    return x[::step], y[::step]


def waveform(time_s: np.ndarray, signal: np.ndarray, title: str, y_title: str = "acceleration") -> go.Figure:
    """A signal excerpt against time, thinned to MAX_LINE_POINTS; `y_title` names what the signal is (a visitor's
    own file: "your signal")."""
    t, y = _thin(np.asarray(time_s), np.asarray(signal))
    figure = go.Figure(go.Scatter(x=t, y=y.astype(np.float32), mode="lines", line=dict(width=1, color=PALETTE[0])))
    figure.update_xaxes(title="time (s)")
    figure.update_yaxes(title=y_title)
    return _layout(figure, plotly_literal(title), height=300)


def spectrum(
    frequencies: np.ndarray,
    amplitudes: np.ndarray,
    title: str,
    markers: Mapping[str, float] | None = None,
    max_hz: float | None = None,
    log_y: bool = False,
) -> go.Figure:
    """Amplitude spectrum, optionally cut at max_hz, with labelled vertical markers (e.g. BPFI and 2× BPFI)."""
    f, a = np.asarray(frequencies), np.asarray(amplitudes)
    if max_hz is not None:
        keep = f <= max_hz
        f, a = f[keep], a[keep]
    f, a = _thin(f, a)
    figure = go.Figure(
        go.Scatter(x=f, y=a.astype(np.float32), mode="lines", line=dict(width=1, color=PALETTE[0]), name="spectrum")
    )
    for i, (name, hz) in enumerate((markers or {}).items()):
        figure.add_vline(
            x=hz,
            line_dash="dash",
            line_color=PALETTE[(i + 1) % len(PALETTE)],
            annotation_text=f"{name} {hz:.1f} Hz",
            annotation_position="top right" if i % 2 == 0 else "top left",
        )
    figure.update_xaxes(title="frequency (Hz)")
    figure.update_yaxes(title="amplitude", type="log" if log_y else "linear")
    return _layout(figure, plotly_literal(title), height=320)


def windows_per_class(counts: Mapping[str, Mapping[str, int]], class_names: Sequence[str]) -> go.Figure:
    """Grouped horizontal bars: windows of each class in train, val and test. The classes run down the y axis,
    so ten names never crowd each other at phone width as they did along x."""
    figure = go.Figure()
    for i, split in enumerate(("train", "val", "test")):
        per_class = counts.get(split, {})
        figure.add_trace(
            go.Bar(
                y=labels(class_names),
                x=[per_class.get(name, 0) for name in class_names],
                name=split,
                orientation="h",
                marker_color=PALETTE[i],
            )
        )
    figure.update_layout(barmode="group", showlegend=True)
    figure.update_yaxes(title="class", autorange="reversed")  # the first class on top, as in the tables
    figure.update_xaxes(title="windows")
    return _layout(figure, "Windows per class and split", height=160 + 24 * len(class_names))


def training_curves(histories: Mapping[str, Sequence[Mapping[str, float]]]) -> go.Figure:
    """Validation loss and accuracy per epoch, one line per (model, seed) run, coloured by model."""
    models = list(dict.fromkeys(label.split(" · ")[0] for label in histories))
    colours = model_colours(models)
    figure = make_subplots(
        rows=1, cols=2, subplot_titles=("loss (solid: validation, dotted: training)", "validation accuracy")
    )
    shown: set[str] = set()
    for label, history in histories.items():
        if not history:
            continue
        model = label.split(" · ")[0]
        name, hover = plotly_literal(model), plotly_literal(label)
        epochs = [row["epoch"] for row in history]
        common = dict(legendgroup=name, line=dict(color=colours[model], width=1.5))
        figure.add_trace(
            go.Scatter(
                x=epochs,
                y=[row["val_loss"] for row in history],
                mode="lines+markers",
                name=name,
                showlegend=model not in shown,
                hovertext=hover,
                **common,
            ),
            row=1,
            col=1,
        )
        figure.add_trace(
            go.Scatter(
                x=epochs,
                y=[row["train_loss"] for row in history],
                mode="lines",
                name=f"{name} train",
                showlegend=False,
                hovertext=hover,
                legendgroup=name,
                line=dict(color=colours[model], width=1, dash="dot"),
            ),
            row=1,
            col=1,
        )
        figure.add_trace(
            go.Scatter(
                x=epochs,
                y=[100 * row["val_accuracy"] for row in history],
                mode="lines+markers",
                name=name,
                showlegend=False,
                hovertext=hover,
                **common,
            ),
            row=1,
            col=2,
        )
        shown.add(model)
    figure.update_xaxes(title="epoch")
    figure.update_yaxes(title="cross-entropy", row=1, col=1)
    figure.update_yaxes(title="%", row=1, col=2)
    return figure.update_layout(house_layout("Training progress", 340, showlegend=True))


def metric_bars(summary: Mapping[str, Mapping[str, Mapping[str, float]]], metrics: Sequence[str]) -> go.Figure:
    """Mean ± sd over seeds of each metric (in %), one bar group per metric, one colour per model."""
    models = list(summary)
    colours = model_colours(models)
    figure = go.Figure()
    for model in models:
        means = [100 * summary[model][m]["mean"] for m in metrics]
        sds = [100 * (summary[model][m]["sd"] or 0.0) for m in metrics]
        n = summary[model][metrics[0]]["n"]
        figure.add_trace(
            go.Bar(
                x=list(metrics),
                y=means,
                name=f"{plotly_literal(model)} (n={n})",
                marker_color=colours[model],
                error_y=dict(type="data", array=sds, visible=True),
            )
        )
    figure.update_layout(barmode="group", showlegend=True)
    figure.update_xaxes(title="metric")
    figure.update_yaxes(title="% (mean ± sd over seeds)")
    return _layout(figure, "Test metrics per model", height=360)


def confusion_matrices(matrices: Mapping[str, np.ndarray], class_names: Sequence[str]) -> go.Figure:
    """Row-normalised confusion matrices side by side (true class down, predicted across), counts on hover."""
    models = list(matrices)
    figure = make_subplots(rows=1, cols=max(1, len(models)), subplot_titles=labels(models), horizontal_spacing=0.06)
    for i, model in enumerate(models, start=1):
        counts = np.asarray(matrices[model], dtype=np.float64)
        rows = counts.sum(axis=1, keepdims=True)
        share = np.divide(counts, rows, out=np.zeros_like(counts), where=rows > 0)
        figure.add_trace(
            go.Heatmap(
                z=share,
                x=labels(class_names),
                y=labels(class_names),
                zmin=0,
                zmax=1,
                colorscale="Blues",
                showscale=i == len(models),
                colorbar=dict(title="share of row", tickformat=".0%"),
                customdata=counts,
                hovertemplate="true %{y}<br>predicted %{x}<br>%{z:.0%} (%{customdata:.0f} windows)<extra></extra>",
            ),
            row=1,
            col=i,
        )
        # the panels share their classes down the side: the first one names them and titles the axis
        figure.update_yaxes(autorange="reversed", row=1, col=i, showticklabels=i == 1, title="true" if i == 1 else None)
    figure.update_xaxes(tickangle=-45, title="predicted")
    # the panel titles (the models) sit above the plots, where only the title made room: the page shows the
    # title as a line of its own (ui.common.show_figure), and the 10 px margin left cut the model names in half
    figure.update_layout(margin=dict(t=34))
    return _layout(figure, "Confusion matrices (summed over seeds, row-normalised)", height=380)


def per_class_f1(per_model: Mapping[str, Sequence[float]], class_names: Sequence[str]) -> go.Figure:
    """Grouped bars of each model's F1 per class (fractions in, percent shown)."""
    colours = model_colours(list(per_model))
    figure = go.Figure()
    for model, scores in per_model.items():
        figure.add_trace(
            go.Bar(
                x=labels(class_names),
                y=[100 * s for s in scores],
                name=plotly_literal(model),
                marker_color=colours[model],
            )
        )
    figure.update_layout(barmode="group", showlegend=True)
    figure.update_xaxes(title="class")
    figure.update_yaxes(title="F1 % (mean over seeds)", range=[0, 105])
    return _layout(figure, "F1 per class", height=340)


def noise_curve(
    snr_db: Sequence[float],
    accuracy: Mapping[str, Sequence[float]],
    spread: Mapping[str, Sequence[float]] | None = None,
) -> go.Figure:
    """Accuracy (%) against test SNR (dB), one line per model, error bars = sd over seeds (a cell without runs,
    None, is a gap)."""
    colours = model_colours(list(accuracy))
    figure = go.Figure()
    for model, values in accuracy.items():
        errors = None if spread is None else dict(type="data", array=_percent(spread[model]), visible=True)
        figure.add_trace(
            go.Scatter(
                x=list(snr_db),
                y=_percent(values),
                mode="lines+markers",
                name=plotly_literal(model),
                line=dict(color=colours[model]),
                error_y=errors,
            )
        )
    figure.update_layout(showlegend=True)
    figure.update_xaxes(title="SNR of the test windows (dB)")
    figure.update_yaxes(title="accuracy %")
    return _layout(figure, "Robustness to added white noise", height=340)


def _percent(fractions: Sequence[float | None]) -> list[float | None]:
    return [None if value is None else 100 * value for value in fractions]
