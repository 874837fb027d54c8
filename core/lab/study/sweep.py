"""The `pe_scale` sweep inside a study: does the encoding's effect depend on how loud it is?

Version 1 saw the encoding hurt only where it was added to raw patches (A+PE vs A) at `pe_scale` 1, where its
RMS is close to the tokens'. The sweep trains each model that carries the sinusoidal encoding (A+PE, B) again
at smaller factors, on the same (repeat, fold, seed) cells, each at the learning rate tuned for that model on
that fold (the sweep is never tuned on its own), and compares it with its partner without the encoding (A,
B-noPE) there. Scale 0 is the partner itself, and the study's own scale comes from its main runs, so neither
is trained again. The runs go into the study JSON's `sweep_runs`, each with its `pe_scale`; `sweep_effects`
computes the table from them, so nothing derived is stored.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from core.lab.runs import Event, PlanStopped, Stage, StageKey, train_run, train_stages
from core.lab.stats.intervals import bounded
from core.lab.stats.resampled import resampled_interval
from core.lab.study.checkpoint import Checkpoint
from core.lab.study.comparisons import cell_differences, fold_test_train_ratio
from core.lab.study.contract import study_run
from core.lab.study.folds import Fold
from core.lab.training import TrainConfig

PARTNERS = {"A+PE": "A", "B": "B-noPE"}  # a model with the sinusoidal encoding: the same without it


def swept_models(models: Sequence[str]) -> list[str]:
    """The models a sweep retrains: those with the encoding whose partner the study also runs."""
    return [model for model in PARTNERS if model in models and PARTNERS[model] in models]


def check_scales(scales: Sequence[float], main_scale: float) -> list[float]:
    """The factors to train, in order: positive, finite, distinct and not the study's own (ValueError)."""
    scales = [float(scale) for scale in scales]
    if any(not 0 < scale < 1e3 for scale in scales) or len(set(scales)) != len(scales):
        raise ValueError(f"a pe_scale sweep takes distinct factors above 0 and below 1000, got {scales}")
    if float(main_scale) in scales:
        raise ValueError(f"the study's own pe_scale {main_scale:g} comes from its main runs; leave it out of the sweep")
    return scales


def sweep_stages(
    models: Sequence[str],
    scales: Sequence[float],
    folds: Sequence[Fold],
    config: TrainConfig,
    rates: Mapping[tuple[int, int], Mapping[str, float]] | None,
) -> list[Stage]:
    """One stage per (repeat, fold, scale, rate): the swept models that share a tuned rate train side by side."""
    stages = []
    for fold, scale in itertools.product(folds, scales):
        by_rate: dict[float, list[str]] = {}
        for model in swept_models(models):
            rate = config.learning_rate if rates is None else rates[(fold.repeat, fold.index)][model]
            by_rate.setdefault(rate, []).append(model)
        for rate, group in by_rate.items():
            settings = dataclasses.replace(config.with_model(pe_scale=scale), learning_rate=rate)
            key = StageKey("sweep", (fold.repeat, fold.index, scale, rate), f"{fold.name}, pe_scale {scale:g}")
            stages.append(Stage(key, fold.windows, group, settings))
    return stages


def run_sweep(
    stages: Sequence[Stage],
    seeds: Sequence[int],
    workers: int,
    device: str | None,
    emit: Callable[[Event], None],
    should_stop: Callable[[], bool] | None = None,
    trainer: Callable[..., dict[str, Any]] | None = None,
    store: Checkpoint | None = None,
) -> list[dict[str, Any]]:
    """Every sweep run, as study runs with their `pe_scale` (taken from the checkpoint when finished before)."""

    def train_one(stage: Stage, seed: int, model: str, stop: Callable[[], bool] | None) -> dict[str, Any]:
        repeat, fold, scale, _ = stage.key.variant
        key = (repeat, fold, seed, model, scale)
        done = None if store is None else store.get("sweep", key)
        if done is not None:
            return done["record"]
        run = train_run(stage, seed, model, stop, device, emit, trainer=trainer)
        record = {**study_run(run, fold, repeat, stage.config.learning_rate), "pe_scale": float(scale)}
        if store is not None:
            store.put("sweep", key, record)
        return record

    runs, stopped = train_stages(stages, seeds, train_one, workers, device, emit, should_stop)
    if stopped:
        raise PlanStopped(None)
    return list(itertools.chain.from_iterable(runs.values()))


def sweep_effects(study: Mapping[str, Any], metric: str = "accuracy") -> list[dict[str, Any]]:
    """Per swept model and factor (0, the sweep's, the study's own), the encoding's effect against its partner
    in points with its corrected-resampled ci95 (unadjusted: a description, not a verdict); [] without a sweep."""
    sweep = study.get("sweep_runs") or []
    if not sweep:
        return []
    main_scale = float(study["config"]["train"]["model"]["pe_scale"])
    ratio = fold_test_train_ratio(study)
    rows = []
    for model in swept_models(sorted({run["model"] for run in study["runs"]})):
        partner = PARTNERS[model]
        rows.append({"model": model, "partner": partner, "pe_scale": 0.0, "diff": 0.0, "ci95": [0.0, 0.0]})
        scales = sorted({run["pe_scale"] for run in sweep if run["model"] == model} | {main_scale})
        for scale in scales:
            runs = [run for run in study["runs"] if run["model"] == partner]
            if scale == main_scale:
                runs += [run for run in study["runs"] if run["model"] == model]
            else:
                runs += [run for run in sweep if run["model"] == model and run["pe_scale"] == scale]
            cells = cell_differences({**study, "runs": runs}, partner, model, metric)[0]
            interval = bounded(resampled_interval(cells, ratio), metric)
            rows.append(
                {
                    "model": model,
                    "partner": partner,
                    "pe_scale": scale,
                    "diff": interval.diff,
                    "ci95": interval.ci(0.95),
                }
            )
    return rows
