"""Figures of the Similarity page: score against offset, the position × position matrix, the shift check.

Each figure is built from one layout dict: plotly's update_* calls validate property paths one by one
and cost tens of milliseconds a figure, which the page's time budget cannot spare.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.plotting import SIGNED_COLORSCALE, house_layout


def _layout(title: str, x_title: str, y_title: str, height: int = 420, **axes) -> dict:
    """One-panel layout in the house style; `axes` may hold extra xaxis=... / yaxis=... settings."""
    return house_layout(
        title,
        height,
        xaxis=dict(title=dict(text=x_title), **axes.get("xaxis", {})),
        yaxis=dict(title=dict(text=y_title), **axes.get("yaxis", {})),
    )


LINE_DASHES = ("solid", "dash", "dot", "dashdot")
CLOSED_FORM_DOTS_UP_TO = 128  # the closed form as rings up to this many offsets, as a dotted line beyond


def closed_form_mode(offsets: int) -> str:
    """Rings on each offset while they can be told apart, a dotted line beyond (the live view switches alike)."""
    return "markers" if offsets <= CLOSED_FORM_DOTS_UP_TO else "lines"


def offset_curves(
    offsets: np.ndarray,
    starts: np.ndarray,
    curves: np.ndarray,
    y_title: str,
    title: str,
    closed_form: np.ndarray | None = None,
    closed_form_label: str = "closed form",
    note: str = "",
) -> go.Figure:
    """One line per start t over offset k (curves is (len(starts), len(offsets))), and the closed form as dots on
    top. Lines that coincide stay visible: the first start is drawn widest and each later one narrower and
    dashed, so four equal curves read as one striped line, and `note` says so in the title. The closed-form
    trace is always there (hidden when there is none), so a live view restyles a fixed list of traces."""
    traces = [
        go.Scatter(
            x=offsets,
            y=curves[row],
            mode="lines",
            line=dict(width=7 - 1.5 * row, dash=LINE_DASHES[row % len(LINE_DASHES)]),
            name=f"t = {start}",
        )
        for row, start in enumerate(starts)
    ]
    traces.append(
        go.Scatter(
            x=offsets,
            y=closed_form if closed_form is not None else [],
            mode=closed_form_mode(len(offsets)),
            marker=dict(size=5, color="black", symbol="circle-open"),
            line=dict(color="black", dash="dot", width=1.5),
            name=closed_form_label,
            visible=closed_form is not None,
        )
    )
    # the note joins the title, which the page shows as a line that wraps on a phone (inside the plot it met the
    # ticks at 390 px)
    return go.Figure(traces, _layout(f"{title}: {note}" if note else title, "offset k", y_title))


def similarity_heatmap(matrix: np.ndarray, positions: np.ndarray, title: str, value_label: str) -> go.Figure:
    """Position × position heatmap; `positions` labels the rows and columns kept (strided when large). Square
    cells that fill their axes (the axes shrink to the square instead of padding it with empty space), and the
    colour scale is centred on 0 so positive and negative scores read alike. Float32 halves the payload."""
    limit = float(np.abs(matrix).max()) or 1.0
    heatmap = go.Heatmap(
        z=matrix.astype(np.float32),
        x=positions,
        y=positions,
        zmin=-limit,
        zmax=limit,
        colorscale=SIGNED_COLORSCALE,
        colorbar=dict(title=dict(text=value_label, side="right")),  # beside the bar: above it, it met the top tick
        hovertemplate="m %{y}<br>n %{x}<br>" + value_label + " %{z:.4f}<extra></extra>",
    )
    layout = _layout(
        title,
        "position n",
        "position m",
        height=520,
        xaxis=dict(constrain="domain"),
        yaxis=dict(autorange="reversed", scaleanchor="x", constrain="domain"),
    )
    return go.Figure(heatmap, layout)


def shift_vectors(
    pe_start: np.ndarray, shifted: np.ndarray, pe_target: np.ndarray, start: int, offset: int
) -> go.Figure:
    """PE(t), PE(t+k) and M_k·PE(t), one value per dimension: PE(t) as grey rings, PE(t+k) as blue bars and
    M_k·PE(t) as red crosses, which land on the tops of the bars. Three traces in this order."""
    dimensions = np.arange(pe_start.size)
    traces = [
        go.Scatter(
            x=dimensions,
            y=pe_start,
            mode="markers",
            marker=dict(size=7, color="#9a9a9a", symbol="circle-open"),
            name=f"PE({start})",
        ),
        go.Bar(x=dimensions, y=pe_target, marker_color="#4C78A8", name=f"PE({start + offset})"),
        go.Scatter(
            x=dimensions,
            y=shifted,
            mode="markers",
            marker=dict(size=7, color="#E45756", symbol="x-thin", line=dict(width=2, color="#E45756")),
            name=f"M_{offset}·PE({start})",
        ),
    ]
    title = f"One rotation carries PE({start}) to PE({start + offset})"
    return go.Figure(traces, _layout(title, "dimension", "value", height=360, yaxis=dict(range=[-1.1, 1.1])))


def beyond_trained(offsets: np.ndarray, curves: dict[str, np.ndarray], train_len: int, title: str) -> go.Figure:
    """A score against the offset under each scaling method, the trained length marked and what lies past it
    shaded."""
    figure = go.Figure()
    figure.add_vrect(x0=train_len, x1=float(offsets[-1]), fillcolor="#b5504b", opacity=0.08, line_width=0)
    figure.add_vline(
        x=train_len,
        line_color="#b5504b",
        line_dash="dash",
        annotation_text="trained length",
        annotation_position="bottom right",
    )
    for name, values in curves.items():
        figure.add_trace(go.Scatter(x=offsets, y=values, mode="lines", name=name))
    figure.update_layout(_layout(title, "offset (positions)", "score", height=380))
    return figure
