"""Figures of the Encoding matrix and Wavelengths pages: heatmaps, waves, wavelengths, the binary counter."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.plotting import PALETTE, SIGNED_COLORSCALE, house_layout, standard_layout

_layout = standard_layout  # the house style: readable text, short titles, legend above the plot


def encoding_heatmap(
    matrix: np.ndarray,
    positions: np.ndarray,
    dimensions: np.ndarray,
    title: str,
    zrange: tuple[float, float] | None = (-1.0, 1.0),
) -> go.Figure:
    """Position × dimension heatmap. `positions` and `dimensions` label the rows and columns shown, so a
    strided overview keeps the true axis values. Float32 keeps the payload half the size."""
    zmin, zmax = zrange if zrange is not None else (None, None)
    figure = go.Figure(
        go.Heatmap(
            z=matrix.astype(np.float32),
            x=dimensions,
            y=positions,
            zmin=zmin,
            zmax=zmax,
            colorscale=SIGNED_COLORSCALE,
            colorbar=dict(title="value"),
            hovertemplate="position %{y}<br>dimension %{x}<br>value %{z:.4f}<extra></extra>",
        )
    )
    figure.update_yaxes(title="position", autorange="reversed")
    figure.update_xaxes(title="dimension")
    return _layout(figure, title, height=480)


def dimension_waves(
    fine_positions: np.ndarray,
    curves: np.ndarray,
    positions: np.ndarray,
    samples: np.ndarray,
    dimensions: list[int],
    wavelengths: np.ndarray,
) -> go.Figure:
    """Each chosen dimension as its true curve over continuous position (`curves` is (len(fine_positions),
    len(dimensions))) and, as dots of the same colour, the values the encoding takes at the whole positions
    (`samples` is (len(positions), len(dimensions)); `positions` may be empty when they are too dense to show).
    Traces come in pairs, curve then dots, in the order of `dimensions` (the live view restyles them so)."""
    traces = []
    for j, dim in enumerate(dimensions):
        kind = "sin" if dim % 2 == 0 else "cos"
        colour = PALETTE[j % len(PALETTE)]
        traces.append(
            go.Scatter(
                x=fine_positions,
                y=curves[:, j],
                mode="lines",
                line=dict(color=colour, width=1.5),
                name=f"dim {dim} ({kind}, λ {wavelengths[j]:.4g})",
                legendgroup=str(dim),
                hovertemplate="position %{x:.2f}<br>value %{y:.4f}<extra></extra>",
            )
        )
        traces.append(
            go.Scatter(
                x=positions,
                y=samples[:, j] if len(positions) else [],
                mode="markers",
                marker=dict(color=colour, size=5),
                name=f"dim {dim} at whole positions",
                legendgroup=str(dim),
                showlegend=False,
                hovertemplate="position %{x}<br>value %{y:.4f}<extra></extra>",
            )
        )
    layout = house_layout(
        "One wave per dimension",
        440,
        xaxis=dict(title=dict(text="position")),
        yaxis=dict(title=dict(text="PE value"), range=[-1.1, 1.1]),
        hovermode="closest",
    )
    return go.Figure(traces, layout)


def position_vector(vector: np.ndarray, position: int) -> go.Figure:
    """The encoding of one position as a bar per dimension, every value in [-1, 1]."""
    figure = go.Figure(go.Bar(x=np.arange(vector.size), y=vector, marker_color="#4C78A8"))
    figure.update_xaxes(title="dimension")
    figure.update_yaxes(title="PE value", range=[-1.05, 1.05])
    return _layout(figure, f"The full vector PE({position})", height=320)


MARKERS_UP_TO = 64  # beyond this many points a marker per point is a solid band, and costs a redraw its time


def wavelength_mode(points: int) -> str:
    """Markers on the wavelength line while they can be told apart (the live view switches alike)."""
    return "lines+markers" if points <= MARKERS_UP_TO else "lines"


def wavelength_plot(pair_index: np.ndarray, wavelengths: np.ndarray, base: float, d_model: int) -> go.Figure:
    """Wavelength per sin/cos pair on a log axis (frequency on hover), the shortest and longest marked and labelled
    inside the plot, and base·2π as a dotted line labelled at its left end, away from the longest label at the
    right. Three traces in this order (the live view restyles them): the wavelengths, the two ends, base·2π."""
    ends = [0, len(wavelengths) - 1]
    ceiling = base * 2 * np.pi
    traces = [
        go.Scatter(
            x=pair_index,
            y=wavelengths,
            mode=wavelength_mode(len(wavelengths)),
            marker=dict(size=4),
            name="wavelength λ_i",
            customdata=1.0 / wavelengths,
            hovertemplate=(
                "pair %{x}<br>λ = %{y:,.4g} positions<br>frequency %{customdata:.4g} cycles/position<extra></extra>"
            ),
        ),
        go.Scatter(
            x=pair_index[ends],
            y=wavelengths[ends],
            mode="markers+text",
            marker=dict(size=10, color="#b5504b"),
            text=[f"shortest {wavelengths[0]:,.2f}", f"longest {wavelengths[-1]:,.0f}"],
            textposition=["middle right", "bottom left"],
            name="the two ends",
            hoverinfo="skip",
        ),
        go.Scatter(
            x=[pair_index[0], pair_index[-1]],
            y=[ceiling, ceiling],
            mode="lines+text",
            line=dict(color="grey", dash="dot"),
            text=[f"base·2π = {ceiling:,.0f}", ""],
            textposition="top right",
            name="base·2π",
            hoverinfo="skip",
        ),
    ]
    layout = house_layout(
        f"Wavelengths, base {base:,.0f}, d {d_model}",
        440,
        showlegend=False,
        xaxis=dict(title=dict(text="pair index i (dimensions 2i and 2i+1)")),
        # a decade of headroom above base·2π keeps its label inside the plot
        yaxis=dict(
            title=dict(text="wavelength in positions (log scale)"),
            type="log",
            dtick=1,
            range=[0, np.log10(ceiling) + 0.6],
        ),
    )
    return go.Figure(traces, layout)


def binary_counter(positions: np.ndarray, bits: np.ndarray, fine_positions: np.ndarray, waves: np.ndarray) -> go.Figure:
    """Bits of 0..N (top) above sinusoids of the same periods 2, 4, 8, ... (bottom): stacked, so the two panels'
    titles and labels never meet on a phone. Each wave and its bit (dotted) share one colour and are named beside
    the wave at the right, not in a legend: a legend above the figure sat over the bit table it does not belong
    to."""
    n_bits = bits.shape[1]
    figure = make_subplots(
        rows=2,
        cols=1,
        row_heights=[0.45, 0.55],
        vertical_spacing=0.14,
    )
    figure.add_trace(
        go.Heatmap(
            z=bits.astype(np.int8).T,
            y=[f"bit {b}" for b in range(n_bits)],
            x=positions,
            colorscale=[[0, "#F2F2F2"], [1, "#4C78A8"]],
            showscale=False,
            texttemplate="%{z}",
            hovertemplate="position %{x}<br>%{y}<br>value %{z}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    for b in range(n_bits):
        _wave_and_bit(figure, b, fine_positions, waves[:, b], positions, bits[:, b])
    figure.update_yaxes(title="bits of the position", row=1, col=1)
    figure.update_xaxes(title="position", row=1, col=1)
    figure.update_xaxes(title="position", row=2, col=1)
    figure.update_yaxes(showticklabels=False, title="waves, same periods", row=2, col=1)
    figure.update_layout(showlegend=False, margin=dict(r=70))
    return _layout(figure, "The low bit flips fastest", height=620)


def _wave_and_bit(
    figure: go.Figure, b: int, fine_positions: np.ndarray, wave: np.ndarray, positions: np.ndarray, bit: np.ndarray
) -> None:
    """Bit b's wave (solid) and the bit itself (dotted) in the lower panel, offset upward by b, in one colour,
    named at the right end of the wave."""
    offset, colour, period = 2.5 * b, PALETTE[b % len(PALETTE)], 2 ** (b + 1)
    common = dict(mode="lines", legendgroup=str(b), row=2, col=1)
    figure.add_scatter(x=fine_positions, y=wave + offset, line=dict(color=colour), name=f"period {period}", **common)
    figure.add_scatter(
        x=positions,
        y=bit * 2 - 1 + offset,
        line=dict(color=colour, shape="hv", dash="dot", width=1),
        name=f"bit {b}",
        **common,
    )
    figure.add_annotation(
        text=f"bit {b}<br>period {period}",
        x=1.0,
        xref="x2 domain",
        xanchor="left",
        y=offset,
        yref="y2",
        showarrow=False,
        align="left",
        font=dict(color=colour),
    )
