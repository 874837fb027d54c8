"""Figure conventions both products share: one palette, one signed colour scale, one readable house style,
visitor text made safe for labels, and labels of scattered points placed where they meet nothing else.

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


# Where a point's label may go, in order of preference, as (Plotly textposition, x and y of the label's centre
# relative to the marker in label widths and heights): the first that meets no other label or marker is taken.
LABEL_PLACES = (
    ("top center", 0.0, 0.9),
    ("bottom center", 0.0, -0.9),
    ("middle right", 0.55, 0.0),
    ("middle left", -0.55, 0.0),
    ("top right", 0.5, 0.9),
    ("top left", -0.5, 0.9),
    ("bottom right", 0.5, -0.9),
    ("bottom left", -0.5, -0.9),
)
PLOT_PIXELS = (820.0, 330.0)  # the map's plot area on a wide screen (the README's picture), width and height
PHONE_PLOT_PIXELS = (250.0, 300.0)  # and on a 390-px phone
CHARACTER_PIXELS, LINE_PIXELS = 6.6, 15.0  # Plotly's 12-px sans serif: a character's mean width, a line


# Where a label goes when no place beside its point is free: its centre this many pixels from the point, in eight
# directions, drawn apart with a leader line to the point (a crowded cluster: the map's control levels).
LEADER_PIXELS = (34.0, 52.0)
LabelPlace = str | tuple[float, float]  # a textposition, or (ax, ay): a label drawn apart, offset from its point


def label_places(
    points: Sequence[tuple[float, float, str, Sequence[float]]],
    x_range: Sequence[float],
    y_range: Sequence[float],
    plots: Sequence[tuple[float, float]] = (PLOT_PIXELS,),
) -> list[LabelPlace]:
    """A place for each (x, y, label, (low, high) of its error bar), so that labels meet neither each other nor a
    marker or an error bar where that can be done: each label takes the first place of LABEL_PLACES that is free on
    every plot of `plots` (width, height in pixels), a Plotly textposition; where none is, the place LEADER_PIXELS
    away that overlaps least (its leader line included), as (ax, ay), the pixel offset of a Plotly annotation's text
    from its point (y down), if it overlaps less than half as much as the best place beside the point; else that
    place beside it. Points are placed from the top down."""
    boxes = [_PlacedLabels(points, x_range, y_range, plot) for plot in plots]
    places: list[LabelPlace] = [""] * len(points)
    for i in sorted(range(len(points)), key=lambda i: -points[i][1]):
        costs = [sum(costs) for costs in zip(*(plot.costs(i) for plot in boxes))]
        best = min(range(len(LABEL_PLACES)), key=lambda k: costs[k])  # min keeps the first of equal costs
        apart = min(range(len(LABEL_PLACES), len(costs)), key=lambda k: costs[k])
        if costs[apart] < costs[best] / 2:  # apart only where that clears at least half of what it would meet
            best = apart
        dx, dy = boxes[0].offset(i, best)
        places[i] = LABEL_PLACES[best][0] if best < len(LABEL_PLACES) else (round(dx, 1), round(-dy, 1) + 0.0)
        for plot in boxes:
            plot.take(i, best)
    return places


class _PlacedLabels:
    """label_places' pixels on one plot: the markers, the error bars and the labels placed so far."""

    def __init__(self, points, x_range, y_range, plot: tuple[float, float]) -> None:
        self.points, self.width, self.height = points, plot[0], plot[1]
        self.x_range, self.y_range = x_range, y_range
        self.pixels = [self.pixel(x, y) for x, y, _, _ in points]
        self.taken = [(px - 6, py - 6, px + 6, py + 6) for px, py in self.pixels]  # every marker, 12 px across
        for (px, _), (x, _, _, (low, high)) in zip(self.pixels, points):  # every error bar, its caps 8 px wide
            self.taken.append((px - 4, self.pixel(x, low)[1], px + 4, self.pixel(x, high)[1]))

    def pixel(self, x: float, y: float) -> tuple[float, float]:
        (x0, x1), (y0, y1) = self.x_range, self.y_range
        return (x - x0) / (x1 - x0) * self.width, (y - y0) / (y1 - y0) * self.height

    def size(self, i: int) -> tuple[float, float]:
        return CHARACTER_PIXELS * len(self.points[i][2]) + 4, LINE_PIXELS

    def offset(self, i: int, place: int) -> tuple[float, float]:
        """The label's centre from its point in pixels (y up) at `place`: an index of LABEL_PLACES, then of the
        places LEADER_PIXELS away (eight directions at each distance)."""
        w, h = self.size(i)
        if place < len(LABEL_PLACES):
            _, dx, dy = LABEL_PLACES[place]
            return dx * w + (6 if dx > 0 else -6 if dx < 0 else 0), dy * h
        distance = LEADER_PIXELS[(place - len(LABEL_PLACES)) // 8]
        ux, uy = _DIRECTIONS[(place - len(LABEL_PLACES)) % 8]
        return ux * (distance + w / 2), uy * distance

    def box(self, i: int, place: int) -> tuple[float, float, float, float]:
        (px, py), (w, h), (dx, dy) = self.pixels[i], self.size(i), self.offset(i, place)
        return px + dx - w / 2, py + dy - h / 2, px + dx + w / 2, py + dy + h / 2

    def costs(self, i: int) -> list[float]:
        """Per place (LABEL_PLACES, then those LEADER_PIXELS away): the area the label would share with what is
        taken, and what lies outside the plot."""
        others = [t for j, t in enumerate(self.taken) if j != i]  # its own error bar counts, its marker not
        costs = []
        own = (i, len(self.points) + i)  # a leader line starts at its own marker, on its own error bar
        for place in range(len(LABEL_PLACES) + 8 * len(LEADER_PIXELS)):
            box = self.box(i, place)
            outside = max(0.0, -box[0]) + max(0.0, box[2] - self.width)
            shared = sum(_overlap(box, t) for t in others)
            if place >= len(LABEL_PLACES):  # apart: inside the plot (one beside may stand above it), and its line
                outside += max(0.0, -box[1]) + max(0.0, box[3] - self.height)
                (px, py), (cx, cy) = self.pixels[i], ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
                line = (min(px, cx) - 1, min(py, cy) - 1, max(px, cx) + 1, max(py, cy) + 1)
                shared += sum(_overlap(line, t) for j, t in enumerate(self.taken) if j not in own)
            costs.append(shared + outside * LINE_PIXELS)
        return costs

    def take(self, i: int, place: int) -> None:
        self.taken.append(self.box(i, place))


_DIRECTIONS = ((0, 1), (0, -1), (1, 0), (-1, 0), (0.7, 0.7), (-0.7, 0.7), (0.7, -0.7), (-0.7, -0.7))


def _overlap(box, other) -> float:
    return max(0.0, min(box[2], other[2]) - max(box[0], other[0])) * max(
        0.0, min(box[3], other[3]) - max(box[1], other[1])
    )
