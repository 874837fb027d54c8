"""Figures of what the trained models do: attention by offset, attention maps, a learned position table's
similarity against the sinusoidal one's. Each takes plain arrays and returns a plotly Figure; model names (the
profiles may come from a visitor's file) reach it through core.safe_text.plotly_literal."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.plotting import PALETTE, SIGNED_COLORSCALE, labels
from core.plotting import standard_layout as _layout
from core.safe_text import plotly_literal


def attention_by_offset(profiles: Mapping[str, np.ndarray]) -> go.Figure:
    """Mean attention weight against the offset key - query, one line per model and layer."""
    figure = go.Figure()
    for i, (model, profile) in enumerate(profiles.items()):
        profile = np.asarray(profile)
        offsets = np.arange(profile.shape[1]) - (profile.shape[1] - 1) // 2
        for layer, row in enumerate(profile):
            figure.add_trace(
                go.Scatter(
                    x=offsets,
                    y=row,
                    mode="lines",
                    name=f"{plotly_literal(model)}, layer {layer + 1}",
                    line=dict(color=PALETTE[i % len(PALETTE)], dash="solid" if layer == 0 else "dot"),
                )
            )
    figure.update_layout(showlegend=True)
    figure.update_xaxes(title="offset key − query (tokens)")
    figure.update_yaxes(title="mean attention weight")
    return _layout(figure, "Does a model attend by relative position? Attention against offset", height=360)


def attention_maps(maps: Mapping[str, np.ndarray]) -> go.Figure:
    """One heatmap per model (queries down, keys across)."""
    figure = make_subplots(rows=1, cols=len(maps), subplot_titles=labels(maps), horizontal_spacing=0.08)
    for col, weights in enumerate(maps.values(), start=1):
        figure.add_trace(
            go.Heatmap(
                z=weights, colorscale="Blues", zmin=0, showscale=col == len(maps), colorbar=dict(title="weight")
            ),
            row=1,
            col=col,
        )
        # the panels share their queries down the side: the first one numbers them and titles the axis
        figure.update_yaxes(
            autorange="reversed", title="query" if col == 1 else None, showticklabels=col == 1, row=1, col=col
        )
        figure.update_xaxes(title="key", row=1, col=col)
    return _layout(figure, "Attention on one test window", height=360)


def position_similarity(by_offset: Mapping[str, np.ndarray]) -> go.Figure:
    """Mean cosine similarity of positions t and t + k against k, one line per table."""
    figure = go.Figure()
    for i, (name, values) in enumerate(by_offset.items()):
        figure.add_trace(
            go.Scatter(
                x=np.arange(len(values)),
                y=values,
                mode="lines+markers",
                name=plotly_literal(name),
                line=dict(color=PALETTE[i % len(PALETTE)]),
            )
        )
    figure.update_layout(showlegend=True)
    figure.update_xaxes(title="offset k (tokens)")
    figure.update_yaxes(title="cosine similarity")
    return _layout(figure, "Position similarity against offset: learned table vs sinusoids", height=340)


def similarity_matrix(matrix: np.ndarray, title: str) -> go.Figure:
    """Cosine similarity between positions of a position table (positions down and across)."""
    figure = go.Figure(
        go.Heatmap(z=matrix, colorscale=SIGNED_COLORSCALE, zmin=-1, zmax=1, colorbar=dict(title="cosine"))
    )
    figure.update_yaxes(autorange="reversed", title="position")
    figure.update_xaxes(title="position")
    return _layout(figure, title, height=360)
