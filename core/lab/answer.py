"""The Fault lab's short answer: one plain sentence per rig from its shipped study's primary verdict, its colour,
and whether the positive control passed the protocol's criteria (results/study_protocol.md), all generated from the
studies' stored comparisons, so the words cannot drift from the numbers.

Every number here is read from a study JSON (core.lab.study.contract); nothing is recomputed from runs except
the positive control's checks, which the protocol states in terms of mean accuracies and the order test.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.lab.models import MODEL_NAMES, TRANSFORMER_VARIANTS
from core.lab.stats.intervals import MODEL_ROLES, bonferroni_confidence
from core.lab.study.comparisons import primary_comparison

# the verdict words, in the order the legend lists them, and the colour each is shown in (Streamlit's named
# colours; the same four everywhere on the page)
VERDICT_COLOURS: Mapping[str, str] = {
    "better": "green",
    "equivalent": "blue",
    "inconclusive": "gray",
    "worse": "red",
}
VERDICT_MEANINGS: Mapping[str, str] = {
    "better": "the 95 % interval lies above zero",
    "equivalent": "the 90 % interval lies inside the ±2-point margin",
    "inconclusive": "neither: the data cannot tell, and the sentence says how big a difference they could have seen",
    "worse": "the 95 % interval lies below zero",
}
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
    "detectable difference": (
        "the smallest true difference the design would have found with 80 % probability; an inconclusive verdict "
        "says how big a difference the study could have seen"
    ),
    "Bonferroni": (
        'the correction of the secondary comparisons\' intervals ("secondary, Bonferroni" in a table): each of m '
        f"intervals is drawn at 1 − 5 %/m confidence ({100 * bonferroni_confidence(0.95, 3):.1f} % for three) "
        "instead of 95 %, so that all hold together at 95 %; their verdicts read these wider intervals"
    ),
    "Holm": (
        'the correction of the secondary comparisons\' p-values (the column "p (Holm)"): each is raised, '
        "smallest first, so that the chance of any false alarm among them stays at 5 %"
    ),
}
CEILING = 99.0  # % accuracy: both models at or above it, and a comparison says little
# the protocol's pass criteria for the positive control
CONTROL_MIN_GAIN = 10.0  # points of B over B-noPE
CONTROL_CHANCE_BAND = 5.0  # points: B-noPE within this of chance


@dataclass(frozen=True)
class AnswerLine:
    """One study's short answer: where it was asked, its verdict word, and one plain sentence with the numbers."""

    where: str
    verdict: str
    words: str


def plain_sentence(comparison: Mapping[str, Any], where: str = "", ceiling: float | None = None) -> str:
    """The primary comparison in one plain sentence, from its stored values: `where` it was asked ("On real
    bearings (CWRU)"), who did better and by how much against the margin, or that the lab could not tell them
    apart and what it could have seen; `ceiling` (both models' lowest mean accuracy, when both are at the
    ceiling) adds that the task was too easy to show anything."""
    a, b, diff, margin = comparison["a"], comparison["b"], float(comparison["diff"]), float(comparison["margin"])
    word, ci95 = comparison["verdict"], comparison["ci95"]
    lead = f"{where}, " if where else ""
    if word == "equivalent":
        said = f"{lead}{b} and {a} scored the same within the ±{margin:g}-point margin ({b} − {a} {diff:+.1f} points)"
    elif word in ("better", "worse") and ci95 is not None:
        beyond = (ci95[0] > margin) if word == "better" else (ci95[1] < -margin)
        how = "more than" if beyond else "possibly less than"
        verb = "beat" if word == "better" else "did worse than"
        said = f"{lead}{b} {verb} {a} by {abs(diff):.1f} points, {how} the {margin:g}-point margin"
    else:
        detectable = comparison.get("mde80")
        could = (
            ""
            if detectable is None
            else (f", and this study could only have detected a difference of about {detectable:.1f} points or more")
        )
        said = f"{lead}the lab could not tell {b} from {a}: {b} − {a} came out at {diff:+.1f} points{could}"
    if ceiling is not None:
        said += f", but both scored {ceiling:.1f} % or more: the task is too easy there to show what the encoding does"
    return f"{said[:1].upper()}{said[1:]}."


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
    return AnswerLine(where, primary["verdict"], plain_sentence(primary, where, ceiling))


def mean_accuracy(study: Mapping[str, Any], model: str) -> float | None:
    """The model's mean test accuracy over its runs, in percent; None if it did not run."""
    scores = [run["accuracy"] for run in study["runs"] if run["model"] == model]
    return 100 * float(np.mean(scores)) if scores else None


def control_check(study: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether a positive-control study meets the protocol (B vs B-noPE better by at least 10 points, B-noPE
    within 5 points of chance, B's accuracy falling when its tokens are shuffled), and the reasons in words."""
    primary = primary_comparison(study)
    chance = 100 / len(study["class_names"])
    no_pe = mean_accuracy(study, "B-noPE")
    if primary is None or (primary["a"], primary["b"]) != ("B-noPE", "B") or no_pe is None:
        return False, "the study did not compare B with B-noPE"
    drop = (study.get("order_summary") or {}).get("B", {}).get("shuffled_drop", {}).get("mean")
    checks = [
        (
            primary["verdict"] == "better" and primary["diff"] >= CONTROL_MIN_GAIN,
            f"B beats B-noPE by {primary['diff']:.1f} points (at least {CONTROL_MIN_GAIN:g} needed)",
        ),
        (
            abs(no_pe - chance) <= CONTROL_CHANCE_BAND,
            f"B-noPE scores {no_pe:.1f} %, chance is {chance:.1f} % (within {CONTROL_CHANCE_BAND:g} points needed)",
        ),
        (drop is not None and drop > CONTROL_CHANCE_BAND, _drop_words(drop)),
    ]
    return all(ok for ok, _ in checks), "; ".join(words for _, words in checks)


def _drop_words(drop: float | None) -> str:
    if drop is None:
        return "no order test was stored for B"
    return f"shuffling B's tokens costs it {drop:.1f} points"


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
