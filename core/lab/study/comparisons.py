"""`compare(study, a, b)`: one comparison of a study JSON, and every comparison a study reports.

    primary     B vs A          does the embedding + PE help?
    secondary   B vs B-noPE     the PE after an embedding
                A+PE vs A       the PE without one
                B-noPE vs A     the embedding alone
                B-learned vs B  a learned position table instead of the sinusoids
                B-concat vs B   the PE concatenated instead of added
                CNN vs A        the practitioner's baseline

p_holm adjusts the secondary comparisons' p-values together (Holm); the primary keeps its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from core.lab.stats.intervals import LOWER_IS_BETTER, holm, paired_interval, sentence, verdict

STUDY_METRICS = ("accuracy", "balanced_accuracy", "f1", "log_loss")
PRIMARY = ("A", "B")  # (a, b): b - a
SECONDARY = (("B-noPE", "B"), ("A", "A+PE"), ("A", "B-noPE"), ("B", "B-learned"), ("B", "B-concat"), ("A", "CNN"))
COMPARISON_KEYS = ("a", "b", "metric", "diff", "ci95", "ci90", "margin", "mde80", "p", "p_holm", "verdict", "sentence")


def differences(study: Mapping[str, Any], a: str, b: str, metric: str = "accuracy") -> np.ndarray:
    """The (folds, seeds) table of metric(b) - metric(a) in points, on the (fold, seed) cells both ran."""
    if metric not in STUDY_METRICS:
        raise ValueError(f"metric must be one of {STUDY_METRICS}, got {metric!r}")
    score = {(run["model"], run["fold"], run["seed"]): float(run[metric]) for run in study["runs"]}
    folds = sorted({fold for model, fold, _ in score if model in (a, b)})
    seeds = sorted({seed for model, _, seed in score if model in (a, b)})
    missing = [(m, f, s) for m in (a, b) for f in folds for s in seeds if (m, f, s) not in score]
    if missing:
        raise ValueError(f"{a} and {b} must both have a run in every (fold, seed); missing {missing[:3]}")
    return np.array([[100 * (score[(b, f, s)] - score[(a, f, s)]) for s in seeds] for f in folds])


def compare(study: Mapping[str, Any], a: str, b: str, metric: str = "accuracy", margin: float = 2.0) -> dict[str, Any]:
    """b against a on `metric`: diff (points, mean over (fold, seed) of metric(b) - metric(a)), ci95, ci90,
    margin, mde80, p, p_holm (= p here; compare_all adjusts the secondary ones), verdict and sentence."""
    if not margin > 0:
        raise ValueError(f"the equivalence margin must be positive (in points), got {margin}")
    interval = paired_interval(differences(study, a, b, metric))
    word = verdict(interval, margin, metric in LOWER_IS_BETTER)
    return {
        "a": a,
        "b": b,
        "metric": metric,
        "diff": interval.diff,
        "ci95": interval.ci(0.95),
        "ci90": interval.ci(0.90),
        "margin": float(margin),
        "mde80": interval.mde80,
        "p": interval.p,
        "p_holm": interval.p,
        "verdict": word,
        "sentence": sentence(a, b, metric, interval, margin, word, study["config"]["population"]),
    }


def compare_all(study: Mapping[str, Any], metric: str = "accuracy", margin: float = 2.0) -> list[dict[str, Any]]:
    """The primary comparison and every secondary one whose models the study ran, Holm-adjusted."""
    models = {run["model"] for run in study["runs"]}
    pairs = [pair for pair in (PRIMARY, *SECONDARY) if set(pair) <= models]
    comparisons = [compare(study, a, b, metric, margin) for a, b in pairs]
    secondary = [c for c in comparisons if (c["a"], c["b"]) != PRIMARY and c["p"] is not None]
    for comparison, adjusted in zip(secondary, holm([c["p"] for c in secondary])):
        comparison["p_holm"] = adjusted
    return comparisons


def comparisons_table(comparisons: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per comparison, as the page and the CLI show it (points, p-values, verdict)."""

    def interval(ci: Sequence[float] | None) -> str:
        return "-" if ci is None else f"{ci[0]:+.1f} to {ci[1]:+.1f}"

    def number(value: float | None, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    return pd.DataFrame(
        [
            {
                "comparison": f"{c['b']} vs {c['a']}",
                "metric": c["metric"],
                "diff (points)": f"{c['diff']:+.2f}",
                "95 % CI": interval(c["ci95"]),
                "90 % CI": interval(c["ci90"]),
                "margin": f"±{c['margin']:g}",
                "detectable (80 %)": number(c["mde80"], 1),
                "p": number(c["p"], 3),
                "p (Holm)": number(c["p_holm"], 3),
                "verdict": c["verdict"],
            }
            for c in comparisons
        ]
    )
