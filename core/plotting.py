"""Figure conventions both products share: one palette, one signed colour scale, one readable house style, and
visitor text made safe for labels.

The house style (HOUSE_TEMPLATE) is the one place the figures' text colours are set: axis, tick, title and
legend text in the app's text colour on the app's background (.streamlit/config.toml), 14.1:1 against the page
and 14.5:1 against the white plot area, well above WCAG AA's 4.5:1 (tests/test_phone_layout.py computes it).
Legends sit in one horizontal row band above the plot, so they wrap on a phone instead of running under the axes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import plotly.graph_objects as go
from plotly.colors import get_colorscale

from core.safe_text import plotly_literal

PALETTE = ("#3b6ea5", "#e07b39", "#5a9e6f", "#b5504b", "#8c6bb1", "#8a7f5a", "#d17fb0", "#7f7f7f")

BACKGROUND = "#fbfbfa"  # .streamlit/config.toml [theme] backgroundColor: the paper behind every figure
PLOT_BACKGROUND = "#ffffff"
TEXT = "#1f2a36"  # .streamlit/config.toml [theme] textColor
GRID = "#e3e6ea"

# Every heatmap of a signed value uses this scale with zmin = -zmax: +1 is red (the top end), -1 is blue.
SIGNED_COLORSCALE = tuple(tuple(stop) for stop in get_colorscale("RdBu_r"))

_AXIS = dict(
    gridcolor=GRID,
    linecolor="#8a929c",
    zerolinecolor="#c5cad1",
    automargin=True,
    tickfont=dict(color=TEXT),
    title=dict(font=dict(color=TEXT), standoff=8),
)
HOUSE_TEMPLATE = go.layout.Template(
    layout=dict(
        font=dict(color=TEXT, size=12),
        paper_bgcolor=BACKGROUND,
        plot_bgcolor=PLOT_BACKGROUND,
        colorway=list(PALETTE),
        title=dict(font=dict(color=TEXT, size=15), x=0.0, xanchor="left", xref="paper", automargin=True),
        xaxis=_AXIS,
        yaxis=_AXIS,
        legend=dict(
            orientation="h", x=0.0, xanchor="left", y=1.02, yanchor="bottom", font=dict(color=TEXT), title_text=""
        ),
        coloraxis=dict(colorbar=dict(tickfont=dict(color=TEXT), title=dict(font=dict(color=TEXT)))),
        annotationdefaults=dict(font=dict(color=TEXT)),
        hoverlabel=dict(font=dict(color=TEXT), bgcolor=PLOT_BACKGROUND),
        margin=dict(l=10, r=10, t=10, b=10),
    )
)


def model_colours(models: Sequence[str]) -> dict[str, str]:
    """One palette colour per model, in the order given."""
    return {model: PALETTE[i % len(PALETTE)] for i, model in enumerate(models)}


def labels(names: Iterable[object]) -> list[str]:
    """Visitor text as Plotly labels (tick labels, legend names, subplot titles)."""
    return [plotly_literal(name) for name in names]


def house_layout(title: str, height: int, **layout) -> dict:
    """A layout dict in the house style: the template, a short title (it must fit 390 px), the height, and
    `layout`'s own settings. Built as one dict: plotly validates it once instead of path by path."""
    return dict(template=HOUSE_TEMPLATE, title=dict(text=title), height=height, **layout)


def standard_layout(figure: go.Figure, title: str, height: int = 380) -> go.Figure:
    """`figure` in the house style, with its title and height."""
    figure.update_layout(house_layout(title, height))
    return figure


def is_house_style(figure: go.Figure) -> bool:
    """Whether `figure` carries the house template (Streamlit's own chart theme must then stay off)."""
    return figure.layout.template.layout.paper_bgcolor == BACKGROUND
