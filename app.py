"""PE Lab entry point: `streamlit run app.py`. One st.Page per script in pages/; the file names are a contract."""

import streamlit as st

st.set_page_config(page_title="PE Lab", page_icon=":material/waves:", layout="wide")

PAGES = {
    "Story": [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)],
    "Positional encoding": [
        st.Page("pages/encoding_matrix.py", title="Encoding matrix", icon=":material/grid_on:"),
        st.Page("pages/wavelengths.py", title="Wavelengths", icon=":material/waves:"),
    ],
}

st.navigation(PAGES).run()
