"""A study's extra tests: further test sets every run of a study is also scored on, beyond its fold's own test
windows, nothing retrained.

Two kinds share this code: noise (core.lab.study.noise: the fold's test windows with white noise at each SNR of
config.snr_db) and cross-load (core.lab.study.cross_load: every window at each motor load of config.test_loads).
Each run records, under the kind's key, {accuracy, f1}: its score on each of those test sets in the config's
order (no per-window record: an extra test describes, the study's own test windows decide). `effects` compares
the pairs the study compares on each test set, on the same (repeat, fold, seed) cells and with the study's own
interval, unadjusted: a description, not a verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from core.lab.contract import BLOCK_METRICS, is_number, require
from core.lab.stats import words
from core.lab.study.comparisons import cell_differences, compared_pairs, study_interval

EXTRA_TEST_METRICS = BLOCK_METRICS  # what a run records on each extra test set


@dataclass(frozen=True)
class ExtraTest:
    """One kind of extra test: where a run's scores are kept and how its test sets are named."""

    run_key: str  # each run's record of this kind, e.g. "noise"
    config_key: str  # the config's list of the values scored at, e.g. "snr_db"
    row_key: str  # the key of an effects row's value, e.g. "snr_db"
    what: str  # one value in words, for messages, e.g. "SNR"
    test_set_name: Callable[[Any], str]  # the key of a value's test set in a trained run's extra_tests
    column: Callable[[Any], str]  # a value in the table's "test set" column
    own_row: str | None = None  # the column of a first row on the fold's own test windows (None: no such row)
    design: str | None = None  # the one design whose config.<config_key> this kind reads (None: any)

    def values(self, config: Mapping[str, Any]) -> list[Any] | None:
        """The values this study's runs were scored at (None: the study has no such extra tests)."""
        if self.design is not None and config.get("design") != self.design:
            return None
        return config.get(self.config_key)

    def record(self, run: Mapping[str, Any], values: Sequence[Any]) -> dict[str, list[float]]:
        """A run's record: its score on each value's test set (from the trained run's extra_tests), in order."""
        tests = run["extra_tests"]
        return {metric: [float(tests[self.test_set_name(v)][metric]) for v in values] for metric in EXTRA_TEST_METRICS}

    def check(self, study: Mapping[str, Any]) -> None:
        """With the kind's values, each of the study's runs records its score at every one of them; without them
        no run records it. (The values' own checks are its module's.)"""
        values = self.values(study["config"])
        for i, run in enumerate(study["runs"]):
            where = f"runs[{i}].{self.run_key}"
            if values is None:
                require(self.run_key not in run, f"{where} needs config.{self.config_key}")
                continue
            scores = run.get(self.run_key)
            require(
                isinstance(scores, dict) and set(scores) == set(EXTRA_TEST_METRICS),
                f"{where} must hold {EXTRA_TEST_METRICS}",
            )
            for metric in EXTRA_TEST_METRICS:
                kept = scores[metric]
                require(
                    isinstance(kept, list)
                    and len(kept) == len(values)
                    and all(is_number(v) and 0 <= v <= 1 for v in kept),
                    f"{where}.{metric} must hold a fraction per {self.what} ({len(values)})",
                )


def extra_test_metric(metric: str) -> str:
    """The metric extra tests' effects are read on: the study's where a run records it there, else accuracy."""
    return metric if metric in EXTRA_TEST_METRICS else "accuracy"


def _scored_on(study: Mapping[str, Any], test: ExtraTest, index: int | None, metric: str) -> dict[str, Any]:
    """The study as if its runs had been tested on the extra test set of that index (None: its own windows)."""
    if index is None:
        return dict(study)
    runs = [{**run, metric: run[test.run_key][metric][index]} for run in study["runs"]]
    return {**study, "runs": runs}


def effects(test: ExtraTest, study: Mapping[str, Any], metric: str = "accuracy") -> list[dict[str, Any]]:
    """Per compared pair (core.lab.study.comparisons.compared_pairs, the primary first) and per test set (the
    study's own first where the kind has that row, then each value), b - a in points with the study's 95 %
    interval, unadjusted, and each model's mean: rows {a, b, metric, <row_key> (None: the study's own), diff,
    ci95, mean_a, mean_b}; [] where the study has no such extra tests."""
    values = test.values(study["config"])
    if not values:
        return []
    metric = extra_test_metric(metric)
    indices = ((None,) if test.own_row else ()) + tuple(range(len(values)))
    rows = []
    for a, b in compared_pairs(study):
        for index in indices:
            view = _scored_on(study, test, index, metric)
            table, keys, _ = cell_differences(view, a, b, metric)
            interval = study_interval(view, table, keys, metric)
            means = {m: 100 * _mean(view["runs"], m, metric) for m in (a, b)}
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "metric": metric,
                    test.row_key: None if index is None else values[index],
                    "diff": interval.diff,
                    "ci95": interval.ci(0.95),
                    "mean_a": means[a],
                    "mean_b": means[b],
                }
            )
    return rows


def _mean(runs: Sequence[Mapping[str, Any]], model: str, metric: str) -> float:
    values = [float(run[metric]) for run in runs if run["model"] == model]
    return sum(values) / len(values)


def effects_frame(test: ExtraTest, rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The table of `effects` (page and CLI): a row per pair and test set, means in %, b - a in points."""
    return pd.DataFrame(
        [
            {
                "pair": f"{row['b']} − {row['a']}",
                "test set": test.own_row if row[test.row_key] is None else test.column(row[test.row_key]),
                "a (%)": words.amount(row["mean_a"]),
                "b (%)": words.amount(row["mean_b"]),
                "b − a (points)": words.points(row["diff"], 2),
                "95 % CI": words.interval(row["ci95"]),
            }
            for row in rows
        ]
    )
