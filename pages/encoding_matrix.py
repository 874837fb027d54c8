"""Encoding matrix: the sinusoidal positional encoding as a heatmap, one position's vector, its waves, and the
schemes it replaced. Every figure redraws in the browser while a control moves (ui/live/views/encoding_matrix.js)."""

import numpy as np
import pandas as pd
import streamlit as st

from core.explain import encodings
from core.explain.figures import encoding as figures
from ui.common import data_section, going_further, next_page_link, page_intro, show_figure
from ui.first_paint import draw_first_figure_first, draw_now, hold_place
from ui.live import control, live_view
from ui.navigation import use_app_navigation

# The range of each number widget and the options of each choice widget, the one place each is written: the
# widget and the link check read it. Together they name every key of this page's link.
LINK_NUMBERS = {"zr": (0, 4095), "zc": (0, 1023), "t": (0, 4095)}
LINK_CHOICES = {
    "n": encodings.POSITION_CHOICES,
    "d": encodings.D_MODEL_CHOICES,
    "base": encodings.PE_BASES,
    "layout": encodings.LAYOUTS,
    "dims": list(range(1024)),
}
use_app_navigation(LINK_NUMBERS, link_choices=LINK_CHOICES)
draw_first_figure_first()  # ui/first_paint.py

OVERVIEW_CELLS = 100_000  # beyond this the overview heatmap is strided (≈0.5 MB of figure data)
ZOOM = 64  # rows and columns of the full-resolution zoom window


@st.cache_data(max_entries=4)
def encoding_matrix(n_positions: int, d_model: int, base: float, layout: str) -> np.ndarray:
    # float32 for display: the largest matrix is 16.8 MB instead of 33.5, and four of them stay well
    # inside the hosted app's 1 GB (bench/memory.py --fill-caches).
    return encodings.sinusoidal(n_positions, d_model, base, layout).astype(np.float32)


@st.cache_data(max_entries=8)
def criteria_table(d_model: int, base: float) -> pd.DataFrame:
    return encodings.scoreboard(d_model=d_model, base=base)


page_intro(
    "Encoding matrix",
    "Attention reads a sentence as a bag of words. The fix: give every position a fingerprint, a vector of "
    "waves, and add it to the word's own vector. The first dimensions wave fast and tell neighbours apart; "
    "the last ones wave slowly and tell distant regions apart. Point at a row to see that position everywhere.",
)

# The main controls sit in the page, not the sidebar: on a phone the open sidebar covered the figure it moved.
left, right = st.columns(2)
n_positions = left.select_slider(
    "Positions",
    encodings.POSITION_CHOICES,
    value=128,
    key="n",
    bind="query-params",
    help="How many rows the matrix has: drag to watch the slow waves on the right unfold over longer texts.",
)
d_model = right.select_slider(
    "d_model",
    encodings.D_MODEL_CHOICES,
    value=128,
    key="d",
    bind="query-params",
    help="How many dimensions each position vector has: more dimensions add slower waves on the right.",
)
left, right = st.columns(2)
base = left.select_slider(
    "base",
    options=LINK_CHOICES["base"],
    value=encodings.DEFAULT_BASE,
    key="base",
    bind="query-params",
    help="The slowest wave's length is about base·2π positions: a larger base stretches the right-hand columns.",
)
layout = right.radio(
    "Layout",
    LINK_CHOICES["layout"],
    key="layout",
    bind="query-params",
    horizontal=True,
    help="Interleaved (the paper) alternates sine and cosine columns; concatenated puts all sines first.",
)

matrix = encoding_matrix(n_positions, d_model, float(base), layout)
row_stride, col_stride = encodings.overview_strides(n_positions, d_model, OVERVIEW_CELLS)
rows, cols = np.arange(0, n_positions, row_stride), np.arange(0, d_model, col_stride)
with data_section("encoding_matrix"):  # the overview and the zoom: one download
    overview = matrix[np.ix_(rows, cols)]
    show_figure(
        figures.encoding_heatmap(overview, rows, cols, f"PE, {n_positions} positions × d {d_model}"),
        pd.DataFrame(overview, index=rows, columns=[f"dim {c}" for c in cols]).rename_axis("position").reset_index(),
        "encoding_overview",
    )
    if row_stride > 1 or col_stride > 1:
        st.caption(
            f"Drawn at every {row_stride}. position and every {col_stride}. dimension to fit {OVERVIEW_CELLS:,} "
            "cells; striding can alias the fastest waves. The zoom window below is exact."
        )
    st.markdown("In symbols, with positions counted from 0 and i the index of a sine-cosine pair:")
    st.latex(
        r"\begin{aligned} PE_{(pos,\,2i)} &= \sin\!\Big(\frac{pos}{base^{2i/d}}\Big) \\ "
        r"PE_{(pos,\,2i+1)} &= \cos\!\Big(\frac{pos}{base^{2i/d}}\Big) \end{aligned}"
    )
    with st.expander("Zoom window at full resolution"):
        zoom_left, zoom_right = st.columns(2)
        first_row = zoom_left.number_input(
            "First position", *LINK_NUMBERS["zr"], 0, key="zr", bind="query-params",
            help="The zoom's top row: each step moves the 64-row window down one position.",
        )  # fmt: skip
        first_col = zoom_right.number_input(
            "First dimension", *LINK_NUMBERS["zc"], 0, key="zc", bind="query-params",
            help="The zoom's left column: each step moves the 64-column window right one dimension.",
        )  # fmt: skip
        first_row = min(first_row, max(0, n_positions - ZOOM))
        first_col = min(first_col, max(0, d_model - ZOOM))
        zoom_rows = np.arange(first_row, min(n_positions, first_row + ZOOM))
        zoom_cols = np.arange(first_col, min(d_model, first_col + ZOOM))
        zoom = matrix[np.ix_(zoom_rows, zoom_cols)]
        show_figure(
            figures.encoding_heatmap(
                zoom,
                zoom_rows,
                zoom_cols,
                f"Zoom: positions {zoom_rows[0]}–{zoom_rows[-1]}, dims {zoom_cols[0]}–{zoom_cols[-1]}",
            ),
            pd.DataFrame(zoom, index=zoom_rows, columns=[f"dim {c}" for c in zoom_cols])
            .rename_axis("position")
            .reset_index(),
            "encoding_zoom",
        )

st.subheader("One position's vector")
position = st.select_slider(
    "Position",
    range(n_positions),
    value=min(10, n_positions - 1),
    key="t",
    bind="query-params",
    help="Which row of the matrix to show as a vector: every value stays between −1 and 1.",
)
position = min(int(position), n_positions - 1)
vector = matrix[position]
show_figure(
    figures.position_vector(vector, position),
    pd.DataFrame({"dimension": np.arange(d_model), "value": vector}),
    "position_vector",
)
norms = encodings.word_plus_position(d_model, position, float(base))
with st.container(key="live_norms"):
    left, middle, right = st.columns(3)
    left.metric("‖a word's vector‖ (unit-variance entries)", f"{norms['word_norm']:.1f}")
    middle.metric("‖PE(pos)‖ = √(d/2) at every position", f"{norms['pe_norm']:.2f}")
    right.metric("‖the raw position number on every entry‖", f"{norms['integer_norm']:,.0f}")
st.markdown(
    f"**Why add it?** At position {position} the encoding carries {norms['pe_energy_share']:.0%} of the energy of "
    f"word + encoding, so the word stays audible. Adding the raw position number instead would carry "
    f"{norms['integer_energy_share']:.1%} of it and drown the word, more so further on. Concatenating would keep "
    "them apart but cost d more dimensions in every layer; the paper adds."
)

st.subheader("One wave per dimension")
chosen = st.multiselect(
    "Dimensions",
    LINK_CHOICES["dims"],
    default=[0, 1, 20, 60],
    key="dims",
    bind="query-params",
    max_selections=8,
    help="Up to 8 columns of the matrix, drawn as waves over position.",
)
dims = [dim for dim in chosen if dim < d_model]
if len(dims) < len(chosen):
    st.warning(f"Ignored dimensions ≥ d_model = {d_model}: {sorted(set(chosen) - set(dims))}.")
if dims:
    fine = encodings.curve_positions(n_positions)
    dots = np.arange(n_positions) if n_positions <= encodings.SAMPLE_DOTS_UP_TO else np.arange(0)
    dim_wavelengths = encodings.dimension_wavelengths(d_model, float(base))
    if layout == "concatenated":
        dim_wavelengths = dim_wavelengths[encodings.concatenated_order(d_model)]
    samples = matrix[:, dims]
    show_figure(
        figures.dimension_waves(
            fine,
            encodings.sinusoidal_curves(fine, dims, d_model, float(base), layout),
            dots,
            samples[dots],
            dims,
            dim_wavelengths[dims],
        ),
        pd.DataFrame(samples, columns=[f"dim {dim}" for dim in dims]).assign(position=np.arange(n_positions))[
            ["position", *[f"dim {dim}" for dim in dims]]
        ],
        "dimension_waves",
    )
    st.markdown(
        "The encoding only takes the dots, at whole positions; the line is the wave they sample. Pair i completes "
        "one cycle every 2π·base^(2i/d) positions (the Wavelengths page)."
    )

st.subheader("What the naive schemes get wrong")
st.markdown(
    "A position code needs three things: a **unique** code per position; the **same offset means the same "
    "thing** at any length (with pos/(T−1), one step is 1/30 in a 31-word text but 1/90 in a 91-word one); and "
    "**bounded** values as texts grow. Each verdict below is measured on the matrices at lengths 64 and 4096 "
    f"(sinusoidal and learned at d_model = {d_model})."
)
table = criteria_table(d_model, float(base))
marks = table.assign(
    **{c: table[c].map({True: "yes", False: "no"}) for c in ("unique", "offset_consistent", "bounded")}
)
if not draw_now("criteria"):  # ui/first_paint.py
    hold_place("criteria", 250)
else:
    st.dataframe(
        marks.rename(
            columns={
                "offset_consistent": "same offset, same distance",
                "unique_rows_short": "unique rows (of 64)",
                "unique_rows_long": "unique rows (of 4096)",
                "offset_distance_min": "offset-1 distance min",
                "offset_distance_max": "offset-1 distance max",
                "range_short": "value range at 64",
                "range_long": "value range at 4096",
            }
        ),
        hide_index=True,
    )
st.caption(
    "Binary is unique and bounded, but the jump from 7 (0111) to 8 (1000) is larger than from 8 to 9: one step "
    "is not one distance. A learned table (as initialised, before training) has no structure yet, and no row at "
    "all beyond its last trained position."
)

with going_further():
    st.markdown(
        "**The concatenated layout** holds the same columns in another order: all the sines, then all the "
        "cosines. tensor2tensor uses it, with a slightly different spacing of the frequencies, "
        "base^(−i/(d/2−1)) instead of base^(−2i/d)."
    )

live_view(
    "encoding_matrix",
    {
        "n": control("select_slider", encodings.POSITION_CHOICES),
        "d": control("select_slider", encodings.D_MODEL_CHOICES),
        "base": control("select_slider", encodings.PE_BASES),
        "layout": control("radio", encodings.LAYOUTS),
        "t": control("index_slider"),
        "zr": control("number", min=LINK_NUMBERS["zr"][0], max=LINK_NUMBERS["zr"][1]),
        "zc": control("number", min=LINK_NUMBERS["zc"][0], max=LINK_NUMBERS["zc"][1]),
    },
    {"n": n_positions, "d": d_model, "base": base, "layout": layout, "t": position, "zr": first_row, "zc": first_col},
    dims=dims,
    overview_cells=OVERVIEW_CELLS,
    zoom=ZOOM,
    curve=dict(per_position=encodings.SAMPLES_PER_POSITION, max_points=encodings.MAX_CURVE_POINTS),
    dots_up_to=encodings.SAMPLE_DOTS_UP_TO,
)
next_page_link("pages/encoding_matrix.py")
