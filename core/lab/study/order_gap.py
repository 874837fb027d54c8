"""The order gap of a study (protocol 3): how much room the task leaves for order.

    gap = the best mean accuracy of a model that sees order - spectrum-LR's mean accuracy, in points

A model sees order when it is given a position signal (core.lab.models.has_position: A+PE, B, B-learned,
B-concat); A and B-noPE are blind to it (no position, mean-pooled), and spectrum-LR is the order-blind
baseline (core.lab.spectrum_baseline). Each mean is over all of the model's (repeat, fold, seed) runs of the
study, so the models are compared on the same test windows. A gap near 0 or below says an order-blind
spectrum already does as well as any model that could use order: the task leaves order no room. It is
stored as the study JSON's `order_gap` and named in each verdict sentence as "the room order has"
(core.lab.stats.words.room_words); a study without spectrum-LR, or without a model that sees order, has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from core.lab.contract import check_keys, is_number, is_text, require
from core.lab.models import has_position

BASELINE = "spectrum-LR"
ORDER_GAP_KEYS = ("baseline", "baseline_accuracy", "best", "best_accuracy", "gap", "accuracy")


def mean_accuracies(study: Mapping[str, Any]) -> dict[str, float]:
    """Per model of the study's runs, in run order: its mean accuracy (a fraction) over its runs."""
    scores: dict[str, list[float]] = {}
    for run in study["runs"]:
        scores.setdefault(run["model"], []).append(float(run["accuracy"]))
    return {model: float(np.mean(values)) for model, values in scores.items()}


def order_gap(study: Mapping[str, Any]) -> dict[str, Any] | None:
    """{baseline, baseline_accuracy, best, best_accuracy, gap (points), accuracy (every model's)}; None unless
    the study ran spectrum-LR and a model that sees order (the first in run order wins a tie)."""
    accuracy = mean_accuracies(study)
    seeing = [model for model in accuracy if has_position(model)]
    if BASELINE not in accuracy or not seeing:
        return None
    best = max(seeing, key=lambda model: accuracy[model])
    return {
        "baseline": BASELINE,
        "baseline_accuracy": accuracy[BASELINE],
        "best": best,
        "best_accuracy": accuracy[best],
        "gap": 100 * (accuracy[best] - accuracy[BASELINE]),
        "accuracy": accuracy,
    }


def check_order_gap(gap: Any) -> None:
    """The study JSON's order_gap: the keys of ORDER_GAP_KEYS, fractions and points."""
    check_keys("order_gap", gap, ORDER_GAP_KEYS)
    require(is_text(gap["baseline"]) and is_text(gap["best"]), "order_gap.baseline and .best must be model names")
    require(is_number(gap["gap"]), "order_gap.gap must be a number of points")
    accuracy = gap["accuracy"]
    require(isinstance(accuracy, dict), "order_gap.accuracy must be an object")
    fractions = [gap["baseline_accuracy"], gap["best_accuracy"], *accuracy.values()]
    require(all(is_number(v) and 0 <= v <= 1 for v in fractions), "order_gap accuracies must be fractions in 0..1")
