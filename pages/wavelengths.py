"""Wavelengths: one wavelength per sin/cos pair, from 2π up to almost base·2π, and the binary counter."""

import numpy as np
import pandas as pd
import streamlit as st

from core.explain import encodings
from core.explain.figures import encoding as figures
from ui.common import next_page_link, page_intro, show_figure
from ui.entry import use_app_navigation

# The range of each number widget and the options of each choice widget, the one place each is written: the
# widget and the link check read it. Together they name every key of this page's link.
LINK_NUMBERS = {"d": (2, 1024), "bits": (2, 6)}
LINK_CHOICES = {"base": encodings.PE_BASES}
use_app_navigation(LINK_NUMBERS, link_choices=LINK_CHOICES)


page_intro(
    "Wavelengths",
    "Pair i of the encoding turns at angular frequency ω_i = base^(−2i/d), so its wavelength is "
    "λ_i = 2π·base^(2i/d) positions: a geometric progression from 2π to just under base·2π.",
)

left, right = st.columns(2)  # in the page, not the sidebar, which covers the figure on a phone
d_model = left.slider("d_model", *LINK_NUMBERS["d"], 512, key="d", bind="query-params")
base = right.select_slider(
    "base", options=LINK_CHOICES["base"], value=encodings.DEFAULT_BASE, key="base", bind="query-params"
)

lengths = encodings.wavelengths(d_model, float(base))
pairs = np.arange(lengths.size)
shortest, longest = lengths[0], lengths[-1]

left, middle, right = st.columns(3)
left.metric("Shortest wavelength (2π)", f"{shortest:.4f}")
middle.metric("Longest wavelength", f"{longest:,.1f}")
right.metric("Longest / (base·2π)", f"{longest / (base * 2 * np.pi):.3f}")
st.markdown(
    f"The last pair is i = ⌈d/2⌉−1 = {lengths.size - 1}, so the longest wavelength is "
    f"2π·base^(2·{lengths.size - 1}/{d_model}), not base·2π. Neighbouring pairs differ by the factor "
    f"base^(2/d) = {float(base) ** (2 / d_model):.4f}."
)

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
st.markdown(
    "A larger **base** stretches the slowest waves, so positions stay distinguishable over longer texts; "
    "a larger **d_model** fills the same range with more, finer-spaced wavelengths."
)

st.subheader("The binary-counter analogy")
n_bits = st.slider("Bits", *LINK_NUMBERS["bits"], 4, key="bits", bind="query-params")
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

next_page_link("pages/wavelengths.py")
