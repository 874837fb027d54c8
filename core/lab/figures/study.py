"""Figures of a study: the equivalence plot, the paired per-run differences, scores per fold, and the CI
half-width other designs would give. Each takes plain tables (core.lab.study.tables) and returns a plotly Figure;
model and fold names (a study may come from a visitor's file) reach it through core.safe_text.plotly_literal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from core.lab.report import plural
from core.plotting import PALETTE, PHONE_PLOT_PIXELS, PLOT_PIXELS, label_places, labels
from core.plotting import standard_layout as _layout
from core.safe_text import plotly_literal


def equivalence(comparisons: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Each comparison's difference with its 95 % CI (thin) and 90 % CI (thick) against the ±margin band."""
    names = labels(f"{c['b']} vs {c['a']}" for c in comparisons)[::-1]
    rows = list(comparisons)[::-1]
    margin = rows[0]["margin"] if rows else 2.0
    figure = go.Figure()
    figure.add_vrect(x0=-margin, x1=margin, fillcolor="#5a9e6f", opacity=0.15, line_width=0)
    figure.add_vline(x=0, line_color="#7f7f7f", line_dash="dot")
    for ci, width, name in (("ci95", 2, "95 % CI"), ("ci90", 8, "90 % CI")):
        drawn = [(label, c) for label, c in zip(names, rows) if c[ci] is not None]
        for n, (label, c) in enumerate(drawn):
            figure.add_trace(
                go.Scatter(
                    x=c[ci],
                    y=[label, label],
                    mode="lines",
                    line=dict(color=PALETTE[0], width=width),
                    name=name,
                    showlegend=n == 0,  # one entry per kind, even when the first row lacks this interval
                    legendgroup=name,
                    opacity=0.6 if width > 2 else 1,
                )
            )
    figure.add_trace(
        go.Scatter(
            x=[c["diff"] for c in rows],
            y=names,
            mode="markers",
            marker=dict(color=PALETTE[1], size=10),
            name="difference",
            text=labels(c["verdict"] for c in rows),
            hovertemplate="%{y}: %{x:+.2f} (%{text})",
        )
    )
    figure.update_layout(showlegend=True)
    figure.update_xaxes(title=f"difference in points (band: ±{margin:g}, the equivalence margin)")
    figure.update_yaxes(title="comparison")
    return _layout(figure, "Each comparison against the equivalence margin", height=120 + 50 * len(rows))


def paired_differences(frame: pd.DataFrame, a: str, b: str) -> go.Figure:
    """One dot per (fold, seed): metric(b) - metric(a) in points, by fold."""
    a, b = plotly_literal(a), plotly_literal(b)
    figure = go.Figure(
        go.Scatter(
            x=labels(frame["fold"]),
            y=frame["difference"],
            mode="markers",
            marker=dict(color=PALETTE[0], size=9),
            text=[f"seed {s}" for s in frame["seed"]],
            hovertemplate="%{x}, %{text}: %{y:+.2f}",
        )
    )
    figure.add_hline(y=0, line_color="#7f7f7f", line_dash="dot")
    figure.update_xaxes(title="fold")
    figure.update_yaxes(title=f"{b} − {a}, points")
    return _layout(figure, f"{b} − {a} per (fold, seed)", height=340)


def fold_heatmap(table: pd.DataFrame, metric: str = "accuracy") -> go.Figure:
    """Models down, folds across: the metric in % averaged over seeds."""
    figure = go.Figure(
        go.Heatmap(
            z=table.to_numpy(),
            x=labels(table.columns),
            y=labels(table.index),
            colorscale="Blues",
            text=table.round(1).to_numpy(),
            texttemplate="%{text}",
            colorbar=dict(title="%"),
        )
    )
    figure.update_xaxes(title="fold")
    figure.update_yaxes(autorange="reversed", title="model")
    return _layout(figure, f"{metric.replace('_', ' ').capitalize()} per fold and model (mean over seeds)", height=340)


def half_width_curves(frame: pd.DataFrame) -> go.Figure:
    """The 95 % CI half-width against seeds, one line per number of folds."""
    figure = go.Figure()
    for i, (folds, part) in enumerate(frame.groupby("folds")):
        figure.add_trace(
            go.Scatter(
                x=part["seeds"],
                y=part["half_width"],
                mode="lines+markers",
                name=plural(folds, "fold"),
                line=dict(color=PALETTE[i % len(PALETTE)]),
            )
        )
    figure.update_layout(showlegend=True)
    figure.update_xaxes(title="seeds")
    figure.update_yaxes(title="95 % CI half-width, points", rangemode="tozero")
    return _layout(figure, "What more seeds or folds would buy (from this study's variance components)", height=340)


MAP_TRACES = (("control level", "control levels (order-dose curve)"), ("real task", "real tasks"))


def order_map(points: Sequence[Mapping[str, Any]]) -> go.Figure:
    """The map (core.lab.study.map.map_points): x the order gap, y B − B-noPE with its 95 % CI as error bars, each
    point labelled; the curve's control levels and the real tasks in two colours with a legend; a zero line for
    each axis (at x = 0 the spectrum alone does as well as any model that sees order)."""
    figure = go.Figure()
    figure.add_hline(y=0, line_color="#7f7f7f", line_dash="dot")
    figure.add_vline(x=0, line_color="#7f7f7f", line_dash="dot")
    x_range = _padded([p["x"] for p in points] + [0.0], 0.25)
    ends = [end for p in points for end in (p["ci95"] or [p["y"], p["y"]])]
    y_range = _padded(ends + [0.0], 0.1)
    spans = [(p["x"], p["y"], p["tag"], p["ci95"] or [p["y"], p["y"]]) for p in points]
    # placed for a wide screen and a phone at once; a point's full label shows on hover and in the table
    places = dict(zip(map(id, points), label_places(spans, x_range, y_range, (PLOT_PIXELS, PHONE_PLOT_PIXELS))))
    for i, (kind, name) in enumerate(MAP_TRACES):
        rows = [p for p in points if p["kind"] == kind]
        if not rows:
            continue
        ci = [p["ci95"] or [p["y"], p["y"]] for p in rows]  # no interval (one seed): no bar
        figure.add_trace(
            go.Scatter(
                x=[p["x"] for p in rows],
                y=[p["y"] for p in rows],
                mode="markers+text",
                name=name,
                marker=dict(color=PALETTE[i], size=10),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=[high - p["y"] for p, (_, high) in zip(rows, ci)],
                    arrayminus=[p["y"] - low for p, (low, _) in zip(rows, ci)],
                    color=PALETTE[i],
                ),
                text=labels("" if isinstance(places[id(p)], tuple) else p["tag"] for p in rows),
                textposition=["top center" if isinstance(places[id(p)], tuple) else places[id(p)] for p in rows],
                cliponaxis=False,
                customdata=[labels((p["label"], p["verdict"])) for p in rows],
                hovertemplate="%{customdata[0]}: order gap %{x:+.1f}, B − B-noPE %{y:+.1f} points (%{customdata[1]})",
            )
        )
    for p in points:  # a label with no free place beside its point stands apart, a leader line to it
        if isinstance(offset := places[id(p)], tuple):
            ax, ay = offset
            figure.add_annotation(
                x=p["x"],
                y=p["y"],
                text=labels([p["tag"]])[0],
                ax=ax,
                ay=ay,
                showarrow=True,
                arrowhead=0,
                arrowwidth=1,
                arrowcolor="#7f7f7f",
                standoff=6,
            )
    figure.update_layout(showlegend=True)
    # what the gap is, the caption under the map says: a longer title ran past the figure at 390 px
    figure.update_xaxes(title="order gap, points", range=x_range)
    figure.update_yaxes(title="B − B-noPE, points (95 % CI)", range=y_range)
    return _layout(figure, "B − B-noPE against the order gap", height=460)


def _padded(values: Sequence[float], share: float) -> list[float]:
    """An axis range over `values` (0 among them, so both zero lines show) with `share` of its span, and at least
    one point, left free on each side: a point's label at the edge was cut, a zero line lay on the frame."""
    low, high = min(values), max(values)
    pad = max(1.0, share * (high - low))
    return [low - pad, high + pad]
