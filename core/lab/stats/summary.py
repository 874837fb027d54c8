"""The statistics of the Fault lab's tables: mean ± sd over seeds, the t-interval, paired differences (judged by
the study's rule, core.lab.stats.intervals, on one split).

Seeds share the windows, so differences between two models are paired by seed: the seed-to-seed spread
that every model shares cancels, and the interval is about the models, not the luck of the initialisation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from core.lab.stats.intervals import bounded, paired_interval, verdict
from core.lab.stats.words import Design, one_split_sentence

REFERENCE_MODEL = "A"
# the study's primary question, asked on one split too when both ran: B against B-noPE, the encoding alone
PRIMARY_PAIR = ("B-noPE", "B")
DEFAULT_MARGIN = 2.0  # points: the equivalence margin of every comparison (results/study_protocol.md says why)


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


def count_test_windows(runs: Sequence[Mapping[str, Any]]) -> int | None:
    """Test windows per run, read from the confusion matrices (they agree when runs share their windows)."""
    sizes = {int(np.sum(run["confusion_matrix"])) for run in runs if "confusion_matrix" in run}
    return max(sizes) if sizes else None


def paired_differences(
    runs: Sequence[Mapping[str, Any]],
    metric: str = "accuracy",
    reference: str = REFERENCE_MODEL,
    margin: float = DEFAULT_MARGIN,
) -> dict[str, dict[str, Any]]:
    """paired[model]: `metric` of model minus that of `reference` on each seed both ran, judged by the study's
    rule (core.lab.stats.intervals) on one split: diff_mean, diff_sd, ci95, ci90, mde80 and margin in percentage
    points (100 x a difference of fractions, as in the study JSON; ci95, ci90 and mde80 within ±100 for the
    fraction metrics, and the sentence says when they were cut there), n seeds, p, verdict and sentence. {}
    without the reference."""
    scores: dict[str, dict[int, float]] = {}
    for run in runs:
        scores.setdefault(run["model"], {})[int(run["seed"])] = float(run[metric])
    if reference not in scores:
        return {}
    n_test = count_test_windows(runs)
    population = f"{n_test:,} test window{'' if n_test == 1 else 's'}" if n_test else "its test windows"
    paired = {}
    for model, by_seed in scores.items():
        if model == reference:
            continue
        seeds = sorted(set(by_seed) & set(scores[reference]))
        differences = 100 * np.array([by_seed[s] - scores[reference][s] for s in seeds])  # points
        spread = mean_sd(differences)
        pair = {"metric": metric, "diff_mean": spread["mean"], "diff_sd": spread["sd"], "n": spread["n"]}
        pair.update(ci95=None, ci90=None, margin=float(margin), mde80=None, p=None, verdict=None)
        if seeds:
            interval = bounded(paired_interval(differences[None, :]), metric)  # one split: the seeds alone vary
            word = verdict(interval, margin)
            pair.update(
                ci95=interval.ci(0.95), ci90=interval.ci(0.90), mde80=interval.mde80, p=interval.p, verdict=word
            )
            design = Design(population, interval.seeds, clipped=interval.clipped, bound=interval.bound)
            pair["sentence"] = one_split_sentence(reference, model, pair, design)
        else:
            pair["sentence"] = f"{model} shares no seed with {reference}, so they cannot be paired."
        paired[model] = pair
    return paired


def primary_pair(
    runs: Sequence[Mapping[str, Any]], metric: str = "accuracy", margin: float = DEFAULT_MARGIN
) -> dict[str, Any] | None:
    """B minus B-noPE on the seeds both ran, judged and worded as `paired_differences` judges and words each model
    against A (the study's primary question, on one split); None unless both ran."""
    reference, model = PRIMARY_PAIR
    chosen = [run for run in runs if run["model"] in PRIMARY_PAIR]
    return paired_differences(chosen, metric, reference=reference, margin=margin).get(model)
