"""The learning rate of each model in a study, chosen among LR_GRID on validation windows with the study's first
seed, never on test windows; every trial is kept (core.lab.study.contract.tuning_run).

    protocol 2 (--tune-lr)   per (repeat, fold) and model: the rate whose trial reached the lowest validation
                             loss on that fold's validation block
    protocol 3               per model, one rate for every fold and seed: the rate of the highest validation
                             accuracy pooled over every (repeat, fold) (each trial at its restore point, the
                             folds weighted by their validation windows), ties broken by the lower pooled
                             validation loss, then by the lower rate

Baselines (core.lab.models.BASELINE_MODELS) have no learning rate and take no trials.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from core.lab.models import BASELINE_MODELS
from core.lab.runs import Event, PlanStopped, Stage, StageKey, train_run, train_stages
from core.lab.study.checkpoint import Checkpoint
from core.lab.study.contract import tuning_run
from core.lab.study.final_runs import TrialRuns
from core.lab.study.folds import Fold
from core.lab.training import TrainConfig

LR_GRID = (1e-3, 3e-3, 1e-2)  # the rates tried, on the first seed
Rates = dict[tuple[int, int], dict[str, float]]  # (repeat, fold) -> model -> rate


def at_rate(config: TrainConfig, rate: float) -> TrainConfig:
    """The config with this learning rate."""
    return dataclasses.replace(config, learning_rate=rate)


def trial_config(config: TrainConfig, rate: float, epochs: int | None) -> TrainConfig:
    """A learning-rate trial's config: this rate, and the trials' own epoch cap when the study sets one."""
    return dataclasses.replace(at_rate(config, rate), epochs=epochs or config.epochs)


def tuned_models(models: Sequence[str]) -> list[str]:
    """The models that take learning-rate trials: all but the baselines."""
    return [model for model in models if model not in BASELINE_MODELS]


def learning_rate_trials(
    plan: Any,
    folds: Sequence[Fold],
    emit: Callable[[Event], None],
    should_stop: Callable[[], bool] | None,
    trainer: Callable[..., dict[str, Any]] | None = None,
    store: Checkpoint | None = None,
    kept: TrialRuns | None = None,
) -> list[dict[str, Any]]:
    """Every trial of a StudyPlan: each tuned model at each rate of LR_GRID on every (repeat, fold), first seed,
    as tuning records in plan order (from the checkpoint where it holds them). `kept` receives each trained
    trial's full record, for the study's own run that is the same run (core.lab.study.final_runs)."""
    stages = [
        Stage(
            StageKey("lr trial", (f.repeat, f.index, rate), f"{f.name}, rate {rate:g}"),
            f.windows,
            tuned_models(plan.models),
            trial_config(plan.config, rate, plan.tune_epochs),
        )
        for f in folds
        for rate in LR_GRID
    ]

    def trial(stage: Stage, seed: int, model: str, stop: Callable[[], bool] | None) -> dict[str, Any]:
        repeat, fold, rate = stage.key.variant
        key = (repeat, fold, seed, model, rate)
        done = None if store is None else store.get("tuning", key)
        if done is not None:
            return done["record"]
        keep_weights = kept is not None and kept.wants_weights(repeat, fold, seed, model)
        tests = kept.scored(stage, seed) if kept is not None else None  # a trial kept as a run
        run = train_run(stage, seed, model, stop, plan.device, emit, tests, keep_weights, trainer)
        record = tuning_run(run, fold, repeat, rate, stage.config.select_by)
        if kept is not None:
            kept.keep(stage, run, repeat, fold, rate)
        if store is not None:
            store.put("tuning", key, record)
        return record

    runs, stopped = train_stages(stages, plan.seeds[:1], trial, plan.workers, plan.device, emit, should_stop)
    if stopped:
        raise PlanStopped(None)
    return list(itertools.chain.from_iterable(runs.values()))


def rates_per_fold(trials: Sequence[Mapping[str, Any]]) -> Rates:
    """Protocol 2: per (repeat, fold) and model, the rate of the lowest validation loss."""
    best: dict[tuple[int, int], dict[str, tuple[float, float]]] = {}
    for run in trials:
        by_model = best.setdefault((run["repeat"], run["fold"]), {})
        if run["model"] not in by_model or run["val_loss"] < by_model[run["model"]][0]:
            by_model[run["model"]] = (run["val_loss"], run["learning_rate"])
    return {cell: {m: rate for m, (_, rate) in by_model.items()} for cell, by_model in best.items()}


def pooled_scores(
    trials: Sequence[Mapping[str, Any]], n_val: Mapping[tuple[int, int], int]
) -> dict[str, dict[float, tuple[float, float]]]:
    """Per model and rate: (validation accuracy, validation loss) pooled over the (repeat, fold)s, each fold
    weighted by its `n_val` validation windows (so the accuracy is the share of all validation windows right)."""
    sums: dict[str, dict[float, list[float]]] = {}
    for run in trials:
        weight = n_val[(run["repeat"], run["fold"])]
        total = sums.setdefault(run["model"], {}).setdefault(run["learning_rate"], [0.0, 0.0, 0.0])
        total[0] += weight * run["val_accuracy"]
        total[1] += weight * run["val_loss"]
        total[2] += weight
    return {
        model: {rate: (right / weight, loss / weight) for rate, (right, loss, weight) in by_rate.items()}
        for model, by_rate in sums.items()
    }


def pooled_rates(trials: Sequence[Mapping[str, Any]], folds: Sequence[Fold]) -> Rates:
    """Protocol 3: each model's one rate (see the module docstring), the same for every (repeat, fold)."""
    n_val = {(f.repeat, f.index): len(f.windows.x_val) for f in folds}
    scores = pooled_scores(trials, n_val)
    chosen = {
        model: min(by_rate, key=lambda rate: (-by_rate[rate][0], by_rate[rate][1], rate))
        for model, by_rate in scores.items()
    }
    return {cell: dict(chosen) for cell in n_val}


def nested_rates(tuned: Rates) -> dict[str, dict[str, dict[str, float]]]:
    """{(repeat, fold): {model: rate}} as the JSON's {repeat: {fold: {model: rate}}}."""
    nested: dict[str, dict[str, dict[str, float]]] = {}
    for (repeat, fold), rates in tuned.items():
        nested.setdefault(str(repeat), {})[str(fold)] = rates
    return nested
