"""The first figure first: on a visitor's first page of a session, an explainer page draws only its first figure
and holds the place of its other figures and tables until the browser has painted that figure; the page's live
view then asks for one more run, which draws them all.

Why: a new tab cannot draw any Plotly figure before Streamlit's Plotly bundle has loaded and run, and then it
draws every figure that has arrived in one task, so the first figure waited until all six or seven were drawn
(bench/explainer_latency.py's first-figure time). Later pages of the same session have the bundle already and
draw everything at once. A session without a browser (AppTest) is never deferred: nothing would ask for the rest.
"""

from __future__ import annotations

import threading

import streamlit as st

PAINTED = "first_figure_painted"  # session flag: this visitor's browser has painted a Plotly figure
COMPLETING = "first_figure_completing"  # session flag: the next run is the one that draws what waited
_RUN = threading.local()  # each session's script runs in its own thread


def new_run() -> None:
    """Every run starts with every figure drawn at once (app.py calls this before the page)."""
    _RUN.deferring = False
    _RUN.drawn = 0
    _RUN.deferred = []


def draw_first_figure_first() -> None:
    """Called at the top of an explainer page, which must then mount its live view (ui.live.live_view): in a
    browser that has not painted a figure in this session, figures after the first wait for it."""
    new_run()
    _RUN.deferring = bool(st.context.headers) and not st.session_state.get(PAINTED, False)


def draw_now(name: str) -> bool:
    """Whether figure (or table) `name` is drawn in this run; if not, it is listed for the live view to ask for
    and the caller shows `hold_place` instead."""
    if not getattr(_RUN, "deferring", False):
        return True
    _RUN.drawn += 1
    if _RUN.drawn == 1:
        return True
    _RUN.deferred.append(name)
    return False


def deferred() -> list[str]:
    """The figures this run left for the next one (empty when nothing waits)."""
    return list(getattr(_RUN, "deferred", []))


def mark_painted() -> None:
    """The live view's callback once the browser has painted the first figure: the next run draws them all."""
    st.session_state[PAINTED] = True
    st.session_state[COMPLETING] = True


def take_completion() -> bool:
    """Whether this run is the one that completes a first paint (the page's own run, not the visitor's), asked
    once per run: what the run before it said is still news to the visitor (ui.link_values)."""
    return bool(st.session_state.pop(COMPLETING, False))


def hold_place(name: str, height: int) -> None:
    """Where figure or table `name` will be: as tall, so the page does not jump when it comes."""
    st.container(key=f"deferred_{name}").skeleton(height=height)
