"""A study's noise tests: does the encoding's effect hold up when the test recordings are noisier?

With `snr_db` set (StudyPlan, `python -m core.study --snr=-4,0,8`), every one of the study's own runs is also
scored on noisy copies of its fold's test windows, one per SNR (core.lab.vibration.noise: white Gaussian noise
at that SNR in every window, drawn from the run's seed, so every model of a (fold, seed) meets the same noise).
Nothing is trained again. Each run records `noise` {accuracy, f1}: its score at each SNR of config.snr_db, in
that order. `noise_effects` compares the pairs the study compares at each SNR, on the same (repeat, fold, seed)
cells and with the study's own interval, unadjusted: a description, not a verdict (core.lab.study.extra_tests, which
the cross-load tests share). The experiment's noise
evaluation (core.lab.evaluations.noise) scores the same copies, so a one-fold study of an experiment with noise
records the experiment's own noisy scores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from core.lab.contract import is_number, require
from core.lab.runs import Stage
from core.lab.study.extra_tests import ExtraTest, effects, effects_frame
from core.lab.vibration.noise import check_snr_list, noise_name, noisy_test_sets
from core.limits import MAX_SNRS, check_budget

CLEAN = "clean"  # the table's column of the study's own test windows
NOISE = ExtraTest("noise", "snr_db", "snr_db", "SNR", noise_name, lambda snr: f"{snr:g} dB", own_row=CLEAN)


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
    return NOISE.record(run, snr_db)


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
    NOISE.check(study)


def noise_effects(study: Mapping[str, Any], metric: str = "accuracy") -> list[dict[str, Any]]:
    """Per compared pair (core.lab.study.comparisons.compared_pairs, the primary first) and per test set (the
    study's own, then each SNR), b - a in points with the study's 95 % interval, unadjusted, and each model's mean:
    rows {a, b, metric, snr_db (None: clean), diff, ci95, mean_a, mean_b}; [] without config.snr_db."""
    return effects(NOISE, study, metric)


def noise_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The table of `noise_effects` (page and CLI): a row per pair and test set, means in %, b - a in points."""
    return effects_frame(NOISE, rows)
