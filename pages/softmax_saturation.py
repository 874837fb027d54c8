"""Softmax saturation: why attention divides by √d_k, what large scores do to the gradient, and the n² price."""

import numpy as np
import pandas as pd
import streamlit as st

from core.explain import attention
from core.explain.figures import attention as figures
from core.safe_text import markdown_text
from ui.common import data_section, next_page_link, page_intro, show_figure
from ui.entry import use_app_navigation

D_K_OPTIONS = [int(d) for d in 2 ** np.arange(13)]  # 1 .. 4096
SAMPLE_OPTIONS = [500, 1000, 2000, 4000, 8000]
LENGTH_OPTIONS = [512, 1024, 2048, 4096]
# The range of each number widget and the options of each choice widget, the one place each is written: the
# widget and the link check read it. Together with the text key they name every key of this page's link.
LINK_NUMBERS = {"a": (0.01, 1000.0), "temp": (0.05, 10.0)}
LINK_CHOICES = {"mc": SAMPLE_OPTIONS, "dk": D_K_OPTIONS, "n": LENGTH_OPTIONS}
use_app_navigation(LINK_NUMBERS, link_text=["scores"], link_choices=LINK_CHOICES)

A_GRID = np.logspace(-2, 3, 251)  # a from 0.01 to 1000
TABLE_A = [0.1, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 1000.0]
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
    return attention.time_attention(lengths)


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
    '"We suspect that for large values of d_k, the dot products grow large in magnitude, pushing the softmax '
    "function into regions where it has extremely small gradients. To counteract this effect, we scale the dot "
    'products by 1/√d_k." (Attention Is All You Need, 3.2.1)',
)

st.subheader("Scores [a, a, 2a]")
seed_outputs = attention.three_score_example(attention.SATURATION_SEED_A)[:, 2]
columns = st.columns([5, 5, 2])  # 16 significant digits need the room; y3(100) is just "1"
for column, a_value, y3 in zip(columns, attention.SATURATION_SEED_A, seed_outputs):
    column.metric(f"y3 at a = {a_value:g}", f"{y3:.16g}")
st.caption(
    "float64, computed stably. Exactly, y3(10) = 0.99990920838434097818…, whose nearest float64 is "
    "0.9999092083843409; the often quoted 0.9999092083843412 is two units in the last place above it."
)
a = st.number_input("a", *LINK_NUMBERS["a"], 10.0, key="a", bind="query-params")
outputs = attention.three_score_example(A_GRID)
chosen = attention.saturation_table([a]).iloc[0]
st.markdown(
    f"y3 = e^(2a) / (2e^a + e^(2a)) = 1 / (1 + 2e^(−a)). At a = {a:g}: y3 = **{chosen['y3']:.16g}**. "
    "Doubling one score does not double its weight; as the scale grows the largest score takes everything. "
    "Computed stably (the row maximum is subtracted first), so a = 1000 gives 1.0 instead of inf/inf = NaN."
)
show_figure(
    figures.saturation_curves(A_GRID, outputs, marked_a=a),
    pd.DataFrame({"a": A_GRID, "y1": outputs[:, 0], "y2": outputs[:, 1], "y3": outputs[:, 2]}),
    "softmax_saturation",
)

st.subheader("The gradient vanishes")
st.markdown(
    "The Jacobian of softmax is ∂y_i/∂s_j = y_i(δ_ij − y_j), i.e. diag(y) − y·yᵀ. When one y is near 1 and "
    "the rest near 0, every entry is near 0: the scores get almost no gradient."
)
table = attention.saturation_table(A_GRID)
left, right = st.columns(2)
left.metric(f"largest |∂y_i/∂s_j| at a = {a:g}", f"{chosen['jacobian_max_abs']:.3e}")
right.metric(f"‖J‖ (Frobenius) at a = {a:g}", f"{chosen['jacobian_norm']:.3e}")
show_figure(
    figures.jacobian_collapse(A_GRID, table["jacobian_max_abs"].to_numpy(), table["jacobian_norm"].to_numpy()),
    table,
    "jacobian_collapse",
)
st.dataframe(
    attention.saturation_table(TABLE_A),
    hide_index=True,
    column_config={
        column: st.column_config.NumberColumn(format="%.3e")
        for column in ("y1", "y2", "jacobian_max_abs", "jacobian_norm")
    },
)

with data_section("dot_product_scale"):  # the variance and the sharpness: one download
    st.subheader("Var(q·k) = d_k")
    st.markdown(
        "If q and k have independent components of mean 0 and variance 1, q·k = Σ q_i·k_i is a sum of d_k terms "
        "of variance 1: its variance is d_k. Dividing by √d_k brings it back to 1 whatever d_k."
    )
    n_samples = st.select_slider(
        "Monte Carlo samples per d_k", SAMPLE_OPTIONS, value=2000, key="mc", bind="query-params"
    )
    variance = variance_table(n_samples)
    largest = variance.iloc[-1]
    left, right = st.columns(2)
    left.metric(
        f"Var(q·k) at d_k = {int(largest['d_k'])} (theory {int(largest['d_k'])})",
        f"{largest['variance_unscaled']:.1f}",
        help=f"standard error ±{largest['variance_standard_error']:.1f} with {n_samples} samples (seed 0)",
    )
    right.metric(f"Var(q·k/√d_k) at d_k = {int(largest['d_k'])} (theory 1)", f"{largest['variance_scaled']:.3f}")
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
        f"One query against {N_KEYS} random keys, averaged over 200 queries (seed 0). Unscaled, at d_k = 1024 "
        f"the largest weight averages {sharpness['max_weight_unscaled'].iloc[-1]:.2f} and the entropy "
        f"{sharpness['entropy_unscaled'].iloc[-1]:.2f} nats; scaled, {sharpness['max_weight_scaled'].iloc[-1]:.2f} and "
        f"{sharpness['entropy_scaled'].iloc[-1]:.2f} (uniform would be log {N_KEYS} = {np.log(N_KEYS):.2f})."
    )

st.subheader("Try a row of scores")
st.markdown("Raw scores s are divided by temperature·√d_k before the softmax; the gradient is with respect to s.")
left, right = st.columns([3, 1])
text = left.text_input(
    f"Scores (up to {MAX_SCORES}, comma-separated)", DEFAULT_SCORES, max_chars=300, key="scores", bind="query-params"
)
right.button("Randomise", on_click=randomise_scores, icon=":material/casino:")
left, right = st.columns(2)
d_k = left.select_slider("d_k", D_K_OPTIONS, value=1, key="dk", bind="query-params")
temperature = right.slider("temperature", *LINK_NUMBERS["temp"], 1.0, step=0.05, key="temp", bind="query-params")
try:
    scores = parse_scores(text)
except ValueError as error:
    st.error(markdown_text(f"Scores: {error}.", 2_000))  # the scores come from the link: visitor text
    scores = parse_scores(DEFAULT_SCORES)
row = attention.softmax_row(scores, d_k, temperature)
columns = st.columns(3)
columns[0].metric("largest weight", f"{row.max_weight:.4f}")
columns[1].metric("entropy (nats)", f"{row.entropy:.4f}", help=f"uniform over {scores.size}: {np.log(scores.size):.4f}")
columns[2].metric("largest |∂y_i/∂s_j|", f"{np.abs(row.gradient).max():.3e}")
show_figure(
    figures.softmax_row(scores, row.probabilities, row.gradient),
    pd.DataFrame(
        {"index": np.arange(scores.size), "score": scores, "logit": row.logits, "weight": row.probabilities}
    ).join(pd.DataFrame(row.gradient, columns=[f"dy_i/ds_{j}" for j in range(scores.size)])),
    "softmax_row",
)

st.subheader("The price of attention: O(n²·d)")
longest = st.select_slider("Longest sequence n", LENGTH_OPTIONS, value=1024, key="n", bind="query-params")
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
bert = attention.attention_memory_bytes(512, n_heads=12, n_layers=12, batch=32)
st.markdown(
    "Measured on the machine this app runs on: one head, d = 64, float32, best of up to 3 calls, torch on "
    "2 threads (cached per setting). Every query meets every key, so time grows as n²·d. The explicit path "
    "materialises the n×n scores and weights: its memory grows as n². The fused "
    "`scaled_dot_product_attention` walks over blocks of keys with a running softmax (flash attention), so it "
    "never holds an n×n tensor. On CPU torch keeps no allocator statistics: memory here is the bytes of the "
    "tensors each path creates (scores, weights and output for the explicit path; the output for the fused "
    "one, whose fixed-size scratch blocks are not counted), not a measured peak."
)
st.markdown(
    f"Why early models stopped at 512 positions: training keeps every layer's attention weights for the "
    f"backward pass. BERT-base (12 layers × 12 heads) at n = 512 and batch 32 holds "
    f"{bert / 2**30:.1f} GiB of them in float32 (12·12·32·512²·4 bytes), on 2018 GPUs of 12–16 GB; doubling n "
    "quadruples it. A learned position table also has no row beyond the length it was trained on."
)

next_page_link("pages/softmax_saturation.py")
