"""Small Streamlit helpers every page uses, so that each page reads as "control, call, show".

- `show_figure`: a plotly figure, without Plotly's mode bar (it covered titles on a phone), and the data it draws.
- `data_section`: gathers the data of every figure shown inside it into ONE download for the section, instead of
  a button under each small figure. Outside a section, `show_figure` offers its own CSV as before.
- `page_intro`: the title and the one- or two-sentence idea beside it; `next_page_link`: the guided path onward;
  `going_further`: the heading under which a page keeps its side topics, after the story.
Widgets themselves are called directly in the pages with `bind="query-params"` and a short, stable key:
that key is the URL parameter name, a public contract for shared links. A page writes the range of each number
widget once, in its LINK_NUMBERS, which the widget and ui.navigation.use_app_navigation's link check both read.
"""

from __future__ import annotations

import io
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.plotting import is_house_style
from core.safe_text import markdown_literal
from ui.first_paint import draw_now, hold_place
from ui.page_registry import ROOT, next_room

CHART_CONFIG = {"displaylogo": False, "displayModeBar": False}
_OPEN = threading.local()  # each session's script runs in its own thread: its open sections, innermost last


def _sections() -> list[dict[str, pd.DataFrame]]:
    if not hasattr(_OPEN, "sections"):
        _OPEN.sections = []
    return _OPEN.sections


def page_intro(title: str, idea: str) -> None:
    """The page's title and the one- or two-sentence idea beside it."""
    st.title(title)
    st.markdown(idea)


def csv_bytes(data: pd.DataFrame) -> bytes:
    """`data` as UTF-8 CSV without the index: what a figure's download holds."""
    return data.to_csv(index=False).encode("utf-8")


def zip_bytes(frames: dict[str, pd.DataFrame]) -> bytes:
    """Each frame as `<name>.csv` (no index) in one zip archive: a section's download."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, frame in frames.items():
            archive.writestr(f"{name}.csv", csv_bytes(frame))
    return buffer.getvalue()


def _download(label: str, data, file_name: str, mime: str, key: str) -> None:
    """A download that does not rerun the page (on_click="ignore"); `data` is a callable, so the bytes are built
    only when clicked: formatting every figure's CSV on every rerun cost up to 0.3 s a page."""
    st.download_button(
        label, data=data, file_name=file_name, mime=mime, key=key, on_click="ignore", icon=":material/download:"
    )


def show_figure(figure: go.Figure, data: pd.DataFrame, name: str) -> None:
    """Draw `figure`; its numbers (`data`, the frame it was drawn from) go to the open `data_section`, or, outside
    one, to a download of their own, `<name>.csv`. A house-style figure keeps its own colours (Streamlit's chart
    theme off), which set readable text once, in core.plotting."""
    house = is_house_style(figure)
    if house and figure.layout.title.text:
        # The title as a line of the page, which wraps on a phone; inside the figure it collided with the
        # legend and the panel titles at 390 px.
        # Keyed, so a live view (ui/live) can rewrite the title while a control moves.
        st.container(key=f"figtitle_{name}").markdown(f"**{markdown_literal(figure.layout.title.text)}**")
        figure.layout.title.text = None
    if draw_now(name):
        st.plotly_chart(figure, key=f"fig_{name}", config=CHART_CONFIG, theme=None if house else "streamlit")
    else:  # ui/first_paint.py: drawn by the next run, once the page's first figure has painted
        hold_place(name, int(figure.layout.height or 450))
    if _sections():
        _sections()[-1][name] = data
    else:
        _download("Download the data (CSV)", lambda: csv_bytes(data), f"{name}.csv", "text/csv", f"csv_{name}")


@contextmanager
def data_section(name: str) -> Iterator[None]:
    """One download for every figure shown inside: `<name>.csv` for one figure, `<name>.zip` of one CSV per
    figure for several. The button comes after the section's figures (none if the section drew none)."""
    frames: dict[str, pd.DataFrame] = {}
    _sections().append(frames)
    try:
        yield
    finally:
        _sections().pop()
    if len(frames) == 1:
        (data,) = frames.values()
        _download(
            "Download the data of this section (CSV)", lambda: csv_bytes(data), f"{name}.csv", "text/csv", f"csv_{name}"
        )
    elif frames:
        _download(
            "Download the data of this section (zip of CSVs)",
            lambda: zip_bytes(frames),
            f"{name}.zip",
            "application/zip",
            f"csv_{name}",
        )


def next_page_link(path: str) -> None:
    """At the end of an explainer page: a link to the next room in story order (ui.page_registry.ROOMS)."""
    room = next_room(path)
    if room is not None:
        st.divider()
        st.caption(f"Next in the story: {room.blurb}.")
        # A Page of the absolute path works through app.py's navigation and when a page runs alone (AppTest).
        page = st.Page(ROOT / room.path, title=room.title, icon=room.icon)
        st.page_link(page, label=f"Next: **{room.title}**", icon=":material/arrow_forward:")


@contextmanager
def going_further() -> Iterator[None]:
    """The page's side topics, after its story: one heading, so the main path reads first."""
    st.divider()
    st.header("Going further")
    yield


def show_table(table: pd.DataFrame, name: str, hide_index: bool = True) -> None:
    """Show `table` and offer exactly that table as `<name>.csv`."""
    with st.container(key=f"table_{name}"):  # a key the browser tests find the table by
        st.dataframe(table, hide_index=hide_index)
    _download(
        "Download the table (CSV)",
        lambda: table.to_csv(index=not hide_index).encode("utf-8"),
        f"{name}.csv",
        "text/csv",
        f"csv_{name}",
    )
