"""Wavelengths: one wavelength per sin/cos pair, from 2π up to almost base·2π, and the binary counter. The
wavelength figure redraws in the browser while d_model or base moves (ui/live/views/wavelengths.js)."""

import numpy as np
import pandas as pd
import streamlit as st

from core.explain import encodings
from core.explain.figures import encoding as figures
from ui.common import next_page_link, page_intro, show_figure
from ui.first_paint import draw_first_figure_first
from ui.live import control, live_view
from ui.navigation import use_app_navigation

# The range of each number widget and the options of each choice widget, the one place each is written: the
# widget and the link check read it. Together they name every key of this page's link.
LINK_NUMBERS = {"bits": (2, 6)}
LINK_CHOICES = {"d": encodings.D_MODEL_CHOICES, "base": encodings.PE_BASES}
use_app_navigation(LINK_NUMBERS, link_choices=LINK_CHOICES)
draw_first_figure_first()  # ui/first_paint.py


page_intro(
    "Wavelengths",
    "Each sine-cosine pair of the encoding repeats after its own number of positions, its wavelength. The first "
    "pair repeats every 2π ≈ 6.3 positions, each next pair a fixed factor later, the last after almost base·2π: "
    "fast pairs tell neighbours apart, slow ones tell far-apart positions apart.",
)

left, right = st.columns(2)  # in the page, not the sidebar, which covers the figure on a phone
d_model = left.select_slider(
    "d_model",
    encodings.D_MODEL_CHOICES,
    value=512,
    key="d",
    bind="query-params",
    help="More dimensions mean more pairs: the same range of wavelengths, more finely spaced.",
)
base = right.select_slider(
    "base",
    options=LINK_CHOICES["base"],
    value=encodings.DEFAULT_BASE,
    key="base",
    bind="query-params",
    help="The longest wavelength is just under base·2π: a larger base stretches the slowest pairs.",
)

lengths = encodings.wavelengths(d_model, float(base))
pairs = np.arange(lengths.size)
shortest, longest = lengths[0], lengths[-1]

show_figure(
    figures.wavelength_plot(pairs, lengths, float(base), d_model),
    pd.DataFrame(
        {
            "pair": pairs,
            "dimensions": [f"{2 * i}, {2 * i + 1}" for i in pairs],
            "wavelength": lengths,
            "frequency": 1.0 / lengths,
        }
    ),
    "wavelengths",
)
with st.container(key="live_wavelengths"):
    left, middle, right = st.columns(3)
    left.metric("Shortest wavelength (2π)", f"{shortest:.4f}")
    middle.metric("Longest wavelength", f"{longest:,.1f}")
    right.metric("Longest / (base·2π)", f"{longest / (base * 2 * np.pi):.3f}")
st.markdown("Pair i turns at the angular frequency ω_i, so its wavelength is")
st.latex(r"\lambda_i = \frac{2\pi}{\omega_i} = 2\pi \cdot base^{2i/d}, \qquad i = 0, 1, \dots, \tfrac{d}{2} - 1")
st.markdown(
    f"Neighbouring pairs differ by the same factor base^(2/d) = {float(base) ** (2 / d_model):.4f}, so on the "
    f"log scale above the wavelengths lie on a straight line. The last pair is i = d/2 − 1 = {lengths.size - 1}, "
    "so the longest wavelength stops one step short of base·2π. A larger **base** stretches the slowest waves, "
    "so positions stay distinguishable over longer texts; a larger **d_model** fills the same range more finely."
)

st.subheader("The binary-counter analogy")
n_bits = st.slider(
    "Bits", *LINK_NUMBERS["bits"], 4, key="bits", bind="query-params", help="How many bits count the positions."
)
positions, bits, fine, waves = encodings.binary_counter_waves(2**n_bits, n_bits)
st.markdown(
    f"Counting 0..{2**n_bits - 1} in binary, the lowest bit flips every step and each higher bit half as "
    "often. The sinusoidal encoding is the smooth version of this counter: fast waves in the first "
    "dimensions, slow waves in the last, and continuous values instead of 0/1."
)
show_figure(
    figures.binary_counter(positions, bits, fine, waves),
    pd.DataFrame(bits.astype(int), columns=[f"bit {b}" for b in range(n_bits)]).assign(position=positions)[
        ["position", *[f"bit {b}" for b in range(n_bits)]]
    ],
    "binary_counter",
)

live_view(
    "wavelengths",
    {"d": control("select_slider", encodings.D_MODEL_CHOICES), "base": control("select_slider", encodings.PE_BASES)},
    {"d": d_model, "base": base},
)
next_page_link("pages/wavelengths.py")
