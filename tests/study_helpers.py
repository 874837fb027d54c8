"""Tiny studies for the study tests: three short synthetic recordings and a StudyPlan over them that trains in
seconds (one small encoder layer, 128-sample windows, three folds)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from scipy import stats

import core.lab.runs
from core.lab.models import ModelConfig
from core.lab.study import StudyPlan, validate_study
from core.lab.training import TrainConfig
from core.lab.vibration import Recording, synthetic_bearing_set

WINDOW = 128


def three_recordings() -> list[Recording]:
    """1.5 s each of normal, IR007 and OR007 at 0 HP: 18,000 samples, three time-cv blocks of 6,000."""
    return synthetic_bearing_set(seed=0, loads=(0,), duration_s=1.5, classes=("normal", "IR007", "OR007"))


def tiny_study_plan(recordings: list[Recording], epochs: int = 1, **changes) -> StudyPlan:
    """A time-cv study of A, B-noPE and B, seed 0, 3 folds, `epochs` epochs; `changes` replace any setting."""
    config = TrainConfig(model=ModelConfig(patch=16, heads=2, layers=1), epochs=epochs, threads=1)
    settings = dict(
        models=["A", "B-noPE", "B"],
        seeds=[0],
        folds=3,
        window=WINDOW,
        config=config,
        data_settings={"dataset": "synthetic"},
    )
    return StudyPlan(recordings, **{**settings, **changes})


def one_fold_plan(recordings: list[Recording], models, seeds, config: TrainConfig, **changes) -> StudyPlan:
    """A one-fold study (the experiment's cutting, in time, windowing seed 0) of `models` x `seeds` on `WINDOW`-sample
    windows; `changes` replace any setting."""
    settings = dict(
        design="one-fold",
        models=models,
        seeds=seeds,
        config=config,
        window=WINDOW,
        cutting={"windowing": "time", "windowing_seed": 0},
        data_settings={"dataset": "synthetic"},
    )
    return StudyPlan(recordings, **{**settings, **changes})


def count_training(monkeypatch) -> list[tuple[str, int, float]]:
    """A list that each Transformer run trained from now on appends its (model, seed, learning rate) to
    (spectrum-LR is fitted, not trained, and is not counted)."""
    trained = []
    real_train = core.lab.runs.train

    def counting_train(windows, model, config, seed, *args, **kwargs):
        trained.append((model, seed, config.learning_rate))
        return real_train(windows, model, config, seed, *args, **kwargs)

    monkeypatch.setattr(core.lab.runs, "train", counting_train)
    return trained


def study_stub(
    accuracy: dict[str, float],
    diff: float,
    ci95: list[float] | None,
    verdict: str,
    **config,
) -> dict:
    """A study dict with only what the order gap and the map read: one run per model at `accuracy` (fractions),
    the primary comparison B vs B-noPE (diff and ci95 in points, its verdict), and a config (CWRU 0 HP time-cv
    unless `config` changes it; data={...} replaces the data part)."""
    settings = {"design": "time-cv", "data": {"dataset": "cwru", "loads": [0], "channel": "DE"}, **config}
    primary = {"a": "B-noPE", "b": "B", "diff": diff, "ci95": ci95, "verdict": verdict, "primary": True}
    return {
        "config": settings,
        "runs": [{"model": model, "accuracy": value} for model, value in accuracy.items()],
        "comparisons": [primary],
    }


def curve_stub(levels: list[tuple[int, int, dict]]) -> dict:
    """An order curve with only what the map reads: per (level, contrast in samples, study_stub) a level holding
    its parameters, its study and the study's primary comparison."""
    return {
        "levels": [
            {
                "level": level,
                "parameters": {"contrast_samples": contrast},
                "primary": study["comparisons"][0],
                "study": study,
            }
            for level, contrast, study in levels
        ]
    }


def seed_scores(study: dict, key: str, index: int, models) -> dict[str, list[float]]:
    """Each model's accuracy on one extra test (the run's `key` record at `index`), in seed order."""
    ordered = sorted(study["runs"], key=lambda run: run["seed"])
    return {m: [run[key]["accuracy"][index] for run in ordered if run["model"] == m] for m in models}


def paired_t(b: list[float], a: list[float]) -> tuple[float, list[float]]:
    """The mean of 100 (b - a) over seeds and its 95 % t interval (n - 1 df), clipped to the ±100 points an
    accuracy difference lies in: the one-fold study's interval, computed by hand."""
    d = 100 * (np.array(b) - np.array(a))
    half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    return float(d.mean()), [max(-100.0, d.mean() - half), min(100.0, d.mean() + half)]


def assert_refused(study: dict, change, message: str) -> None:
    """A copy of `study` changed by `change(copy)` is refused by the contract with `message` (a regex)."""
    broken = copy.deepcopy(study)
    change(broken)
    with pytest.raises(ValueError, match=message):
        validate_study(broken)


def assert_hand_computed(row: dict, study: dict, key: str, index: int, a: str = "B-noPE", b: str = "B") -> None:
    """An effects row of the extra test `key` at `index` is b - a over seeds with its paired t interval and each
    model's mean, all computed by hand from the runs' scores."""
    by_seed = seed_scores(study, key, index, (a, b))
    mean, expected = paired_t(by_seed[b], by_seed[a])
    assert row["diff"] == pytest.approx(mean, abs=1e-9)
    assert row["ci95"] == pytest.approx(expected, abs=1e-9)
    assert (row["mean_a"], row["mean_b"]) == pytest.approx((100 * np.mean(by_seed[a]), 100 * np.mean(by_seed[b])))
