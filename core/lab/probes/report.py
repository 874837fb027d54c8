"""The order test as the page and the CLI show it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from core.lab.stats.words import amount, with_interval

ORDER_MODELS = ("A", "A+PE", "B", "B-learned", "CNN")  # read against a model that cannot use order (A)


def order_table(summary: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per model: accuracy, and how much it drops (points, 95 % CI) with the tokens shuffled or reversed."""

    ordered = [m for m in ORDER_MODELS if m in summary] + [m for m in summary if m not in ORDER_MODELS]
    return pd.DataFrame(
        [
            {
                "model": model,
                "runs": summary[model]["runs"],
                "accuracy %": amount(summary[model]["accuracy"]["mean"]),
                "drop, shuffled tokens (points)": _drop(summary[model]["shuffled_drop"]),
                "drop, reversed tokens (points)": _drop(summary[model]["reversed_drop"]),
            }
            for model in ordered
        ]
    )


def _drop(cell: Mapping[str, Any]) -> str:
    return with_interval(cell["mean"], cell["ci95"])
