"""Softmax saturation: why attention divides q·k by √d_k. Large scores push softmax to give one key all the weight,
and its gradient vanishes; the scale keeps scores where softmax still learns. Going further: the n² price of
attention. The saturation, Jacobian and score-row figures redraw in the browser while a control moves
(ui/live/views/softmax_saturation.js)."""

import numpy as np
import pandas as pd
import streamlit as st

from core.explain import attention, attention_cost
from core.explain.figures import attention as figures
from core.safe_text import markdown_text
from ui.common import data_section, going_further, next_page_link, page_intro, show_figure
from ui.first_paint import draw_first_figure_first
from ui.live import control, live_view
from ui.navigation import use_app_navigation

SAMPLE_OPTIONS = [500, 1000, 2000, 4000, 8000]
LENGTH_OPTIONS = [512, 1024, 2048, 4096]
# The range of each number widget and the options of each choice widget, the one place each is written: the
# widget and the link check read it. Together with the text key they name every key of this page's link.
LINK_CHOICES = {
    "a": attention.A_CHOICES,
    "temp": attention.TEMPERATURE_CHOICES,
    "mc": SAMPLE_OPTIONS,
    "dk": attention.D_K_CHOICES,
    "n": LENGTH_OPTIONS,
}
use_app_navigation({}, link_text=["scores"], link_choices=LINK_CHOICES)
draw_first_figure_first()  # ui/first_paint.py

A_GRID = np.logspace(-2, 3, 251)  # a from 0.01 to 1000
D_K_GRID = 2 ** np.arange(11)  # 1 .. 1024
N_KEYS = 64
MAX_SCORES = 16
DEFAULT_SCORES = "1, 2, 3, 4"


@st.cache_data(max_entries=8)
def variance_table(n_samples: int) -> pd.DataFrame:
    return attention.dot_product_variance(D_K_GRID, n_samples=n_samples, seed=0)


@st.cache_data(max_entries=1)
def sharpness_table() -> pd.DataFrame:
    return attention.attention_sharpness(D_K_GRID, n_keys=N_KEYS, seed=0)


@st.cache_data(max_entries=8)
def cost_table(longest: int) -> pd.DataFrame:
    lengths = [int(n) for n in 2 ** np.arange(6, int(np.log2(longest)) + 1)]  # 64 .. longest
    return attention_cost.time_attention(lengths)


def parse_scores(text: str) -> np.ndarray:
    """Comma- or space-separated numbers, 1..MAX_SCORES of them, each finite and |s| ≤ 1e6."""
    parts = [part for part in text.replace(",", " ").split() if part]
    if not 1 <= len(parts) <= MAX_SCORES:
        raise ValueError(f"type between 1 and {MAX_SCORES} numbers separated by commas, got {len(parts)}")
    try:
        scores = np.array([float(part) for part in parts])
    except ValueError:
        raise ValueError(f"could not read {text!r} as numbers; use e.g. {DEFAULT_SCORES!r}") from None
    if not np.isfinite(scores).all() or np.abs(scores).max() > 1e6:
        raise ValueError("scores must be finite numbers between -1e6 and 1e6")
    return scores


def randomise_scores() -> None:
    scores = np.random.default_rng().normal(0.0, 3.0, 6).round(1)
    st.session_state["scores"] = ", ".join(f"{s:g}" for s in scores)


page_intro(
    "Softmax saturation",
    "Attention turns each row of scores q·k into weights with softmax. When the scores are large, softmax hands "
    "one key nearly all the weight and its gradient all but vanishes, so the scores stop learning. Dividing q·k "
    "by √d_k keeps the scores at a size where softmax still learns.",
)

st.subheader("Scores [a, a, 2a]: one score twice the others")
a = st.select_slider(
    "a",
    attention.A_CHOICES,
    value=10,
    key="a",
    bind="query-params",
    help="The size of the scores: drag right and the largest score takes all the weight.",
)
chosen = attention.saturation_table([a]).iloc[0]
show_figure(
    figures.saturation_curves(A_GRID, attention.three_score_example(A_GRID), marked_a=a),
    pd.DataFrame(
        {"a": A_GRID, **{f"y{i + 1}": column for i, column in enumerate(attention.three_score_example(A_GRID).T)}}
    ),
    "softmax_saturation",
)
st.latex(r"y_3 = \frac{e^{2a}}{2e^{a} + e^{2a}} = \frac{1}{1 + 2e^{-a}}")
st.markdown(
    "Doubling one score does not double its weight: as a grows, the largest score takes everything "
    f"(y3 = {chosen['y3']:.5f} at a = {a:g}). Computed stably, so even "
    "a = 1000 gives 1 instead of inf/inf."
)

st.subheader("The gradient vanishes")
st.markdown("How much each weight moves when a score moves is the softmax Jacobian:")
st.latex(r"\frac{\partial y_i}{\partial s_j} = y_i\,(\delta_{ij} - y_j)")
st.markdown("When one y is near 1 and the rest near 0, every entry is near 0: the scores get almost no gradient.")
table = attention.saturation_table(A_GRID)
with st.container(key="live_jacobian"):
    left, right = st.columns(2)
    left.metric("largest |∂y_i/∂s_j| at this a", f"{chosen['jacobian_max_abs']:.3e}")
    right.metric("‖J‖ (Frobenius) at this a", f"{chosen['jacobian_norm']:.3e}")
show_figure(
    figures.jacobian_collapse(
        A_GRID, table["jacobian_max_abs"].to_numpy(), table["jacobian_norm"].to_numpy(), marked_a=a
    ),
    table,
    "jacobian_collapse",
)

with data_section("dot_product_scale"):  # the variance and the sharpness: one download
    st.subheader("Why √d_k: Var(q·k) = d_k")
    st.markdown(
        "If q and k have independent components of mean 0 and variance 1, q·k is a sum of d_k such products, so "
        "its variance is d_k: the wider the heads, the larger the scores. Dividing by √d_k brings the variance "
        "back to 1 whatever d_k."
    )
    n_samples = st.select_slider(
        "Random draws per d_k", SAMPLE_OPTIONS, value=2000, key="mc", bind="query-params",
        help="How many random q, k pairs each point averages: more draws, less scatter around the theory lines.",
    )  # fmt: skip
    variance = variance_table(n_samples)
    show_figure(
        figures.variance_vs_dk(
            variance["d_k"].to_numpy(),
            variance["variance_unscaled"].to_numpy(),
            variance["variance_scaled"].to_numpy(),
            variance["theory_unscaled"].to_numpy(),
        ),
        variance,
        "dot_product_variance",
    )
    largest = variance.iloc[-1]
    st.caption(
        f"At d_k = {int(largest['d_k'])}: Var(q·k) = {largest['variance_unscaled']:.0f} (theory "
        f"{int(largest['d_k'])}, standard error ±{largest['variance_standard_error']:.0f}), Var(q·k/√d_k) = "
        f"{largest['variance_scaled']:.2f} (theory 1), from {n_samples} draws (seed 0)."
    )
    sharpness = sharpness_table()
    show_figure(
        figures.sharpness_vs_dk(
            sharpness["d_k"].to_numpy(),
            sharpness["entropy_unscaled"].to_numpy(),
            sharpness["entropy_scaled"].to_numpy(),
            float(sharpness["entropy_uniform"].iloc[0]),
            sharpness["max_weight_unscaled"].to_numpy(),
            sharpness["max_weight_scaled"].to_numpy(),
        ),
        sharpness,
        "attention_sharpness",
    )
    st.markdown(
        f"One query against {N_KEYS} random keys, averaged over 200 queries (seed 0). Unscaled, at d_k = 1024 the "
        f"largest weight averages {sharpness['max_weight_unscaled'].iloc[-1]:.2f}: attention looks at one key. "
        f"Scaled, {sharpness['max_weight_scaled'].iloc[-1]:.2f}, and the entropy stays near that of spreading "
        f"evenly (log {N_KEYS} = {np.log(N_KEYS):.2f} nats)."
    )

st.subheader("Try a row of scores")
st.markdown("Raw scores s are divided by temperature·√d_k before the softmax; the gradient is with respect to s.")
left, right = st.columns([3, 1])
text = left.text_input(
    f"Scores (up to {MAX_SCORES}, comma-separated)", DEFAULT_SCORES, max_chars=300, key="scores", bind="query-params",
    help="One row of raw scores q·k: the bars below show the weights softmax gives them, as you type.",
)  # fmt: skip
right.button("Randomise", on_click=randomise_scores, icon=":material/casino:", help="Six random scores of spread 3.")
left, right = st.columns(2)
d_k = left.select_slider(
    "d_k", attention.D_K_CHOICES, value=1, key="dk", bind="query-params",
    help="The head width the scores are divided by √ of: larger d_k, flatter weights.",
)  # fmt: skip
temperature = right.select_slider(
    "temperature", attention.TEMPERATURE_CHOICES, value=1, key="temp", bind="query-params",
    help="Divides the scores too: below 1 sharpens the weights, above 1 flattens them.",
)  # fmt: skip
try:
    scores = parse_scores(text)
except ValueError as error:
    st.error(markdown_text(f"Scores: {error}.", 2_000))  # the scores come from the link: visitor text
    scores = parse_scores(DEFAULT_SCORES)
row = attention.softmax_row(scores, d_k, temperature)
with st.container(key="live_row"):
    columns = st.columns(3)
    columns[0].metric("largest weight", f"{row.max_weight:.4f}")
    columns[1].metric("entropy (nats)", f"{row.entropy:.4f}", help=f"evenly spread over {scores.size}: log n")
    columns[2].metric("largest |∂y_i/∂s_j|", f"{np.abs(row.gradient).max():.3e}")
with data_section("softmax_row"):  # the weights and the gradient: one download
    show_figure(
        figures.softmax_weights(scores, row.probabilities),
        pd.DataFrame(
            {"index": np.arange(scores.size), "score": scores, "logit": row.logits, "weight": row.probabilities}
        ),
        "softmax_weights",
    )
    show_figure(
        figures.softmax_gradient(row.gradient),
        pd.DataFrame(row.gradient, columns=[f"dy_i/ds_{j}" for j in range(scores.size)]).rename_axis("i").reset_index(),
        "softmax_gradient",
    )

with going_further():
    st.subheader("The price of attention: time and memory grow as n²")
    longest = st.select_slider(
        "Longest sequence n", LENGTH_OPTIONS, value=1024, key="n", bind="query-params",
        help="How far the timing runs: each doubling of n takes about four times as long.",
    )  # fmt: skip
    cost = cost_table(longest)
    last = cost.iloc[-1]
    columns = st.columns(3)
    columns[0].metric(f"explicit, n = {int(last['n'])}", f"{last['explicit_seconds'] * 1e3:.1f} ms")
    columns[1].metric(f"fused, n = {int(last['n'])}", f"{last['fused_seconds'] * 1e3:.1f} ms")
    columns[2].metric(f"n×n scores at n = {int(last['n'])} (float32)", f"{last['score_matrix_bytes'] / 2**20:.0f} MiB")
    show_figure(
        figures.attention_cost(
            cost["n"].to_numpy(),
            cost["explicit_seconds"].to_numpy(),
            cost["fused_seconds"].to_numpy(),
            cost["explicit_bytes"].to_numpy(),
            cost["fused_bytes"].to_numpy(),
            f"bytes held ({cost['memory_source'].iloc[0]})",
        ),
        cost,
        "attention_cost",
    )
    bert = attention_cost.attention_memory_bytes(512, n_heads=12, n_layers=12, batch=32)
    st.markdown(
        "Every query meets every key, so one attention call costs time in proportion to n²·d. The explicit path "
        "holds the n×n scores and weights in memory; the fused `scaled_dot_product_attention` (flash attention) "
        "walks over blocks of keys with a running softmax and never holds an n×n array. Measured on the machine "
        "this app runs on: one head, d = 64, float32, best of up to 3 calls, torch on 2 threads. Memory is the "
        "size of the arrays each path creates, not a measured peak (torch keeps no such statistics on a CPU)."
    )
    st.markdown(
        f"Why early models stopped at 512 positions: training keeps every layer's attention weights for the "
        f"backward pass. BERT-base (12 layers × 12 heads) at n = 512 and batch 32 holds "
        f"{bert / 2**30:.1f} GiB of them in float32 (12·12·32·512²·4 bytes), on 2018 GPUs of 12–16 GB; doubling n "
        "quadruples it."
    )
    st.caption(
        'The quote behind this page: "We suspect that for large values of d_k, the dot products grow large in '
        "magnitude, pushing the softmax function into regions where it has extremely small gradients. To "
        'counteract this effect, we scale the dot products by 1/√d_k." (Attention Is All You Need, 3.2.1)'
    )

live_view(
    "softmax_saturation",
    {
        "a": control("select_slider", attention.A_CHOICES),
        "dk": control("select_slider", attention.D_K_CHOICES),
        "temp": control("select_slider", attention.TEMPERATURE_CHOICES),
        "scores": control("text"),
    },
    {"a": a, "dk": d_k, "temp": temperature, "scores": text},
    max_scores=MAX_SCORES,
)
next_page_link("pages/softmax_saturation.py")
