"""The Fault lab's opening: the map of the version-3 studies (core.lab.study.map: where order has room, and what
the encoding does there) with its sentence, then the short answer of the version-3 studies (core.lab.answer), one
plain sentence per task of ANSWER_TOPICS, each coloured by its verdict and linked to its details under 5 · Study
(where each verdict's full sentence is shown, once), the legend, the words it uses explained and the models
named."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from core.lab.answer import GLOSSARY, VERDICT_COLOURS, answer_line, model_table
from core.lab.figures.study import order_map
from core.lab.shipped import ANSWER_TOPICS, CURRENT_STUDIES, PAGE_STUDIES, STUDY_HEADINGS, read_map
from core.lab.stats.words import VERDICT_MEANINGS
from core.lab.study.map import CONTROL, POINT_KEYS, map_key
from core.safe_text import markdown_literal
from ui.common import show_figure

STUDY_ANCHOR = "study"  # the Study section's header anchor
# the words of a heading as Streamlit's markdown joins them into the heading's anchor (lower case, hyphens, a
# capital inside a word starting a new one: "SpectraQuest gearbox" -> "spectra-quest-gearbox"); the browser test
# tests/test_phone_layout.py follows every link of the short answer to its heading
_ANCHOR_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def heading_anchor(heading: str) -> str:
    """The anchor Streamlit gives a markdown heading of these words."""
    return "-".join(word.lower() for word in _ANCHOR_WORDS.findall(heading))


def study_anchor(file_name: str) -> str:
    """The anchor of a shipped study's verdict under 5 · Study (its heading, core.lab.shipped.STUDY_HEADINGS)."""
    return heading_anchor(STUDY_HEADINGS[file_name])


def verdict_badge(word: str) -> str:
    """The verdict word as a badge in its colour (gray for a word outside the four)."""
    return f":{VERDICT_COLOURS.get(word, 'gray')}-badge[{markdown_literal(word)}]"


@st.cache_resource(show_spinner=False)  # read once per server: every visitor sees the same shipped files
def shipped_map(_shipped: Mapping[str, dict[str, Any]]) -> tuple[tuple[dict[str, Any], ...], str, tuple[str, ...]]:
    """The map of the shipped version-3 studies (core.lab.shipped.read_map), read-only; the studies the page has
    read already (`_shipped`, by title) are not read again."""
    read = {name: _shipped[title] for name, title in CURRENT_STUDIES.items() if title in _shipped}
    points, sentence, missing = read_map(read=read)
    return tuple(points), sentence, tuple(missing)


def map_view(points: tuple[dict[str, Any], ...], sentence: str, missing: tuple[str, ...]) -> None:
    """The map, its sentence, and which of its files are not shipped (a point appears when its study ships)."""
    if points:
        show_figure(
            order_map(points).update_layout(title="Where order has room, and what the encoding does there"),
            pd.DataFrame([{key: point[key] for key in POINT_KEYS} for point in points]),
            "order_map",
        )
    if key := map_key(points):
        st.caption(f"Real tasks on the map: {markdown_literal(key, 1_000)}.")
    if controls := [p for p in points if p["kind"] == CONTROL]:
        st.caption(_control_words(controls))
    st.markdown(markdown_literal(sentence, 1_000))
    st.caption(
        "x: the order gap, the best accuracy of a model that sees order minus a linear classifier of the spectrum "
        "alone (spectrum-LR), in points: at or below 0 the spectrum alone does as well, so order has no room. "
        "y: B − B-noPE, what the encoding alone does, with its 95 % CI."
        + (f" Not shipped yet, so no point for them: {', '.join(missing)}." if missing else "")
    )


def answer_card(shipped: Mapping[str, dict[str, Any]], shipped_map_view: tuple | None = None) -> None:
    """The short answer: the map of the version-3 studies first (`shipped_map_view`, shipped_map's value), then
    one coloured plain sentence per study of ANSWER_TOPICS that is shipped (the rigs, then the positive control
    with its checks), each linked to its details; the glossary (the verdict words' colours first) and the models,
    folded away."""
    with st.container(border=True):
        st.subheader("The short answer", anchor="answer")
        if shipped_map_view is not None and shipped_map_view[0]:
            map_view(*shipped_map_view)
        lines = 0
        for name, where in ANSWER_TOPICS.items():
            study = shipped.get(PAGE_STUDIES[name])
            line = None if study is None else answer_line(where, study)
            if line is None:
                continue
            lines += 1
            details = f"[details](#{study_anchor(name)})"
            st.markdown(f"{verdict_badge(line.verdict)} {markdown_literal(line.words, 1_000)} {details}")
        if not lines:
            st.caption("No shipped study could be read on this server; the studies section below says which.")
        st.caption(
            "Each line is one version-3 study's verdict on **B − B-noPE**, the encoding alone, coloured by its word "
            "(results/study_protocol.md); version 2's verdicts are kept below, under 5 · Study."
        )
        words, models = st.columns(2)
        with words.expander("What the words mean"):
            verdicts = [f"- {verdict_badge(word)}: {VERDICT_MEANINGS[word]}" for word in VERDICT_COLOURS]
            terms = [f"- **{term}**: {meaning}" for term, meaning in GLOSSARY.items()]
            st.markdown("\n".join(verdicts + terms))
        with models.expander("The models"):
            st.dataframe(model_table(), hide_index=True)


def _control_words(levels: Sequence[Mapping[str, Any]]) -> str:
    """Whether the order-dose curve's levels passed their order-blind checks, and what that means."""
    failed = [f"{level['tag']}: {name}" for level in levels for name in level.get("failed_checks", [])]
    if failed:
        return (
            f"The control levels failed checks ({markdown_literal('; '.join(failed), 1_000)}): an order-blind model "
            "could tell their classes apart, so they do not show what order alone is worth."
        )
    return (
        "At every control level a classifier of the spectrum and one of the best single patch's RMS stay within 5 "
        "points of chance (the curve's checks), so only the order of the patches tells the classes apart there."
    )
