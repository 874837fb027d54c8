"""A sweep inside a study: does the encoding's effect depend on a field of the model, such as how loud the
encoding is (`pe_scale`) or how wide the embedding (`d_model`)?

Version 1 saw the encoding hurt only where it was added to raw patches (A+PE vs A) at `pe_scale` 1, where its
RMS is close to the tokens'. The sweep trains each model that carries the sinusoidal encoding (A+PE, B) again
at other values of the field, on the same (repeat, fold, seed) cells, each at the learning rate tuned for that
model on that fold (the sweep is never tuned on its own), and compares it with its partner without the encoding
(A, B-noPE) there. The partner is trained again at each value too where the field changes it (B-noPE's
d_model), and otherwise is its main runs. The field, the models it changes and its checks are
core.lab.sweep_fields', the experiment's sweeps' too. The study's own value comes from its main runs, so it is
never trained again; at pe_scale 0 a model is its partner, so 0 is never trained either. The runs go into the
study JSON's `sweep_runs`, each with the field's value under its name; `sweep_effects` computes the table from
them, so nothing derived is stored.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from core.lab.names import ONE_FOLD
from core.lab.runs import Event, PlanStopped, Stage, StageKey, train_run, train_stages
from core.lab.stats import words
from core.lab.stats.intervals import bounded
from core.lab.stats.resampled import resampled_interval
from core.lab.study.checkpoint import Checkpoint
from core.lab.study.comparisons import cell_differences, fold_test_train_ratio, study_interval
from core.lab.study.contract import study_run
from core.lab.study.folds import Fold
from core.lab.sweep_fields import swept_field
from core.lab.training import TrainConfig

PARTNERS = {"A+PE": "A", "B": "B-noPE"}  # a model with the sinusoidal encoding: the same without it
MAX_VALUE = 1e3  # a sanity bound on a swept value (a pe_scale of 1000 drowns the signal; a d_model is far below)


def compared_pairs(models: Sequence[str], field: str = "pe_scale") -> list[tuple[str, str]]:
    """(model with the encoding, its partner) for each pair the study runs whose encoded model `field` changes."""
    changed = swept_field(field).models(models)
    return [(model, partner) for model, partner in PARTNERS.items() if model in changed and partner in models]


def swept_models(models: Sequence[str], field: str = "pe_scale") -> list[str]:
    """The models a sweep over `field` retrains: each compared pair's encoded model, and its partner where the
    field changes the partner too."""
    changed = swept_field(field).models(models)
    pairs = compared_pairs(models, field)
    return [model for pair in pairs for model in pair if model in changed]


def pairs_words(field: str) -> str:
    """The pairs a sweep over `field` can compare, in words, for the message when a study runs none of them."""
    pairs = compared_pairs([*PARTNERS, *PARTNERS.values()], field)
    return ", or ".join(f"{model} with {partner}" for model, partner in pairs)


def check_sweep(field: str, values: Sequence[Any], config: TrainConfig) -> list[Any]:
    """The values to train, in order (ValueError otherwise): the field's own checks, above 0 and below
    MAX_VALUE, and not the study's own value, which comes from its main runs."""
    checked = swept_field(field).check_values(values, config.model.heads) if len(values) else []
    if any(not 0 < value < MAX_VALUE for value in checked):
        raise ValueError(f"a {field} sweep takes distinct values above 0 and below {MAX_VALUE:g}, got {checked}")
    own = swept_field(field).value_in(dataclasses.asdict(config.model))
    if own in checked:
        raise ValueError(f"the study's own {field} {own:g} comes from its main runs; leave it out of the sweep")
    return checked


def sweep_stages(
    models: Sequence[str],
    field: str,
    values: Sequence[float],
    folds: Sequence[Fold],
    config: TrainConfig,
    rates: Mapping[tuple[int, int], Mapping[str, float]] | None,
) -> list[Stage]:
    """One stage per (repeat, fold, value, rate): the swept models that share a tuned rate train side by side."""
    stages = []
    for fold, value in itertools.product(folds, values):
        by_rate: dict[float, list[str]] = {}
        for model in swept_models(models, field):
            rate = config.learning_rate if rates is None else rates[(fold.repeat, fold.index)][model]
            by_rate.setdefault(rate, []).append(model)
        for rate, group in by_rate.items():
            settings = dataclasses.replace(config.with_model(**{field: value}), learning_rate=rate)
            key = StageKey("sweep", (fold.repeat, fold.index, value, rate), f"{fold.name}, {field} {value:g}")
            stages.append(Stage(key, fold.windows, group, settings))
    return stages


def run_sweep(
    field: str,
    stages: Sequence[Stage],
    seeds: Sequence[int],
    workers: int,
    device: str | None,
    emit: Callable[[Event], None],
    should_stop: Callable[[], bool] | None = None,
    trainer: Callable[..., dict[str, Any]] | None = None,
    store: Checkpoint | None = None,
) -> list[dict[str, Any]]:
    """Every sweep run, as study runs with the value of `field` (taken from the checkpoint when finished before)."""

    def train_one(stage: Stage, seed: int, model: str, stop: Callable[[], bool] | None) -> dict[str, Any]:
        repeat, fold, value, _ = stage.key.variant
        key = (repeat, fold, seed, model, value)
        done = None if store is None else store.get("sweep", key)
        if done is not None:
            return done["record"]
        run = train_run(stage, seed, model, stop, device, emit, trainer=trainer)
        record = {**study_run(run, fold, repeat, stage.config.learning_rate), field: value}
        if store is not None:
            store.put("sweep", key, record)
        return record

    runs, stopped = train_stages(stages, seeds, train_one, workers, device, emit, should_stop)
    if stopped:
        raise PlanStopped(None)
    return list(itertools.chain.from_iterable(runs.values()))


def sweep_effects(study: Mapping[str, Any], metric: str = "accuracy") -> list[dict[str, Any]]:
    """Per compared pair and value of the swept field (the sweep's, the study's own, and 0 where 0 removes the
    encoding), the encoding's effect against its partner in points with its corrected-resampled ci95 (a one-fold
    study's: over seeds; unadjusted: a description, not a verdict): rows {model, partner, field, value, diff,
    ci95}; [] without a sweep."""
    sweep = study.get("sweep_runs") or []
    if not sweep:
        return []
    field = study["config"].get("sweep", {}).get("field", "pe_scale")
    own = swept_field(field).value_in(study["config"]["train"]["model"])
    ratio = fold_test_train_ratio(study)
    main = study["runs"]

    def at(model: str, value: Any) -> list[Mapping[str, Any]]:
        retrained = [run for run in sweep if run["model"] == model and run[field] == value]
        return retrained if value != own else [run for run in main if run["model"] == model]

    rows = []
    for model, partner in compared_pairs(sorted({run["model"] for run in main}), field):
        row = {"model": model, "partner": partner, "field": field}
        if swept_field(field).zero_removes_encoding:
            rows.append({**row, "value": 0.0, "diff": 0.0, "ci95": [0.0, 0.0]})
        for value in sorted({run[field] for run in sweep if run["model"] == model} | {own}):
            partner_runs = at(partner, value) or at(partner, own)  # a partner the field does not change: its own
            cells, keys, _ = cell_differences(
                {**study, "runs": partner_runs + at(model, value)}, partner, model, metric
            )
            if study["config"]["design"] == ONE_FOLD:  # one cutting: the seeds alone vary, as in its comparisons
                interval = study_interval(study, cells, keys, metric)
            else:
                interval = bounded(resampled_interval(cells, ratio), metric)
            rows.append({**row, "value": value, "diff": interval.diff, "ci95": interval.ci(0.95)})
    return rows


def sweep_frame(effects: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The table of `sweep_effects` (the page's study and results): a row per pair and value, b − a in points."""
    return pd.DataFrame(
        [
            {
                "model": f"{row['model']} − {row['partner']}",
                row["field"]: row["value"],
                "difference": round(row["diff"], 2),
                "95 % CI": words.interval(row["ci95"]),
            }
            for row in effects
        ]
    )
