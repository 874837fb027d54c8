"""The building blocks of the JSON contracts: which metrics a run records, and the checks every validator uses.

`core.results` (the experiment's JSON) and each evaluation's block (core.evaluations) validate with these,
so a broken file is refused with the same kind of message wherever the break is: "invalid results JSON:
<where> <what is wrong>".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np

METRICS = ("accuracy", "precision", "recall", "f1")  # what every run records, fractions in 0..1
BLOCK_METRICS = ("accuracy", "f1")  # what the evaluation blocks record per cell
CELL_KEYS = ("mean", "sd", "n", "values")
PAIRED_KEYS = ("metric", "diff_mean", "diff_sd", "n", "ci95", "ci90", "margin", "mde80", "p", "verdict", "sentence")
VERDICTS = ("equivalent", "better", "worse", "inconclusive")
# what every run of a results JSON records (core.results documents each)
RUN_KEYS = (
    "model",
    "seed",
    "accuracy",
    "precision",
    "recall",
    "f1",
    "per_class_f1",
    "confusion_matrix",
    "epochs",
    "best_epoch",
    "converged",
    "train_seconds",
    "windows_per_second",
    "device",
    "history",
    "order_test",
)
ORDER_TEST_KEYS = ("accuracy", "shuffled", "reversed")
HISTORY_KEYS = ("epoch", "train_loss", "val_loss", "val_accuracy")


def to_plain(value: Any) -> Any:
    """numpy scalars and arrays -> JSON-ready Python values, at any depth."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


def require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(f"invalid results JSON: {message}")


def is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def is_int(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def check_keys(where: str, mapping: Any, keys: Sequence[str], optional: Sequence[str] = ()) -> None:
    require(isinstance(mapping, Mapping), f"{where} must be an object, got {type(mapping).__name__}")
    missing, extra = set(keys) - set(mapping), set(mapping) - set(keys) - set(optional)
    require(not missing and not extra, f"{where} keys: missing {sorted(missing)}, unexpected {sorted(extra)}")


def check_optional_number(where: str, value: Any) -> None:
    require(value is None or is_number(value), f"{where} must be a finite number or null")


def check_int_list(where: str, values: Any, minimum: int = 0) -> None:
    require(
        isinstance(values, list) and values and all(is_int(v) and v >= minimum for v in values),
        f"{where} must be a non-empty list of integers >= {minimum}",
    )


def check_pair(where: str, pair: Any) -> None:
    """A paired difference as core.stats.paired_differences writes it (fractions, p, verdict, sentence)."""
    check_keys(where, pair, PAIRED_KEYS)
    require(pair["metric"] in METRICS, f"{where}.metric must be one of {METRICS}")
    require(is_int(pair["n"]) and pair["n"] >= 0, f"{where}.n must be a non-negative integer")
    for key in ("diff_mean", "diff_sd", "mde80", "p"):
        check_optional_number(f"{where}.{key}", pair[key])
    require(is_number(pair["margin"]) and pair["margin"] > 0, f"{where}.margin must be a positive fraction")
    for key in ("ci95", "ci90"):
        ci = pair[key]
        require(
            ci is None or (isinstance(ci, list) and len(ci) == 2 and all(is_number(v) for v in ci) and ci[0] <= ci[1]),
            f"{where}.{key} must be null or [low, high]",
        )
    require(pair["verdict"] is None or pair["verdict"] in VERDICTS, f"{where}.verdict must be one of {VERDICTS}")
    require(isinstance(pair["sentence"], str) and pair["sentence"], f"{where}.sentence must be a sentence")


def check_cell(where: str, cell: Any) -> None:
    """A table cell as core.stats.cell writes it: a fraction summarised over seeds, and the seeds' values."""
    check_keys(where, cell, CELL_KEYS)
    values = cell["values"]
    require(
        isinstance(values, list) and all(is_number(v) and 0 <= v <= 1 for v in values),
        f"{where}.values must be a list of fractions in 0..1",
    )
    require(is_int(cell["n"]) and cell["n"] == len(values), f"{where}.n must count the values")
    check_optional_number(f"{where}.mean", cell["mean"])
    check_optional_number(f"{where}.sd", cell["sd"])


def check_cells_by_model(where: str, block: Mapping[str, Any], models: set[str], shape: tuple[int, ...]) -> None:
    """block[metric][model] is a list (of lists) of cells of `shape`, for exactly `models`."""
    for metric in BLOCK_METRICS:
        table = block[metric]
        require(isinstance(table, Mapping), f"{where}.{metric} must be an object")
        require(set(table) == models, f"{where}.{metric} models {sorted(table)} differ from {sorted(models)}")
        for model, cells in table.items():
            _check_nested_cells(f"{where}.{metric}[{model!r}]", cells, shape)


def _check_nested_cells(where: str, cells: Any, shape: tuple[int, ...]) -> None:
    require(isinstance(cells, list) and len(cells) == shape[0], f"{where} must be a list of {shape[0]}")
    for i, inner in enumerate(cells):
        if len(shape) > 1:
            _check_nested_cells(f"{where}[{i}]", inner, shape[1:])
        else:
            check_cell(f"{where}[{i}]", inner)


def run_models(results: Mapping[str, Any]) -> set[str]:
    return {run["model"] for run in results["runs"]}


def check_order_test(where: str, scores: Any) -> None:
    """A run's order test (core.probes.order): accuracy as is, shuffled and reversed, fractions."""
    check_keys(where, scores, ORDER_TEST_KEYS)
    require(all(is_number(scores[k]) and 0 <= scores[k] <= 1 for k in ORDER_TEST_KEYS), f"{where} must hold fractions")


def check_order_summary(where: str, summary: Any, models: set[str]) -> None:
    """Per model: runs, accuracy (mean ± sd in %), and the shuffled and reversed drops in points."""
    require(isinstance(summary, Mapping) and set(summary) <= models, f"{where} must cover models that were run")
    for model, row in summary.items():
        check_keys(f"{where}[{model!r}]", row, ("runs", "accuracy", "shuffled_drop", "reversed_drop"))
        for kind in ("shuffled_drop", "reversed_drop"):
            check_keys(f"{where}[{model!r}].{kind}", row[kind], ("mean", "sd", "n", "ci95"))
