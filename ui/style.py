"""The app's few global style rules, sent once per run by app.py: what Streamlit's own widgets do not do on a phone.

- A page link's label (Home's path through the lab, a page's "Next" link) stays on one line in Streamlit and is cut
  at its box's edge: at 390 px the path's labels ran 440-665 px wide in a 318 px box. Here they wrap.
- A typeset formula (st.latex) wider than the column scrolls inside its own box instead of running past it (the
  Encoding matrix's pair of formulas is 540 px wide).
"""

import streamlit as st

GLOBAL_CSS = """<style>
[data-testid="stPageLink"] a span, [data-testid="stPageLink"] p { white-space: normal !important; }
[data-testid="stPageLink"] a { height: auto !important; }
.katex-display { overflow-x: auto; overflow-y: hidden; max-width: 100%; }
</style>"""


def apply_global_style() -> None:
    """Send the rules (a style-only st.html takes no room on the page)."""
    st.html(GLOBAL_CSS)
