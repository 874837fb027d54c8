"""The home page's figures: the live order-blindness demo, and one small figure per story section.

Every figure is in the house style (core.plotting): short titles that fit a phone, axis titles on every axis, a
legend on every figure with more than one line, and the signed colour scale on the signed heatmaps.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.explain.order_demo import ShuffleDemo
from core.plotting import SIGNED_COLORSCALE, house_layout, standard_layout

SMALL = 280


def shuffle_demo(demo: ShuffleDemo) -> go.Figure:
    """The layer's outputs for the words as typed (top) and for the shuffled words with their rows put back
    (bottom): stacked, so the row labels of one panel never sit on the other, even 390 px wide."""
    labels = [f"{i}: {word}" for i, word in enumerate(demo.words)]
    height = 240 + 56 * len(labels)
    figure = make_subplots(
        rows=2,
        cols=1,
        vertical_spacing=110 / height,  # px: the top panel's tick labels and axis title, then the panel title
        subplot_titles=("words as typed", "shuffled, rows put back"),
    )
    limit = float(np.max(np.abs(demo.outputs))) or 1.0
    for row, values in enumerate((demo.outputs, demo.shuffled_back), start=1):
        figure.add_trace(
            go.Heatmap(
                z=values,
                y=labels,
                colorscale=SIGNED_COLORSCALE,
                zmin=-limit,
                zmax=limit,
                showscale=row == 1,
                colorbar=dict(title=dict(text="output"), len=0.5, y=1.0, yanchor="top"),
            ),
            row=row,
            col=1,
        )
        figure.update_yaxes(autorange="reversed", title="word", row=row, col=1)
        figure.update_xaxes(title="output dimension", row=row, col=1)
    figure.update_layout(margin=dict(t=36))  # room for the panel titles, which do not push the margin
    return standard_layout(figure, "One attention layer, random weights", height=height)


ROUNDING = 1e-9  # outputs closer than this are the same up to float64 rounding


def demo_verdict(largest_difference: float) -> str:
    """What the demo's two panels show, in words: equal up to rounding, or how far apart."""
    if largest_difference <= ROUNDING:
        return "Identical up to rounding: the same outputs, only in another order."
    return f"Different: moving the words changes their outputs by up to {largest_difference:.2f}."


def _small(figure: go.Figure, title: str) -> go.Figure:
    figure.update_layout(house_layout(title, SMALL))
    return figure


def position_heatmap(table: np.ndarray) -> go.Figure:
    """A sinusoidal encoding: positions down, dimensions across, +1 red and -1 blue as on every signed heatmap."""
    figure = go.Figure(
        go.Heatmap(z=table, colorscale=SIGNED_COLORSCALE, zmin=-1, zmax=1, colorbar=dict(title=dict(text="value")))
    )
    figure.update_yaxes(autorange="reversed", title="position")
    figure.update_xaxes(title="dimension")
    return _small(figure, "A position vector per position")


def causal_mask(tokens: int) -> go.Figure:
    """Which keys each query may see under a causal mask: seen cells dark, masked ones light, said in the colour
    bar's two labels."""
    figure = go.Figure(
        go.Heatmap(
            z=np.tril(np.ones((tokens, tokens))),
            colorscale=[[0, "#eef2f7"], [1, "#3b6ea5"]],
            zmin=0,
            zmax=1,
            xgap=1,
            ygap=1,
            colorbar=dict(tickvals=[0.25, 0.75], ticktext=["masked", "seen"], thickness=12, len=0.6),
            hovertemplate="query %{y}<br>key %{x}<br>%{z}<extra></extra>",
        )
    )
    figure.update_yaxes(autorange="reversed", title="query (the token looking)")
    figure.update_xaxes(title="key (the token looked at)")
    return _small(figure, "Causal mask: token t sees 0..t")


def steps(tokens: np.ndarray) -> go.Figure:
    """Sequential steps to process n tokens: training in parallel (1) against decoding (n)."""
    figure = go.Figure(
        [
            go.Scatter(x=tokens, y=np.ones_like(tokens), mode="lines", name="training"),
            go.Scatter(x=tokens, y=tokens, mode="lines", name="decoding"),
        ]
    )
    figure.update_xaxes(title="tokens")
    figure.update_yaxes(title="sequential steps")
    return _small(figure, "One parallel pass vs one per token")


def bottleneck(lengths: np.ndarray, width: int) -> go.Figure:
    """Numbers a sentence of n tokens holds (n x width) against the one fixed vector of a seq2seq RNN."""
    figure = go.Figure(
        [
            go.Scatter(x=lengths, y=lengths * width, mode="lines", name="the sentence"),
            go.Scatter(x=lengths, y=np.full(lengths.shape, width), mode="lines", name="one fixed vector"),
        ]
    )
    figure.update_xaxes(title="sentence length (tokens)")
    figure.update_yaxes(title="numbers held (log scale)", type="log", dtick=1)  # one tick a decade, no minor ones
    return _small(figure, "What must fit into one vector")


def context(positions: np.ndarray, segment: int) -> go.Figure:
    """Tokens of context each position sees: a vanilla model's segments reset it; segment recurrence does not."""
    figure = go.Figure(
        [
            go.Scatter(x=positions, y=positions % segment, mode="lines", name="vanilla segments"),
            go.Scatter(
                x=positions,
                y=np.minimum(positions, segment + positions % segment),
                mode="lines",
                name="segment recurrence",
            ),
        ]
    )
    figure.update_xaxes(title="position in the text")
    figure.update_yaxes(title="context (tokens)")
    return _small(figure, "Context fragmentation")
