"""The per-model aggregates of a results JSON that the Fault lab draws: confusion matrices summed over seeds,
per-class F1 averaged over seeds, and the long table of a set of confusion matrices (the figure's CSV).

Only the main stage's runs are in results["runs"], so every (model, seed) counts once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd


def summed_confusion(results: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Per model, in the order the runs list them: the sum of its runs' confusion matrices (rows true, columns
    predicted), so each cell counts the test windows of every seed."""
    matrices: dict[str, np.ndarray] = {}
    for run in results["runs"]:
        matrix = np.asarray(run["confusion_matrix"], dtype=np.int64)
        matrices[run["model"]] = matrices[run["model"]] + matrix if run["model"] in matrices else matrix
    return matrices


def mean_per_class_f1(results: Mapping[str, Any]) -> dict[str, list[float]]:
    """Per model: each class's F1 averaged over the model's seeds."""
    scores: dict[str, list[Sequence[float]]] = {}
    for run in results["runs"]:
        scores.setdefault(run["model"], []).append(run["per_class_f1"])
    return {model: [float(value) for value in np.mean(rows, axis=0)] for model, rows in scores.items()}


def confusion_frame(matrices: Mapping[str, np.ndarray], class_names: Sequence[str]) -> pd.DataFrame:
    """One row per (model, true class, predicted class) with its count of windows: the matrices as a table."""
    rows = [
        {"model": model, "true": true, "predicted": predicted, "windows": int(matrix[i][j])}
        for model, matrix in matrices.items()
        for i, true in enumerate(class_names)
        for j, predicted in enumerate(class_names)
    ]
    return pd.DataFrame(rows, columns=["model", "true", "predicted", "windows"])
