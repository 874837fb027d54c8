"""Similarity vs offset: PE(t)·PE(t+k) depends on k alone, one rotation M_k shifts every position, and (going
further) how a learned table, RoPE, ALiBi and complex embeddings see distance, and what happens past the trained
length. Every figure redraws in the browser while a control moves (ui/live/views/similarity.js)."""

import numpy as np
import pandas as pd
import streamlit as st

from core.explain import encodings, extrapolation, relative_positions, similarity
from core.explain.figures import similarity as figures
from ui.common import data_section, going_further, next_page_link, page_intro, show_figure
from ui.first_paint import draw_first_figure_first
from ui.live import control, live_view
from ui.navigation import use_app_navigation

POSITIONS = tuple(n for n in encodings.POSITION_CHOICES if 8 <= n <= 1024)
# The range of each number widget and the options of each choice widget, the one place each is written: the
# widget and the link check read it. Together they name every key of this page's link.
LINK_NUMBERS = {"s": (1, 512), "train_len": (16, 1024)}
OTHER_SCHEMES = [scheme for scheme in similarity.SCHEMES if scheme != "sinusoidal"]
LINK_CHOICES = {
    "d": encodings.D_MODEL_CHOICES,
    "base": encodings.PE_BASES,
    "n": POSITIONS,
    "kmax": similarity.OFFSETS_SHOWN_CHOICES,
    "t": similarity.POSITION_LADDER,
    "k": similarity.POSITION_LADDER,
    "scheme": OTHER_SCHEMES,
    "scale": [1, 2, 4, 8, 16],
}
use_app_navigation(LINK_NUMBERS, link_choices=LINK_CHOICES)
draw_first_figure_first()  # ui/first_paint.py

MAX_SIDE = 256  # heatmaps beyond 256 × 256 cells are strided (≈0.35 MB of figure data each)


@st.cache_data(max_entries=16)
def picture(scheme: str, n_positions: int, d_model: int, max_offset: int, base: float) -> similarity.SimilarityPicture:
    starts = similarity.curve_starts(n_positions)
    return similarity.similarity_picture(
        scheme, n_positions, d_model, starts, np.arange(max_offset + 1), base, max_side=MAX_SIDE
    )


@st.cache_data(max_entries=16)
def rope_shift_error(d_model: int, n_positions: int, shift: int, base: float) -> float:
    q, k = relative_positions.random_query_key(d_model)
    return relative_positions.rope_shift_error(q, k, n_positions, shift, base)


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
        st.caption(
            f"The heatmap keeps every {positions[1] - positions[0]}. position of {n_positions} "
            f"({positions.size} × {positions.size} cells); the curves are exact."
        )


def curves_figure(result: similarity.SimilarityPicture, starts, offsets, title: str, closed_label: str):
    return figures.offset_curves(
        offsets,
        starts,
        result.curves,
        result.curve_label,
        title,
        result.closed_form,
        closed_label,
        similarity.coincidence_note(result.curves, result.closed_form),
    )


page_intro(
    "Similarity vs offset",
    "How alike are the codes of two positions? With the sinusoidal encoding the answer depends only on how far "
    "apart they are, not on where they are: the pair (3, 8) looks like (103, 108). That is what lets attention "
    "learn to look *five words back* anywhere in a text.",
)

left, right = st.columns(2)  # in the page, not the sidebar, which covers the figures on a phone
d_model = left.select_slider(
    "d_model",
    encodings.D_MODEL_CHOICES,
    value=128,
    key="d",
    bind="query-params",
    help="More dimensions add slower waves: the curve falls more slowly and its ripples shrink.",
)
base = right.select_slider(
    "base",
    options=LINK_CHOICES["base"],
    value=encodings.DEFAULT_BASE,
    key="base",
    bind="query-params",
    help="A larger base slows the slow waves: far offsets stay more alike.",
)
left, right = st.columns(2)
n_positions = left.select_slider(
    "Positions",
    POSITIONS,
    value=128,
    key="n",
    bind="query-params",
    help="The text length: the four starting positions spread over it, and the heatmap covers it.",
)
max_offset = right.select_slider(
    "Offsets shown (largest k)",
    similarity.OFFSETS_SHOWN_CHOICES,
    value=64,
    key="kmax",
    bind="query-params",
    help="How far the curves reach to the right.",
)
starts = similarity.curve_starts(n_positions)
offsets = np.arange(max_offset + 1)

with data_section("offset_similarity"):  # the curves and the matrix: one download
    st.subheader("The dot product depends on the offset alone")
    sinusoidal = picture("sinusoidal", n_positions, d_model, max_offset, float(base))
    show_figure(
        curves_figure(sinusoidal, starts, offsets, f"PE(t)·PE(t+k) from {starts.size} starts", "Σ_i cos(k·ω_i)"),
        curves_frame(starts, offsets, sinusoidal),
        "dot_product_vs_offset",
    )
    st.markdown(
        f"The lines from t = {', '.join(map(str, starts))} lie on one another and on the dots of the closed form: "
        "sin a·sin b + cos a·cos b = cos(a − b), so the start cancels:"
    )
    st.latex(r"PE(t)\cdot PE(t+k) \;=\; \sum_{i=0}^{d/2-1} \cos(k\,\omega_i), \qquad \omega_i = base^{-2i/d}")
    st.caption(
        f"Largest gap between the starts {similarity.spread_across_starts(sinusoidal.curves):.1e}, and to the "
        f"closed form {np.abs(sinusoidal.curves - sinusoidal.closed_form).max():.1e}: equal up to rounding (float64 "
        "keeps about 16 digits). At k = 0 the product is d/2, every position's squared length; it falls fast "
        "with the offset and never climbs back to d/2."
    )
    show_figure(
        figures.similarity_heatmap(sinusoidal.matrix, sinusoidal.positions, "Cosine similarity, all pairs", "cosine"),
        matrix_frame(sinusoidal),
        "cosine_similarity",
    )
    strided_note(n_positions, sinusoidal.positions)
    st.markdown(
        "The same fact as a picture: every diagonal has one colour, because the similarity of positions m and n "
        "depends on n − m alone. Point at a cell to mark its offset on the curves above."
    )

st.subheader("A rotation shifts every position: PE(t+k) = M_k·PE(t)")
st.markdown(
    "For each offset k one fixed matrix M_k carries the code of **every** position t to the code of t + k: pair i "
    "is turned by the angle k·ω_i, whatever t is."
)
st.latex(
    r"M_k = \operatorname{diag}_i \begin{pmatrix} \cos k\omega_i & \sin k\omega_i \\ "
    r"-\sin k\omega_i & \cos k\omega_i \end{pmatrix}"
)
left, right = st.columns(2)
start = left.select_slider(
    "Start t", similarity.POSITION_LADDER, value=10, key="t", bind="query-params", help="The position to start from."
)
offset = right.select_slider(
    "Offset k", similarity.POSITION_LADDER, value=5, key="k", bind="query-params", help="How far to shift it."
)
check = similarity.shift_check(int(start), int(offset), d_model, float(base))
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
st.caption(
    f"The red crosses M_{offset}·PE({start}) land on the tops of the bars PE({start + offset}): equal up to rounding "
    f"(largest gap {check['max_error']:.1e})."
)

with going_further():
    with data_section("other_schemes"):
        st.subheader("The same picture for other position schemes")
        st.markdown(
            "Other ways to give attention a sense of distance: a **learned** table (one trained vector per "
            "position), **RoPE** (rotating the query and key instead of adding a vector), **ALiBi** (a penalty on "
            "the score that grows with distance) and **complex** word embeddings (position as a turning phase)."
        )
        scheme = st.selectbox(
            "Scheme", LINK_CHOICES["scheme"], key="scheme", bind="query-params",
            help="Which scheme's curves and heatmap to draw below, for the same positions and offsets as above.",
        )  # fmt: skip
        other = picture(scheme, n_positions, d_model, max_offset, float(base))
        st.markdown(similarity.SCHEME_IDEAS[scheme])
        show_figure(
            curves_figure(other, starts, offsets, f"{scheme}, from {starts.size} starts", "as a function of k alone"),
            curves_frame(starts, offsets, other),
            "scheme_vs_offset",
        )
        show_figure(
            figures.similarity_heatmap(other.matrix, other.positions, f"{scheme}, all pairs", other.matrix_label),
            matrix_frame(other),
            "scheme_matrix",
        )
        strided_note(n_positions, other.positions)
        if scheme == "RoPE":
            shift = st.slider(
                "Shift both positions by s", *LINK_NUMBERS["s"], 7, key="s", bind="query-params",
                help="Moves the query and the key together: RoPE's scores should not change at all.",
            )  # fmt: skip
            error = rope_shift_error(d_model, min(n_positions, MAX_SIDE), int(shift), float(base))
            st.caption(
                f"Shift query and key together by {shift} and every score stays put: RoPE sees only n − m "
                f"(largest change {error:.1e}, rounding)."
            )

    with data_section("beyond_trained"):
        st.subheader("Beyond the trained length")
        st.markdown(
            "A model trained on texts of at most L positions never saw larger offsets. To stretch its context by a "
            "factor s there are three common choices: **plain extrapolation** keeps the frequencies and lets the "
            "slow pairs turn further than they ever did in training; **position interpolation** (Chen et al., "
            "2023) divides every position by s; **NTK-aware scaling** (proposed in 2023 by a forum author "
            "writing as bloc97) raises the base to base·s^(d/(d−2)), so the fast pairs keep their resolution and "
            "only the slowest is slowed by s."
        )
        left, right = st.columns(2)
        train_len = left.slider(
            "Trained length L", *LINK_NUMBERS["train_len"], 128, key="train_len", bind="query-params",
            help="The longest text the model saw: the shaded part of the figures lies beyond it.",
        )  # fmt: skip
        scale = right.select_slider(
            "Scaling factor s", LINK_CHOICES["scale"], value=4, key="scale", bind="query-params",
            help="How many times longer than L the texts to reach are: the curves run out to s·L.",
        )  # fmt: skip
        far = np.arange(int(train_len * scale) + 1)
        q_vec, k_vec = relative_positions.random_query_key(d_model, seed=0)
        for name, score in (
            ("RoPE score q·k", lambda m: extrapolation.rope_score(q_vec, k_vec, far, float(base), m, scale)),
            ("Sinusoidal PE(t)·PE(t+k)", lambda m: extrapolation.sinusoidal_score(far, d_model, float(base), m, scale)),
        ):
            curves = {method: score(method) for method in extrapolation.METHODS}
            key = "beyond_rope" if name.startswith("RoPE") else "beyond_sinusoidal"
            show_figure(
                figures.beyond_trained(far, curves, train_len, name), pd.DataFrame({"offset": far, **curves}), key
            )
        unseen = {
            m: extrapolation.unseen_share(far, d_model, float(base), m, scale, train_len)[-1]
            for m in extrapolation.METHODS
        }
        st.caption(
            f"At the largest offset, s·L = {far[-1]}: the share of frequency pairs turned further than training ever "
            "turned them is " + ", ".join(f"{m} {100 * v:.0f} %" for m, v in unseen.items()) + "."
        )

live_view(
    "similarity",
    {
        "d": control("select_slider", encodings.D_MODEL_CHOICES),
        "base": control("select_slider", encodings.PE_BASES),
        "n": control("select_slider", POSITIONS),
        "kmax": control("select_slider", similarity.OFFSETS_SHOWN_CHOICES),
        "t": control("select_slider", similarity.POSITION_LADDER),
        "k": control("select_slider", similarity.POSITION_LADDER),
        "train_len": control("slider"),
        "scale": control("select_slider", LINK_CHOICES["scale"]),
    },
    {"d": d_model, "base": base, "n": n_positions, "kmax": max_offset, "t": start, "k": offset}
    | {"train_len": train_len, "scale": scale},
    scheme=scheme,
    max_side=MAX_SIDE,
)
next_page_link("pages/similarity.py")
