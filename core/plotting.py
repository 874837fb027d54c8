"""Figure conventions both products share: one palette, one plain layout, visitor text made safe for labels."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import plotly.graph_objects as go

from core.safe_text import plotly_literal

PALETTE = ("#3b6ea5", "#e07b39", "#5a9e6f", "#b5504b", "#8c6bb1", "#8a7f5a", "#d17fb0", "#7f7f7f")


def model_colours(models: Sequence[str]) -> dict[str, str]:
    """One palette colour per model, in the order given."""
    return {model: PALETTE[i % len(PALETTE)] for i, model in enumerate(models)}


def labels(names: Iterable[object]) -> list[str]:
    """Visitor text as Plotly labels (tick labels, legend names, subplot titles)."""
    return [plotly_literal(name) for name in names]


def standard_layout(figure: go.Figure, title: str, height: int = 380) -> go.Figure:
    """`figure` with its title, height and the house margins."""
    figure.update_layout(title=title, height=height, margin=dict(l=60, r=20, t=50, b=50))
    return figure
