"""Small Streamlit helpers every page uses, so that each page reads as "control, call, show".

- `show_figure`: a plotly figure plus a CSV download of exactly the data it draws.
- `page_intro`: the title and the one- or two-sentence idea beside it.
Widgets themselves are called directly in the pages with `bind="query-params"` and a short, stable key:
that key is the URL parameter name, a public contract for shared links. A page writes the range of each number
widget once, in its LINK_NUMBERS, which the widget and ui.entry.use_app_navigation's link check both read.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st


def page_intro(title: str, idea: str) -> None:
    """The page's title and the one- or two-sentence idea beside it."""
    st.title(title)
    st.markdown(idea)


def csv_bytes(data: pd.DataFrame) -> bytes:
    """`data` as UTF-8 CSV without the index: what a figure's download holds."""
    return data.to_csv(index=False).encode("utf-8")


def show_figure(figure: go.Figure, data: pd.DataFrame, name: str) -> None:
    """Draw `figure` and offer `data` (the numbers behind it) as `<name>.csv`.

    The download does not rerun the page (on_click="ignore"), and its bytes are built from the same
    frame the figure was drawn from, so what you download is what you see. They are built only when the
    button is clicked (a callable): formatting every figure's CSV on every rerun cost up to 0.3 s a
    page and kept the text in server memory for each visitor.
    """
    st.plotly_chart(figure, key=f"fig_{name}", config={"displaylogo": False})
    st.download_button(
        "Download the data (CSV)",
        data=lambda: csv_bytes(data),
        file_name=f"{name}.csv",
        mime="text/csv",
        key=f"csv_{name}",
        on_click="ignore",
        icon=":material/download:",
    )


def show_table(table: pd.DataFrame, name: str, hide_index: bool = True) -> None:
    """Show `table` and offer exactly that table as `<name>.csv`."""
    with st.container(key=f"table_{name}"):  # a key the browser tests find the table by
        st.dataframe(table, hide_index=hide_index)
    st.download_button(
        "Download the table (CSV)",
        data=lambda: table.to_csv(index=not hide_index).encode("utf-8"),
        file_name=f"{name}.csv",
        mime="text/csv",
        key=f"csv_{name}",
        on_click="ignore",
        icon=":material/download:",
    )
