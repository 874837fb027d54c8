"""Figures of the Softmax saturation page: saturation, Jacobian collapse, Var(q·k), one row, the cost.

Two-panel figures set their axes in one layout dict instead of `make_subplots`, which costs ~100 ms a
figure in plotly's property validation and would eat most of the page's time budget. Their panels are
stacked, top and bottom, so that neither panel's labels reach the other on a phone.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.plotting import SIGNED_COLORSCALE, house_layout

SCALED, UNSCALED, THEORY = "#4C78A8", "#E45756", "black"


def _axis(title: str, **extra) -> dict:
    return dict(title=dict(text=title), **extra)


def _two_panels(title: str, height: int, top_title: str, bottom_title: str, gap: float = 0.2) -> dict:
    """Layout of two stacked panels: traces go on (x, y), the top, and (x2, y2), the bottom; each panel's
    title is its y axis title."""
    half = (1.0 - gap) / 2
    return house_layout(
        title,
        height,
        xaxis=dict(anchor="y"),
        yaxis=dict(domain=[1.0 - half, 1.0], anchor="x", title=dict(text=top_title)),
        xaxis2=dict(anchor="y2"),
        yaxis2=dict(domain=[0.0, half], anchor="x2", title=dict(text=bottom_title)),
    )


def _paired_lines(x: np.ndarray, red: tuple, blue: tuple) -> list[go.Scatter]:
    """Two series drawn in both panels of `_two_panels`: `red` and `blue` are (name, left y, right y).
    One legend entry per series; the red one is the unscaled / explicit path, the blue one its remedy."""
    traces = []
    for axes, side in (("", 1), ("2", 2)):
        for (name, *ys), colour in ((red, UNSCALED), (blue, SCALED)):
            traces.append(
                go.Scatter(
                    x=x,
                    y=ys[side - 1],
                    mode="lines+markers",
                    line=dict(color=colour),
                    name=name,
                    legendgroup=name,
                    showlegend=axes == "",
                    xaxis=f"x{axes}",
                    yaxis=f"y{axes}",
                )
            )
    return traces


def _marker(x: float, y_range: tuple[float, float], name: str, **axes) -> go.Scatter:
    return go.Scatter(x=[x, x], y=list(y_range), mode="lines", line=dict(color="grey", dash="dot"), name=name, **axes)


def saturation_curves(a: np.ndarray, outputs: np.ndarray, marked_a: float) -> go.Figure:
    """softmax([a, a, 2a]) against a: outputs is (len(a), 3); y1 = y2, so one line covers both. The third trace
    marks `marked_a` (the live view moves it)."""
    traces = [
        go.Scatter(x=a, y=outputs[:, 2], mode="lines", name="y3 (score 2a)", line=dict(color=UNSCALED)),
        go.Scatter(x=a, y=outputs[:, 0], mode="lines", name="y1 = y2 (score a)", line=dict(color=SCALED)),
        _marker(marked_a, (0.0, 1.0), f"a = {marked_a:g}"),
    ]
    layout = house_layout(
        "softmax([a, a, 2a]) against a",
        400,
        xaxis=_axis("a (log scale)", type="log", dtick=1),
        yaxis=_axis("softmax output", range=[-0.02, 1.02]),
    )
    return go.Figure(traces, layout)


def decade_step(values: np.ndarray, most: int = 8) -> int:
    """Decades between the ticks of a log axis over the positive `values`: 1, 2, 5, 10, 20, 50, 100, ... so that
    at most about `most` ticks are labelled. The Jacobian falls past 1e-300 before it underflows: one tick every
    decade or two was hundreds of overlapping labels."""
    positive = np.asarray(values, dtype=np.float64)
    positive = positive[positive > 0]
    if positive.size == 0:
        return 1
    decades = np.log10(positive.max()) - np.log10(positive.min())
    steps = (factor * 10**power for power in range(4) for factor in (1, 2, 5))  # the float64 range is 632 decades
    return next(step for step in steps if decades / step <= most)


def jacobian_collapse(a: np.ndarray, max_abs: np.ndarray, norm: np.ndarray, marked_a: float) -> go.Figure:
    """Largest |∂y_i/∂s_j| and the Frobenius norm of the Jacobian against a, both on log axes, and `marked_a`
    marked."""
    floor = float(np.min(max_abs[max_abs > 0]))
    traces = [
        go.Scatter(x=a, y=max_abs, mode="lines", name="largest |∂y_i/∂s_j|", line=dict(color=UNSCALED)),
        go.Scatter(x=a, y=norm, mode="lines", name="‖J‖ (Frobenius)", line=dict(color=SCALED, dash="dash")),
        _marker(marked_a, (floor, 1.0), f"a = {marked_a:g}"),
    ]
    layout = house_layout(
        "The Jacobian collapses",
        400,
        xaxis=_axis("a (log scale)", type="log", dtick=1),
        yaxis=_axis(
            "Jacobian size (log scale)", type="log", exponentformat="power", dtick=decade_step(np.r_[max_abs, norm])
        ),
    )
    return go.Figure(traces, layout)


def variance_vs_dk(d_k: np.ndarray, unscaled: np.ndarray, scaled: np.ndarray, theory: np.ndarray) -> go.Figure:
    """Monte Carlo Var(q·k) and Var(q·k/√d_k) against d_k, beside the theory lines d_k and 1."""
    traces = [
        go.Scatter(x=d_k, y=theory, mode="lines", line=dict(color=THEORY, dash="dash"), name="theory d_k"),
        go.Scatter(x=d_k, y=np.ones_like(theory), mode="lines", line=dict(color=THEORY, dash="dot"), name="theory 1"),
        go.Scatter(x=d_k, y=unscaled, mode="markers", marker=dict(size=9, color=UNSCALED), name="Var(q·k), measured"),
        go.Scatter(x=d_k, y=scaled, mode="markers", marker=dict(size=9, color=SCALED), name="Var(q·k/√d_k), measured"),
    ]
    layout = house_layout(
        "Var(q·k) against d_k",
        440,
        xaxis=_axis("d_k (log)", type="log", dtick="D2"),
        yaxis=_axis("variance (log)", type="log"),
    )
    return go.Figure(traces, layout)


def sharpness_vs_dk(
    d_k: np.ndarray,
    entropy_unscaled: np.ndarray,
    entropy_scaled: np.ndarray,
    entropy_uniform: float,
    max_weight_unscaled: np.ndarray,
    max_weight_scaled: np.ndarray,
) -> go.Figure:
    """Attention entropy (left) and largest weight (right) against d_k, with and without 1/√d_k."""
    traces = _paired_lines(
        d_k, ("q·k", entropy_unscaled, max_weight_unscaled), ("q·k/√d_k", entropy_scaled, max_weight_scaled)
    )
    traces.append(
        go.Scatter(
            x=[d_k[0], d_k[-1]],
            y=[entropy_uniform, entropy_uniform],
            mode="lines",
            line=dict(color="grey", dash="dot"),
            name="uniform: log n",
        )
    )
    layout = _two_panels("Attention sharpness against d_k", 620, "entropy (nats)", "largest weight")
    layout["xaxis"].update(_axis("d_k (log)", type="log", dtick="D2"))
    layout["xaxis2"].update(_axis("d_k (log)", type="log", dtick="D2"))
    layout["yaxis2"].update(range=[0, 1.02])
    return go.Figure(traces, layout)


def softmax_weights(scores: np.ndarray, probabilities: np.ndarray) -> go.Figure:
    """One row of scores' softmax weights as bars, each labelled with its value."""
    keys = np.arange(scores.size)
    bars = go.Bar(
        x=keys,
        y=probabilities,
        marker_color=SCALED,
        name="y_i",
        text=[f"{p:.3f}" for p in probabilities],
        textposition="outside",
    )
    layout = house_layout(
        "One row of scores: the weights",
        320,
        xaxis=_axis("score index i", dtick=1),
        yaxis=_axis("softmax output y_i", range=[0, 1.15]),
        showlegend=False,
    )
    return go.Figure(bars, layout)


def softmax_gradient(gradient: np.ndarray) -> go.Figure:
    """∂y_i/∂s_j of one row of scores as a heatmap on the signed scale, centred on 0."""
    keys = np.arange(gradient.shape[0])
    limit = float(np.abs(gradient).max()) or 1.0
    heatmap = go.Heatmap(
        z=gradient,
        x=keys,
        y=keys,
        zmin=-limit,
        zmax=limit,
        colorscale=SIGNED_COLORSCALE,
        colorbar=dict(title=dict(text="∂y/∂s")),
        hovertemplate="i %{y}<br>j %{x}<br>%{z:.3g}<extra></extra>",
    )
    layout = house_layout(
        "The gradient of the weights",
        340,
        xaxis=_axis("score j", dtick=1, constrain="domain"),
        yaxis=_axis("output i", dtick=1, autorange="reversed", scaleanchor="x", constrain="domain"),
    )
    return go.Figure(heatmap, layout)


def attention_cost(
    n: np.ndarray,
    explicit_seconds: np.ndarray,
    fused_seconds: np.ndarray,
    explicit_bytes: np.ndarray,
    fused_bytes: np.ndarray,
    memory_title: str,
) -> go.Figure:
    """Time (left) and memory (right) of one attention call against n, explicit vs fused, log-log."""
    traces = _paired_lines(
        n,
        ("explicit softmax(QKᵀ/√d)·V", explicit_seconds, explicit_bytes),
        ("fused scaled_dot_product_attention", fused_seconds, fused_bytes),
    )
    layout = _two_panels("Time and memory of one call", 640, "time of one call (s)", memory_title)
    for axis in ("xaxis", "xaxis2"):
        layout[axis].update(_axis("sequence length n (log)", type="log", dtick="D2"))
    for axis in ("yaxis", "yaxis2"):
        layout[axis].update(type="log", exponentformat="power", dtick=1)
    return go.Figure(traces, layout)
