"""The Fault lab's short answer: per task, its shipped study's primary verdict as the study stores its sentence,
led by a few plain words from the same values (core.lab.stats.words) and its colour, so the words cannot drift
from the numbers.

Every number here is read from a study JSON (core.lab.study.contract); nothing is recomputed from runs except
the two models' mean accuracies that say whether a task sat at the ceiling.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.lab.models import MODEL_NAMES, TRANSFORMER_VARIANTS
from core.lab.stats.intervals import bonferroni_confidence
from core.lab.stats.words import (
    BETTER,
    CANNOT_TELL,
    DETECTABLE,
    EQUIVALENT,
    MODEL_ROLES,
    WORSE,
    answer_lead,
    percent,
)
from core.lab.study.comparisons import primary_comparison

# the verdict words, in the order the legend lists them, and the colour each is shown in (Streamlit's named
# colours; the same four everywhere on the page)
VERDICT_COLOURS: Mapping[str, str] = {BETTER: "green", EQUIVALENT: "blue", CANNOT_TELL: "gray", WORSE: "red"}
# the words the verdict sentences and the comparisons tables use, each as the code computes it (the tables' role
# "secondary, Bonferroni" and their column "p (Holm)" name the two corrections; tests/test_answer.py checks that
# every method the tables and sentences name is here)
GLOSSARY: Mapping[str, str] = {
    "points": "percentage points of accuracy: 95 % against 93 % is a difference of 2 points",
    "CI (confidence interval)": (
        "the range the true difference lies in, given these data, at 95 % (or 90 %) confidence"
    ),
    "corrected resampled t (Nadeau and Bengio)": (
        "how a study's interval is computed: the folds share training data, so their scores are not independent, "
        'and the interval is widened for it; "folds independent" in a table is the narrower interval without '
        "that correction"
    ),
    "equivalence margin": (
        "±2 points: a difference smaller than this is taken not to matter here (results/study_protocol.md says why)"
    ),
    "detectable difference": DETECTABLE,
    "Bonferroni": (
        'the correction of the secondary comparisons\' intervals ("secondary, Bonferroni" in a table): each of m '
        f"intervals is drawn at 1 − 5 %/m confidence ({percent(bonferroni_confidence(0.95, 3))} % for three) "
        "instead of 95 %, so that all hold together at 95 %; their verdicts read these wider intervals"
    ),
    "Holm": (
        'the correction of the secondary comparisons\' p-values (the column "p (Holm)"): each is raised, '
        "smallest first, so that the chance of any false alarm among them stays at 5 %"
    ),
}
CEILING = 99.0  # % accuracy: both models at or above it, and a comparison says little


@dataclass(frozen=True)
class AnswerLine:
    """One study's short answer: where it was asked, its verdict word, and its words: a plain lead, then the
    primary comparison's stored sentence."""

    where: str
    verdict: str
    words: str


def answer_line(where: str, study: Mapping[str, Any]) -> AnswerLine | None:
    """The short answer of one study asked `where`, or None when it has no primary comparison (fault-size has no
    pooled verdict: its three sizes are shown apart)."""
    primary = primary_comparison(study)
    if primary is None or study["config"]["design"] == "fault-size":
        return None
    scores = [mean_accuracy(study, model) for model in (primary["a"], primary["b"])]
    ceiling = None
    if all(score is not None and score >= CEILING for score in scores):
        ceiling = math.floor(10 * min(scores)) / 10  # 99.95 reads 99.9, never a 100.0 that was not reached
    gap = study.get("order_gap")
    no_room = gap is not None and gap["gap"] <= 0
    return AnswerLine(
        where, primary["verdict"], f"{answer_lead(primary, where, ceiling, no_room)} {primary['sentence']}"
    )


def mean_accuracy(study: Mapping[str, Any], model: str) -> float | None:
    """The model's mean test accuracy over its runs, in percent; None if it did not run."""
    scores = [run["accuracy"] for run in study["runs"] if run["model"] == model]
    return 100 * float(np.mean(scores)) if scores else None


def model_table() -> pd.DataFrame:
    """What each model of the lab has: an embedding, a position signal and how it joins the tokens, in words."""
    rows = []
    for name in MODEL_NAMES:
        if name not in TRANSFORMER_VARIANTS:
            rows.append({"model": name, "embedding": "-", "position signal": "-", "in words": MODEL_ROLES[name]})
            continue
        embedded, position, combine = TRANSFORMER_VARIANTS[name]
        signal = "none" if position is None else f"{position}, {'concatenated' if combine == 'concat' else 'added'}"
        rows.append(
            {
                "model": name,
                "embedding": "yes" if embedded else "no",
                "position signal": signal,
                "in words": MODEL_ROLES[name],
            }
        )
    return pd.DataFrame(rows)
