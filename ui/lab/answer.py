"""The Fault lab's opening: the map of the version-3 studies (core.lab.study.map: where order has room, and what
the encoding does there) with its sentence, then the short answer of the shipped studies (core.lab.answer), one
plain sentence per rig and the positive control's, each coloured by its verdict and linked to its details under
5 · Study (where each verdict's full sentence is shown, once), the legend, the words it uses explained and the
models named."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from core.lab.answer import GLOSSARY, VERDICT_COLOURS, answer_line, control_check, model_table
from core.lab.figures.study import order_map
from core.lab.shipped import ANSWER_TOPICS, SHIPPED_STUDIES, STUDY_HEADINGS, read_map
from core.lab.stats.words import VERDICT_MEANINGS
from core.lab.study.map import POINT_KEYS, map_key
from core.safe_text import markdown_literal
from ui.common import show_figure

CONTROL_FILE = "study_order_control.json"
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
def shipped_map() -> tuple[tuple[dict[str, Any], ...], str, tuple[str, ...]]:
    """The map of the shipped version-3 studies (core.lab.shipped.read_map), read-only."""
    points, sentence, missing = read_map()
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
            study = shipped.get(SHIPPED_STUDIES[name])
            line = None if study is None else answer_line(where, study)
            if line is None:
                continue
            lines += 1
            details = f"[details](#{study_anchor(name)})"
            st.markdown(f"{verdict_badge(line.verdict)} {markdown_literal(line.words, 1_000)} {details}")
            if name == CONTROL_FILE:
                st.caption(_control_words(study))
        if not lines:
            st.caption("No shipped study could be read on this server; the studies section below says which.")
        caption = "Each line is one study's verdict on **B − B-noPE**, the encoding alone, coloured by its word."
        if shipped_map_view is not None and shipped_map_view[0]:
            # the lines are version 2's studies, the map version 3's: say which reading is current where they differ
            caption = caption[:-1] + (
                ": version 2's studies, detailed below. The map above is version 3's (results/study_protocol.md); "
                "where the two differ, version 3 is the current reading."
            )
        st.caption(caption)
        words, models = st.columns(2)
        with words.expander("What the words mean"):
            verdicts = [f"- {verdict_badge(word)}: {VERDICT_MEANINGS[word]}" for word in VERDICT_COLOURS]
            terms = [f"- **{term}**: {meaning}" for term, meaning in GLOSSARY.items()]
            st.markdown("\n".join(verdicts + terms))
        with models.expander("The models"):
            st.dataframe(model_table(), hide_index=True)


def _control_words(study: Mapping[str, Any]) -> str:
    """Whether the positive control passes the protocol's checks, the checks in words, and what that means."""
    passed, reasons = control_check(study)
    verdict = "passes" if passed else "fails"
    meaning = (
        "so the verdicts on real data above speak about the encoding"
        if passed
        else "so the verdicts on real data above say nothing about the encoding"
    )
    return f"The control {verdict} the protocol's checks ({markdown_literal(reasons, 1_000)}), {meaning}."
