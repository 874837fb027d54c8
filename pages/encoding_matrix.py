"""Encoding matrix: the sinusoidal positional encoding as a heatmap, its waves, and the schemes it replaced."""

import numpy as np
import pandas as pd
import streamlit as st

from core.explain import encodings
from core.explain.figures import encoding as figures
from ui.common import data_section, next_page_link, page_intro, show_figure
from ui.entry import use_app_navigation

# The range of each number widget and the options of each choice widget, the one place each is written: the
# widget and the link check read it. Together they name every key of this page's link.
LINK_NUMBERS = {"n": (2, 4096), "d": (2, 1024), "zr": (0, 4095), "zc": (0, 1023), "t": (0, 4095)}
LINK_CHOICES = {"base": encodings.PE_BASES, "layout": encodings.LAYOUTS, "dims": list(range(1024))}
use_app_navigation(LINK_NUMBERS, link_choices=LINK_CHOICES)

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
    "Self-attention sees a *set* of tokens: shuffle them and every output is shuffled the same way. "
    "The Transformer therefore adds a position vector to each token, "
    "PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(pos / base^(2i/d)). Positions start at 0.",
)

# The main controls sit in the page, not the sidebar: on a phone the open sidebar covered the figure it moved.
# Columns stack below 640 px.
left, right = st.columns(2)
n_positions = left.slider("Positions", *LINK_NUMBERS["n"], 128, key="n", bind="query-params")
d_model = right.slider("d_model", *LINK_NUMBERS["d"], 128, key="d", bind="query-params")
left, right = st.columns(2)
base = left.select_slider(
    "base", options=LINK_CHOICES["base"], value=encodings.DEFAULT_BASE, key="base", bind="query-params"
)
layout = right.radio(
    "Layout",
    LINK_CHOICES["layout"],
    key="layout",
    bind="query-params",
    horizontal=True,
    help="Interleaved is the paper's order. Concatenated puts all sines first, then all cosines.",
)

matrix = encoding_matrix(n_positions, d_model, float(base), layout)
if layout == "concatenated":
    st.caption(
        "Concatenated layout: the same columns, permuted (sines 0..⌈d/2⌉-1, then cosines). tensor2tensor uses "
        "this order with slightly different frequency spacing, base^(-i/(d/2-1)) instead of base^(-2i/d)."
    )

with data_section("encoding_matrix"):  # the overview and the zoom: one download
    st.subheader("The matrix")
    row_stride, col_stride = encodings.overview_strides(n_positions, d_model, OVERVIEW_CELLS)
    rows, cols = np.arange(0, n_positions, row_stride), np.arange(0, d_model, col_stride)
    if row_stride > 1 or col_stride > 1:
        st.info(
            f"Overview strided to fit {OVERVIEW_CELLS:,} cells: every {row_stride}. position and every "
            f"{col_stride}. dimension of {n_positions:,} × {d_model:,}. Striding can alias the fastest waves; "
            "the zoom below is exact."
        )
    overview = matrix[np.ix_(rows, cols)]
    show_figure(
        figures.encoding_heatmap(overview, rows, cols, f"PE, {n_positions} positions × d {d_model}"),
        pd.DataFrame(overview, index=rows, columns=[f"dim {c}" for c in cols]).rename_axis("position").reset_index(),
        "encoding_overview",
    )
    st.markdown("Left columns oscillate fast, right columns barely move: each row is a unique pattern of phases.")

    with st.expander("Zoom window at full resolution", expanded=True):
        zoom_left, zoom_right = st.columns(2)
        first_row = zoom_left.number_input("First position", *LINK_NUMBERS["zr"], 0, key="zr", bind="query-params")
        first_col = zoom_right.number_input("First dimension", *LINK_NUMBERS["zc"], 0, key="zc", bind="query-params")
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

st.subheader("Per-dimension waves")
chosen = st.multiselect(
    "Dimensions", LINK_CHOICES["dims"], default=[0, 1, 20, 60], key="dims", bind="query-params", max_selections=8
)
dims = [dim for dim in chosen if dim < d_model]
if len(dims) < len(chosen):
    st.warning(f"Ignored dimensions ≥ d_model = {d_model}: {sorted(set(chosen) - set(dims))}.")
if dims:
    positions = np.arange(n_positions)
    dim_wavelengths = encodings.dimension_wavelengths(d_model, float(base))
    if layout == "concatenated":
        dim_wavelengths = dim_wavelengths[encodings.concatenated_order(d_model)]
    columns = matrix[:, dims]
    show_figure(
        figures.dimension_waves(positions, columns, dims, dim_wavelengths[dims]),
        pd.DataFrame(columns, columns=[f"dim {dim}" for dim in dims]).assign(position=positions)[
            ["position", *[f"dim {dim}" for dim in dims]]
        ],
        "dimension_waves",
    )
    st.markdown(
        "Dimension pair i completes one cycle every 2π·base^(2i/d) positions, so low dimensions tell "
        "neighbours apart and high ones tell far-apart regions apart."
    )

st.subheader("One position's vector, and why we add it")
position = min(st.number_input("Position", *LINK_NUMBERS["t"], 10, key="t", bind="query-params"), n_positions - 1)
vector = matrix[position]
show_figure(
    figures.position_vector(vector, position),
    pd.DataFrame({"dimension": np.arange(d_model), "value": vector}),
    "position_vector",
)
norms = encodings.word_plus_position(d_model, position, float(base))
left, middle, right = st.columns(3)
left.metric("‖word embedding‖ (unit-variance entries)", f"{norms['word_norm']:.1f}")
middle.metric("‖PE(pos)‖ = √(d/2) at every position", f"{norms['pe_norm']:.2f}")
right.metric("‖raw integer position on every entry‖", f"{norms['integer_norm']:,.0f}")
st.markdown(
    f"Adding PE keeps the word audible: the position carries {norms['pe_energy_share']:.0%} of the energy of "
    f"word + PE at position {position}. Adding the raw integer instead would carry "
    f"{norms['integer_energy_share']:.2%} of it and drown the word, and it only gets worse further on. "
    "Concatenating would avoid the mixing but cost d extra dimensions in every layer; the paper adds."
)

st.subheader("What the naive schemes get wrong")
st.markdown(
    "Three things a position code needs: a **unique** code per position; the **same offset means the same "
    "thing** at any length (with pos/(T−1) a step of 1/30 ≈ 0.0333 is adjacent words in a 31-word text but "
    "three words apart in a 91-word text); and **bounded** values as texts grow. Each verdict below is "
    f"measured on the matrices at lengths 64 and 4096 (sinusoidal and learned at d_model = {d_model})."
)
table = criteria_table(d_model, float(base))
marks = table.assign(
    **{c: table[c].map({True: "yes", False: "no"}) for c in ("unique", "offset_consistent", "bounded")}
)
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

next_page_link("pages/encoding_matrix.py")
