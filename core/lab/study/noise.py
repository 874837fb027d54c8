"""A study's noise cell: does the encoding's effect hold up when the test recordings are noisier?

With `snr_db` set (StudyPlan, `python -m core.study --snr=-4,0,8`), every one of the study's own runs is also
scored on noisy copies of its fold's test windows, one per SNR (core.lab.vibration.noise: white Gaussian noise
at that SNR in every window, drawn from the run's seed, so every model of a (fold, seed) meets the same noise).
Nothing is trained again. Each run records `noise` {accuracy, f1}: its score at each SNR of config.snr_db, in
that order. `noise_effects` compares the pairs the study compares at each SNR, on the same (repeat, fold, seed)
cells and with the study's own interval, unadjusted: a description, not a verdict. The experiment's noise
evaluation (core.lab.evaluations.noise) scores the same copies, so a one-fold study of an experiment with noise
records the experiment's own noisy scores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from core.lab.contract import BLOCK_METRICS, is_number, require
from core.lab.runs import Stage
from core.lab.stats import words
from core.lab.study.comparisons import cell_differences, compared_pairs, study_interval
from core.lab.vibration.noise import check_snr_list, noise_name, noisy_test_sets
from core.limits import MAX_SNRS, check_budget

NOISE_METRICS = BLOCK_METRICS  # what a run records at each SNR (the noisy test sets keep no per-window record)
CLEAN = "clean"  # the table's column of the study's own test windows


def checked_snr(snr_db: Sequence[float]) -> list[float]:
    """The SNRs to score, in order ([] for none); ValueError unless finite and distinct, BudgetExceeded past
    MAX_SNRS."""
    check_budget(len(snr_db), MAX_SNRS, "The number of SNRs")
    return check_snr_list(snr_db) if len(snr_db) else []


def noise_test_sets(snr_db: Sequence[float], stage: Stage, seed: int) -> dict[str, tuple[Any, Any]] | None:
    """The noisy copies of the stage's test windows a run of `seed` is scored on (None without SNRs)."""
    return noisy_test_sets(stage.windows, snr_db, seed) if snr_db else None


def noise_record(run: Mapping[str, Any], snr_db: Sequence[float]) -> dict[str, list[float]]:
    """A run's `noise`: its score on each SNR's test set (from the run's extra_tests), in the order of `snr_db`."""
    tests = run["extra_tests"]
    return {metric: [float(tests[noise_name(snr)][metric]) for snr in snr_db] for metric in NOISE_METRICS}


def with_noise(record: dict[str, Any], run: Mapping[str, Any], snr_db: Sequence[float]) -> dict[str, Any]:
    """The study record of `run` with its noise scores, when the study asks for them."""
    return {**record, "noise": noise_record(run, snr_db)} if snr_db else record


def check_noise(study: Mapping[str, Any]) -> None:
    """config.snr_db (when present) lists distinct finite SNRs, and then each of the study's runs records its
    score at every one of them; without it no run records noise."""
    snr = study["config"].get("snr_db")
    if snr is not None:
        require(
            isinstance(snr, list) and snr and all(is_number(v) for v in snr) and len(set(snr)) == len(snr),
            "config.snr_db must be a non-empty list of distinct numbers",
        )
    for i, run in enumerate(study["runs"]):
        where = f"runs[{i}].noise"
        if snr is None:
            require("noise" not in run, f"{where} needs config.snr_db")
            continue
        noise = run.get("noise")
        require(isinstance(noise, dict) and set(noise) == set(NOISE_METRICS), f"{where} must hold {NOISE_METRICS}")
        for metric in NOISE_METRICS:
            values = noise[metric]
            require(
                isinstance(values, list)
                and len(values) == len(snr)
                and all(is_number(v) and 0 <= v <= 1 for v in values),
                f"{where}.{metric} must hold a fraction per SNR ({len(snr)})",
            )


def noise_metric(metric: str) -> str:
    """The metric noise effects are read on: the study's where a run records it at each SNR, else accuracy."""
    return metric if metric in NOISE_METRICS else "accuracy"


def _at_snr(study: Mapping[str, Any], index: int | None, metric: str) -> dict[str, Any]:
    """The study as if its runs had been tested at the SNR of that index (None: its own test windows)."""
    if index is None:
        return dict(study)
    runs = [{**run, metric: run["noise"][metric][index]} for run in study["runs"]]
    return {**study, "runs": runs}


def noise_effects(study: Mapping[str, Any], metric: str = "accuracy") -> list[dict[str, Any]]:
    """Per compared pair (core.lab.study.comparisons.compared_pairs, the primary first) and per test set (the
    study's own, then each SNR), b - a in points with the study's 95 % interval, unadjusted, and each model's mean:
    rows {a, b, metric, snr_db (None: clean), diff, ci95, mean_a, mean_b}; [] without config.snr_db."""
    snr = study["config"].get("snr_db")
    if not snr:
        return []
    metric = noise_metric(metric)
    rows = []
    for a, b in compared_pairs(study):
        for index in (None, *range(len(snr))):
            view = _at_snr(study, index, metric)
            cells, keys, _ = cell_differences(view, a, b, metric)
            interval = study_interval(view, cells, keys, metric)
            means = {m: 100 * _mean(view["runs"], m, metric) for m in (a, b)}
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "metric": metric,
                    "snr_db": None if index is None else snr[index],
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


def noise_frame(effects: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The table of `noise_effects` (page and CLI): a row per pair and test set, means in %, b - a in points."""
    return pd.DataFrame(
        [
            {
                "pair": f"{row['b']} − {row['a']}",
                "test set": CLEAN if row["snr_db"] is None else f"{row['snr_db']:g} dB",
                "a (%)": words.amount(row["mean_a"]),
                "b (%)": words.amount(row["mean_b"]),
                "b − a (points)": words.points(row["diff"], 2),
                "95 % CI": words.interval(row["ci95"]),
            }
            for row in effects
        ]
    )
