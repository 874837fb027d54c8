"""The Fault lab's opening: the short answer of the shipped studies (core.lab.answer), coloured by verdict with
its legend, the words it uses explained and the models named, and a link down to the details."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from core.lab.answer import GLOSSARY, VERDICT_COLOURS, VERDICT_MEANINGS, answer_line, control_check, model_table
from core.lab.shipped import ANSWER_TOPICS, SHIPPED_STUDIES
from core.safe_text import markdown_literal

CONTROL_FILE = "study_order_control.json"
STUDY_ANCHOR = "study"  # the Study section's header anchor, where "the details" link points


def verdict_badge(word: str) -> str:
    """The verdict word as a badge in its colour (gray for a word outside the four)."""
    return f":{VERDICT_COLOURS.get(word, 'gray')}-badge[{markdown_literal(word)}]"


def answer_card(shipped: Mapping[str, dict[str, Any]]) -> None:
    """The short answer: one coloured line per study of ANSWER_TOPICS that is shipped, the control's checks, the
    legend, the glossary and the models."""
    with st.container(border=True):
        st.subheader("The short answer", anchor="answer")
        lines = 0
        for name, topic in ANSWER_TOPICS.items():
            study = shipped.get(SHIPPED_STUDIES[name])
            line = None if study is None else answer_line(topic, study)
            if line is None:
                continue
            lines += 1
            st.markdown(f"{verdict_badge(line.verdict)} **{topic}** {markdown_literal(line.words)}")
            if line.note:
                st.caption(markdown_literal(line.note))
            if name == CONTROL_FILE:
                passed, reasons = control_check(study)
                verdict = "passes" if passed else "fails"
                meaning = (
                    "so the verdicts on real data below speak about the encoding"
                    if passed
                    else "so the verdicts on real data below say nothing about the encoding"
                )
                st.caption(f"The control {verdict} the protocol's checks ({markdown_literal(reasons)}), {meaning}.")
        if not lines:
            st.caption("No shipped study could be read on this server; the studies section below says which.")
        legend = " · ".join(f"{verdict_badge(word)} {VERDICT_MEANINGS[word]}" for word in VERDICT_COLOURS)
        st.caption(f"Each line compares **B** with **B-noPE**: the same model with and without the encoding. {legend}.")
        st.markdown(f"[Every comparison, interval and figure of these studies](#{STUDY_ANCHOR})")
        words, models = st.columns(2)
        with words.expander("What the words mean"):
            st.markdown("\n".join(f"- **{term}**: {meaning}" for term, meaning in GLOSSARY.items()))
        with models.expander("The models"):
            st.dataframe(model_table(), hide_index=True)
