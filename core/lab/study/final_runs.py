"""A study's own runs, one (repeat, fold, seed, model) cell at a time: taken from the checkpoint when it finished
before, taken from a learning-rate trial when that trial was the same run, else trained (and checkpointed).

A trial trains the first seed at one rate of the grid on one fold with the study's config (core.lab.study.tuning);
once the rates are chosen, the first seed's run of a tuned model at its chosen rate on that fold is the same
computation again: the same windows, config, seed and generators (core.lab.training: a seed fixes a CPU run, and
runs side by side match runs alone). So `TrialRuns` keeps each trial's full record, and the study takes the chosen
trial instead of training it twice, which spares one run per tuned model and fold. It applies only where a trial's
config is the run's: not when the trials have an epoch cap of their own (`tune_epochs`, protocol 3's amendment 1).
The first seed's first fold also keeps a probe profile (what the model attends to), so a trial there keeps one too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from core.lab.models import BASELINE_MODELS, TRANSFORMER_VARIANTS, build_model
from core.lab.names import ONE_FOLD
from core.lab.probes.attention import attention_by_offset
from core.lab.probes.position import energy_ratio, learned_table, similarity_by_offset
from core.lab.runs import Event, Stage, train_run
from core.lab.study.checkpoint import TRIAL_RUN, Checkpoint
from core.lab.study.contract import study_run
from core.lab.study.cross_load import CrossLoadSets, with_cross_load
from core.lab.study.folds import Fold
from core.lab.study.noise import noise_test_sets, with_noise
from core.lab.vibration.types import Recording

Profiles = dict[str, dict[str, Any]]
TestSets = dict[str, tuple[Any, Any]]


class ExtraTestSets:
    """The further test sets a run of the study is also scored on, its extra tests: noisy copies of its fold's
    test windows (core.lab.study.noise, drawn from its seed) and every window at each test load
    (core.lab.study.cross_load, made once per fold)."""

    def __init__(self, plan: Any, recordings: Sequence[Recording]) -> None:
        self.snr_db, self.loads = plan.snr_db, CrossLoadSets(plan, recordings)

    def __call__(self, stage: Stage, seed: int) -> TestSets | None:
        """A run's further test sets by name (None: the study has no extra tests)."""
        sets = {**(noise_test_sets(self.snr_db, stage, seed) or {}), **self.loads(stage)}
        return sets or None


def with_extra_tests(record: dict[str, Any], run: Mapping[str, Any], plan: Any) -> dict[str, Any]:
    """The study record of a trained `run` with its scores in each of the study's extra tests."""
    loads = plan.test_loads if plan.design == ONE_FOLD else None
    return with_cross_load(with_noise(record, run, plan.snr_db), run, loads)


def probe_profile(stage: Stage, model_name: str, weights: dict[str, Any], fold: int, seed: int) -> dict[str, Any]:
    """What one trained model attends to and what position signal it got, on its fold's test windows: the
    arrays every visitor sees without the weights."""
    windows = stage.windows
    model = build_model(model_name, windows.window, len(windows.class_names), stage.config.model)
    model.load_state_dict(weights)
    x = torch.as_tensor(windows.x_test, dtype=torch.float32)
    table = learned_table(model)
    return {
        "fold": fold,
        "seed": seed,
        "attention_by_offset": np.round(attention_by_offset(model, x), 6),
        "energy_ratio": energy_ratio(model, x),
        "learned_similarity_by_offset": None if table is None else np.round(similarity_by_offset(table), 6),
    }


def profiled(plan: Any, first: Fold, repeat: int, fold: int, seed: int, model: str) -> bool:
    """Whether this cell keeps a probe profile: the first seed's run on the first fold, of a Transformer."""
    return (repeat, fold, seed) == (first.repeat, first.index, plan.seeds[0]) and model in TRANSFORMER_VARIANTS


def finished_record(
    plan: Any, first: Fold, stage: Stage, run: dict[str, Any], repeat: int, fold: int
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A trained run's study record at its stage's rate, and its probe profile where the cell keeps one (the
    run's weights are dropped either way)."""
    weights = run.pop("weights", None)
    profile = None
    if profiled(plan, first, repeat, fold, run["seed"], run["model"]):
        profile = probe_profile(stage, run["model"], weights, fold, run["seed"])
    model = run["model"]
    record = study_run(run, fold, repeat, None if model in BASELINE_MODELS else stage.config.learning_rate)
    return with_extra_tests(record, run, plan), profile


class TrialRuns:
    """The learning-rate trials' full records (and profiles), by (repeat, fold, seed, model, rate), for the study's
    own runs; from the checkpoint too, so a resumed study takes them as an uninterrupted one does."""

    def __init__(self, plan: Any, first: Fold, store: Checkpoint | None, scored: ExtraTestSets) -> None:
        self.plan, self.first, self.store = plan, first, store
        self.scored = scored  # a kept trial is scored as the run it becomes
        self._kept: dict[tuple, tuple[dict[str, Any], dict[str, Any] | None]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def applies(plan: Any) -> bool:
        """Whether a trial of this plan is the same run as the study's own: tuned, with the runs' own epoch cap."""
        return bool(plan.tune_lr) and plan.tune_epochs in (None, plan.config.epochs)

    def keep(self, stage: Stage, run: dict[str, Any], repeat: int, fold: int, rate: float) -> None:
        """Keep a finished trial's record (its weights used for the profile, then dropped)."""
        record, profile = finished_record(self.plan, self.first, stage, run, repeat, fold)
        key = (repeat, fold, run["seed"], run["model"], rate)
        with self._lock:
            self._kept[key] = (record, profile)
        if self.store is not None:
            self.store.put(TRIAL_RUN, key, record, profile)

    def wants_weights(self, repeat: int, fold: int, seed: int, model: str) -> bool:
        """Whether a trial of this cell must keep its weights (for the profile)."""
        return profiled(self.plan, self.first, repeat, fold, seed, model)

    def take(self, repeat: int, fold: int, seed: int, model: str, rate: float) -> tuple | None:
        """The (record, profile) of the trial that is this run, or None."""
        key = (repeat, fold, seed, model, rate)
        with self._lock:
            if key in self._kept:
                return self._kept[key]
        done = None if self.store is None else self.store.get(TRIAL_RUN, key)
        return None if done is None else (done["record"], done["profile"])


def final_run(
    plan: Any,
    first: Fold,
    emit: Callable[[Event], None],
    trainer: Callable[..., dict[str, Any]] | None,
    store: Checkpoint | None,
    profiles: Profiles,
    trials: TrialRuns | None,
    scored: ExtraTestSets,
) -> Callable[[Stage, int, str, Callable[[], bool] | None], dict[str, Any]]:
    """The study's train_one: a run of (repeat, fold, model) at its stage's rate, taken from the checkpoint when
    it finished before, or from the trial that is the same run, else trained (and checkpointed); the first seed's
    run on the first fold keeps a profile."""

    def train_one(stage: Stage, seed: int, model: str, stop: Callable[[], bool] | None) -> dict[str, Any]:
        repeat, fold = stage.key.variant[:2]
        key = (repeat, fold, seed, model)
        probe = profiled(plan, first, repeat, fold, seed, model)
        done = None if store is None else store.get("run", key)
        if done is not None:
            if done["profile"] is not None:
                profiles[model] = done["profile"]
            return done["record"]
        taken = None
        if trials is not None and model not in BASELINE_MODELS:
            taken = trials.take(repeat, fold, seed, model, stage.config.learning_rate)
        if taken is None:
            tests = scored(stage, seed)
            run = train_run(stage, seed, model, stop, plan.device, emit, tests, probe, trainer)
            taken = finished_record(plan, first, stage, run, repeat, fold)
        record, profile = taken
        if probe:
            profiles[model] = profile
        if store is not None:
            store.put("run", key, record, profile if probe else None)
        return record

    return train_one
