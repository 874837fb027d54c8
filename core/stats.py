"""The statistics of the Fault lab's tables: mean ± sd over seeds, the t-interval, paired differences.

Seeds share the data split, so differences between two models are paired by seed: the seed-to-seed spread
that every model shares cancels, and the interval is about the models, not the luck of the initialisation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

REFERENCE_MODEL = "A"


def mean_sd(values: Sequence[float]) -> dict[str, Any]:
    """{"mean", "sd", "n"}; sd uses ddof = 1 and is None for a single value (no spread to measure)."""
    values = np.asarray(values, dtype=np.float64)
    n = int(values.size)
    return {
        "mean": float(values.mean()) if n else None,
        "sd": float(values.std(ddof=1)) if n >= 2 else None,
        "n": n,
    }


def cell(values: Sequence[float]) -> dict[str, Any]:
    """{"mean", "sd", "n", "values"}: the summary of one table cell over seeds, and the seeds' values."""
    return {**mean_sd(values), "values": [float(v) for v in values]}


def t_interval(differences: Sequence[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """The t-interval for the mean of paired differences, on n - 1 degrees of freedom (None for n < 2)."""
    differences = np.asarray(differences, dtype=np.float64)
    n = differences.size
    if n < 2:
        return None
    mean = differences.mean()
    half_width = stats.t.ppf(0.5 + confidence / 2, n - 1) * differences.std(ddof=1) / math.sqrt(n)
    return float(mean - half_width), float(mean + half_width)


def paired_differences(
    runs: Sequence[Mapping[str, Any]], metric: str = "accuracy", reference: str = REFERENCE_MODEL
) -> dict[str, dict[str, Any]]:
    """paired[model] = {"metric", "diff_mean", "diff_sd", "n", "ci95"}: `metric` of model minus that of
    `reference` on each seed both ran, with the t-interval of the mean difference ({} without the reference)."""
    scores: dict[str, dict[int, float]] = {}
    for run in runs:
        scores.setdefault(run["model"], {})[int(run["seed"])] = float(run[metric])
    if reference not in scores:
        return {}
    paired = {}
    for model, by_seed in scores.items():
        if model == reference:
            continue
        seeds = sorted(set(by_seed) & set(scores[reference]))
        differences = [by_seed[s] - scores[reference][s] for s in seeds]
        spread = mean_sd(differences)
        interval = t_interval(differences)
        paired[model] = {
            "metric": metric,
            "diff_mean": spread["mean"],
            "diff_sd": spread["sd"],
            "n": spread["n"],
            "ci95": list(interval) if interval is not None else None,
        }
    return paired
