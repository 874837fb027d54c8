"""The experiment's tables that the CLI and the Fault lab both show, and the paragraph of its verdict; every
number in them is printed by core.lab.stats.words, so the page, the CLI's printout and the downloads read alike.
Also the per-model aggregates the Fault lab draws from a results JSON: confusion matrices summed over seeds (only
the main stage's runs are in results["runs"], so every (model, seed) counts once), per-class F1 averaged over
seeds, and the long table of a set of confusion matrices (the figure's CSV). A study's tables are in
core.lab.study.tables, the order test's in core.lab.probes.report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from core.lab.contract import METRICS, RUN_KEYS
from core.lab.stats.summary import PRIMARY_PAIR, REFERENCE_MODEL
from core.lab.stats.words import amount, percent_cell, points, with_interval

RUN_COLUMNS = tuple(key for key in RUN_KEYS if key not in ("per_class_f1", "confusion_matrix", "history"))


def format_number(value: float) -> str:
    """Shortest text that reads back as the same number: 10000 for 10000.0, 0.003 for 3e-3."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def plural(count: int, word: str, words: str | None = None) -> str:
    """A count and its noun, singular for one: plural(1, "epoch") -> "1 epoch", plural(3, "epoch") -> "3 epochs",
    plural(2, "class", "classes") -> "2 classes"; thousands are grouped ("35,998 times")."""
    noun = word if count == 1 else (words or f"{word}s")
    return f"{count:,} {noun}"


def format_list(values: Sequence[float]) -> str:
    """Numbers as a CLI list: "-4,0,4.5"."""
    return ",".join(format_number(v) for v in values)


def verdict(comparisons: Sequence[Mapping[str, Any]], n_test: int | None, models: Sequence[str] = ()) -> str:
    """The paragraph a reader takes away: every comparison's sentence (the primary, B against B-noPE when both
    ran, first; core.lab.study.comparisons), then what one test window is worth."""
    sentences = [comparison["sentence"] for comparison in comparisons]
    if not sentences:
        missing = REFERENCE_MODEL not in models
        sentences.append(
            f"No comparison: model {REFERENCE_MODEL} was not run." if missing else "No other model to compare with A."
        )
    if n_test:
        sentences.append(
            f"The test set has {plural(n_test, 'window')}, so one window is {amount(100 / n_test, 2)} points "
            "of accuracy."
        )
    return " ".join(sentences)


def summary_table(results: Mapping[str, Any]) -> pd.DataFrame:
    """One row per model, as numbers: mean and sd of each metric (fractions), seeds, the verdict against A."""
    against = _by_pair(results)
    rows = []
    for model, by_metric in results["summary"].items():
        row: dict[str, Any] = {"model": model, "seeds": by_metric["accuracy"]["n"]}
        for metric in METRICS:
            row[f"{metric}_mean"] = by_metric[metric]["mean"]
            row[f"{metric}_sd"] = by_metric[metric]["sd"]
        comparison = against.get((REFERENCE_MODEL, model))
        row["vs_A"] = comparison["verdict"] if comparison else None
        rows.append(row)
    return pd.DataFrame(rows)


def _by_pair(results: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
    return {(comparison["a"], comparison["b"]): comparison for comparison in results["comparisons"]}


def results_table(results: Mapping[str, Any]) -> pd.DataFrame:
    """The results table as shown and downloaded: per model, each metric as mean ± sd in % over its seeds, then
    for each model its comparisons (core.lab.study.comparisons: B against B-noPE when both ran, each model against
    A), in points with the 95 % interval, and the verdict; "-" where a model is not compared with that one."""
    against = _by_pair(results)
    references = list(dict.fromkeys(a for a, _ in against))  # the primary's reference first
    rows = []
    for model, by_metric in results["summary"].items():
        row = {"model": model, "seeds": by_metric["accuracy"]["n"]}
        for metric_name in METRICS:
            row[f"{metric_name} %"] = percent_cell(by_metric[metric_name])
        for reference in references:
            comparison = against.get((reference, model))
            shown = with_interval(comparison["diff"], comparison["ci95"]) if comparison else "-"
            row[f"vs {reference} (95 % CI, points)"] = shown
            row[f"vs {reference}"] = comparison["verdict"] if comparison else "-"
        rows.append(row)
    return pd.DataFrame(rows)


def interim_table(
    runs: Sequence[Mapping[str, Any]], models: Sequence[str], seeds: Sequence[int]
) -> tuple[pd.DataFrame, int]:
    """While a press trains: the accuracy (%) of every finished run, one row per model and one column per seed
    ("…" where it has not finished), and B − B-noPE in points on each seed both finished; with the number of seeds
    on which the comparison asked (B-noPE and B when both run, else every model) has finished."""
    accuracy = {(run["model"], int(run["seed"])): 100 * float(run["accuracy"]) for run in runs}
    asked = list(PRIMARY_PAIR) if set(PRIMARY_PAIR) <= set(models) else list(models)
    finished = [seed for seed in seeds if all((model, seed) in accuracy for model in asked)]
    rows = [
        {"model": model, **{f"seed {seed}": _interim_cell(accuracy.get((model, seed))) for seed in seeds}}
        for model in models
    ]
    if asked == list(PRIMARY_PAIR):
        reference, model = PRIMARY_PAIR
        differences = {
            f"seed {seed}": points(accuracy[(model, seed)] - accuracy[(reference, seed)]) if seed in finished else "…"
            for seed in seeds
        }
        rows.append({"model": f"{model} − {reference} (points)", **differences})
    return pd.DataFrame(rows), len(finished)


def _interim_cell(value: float | None) -> str:
    return "…" if value is None else amount(value)


def runs_table(results: Mapping[str, Any]) -> pd.DataFrame:
    """One row per run: its scores (fractions), epochs, seconds and device."""
    return pd.DataFrame([{key: run[key] for key in RUN_COLUMNS} for run in results["runs"]])


def as_text(frame: pd.DataFrame, index: bool = False) -> str:
    """A table as left-aligned plain text for a terminal: the first column reads as labels."""
    if index:
        frame = frame.rename_axis("").reset_index()
    columns = [str(column) for column in frame.columns]
    cells = [[str(value) for value in row] for row in frame.itertuples(index=False)]
    widths = [max(len(text) for text in [column, *(row[i] for row in cells)]) for i, column in enumerate(columns)]
    lines = ["  ".join(text.ljust(width) for text, width in zip(row, widths)).rstrip() for row in [columns, *cells]]
    return "\n".join(lines)


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
