"""Similarity vs offset: PE(t)·PE(t+k) depends on k alone, one rotation M_k shifts every position, and
how a learned table, RoPE, ALiBi and complex embeddings see distance."""

import numpy as np
import pandas as pd
import streamlit as st

from core.explain import attention, encodings, extrapolation, similarity
from core.explain.figures import similarity as figures
from ui.common import data_section, next_page_link, page_intro, show_figure
from ui.entry import use_app_navigation

# The range of each number widget and the options of each choice widget, the one place each is written: the
# widget and the link check read it. Together they name every key of this page's link.
LINK_NUMBERS = {
    "d": (2, 1024),
    "n": (8, 1024),
    "kmax": (1, 512),
    "t": (0, 1024),
    "k": (0, 1024),
    "s": (1, 512),
    "train_len": (16, 1024),
}
OTHER_SCHEMES = [scheme for scheme in similarity.SCHEMES if scheme != "sinusoidal"]
LINK_CHOICES = {"base": encodings.PE_BASES, "scheme": OTHER_SCHEMES, "scale": [1, 2, 4, 8, 16]}
use_app_navigation(LINK_NUMBERS, link_choices=LINK_CHOICES)

MAX_SIDE = 256  # heatmaps beyond 256 × 256 cells are strided (≈0.35 MB of figure data each)
N_STARTS = 4


def curve_starts(n_positions: int) -> np.ndarray:
    return np.unique(np.linspace(0, n_positions - 1, N_STARTS).round().astype(int))


@st.cache_data(max_entries=16)
def picture(scheme: str, n_positions: int, d_model: int, max_offset: int, base: float) -> similarity.SimilarityPicture:
    return similarity.similarity_picture(
        scheme, n_positions, d_model, curve_starts(n_positions), np.arange(max_offset + 1), base, max_side=MAX_SIDE
    )


@st.cache_data(max_entries=16)
def shift_numbers(start: int, offset: int, d_model: int, base: float) -> tuple[dict, float]:
    """The shift check at (t, k) and how far M_kᵀ·M_k is from the identity (a d³ product, hence cached)."""
    rotation = encodings.shift_matrix(offset, d_model, base)
    orthogonality_error = float(np.abs(rotation.T @ rotation - np.eye(d_model)).max())
    return similarity.shift_check(start, offset, d_model, base), orthogonality_error


@st.cache_data(max_entries=16)
def rope_shift_error(d_model: int, n_positions: int, shift: int, base: float) -> float:
    q, k = attention.random_query_key(d_model)
    return attention.rope_shift_error(q, k, n_positions, shift, base)


def curves_frame(starts: np.ndarray, offsets: np.ndarray, result: similarity.SimilarityPicture) -> pd.DataFrame:
    frame = pd.DataFrame(result.curves.T, columns=[f"t = {t}" for t in starts]).assign(offset=offsets)
    if result.closed_form is not None:
        frame["closed form"] = result.closed_form
    return frame[["offset", *frame.columns.drop("offset")]]


def matrix_frame(result: similarity.SimilarityPicture) -> pd.DataFrame:
    return (
        pd.DataFrame(
            result.matrix.astype(np.float32), index=result.positions, columns=[f"n = {n}" for n in result.positions]
        )
        .rename_axis("m")
        .reset_index()
    )


def strided_note(n_positions: int, positions: np.ndarray) -> None:
    if positions.size < n_positions:
        st.info(
            f"Heatmap strided to {positions.size} × {positions.size} cells: every {positions[1] - positions[0]}. "
            f"position of {n_positions}. The curves above are exact."
        )


page_intro(
    "Similarity vs offset",
    "With the sinusoidal encoding, how similar two positions are depends on how far apart they are, not on "
    "where they are: PE(t)·PE(t+k) = Σ_i cos(k·ω_i). And for any fixed offset k there is one linear map M_k "
    "that carries every PE(t) to PE(t+k), which is what lets attention learn to look *k places back*.",
)

left, right = st.columns(2)  # in the page, not the sidebar, which covers the figures on a phone
d_model = left.slider("d_model", *LINK_NUMBERS["d"], 128, step=2, key="d", bind="query-params")
base = right.select_slider(
    "base", options=LINK_CHOICES["base"], value=encodings.DEFAULT_BASE, key="base", bind="query-params"
)
left, right = st.columns(2)
n_positions = left.slider("Positions", *LINK_NUMBERS["n"], 128, key="n", bind="query-params")
max_offset = right.slider("Offsets shown (largest k)", *LINK_NUMBERS["kmax"], 64, key="kmax", bind="query-params")

if d_model % 2:  # a link can carry an odd value past the slider's step
    st.warning(
        f"d_model = {d_model} is odd: its last sine has no cosine partner, so no rotation shifts it. "
        f"Showing d_model = {d_model - 1}."
    )
    d_model -= 1
starts = curve_starts(n_positions)
offsets = np.arange(max_offset + 1)

with data_section("offset_similarity"):  # the curves and the matrix: one download
    st.subheader("The dot product depends on the offset alone")
    sinusoidal = picture("sinusoidal", n_positions, d_model, max_offset, float(base))
    show_figure(
        figures.offset_curves(
            offsets,
            starts,
            sinusoidal.curves,
            sinusoidal.curve_label,
            f"PE(t)·PE(t+k) from {starts.size} starts",
            sinusoidal.closed_form,
            "Σ_i cos(k·ω_i)",
        ),
        curves_frame(starts, offsets, sinusoidal),
        "dot_product_vs_offset",
    )
    left, right = st.columns(2)
    left.metric("Largest gap between starts", f"{similarity.spread_across_starts(sinusoidal.curves):.2e}")
    right.metric("Largest gap to Σ cos(k·ω_i)", f"{np.abs(sinusoidal.curves - sinusoidal.closed_form).max():.2e}")
    st.markdown(
        f"The lines from t = {', '.join(map(str, starts))} lie on top of each other and on the closed form: "
        "sin a·sin b + cos a·cos b = cos(a − b), so the start cancels. At k = 0 the product is d/2, every "
        "position's squared norm; it drops quickly with the offset and never climbs back to d/2 at a whole "
        "offset k ≠ 0 (the fastest pair, ω_0 = 1, would need k to be a multiple of 2π)."
    )

    show_figure(
        figures.similarity_heatmap(sinusoidal.matrix, sinusoidal.positions, "Cosine similarity, all pairs", "cosine"),
        matrix_frame(sinusoidal),
        "cosine_similarity",
    )
    strided_note(n_positions, sinusoidal.positions)
    st.markdown("Every diagonal is constant (a Toeplitz matrix): the similarity of m and n is a function of n − m.")

st.subheader("A rotation shifts every position: PE(t+k) = M_k·PE(t)")
st.markdown(
    "M_k is block-diagonal: pair i is the 2 × 2 rotation by k·ω_i, "
    "[[cos kω_i, sin kω_i], [−sin kω_i, cos kω_i]]. It does not depend on t."
)
left, right = st.columns(2)
start = left.number_input("Start t", *LINK_NUMBERS["t"], 10, key="t", bind="query-params")
offset = right.number_input("Offset k", *LINK_NUMBERS["k"], 5, key="k", bind="query-params")
check, orthogonality_error = shift_numbers(int(start), int(offset), d_model, float(base))
left, right = st.columns(2)
left.metric(f"max |M_{offset}·PE({start}) − PE({start + offset})|", f"{check['max_error']:.2e}")
right.metric(f"max |M_{offset}ᵀ·M_{offset} − I| (orthogonal)", f"{orthogonality_error:.2e}")
show_figure(
    figures.shift_vectors(check["pe_start"], check["shifted"], check["pe_target"], int(start), int(offset)),
    pd.DataFrame(
        {
            "dimension": np.arange(d_model),
            f"PE({start})": check["pe_start"],
            f"M_{offset}·PE({start})": check["shifted"],
            f"PE({start + offset})": check["pe_target"],
        }
    ),
    "shift_matrix_check",
)
st.caption("The error is rounding: float64 carries about 16 digits, and the angles t·ω grow with t.")

with data_section("other_schemes"):
    st.subheader("The same picture for the other schemes")
    scheme = st.selectbox("Scheme", LINK_CHOICES["scheme"], key="scheme", bind="query-params")
    other = picture(scheme, n_positions, d_model, max_offset, float(base))
    st.markdown(similarity.SCHEME_IDEAS[scheme])
    show_figure(
        figures.offset_curves(
            offsets,
            starts,
            other.curves,
            other.curve_label,
            f"{scheme}, from {starts.size} starts",
            other.closed_form,
            "as a function of k alone",
        ),
        curves_frame(starts, offsets, other),
        "scheme_vs_offset",
    )
    st.metric(f"{scheme}: largest gap between starts", f"{similarity.spread_across_starts(other.curves):.2e}")
    show_figure(
        figures.similarity_heatmap(other.matrix, other.positions, f"{scheme}, all pairs", other.matrix_label),
        matrix_frame(other),
        "scheme_matrix",
    )
    strided_note(n_positions, other.positions)

    if scheme == "RoPE":
        shift = st.slider("Shift both positions by s", *LINK_NUMBERS["s"], 7, key="s", bind="query-params")
        error = rope_shift_error(d_model, min(n_positions, MAX_SIDE), int(shift), float(base))
        st.metric(
            f"max |q_m·k_n − q_(m+{shift})·k_(n+{shift})| over m, n < {min(n_positions, MAX_SIDE)}", f"{error:.2e}"
        )
        st.caption("Shift query and key together and every score stays put, to rounding: RoPE sees only n − m.")

with data_section("beyond_trained"):
    st.subheader("Beyond the trained length")
    st.markdown(
        "A model trained on sequences of at most L positions never saw larger offsets. Stretching the context by a "
        "factor s: **plain extrapolation** keeps ω_i = base^(−2i/d) and lets the slow pairs turn further than they "
        "ever did; **position interpolation** divides every position by s, ω_i → ω_i / s (Chen et al., 2023); "
        "**NTK-aware scaling** raises the base, base → base · s^(d/(d−2)) (bloc97, 2023), so the fast pairs keep "
        "their resolution and only the slowest is slowed by s."
    )
    left, right = st.columns(2)
    train_len = left.slider("Trained length L", *LINK_NUMBERS["train_len"], 128, key="train_len", bind="query-params")
    scale = right.select_slider("Scaling factor s", LINK_CHOICES["scale"], value=4, key="scale", bind="query-params")
    far = np.arange(int(train_len * scale) + 1)
    q_vec, k_vec = attention.random_query_key(d_model, seed=0)
    for name, score in (
        ("RoPE score q·k", lambda m: extrapolation.rope_score(q_vec, k_vec, far, float(base), m, scale)),
        (
            "Sinusoidal PE(t)·PE(t+k)",
            lambda m: extrapolation.sinusoidal_score(far, d_model, float(base), m, scale),
        ),
    ):
        curves = {method: score(method) for method in extrapolation.METHODS}
        key = "beyond_rope" if name.startswith("RoPE") else "beyond_sinusoidal"
        show_figure(figures.beyond_trained(far, curves, train_len, name), pd.DataFrame({"offset": far, **curves}), key)
    unseen = {
        m: extrapolation.unseen_share(far, d_model, float(base), m, scale, train_len)[-1] for m in extrapolation.METHODS
    }
    st.caption(
        f"At the largest offset, s·L = {far[-1]}: the share of frequency pairs turned further than training ever "
        "turned them is " + ", ".join(f"{m} {100 * v:.0f} %" for m, v in unseen.items()) + "."
    )

next_page_link("pages/similarity.py")
