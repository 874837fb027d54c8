"""The home page's figures: the live order-blindness demo, and one small figure per story section."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.explain.order_demo import ShuffleDemo
from core.plotting import standard_layout as _layout

SMALL = 230


def shuffle_demo(demo: ShuffleDemo) -> go.Figure:
    """The layer's outputs for the words as typed, and for the shuffled words with their rows put back."""
    labels = [f"{i}: {word}" for i, word in enumerate(demo.words)]
    figure = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.12,
        subplot_titles=("outputs, words as typed", "outputs of the shuffled words, rows put back"),
    )
    limit = float(np.max(np.abs(demo.outputs))) or 1.0
    for col, values in enumerate((demo.outputs, demo.shuffled_back), start=1):
        figure.add_trace(
            go.Heatmap(z=values, y=labels, colorscale="RdBu", zmin=-limit, zmax=limit, showscale=col == 2),
            row=1,
            col=col,
        )
        figure.update_yaxes(autorange="reversed", row=1, col=col)
        figure.update_xaxes(title="output dimension", row=1, col=col)
    return _layout(figure, "One self-attention layer, fixed random weights", height=120 + 32 * len(labels))


def _small(figure: go.Figure, title: str) -> go.Figure:
    figure.update_layout(title=title, height=SMALL, margin=dict(l=40, r=10, t=40, b=30), showlegend=False)
    return figure


def position_heatmap(table: np.ndarray) -> go.Figure:
    """A sinusoidal encoding: positions down, dimensions across."""
    figure = go.Figure(go.Heatmap(z=table, colorscale="RdBu", zmin=-1, zmax=1, showscale=False))
    figure.update_yaxes(autorange="reversed", title="position")
    return _small(figure, "A position vector per position")


def causal_mask(tokens: int) -> go.Figure:
    """Which keys each query may see under a causal mask."""
    figure = go.Figure(go.Heatmap(z=np.tril(np.ones((tokens, tokens))), colorscale="Blues", showscale=False))
    figure.update_yaxes(autorange="reversed", title="query")
    figure.update_xaxes(title="key")
    return _small(figure, "Causal mask: token t sees 0..t")


def steps(tokens: np.ndarray) -> go.Figure:
    """Sequential steps to process n tokens: training in parallel (1) against decoding (n)."""
    figure = go.Figure(
        [
            go.Scatter(x=tokens, y=np.ones_like(tokens), mode="lines", name="training, teacher forcing"),
            go.Scatter(x=tokens, y=tokens, mode="lines", name="decoding, one step per token"),
        ]
    )
    figure.update_xaxes(title="tokens")
    figure.update_yaxes(title="sequential steps")
    return _small(figure, "Steps: one parallel pass vs one per token")


def bottleneck(lengths: np.ndarray, width: int) -> go.Figure:
    """Numbers a sentence of n tokens holds (n x width) against the one fixed vector of a seq2seq RNN."""
    figure = go.Figure(
        [
            go.Scatter(x=lengths, y=lengths * width, mode="lines", name="the sentence"),
            go.Scatter(x=lengths, y=np.full(lengths.shape, width), mode="lines", name="one fixed vector"),
        ]
    )
    figure.update_xaxes(title="sentence length (tokens)")
    figure.update_yaxes(title="numbers", type="log")
    return _small(figure, "What must fit into one vector")


def context(positions: np.ndarray, segment: int) -> go.Figure:
    """Tokens of context each position sees: a vanilla model's segments reset it; segment recurrence does not."""
    figure = go.Figure(
        [
            go.Scatter(x=positions, y=positions % segment, mode="lines", name="vanilla, separate segments"),
            go.Scatter(
                x=positions,
                y=np.minimum(positions, segment + positions % segment),
                mode="lines",
                name="with segment recurrence",
            ),
        ]
    )
    figure.update_xaxes(title="position in the text")
    figure.update_yaxes(title="context (tokens)")
    return _small(figure, "Context fragmentation")
