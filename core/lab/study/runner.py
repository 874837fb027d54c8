"""Run a study: every model on every (repeat, fold, seed), through the run machinery (core.lab.runs.train_stages),
then the comparisons and the decomposition. `python -m core.study` and the Fault lab's Study part both call
`run_study`. With a checkpoint (core.lab.study.checkpoint) every finished run is kept as it ends, and the same
study started again trains only the cells it lacks.

`protocol` 3 (results/study_protocol.md, version 3) changes three rules, for every model alike: each run
restores the epoch of the best validation accuracy, ties broken by validation loss (TrainConfig.select_by,
core.lab.epochs); validation windows are slices spread over every training block (core.lab.study.validation);
and each model gets one learning rate, chosen on the first seed's validation windows pooled over every fold
(core.lab.study.tuning). Protocol 2, the default, is what every stored version-2 command ran."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

from core.lab.backends import backend
from core.lab.models import BASELINE_MODELS, STUDY_MODEL_NAMES, check_model_settings
from core.lab.names import DESIGNS, ONE_FOLD, WINDOWINGS
from core.lab.runs import Event, PlanStopped, Stage, StageKey, checked_runs, train_stages
from core.lab.study.checkpoint import Checkpoint
from core.lab.study.checks import CUTTING_KEYS
from core.lab.study.comparisons import STUDY_METRICS, compare_all, decomposition
from core.lab.study.contract import validate_study
from core.lab.study.cross_load import check_one_fold_loads
from core.lab.study.final_runs import ExtraTestSets, TrialRuns, final_run
from core.lab.study.folds import Fold, fault_location, make_folds
from core.lab.study.noise import checked_snr
from core.lab.study.order_gap import order_gap
from core.lab.study.record import build_study, loads_config, population
from core.lab.study.sweep import check_sweep, pairs_words, run_sweep, sweep_stages, swept_models
from core.lab.study.tuning import (
    LR_GRID,
    Rates,
    at_rate,
    learning_rate_trials,
    pooled_rates,
    rates_per_fold,
    tuned_models,
)
from core.lab.training import TrainConfig
from core.lab.vibration.types import Recording
from core.lab.vibration.windows import DEFAULT_SHARES

PROTOCOLS = (2, 3)  # results/study_protocol.md; files without config.protocol_version were run under 2


@dataclass
class StudyPlan:
    """What a study runs: the data, the design and its folds (`repeats` repeats of them for time-cv), the
    models and seeds, one training config, and an optional sweep of one model field (`sweep_field` at each of
    `sweep_values`, core.lab.study.sweep). `split` is the old name of `design`, and `pe_scale_sweep` of a
    pe_scale sweep's values, both still accepted."""

    recordings: Sequence[Recording] | Callable[[], Sequence[Recording]]
    design: str = "time-cv"
    models: Sequence[str] = ("A", "B")
    seeds: Sequence[int] = (0, 1, 2, 3, 4, 5)
    config: TrainConfig = field(default_factory=TrainConfig)
    folds: int = 5  # time-cv only; load-out has one fold per load, fault-size one per fault size
    window: int = 1024
    stride: int | None = None
    margin: float = 2.0
    metric: str = "accuracy"
    workers: int = 1
    device: str | None = None
    data_settings: dict[str, Any] = field(default_factory=dict)
    command: str = ""
    tune_lr: bool = False  # choose each (repeat, fold, model)'s rate among LR_GRID on the fold's validation block
    repeats: int = 1  # time-cv: repeats with other block boundaries (core.lab.study.folds); others run one
    checkpoint: str | Path | None = None  # a JSON-lines file of finished runs: a restarted study resumes from it
    backend: str = "local"  # or "ray" (core.lab.backends): the numbers do not change
    ray_address: str = "auto"
    sweep_field: str = "pe_scale"  # the model field a sweep varies (core.lab.sweep_fields)
    sweep_values: Sequence[float] = ()  # core.lab.study.sweep: the encoded models again at these values of it
    protocol: int = 2  # PROTOCOLS; 3 chooses epochs and rates by validation accuracy (see the module docstring)
    train_loads: Sequence[int] | None = None  # load-out: train at these loads alone, a fold per test load; one-fold:
    # its one load, and the runs also scored at test_loads (core.lab.study.cross_load)
    test_loads: Sequence[int] | None = None  # load-out with train_loads: the loads tested (default: the others)
    tune_epochs: int | None = None  # the learning-rate trials' epoch cap, when not the runs' own
    cutting: Mapping[str, Any] | None = None  # one-fold: make_windows' shares, windowing, windowing_seed (defaults)
    snr_db: Sequence[float] = ()  # core.lab.study.noise: every run also scored on its test windows at these SNRs
    split: InitVar[str | None] = None  # the old name of `design`
    pe_scale_sweep: InitVar[Sequence[float] | None] = None  # the old spelling of a pe_scale sweep's values

    def __post_init__(self, split: str | None, pe_scale_sweep: Sequence[float] | None) -> None:
        if split is not None:
            self.design = split
        if pe_scale_sweep is not None:
            if self.sweep_values:
                raise ValueError("give a sweep's values once: sweep_values, or pe_scale_sweep")
            self.sweep_field, self.sweep_values = "pe_scale", pe_scale_sweep
        known = STUDY_MODEL_NAMES
        self.models, self.seeds = checked_runs(self.models, self.seeds, known, self.metric, STUDY_METRICS, self.workers)
        if self.design not in DESIGNS:
            raise ValueError(f"design must be one of {DESIGNS}, got {self.design!r}")
        self._apply_protocol()
        if self.design == "time-cv" and self.folds < 3:
            raise ValueError(f"time-cv needs at least 3 folds (test, validation and training blocks), got {self.folds}")
        if not (isinstance(self.repeats, int) and self.repeats >= 1):
            raise ValueError(f"a study needs at least one repeat, got {self.repeats}")
        if not self.margin > 0:
            raise ValueError(f"the equivalence margin must be positive (points), got {self.margin}")
        self.snr_db = checked_snr(self.snr_db)
        self._check_models()

    def _check_models(self) -> None:
        """Every model buildable at these settings; a sweep's models among them."""
        if tuned_models(self.models):  # the baselines build no network
            check_model_settings(tuned_models(self.models), self.window, self.config.model)
        self.sweep_values = check_sweep(self.sweep_field, self.sweep_values, self.config)
        if self.sweep_values and not swept_models(self.models, self.sweep_field):
            raise ValueError(f"a {self.sweep_field} sweep needs {pairs_words(self.sweep_field)} among the models")

    def _apply_protocol(self) -> None:
        """Check the protocol and the load roles; protocol 3's rules hold whatever the flags say (the epoch and
        the one rate by validation accuracy)."""
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {PROTOCOLS}, got {self.protocol!r}")
        if self.protocol == 3:
            self.config, self.tune_lr = dataclasses.replace(self.config, select_by="accuracy"), True
        if self.tune_epochs is not None and not (self.tune_lr and self.tune_epochs >= 1):
            raise ValueError(
                f"a cap for the learning-rate trials needs --tune-lr and at least 1 epoch, got {self.tune_epochs}"
            )
        if (self.train_loads is not None or self.test_loads is not None) and self.design not in ("load-out", ONE_FOLD):
            raise ValueError(f"train and test loads belong to the load-out and one-fold designs, not {self.design}")
        if self.design == ONE_FOLD:
            self.train_loads, self.test_loads = check_one_fold_loads(self.train_loads, self.test_loads)
        if self.cutting is not None and self.design != ONE_FOLD:
            raise ValueError(f"shares and windowing belong to the one-fold design, not {self.design}")
        if self.design == ONE_FOLD:
            cut = {"shares": DEFAULT_SHARES, "windowing": "time", "windowing_seed": 0, **(self.cutting or {})}
            if set(cut) != set(CUTTING_KEYS) or cut["windowing"] not in WINDOWINGS:
                raise ValueError(f"a one-fold cutting takes {CUTTING_KEYS} (windowing one of {WINDOWINGS}), got {cut}")
            self.cutting = {
                **cut,
                "shares": [float(x) for x in cut["shares"]],
                "windowing_seed": int(cut["windowing_seed"]),
            }

    def fold_count(self) -> int:
        """Folds of this study: K for time-cv, one per motor load (load-out) or fault size (fault-size), one for
        one-fold."""
        if self.design == ONE_FOLD:
            return 1
        if self.design == "time-cv" or callable(self.recordings):
            return self.folds
        if self.design == "load-out":
            loads = {r.meta.get("load_hp") for r in self.recordings}
            if self.test_loads is not None:
                return len(set(self.test_loads))
            return len(loads - set(self.train_loads)) if self.train_loads is not None else len(loads)
        return len({fault_location(r.label)[1] for r in self.recordings} - {None})

    def repeat_count(self) -> int:
        """Repeats this study runs: `repeats` for time-cv; 1 for load-out and fault-size, whose folds are fixed by
        the data (another repeat would retrain the same cells to the same numbers)."""
        return self.repeats if self.design == "time-cv" else 1

    def run_count(self) -> int:
        """Training runs in all, the learning-rate trials of --tune-lr included."""
        trials = len(LR_GRID) * len(tuned_models(self.models)) if self.tune_lr else 0
        sweep = len(swept_models(self.models, self.sweep_field)) * len(self.sweep_values) * len(self.seeds)
        return (len(self.models) * len(self.seeds) + trials + sweep) * self.fold_count() * self.repeat_count()

    def trained_count(self) -> int:
        """The runs of `run_count` that are trained, what a wait is estimated from: the first seed's run of a tuned
        model is its chosen trial where that trial is the same run (core.lab.study.final_runs)."""
        taken = len(tuned_models(self.models)) if TrialRuns.applies(self) else 0
        return self.run_count() - taken * self.fold_count() * self.repeat_count()

    def _sweep_identity(self) -> dict[str, Any]:
        """A pe_scale sweep under its first name (checkpoints written before other fields resume); any other field's
        as {field, values}."""
        if self.sweep_field == "pe_scale":
            return {"pe_scale_sweep": self.sweep_values}
        return {"sweep": {"field": self.sweep_field, "values": self.sweep_values}}

    @property
    def validation(self) -> str:
        """Where a fold validates (core.lab.study.validation): "block" under protocol 2, "slices" under 3."""
        return "slices" if self.protocol == 3 else "block"

    def fold_options(self) -> dict[str, Any]:
        """make_folds' keyword-only settings of this plan."""
        loads = {"train_loads": self.train_loads, "test_loads": self.test_loads}
        return {"validation": self.validation, **loads, "cut": self.cutting}

    def identity(self) -> dict[str, Any]:
        """What decides a study's runs: a checkpoint written for other settings is refused."""
        return {
            "design": self.design,
            "folds": self.folds,
            "repeats": self.repeat_count(),
            "seeds": self.seeds,
            "models": self.models,
            "window": self.window,
            "stride": self.stride,
            "train": self.config.to_dict(),
            "data": self.data_settings,
            "tune_lr": self.tune_lr,
            **self._sweep_identity(),
            # written only when set, so a protocol-2 checkpoint made before they existed still resumes
            **({"protocol": self.protocol} if self.protocol != 2 else {}),
            **({"loads": loads_config(self)} if self.train_loads is not None else {}),
            **({"tune_epochs": self.tune_epochs} if self.tune_epochs is not None else {}),
            **({"cutting": self.cutting} if self.cutting is not None else {}),
            **({"snr_db": self.snr_db} if self.snr_db else {}),
        }


def reanalyse(study: dict[str, Any], metric: str | None = None, margin: float | None = None) -> dict[str, Any]:
    """The study with its comparisons (and population words) computed again from its stored runs, at another
    metric or margin if given: no retraining, the runs and predictions untouched."""
    config = dict(study["config"])
    config["metric"] = metric or config["metric"]
    config["margin"] = float(margin if margin is not None else config["margin"])
    first = [fold for fold in study["folds"] if fold["repeat"] == 0]  # a repeat tests the same windows again
    n_windows = sum(fold["n_test"] for fold in first)
    windowing = config.get("cutting", {}).get("windowing", "time")
    config["population"] = population(
        config["design"], config["data"].get("dataset", ""), len(recordings_used(study)), n_windows, windowing
    )
    again = {**study, "config": config}
    again["comparisons"] = compare_all(again, config["metric"], config["margin"])
    again["decomposition"] = decomposition(again, config["metric"])
    if (gap := order_gap(again)) is not None:  # a study without spectrum-LR keeps its bytes: no key added
        again["order_gap"] = gap
    validate_study(again)
    return again


def recordings_used(study: Mapping[str, Any]) -> set[int]:
    """The indices of the recordings a stored study's folds use (as study_config counts them): every one tested in
    some fold, and with a load-out study's config.train_loads those trained on at those loads, which no fold tests."""
    used = {i for fold in study["folds"] if fold["repeat"] == 0 for i in fold["recording"]}
    trained = study["config"].get("train_loads")
    if trained is not None and study["config"]["design"] == "load-out":  # a one-fold study tests what it trains at
        used |= {i for i, recording in enumerate(study["recordings"]) if recording["load_hp"] in trained}
    return used


def run_study(
    plan: StudyPlan, progress: Callable[[Event], None] | None = None, should_stop: Callable[[], bool] | None = None
) -> dict[str, Any]:
    """Train every (repeat, fold, seed, model) and return the study JSON (core.lab.study.contract), comparisons
    included. A stop raises core.lab.experiment.plan.PlanStopped carrying None (a study is only compared whole);
    with plan.checkpoint, the runs finished before it are kept there for the next start."""
    emit = progress or (lambda event: None)
    recordings = list(plan.recordings() if callable(plan.recordings) else plan.recordings)
    folds = make_folds(
        plan.design, recordings, plan.window, plan.folds, plan.stride, plan.repeat_count(), **plan.fold_options()
    )
    runner = backend(plan.backend, plan.ray_address)
    trainer = None if runner is None else runner.train
    store = None if plan.checkpoint is None else Checkpoint(plan.checkpoint, plan.identity())

    tuning: list[dict[str, Any]] = []
    tuned = None
    scored = ExtraTestSets(plan, recordings)
    trials = TrialRuns(plan, folds[0], store, scored) if TrialRuns.applies(plan) else None
    if plan.tune_lr:
        tuning = learning_rate_trials(plan, folds, emit, should_stop, trainer, store, trials)
        tuned = pooled_rates(tuning, folds) if plan.protocol == 3 else rates_per_fold(tuning)
    profiles: dict[str, dict[str, Any]] = {}
    train_one = final_run(plan, folds[0], emit, trainer, store, profiles, trials, scored)
    stages = final_stages(plan, folds, tuned)
    runs, stopped = train_stages(stages, plan.seeds, train_one, plan.workers, plan.device, emit, should_stop)
    if stopped:
        raise PlanStopped(None)
    finished = list(itertools.chain.from_iterable(runs.values()))
    sweep = []
    if plan.sweep_values:
        swept = sweep_stages(plan.models, plan.sweep_field, plan.sweep_values, folds, plan.config, tuned)
        sweep = run_sweep(
            plan.sweep_field, swept, plan.seeds, plan.workers, plan.device, emit, should_stop, trainer, store
        )
    kept = {m: profiles[m] for m in plan.models if m in profiles}
    study = build_study(plan, recordings, folds, finished, tuned, kept, tuning, sweep)
    validate_study(study)
    return study


def final_stages(plan: StudyPlan, folds: Sequence[Fold], tuned: Rates | None) -> list[Stage]:
    """The stages of a study's runs: one per (repeat, fold), its models side by side; when tuned, one per
    (repeat, fold, rate) of the models tuned to that rate, and the baselines (no rate) in one of their own."""
    if tuned is None:
        return [
            Stage(StageKey("fold", (f.repeat, f.index), f.name), f.windows, plan.models, plan.config) for f in folds
        ]
    stages = []
    for f in folds:
        rates = tuned.get((f.repeat, f.index), {})
        for rate in sorted(set(rates.values())):
            models = [m for m in plan.models if rates.get(m) == rate]
            stages.append(
                Stage(
                    StageKey("fold", (f.repeat, f.index, rate), f.name), f.windows, models, at_rate(plan.config, rate)
                )
            )
        if baselines := [m for m in plan.models if m in BASELINE_MODELS]:
            stages.append(
                Stage(StageKey("fold", (f.repeat, f.index, "baseline"), f.name), f.windows, baselines, plan.config)
            )
    return stages
