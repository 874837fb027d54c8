"""Training runs, below the experiment and the study alike: the key and the shape of a stage of runs, the
progress events, one announced training run (`train_run`) and every run of a list of stages (`train_stages`),
one at a time or side by side.

The experiment (core.lab.experiment.plan) and the study (core.lab.study.runner) both build Stages and call
`train_stages`; an evaluation (core.lab.evaluations) adds Stages through a `PlanContext`. `PlanSettings` is
what an evaluation may read of the experiment it extends, so the plug-ins are typed against this interface,
never against their host.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.lab.models import BASELINE_MODELS, TRANSFORMER_VARIANTS
from core.lab.side_by_side import train_side_by_side
from core.lab.spectrum_baseline import train_spectrum_lr
from core.lab.training import TrainConfig, TrainingStopped, pick_device, train
from core.lab.vibration.types import Recording
from core.lab.vibration.windows import WindowSet, make_windows


@dataclass(frozen=True)
class StageKey:
    """Which batch of training runs: the experiment itself (`MAIN`), or one variant of one evaluation.
    `label` is what progress lines and the page show; it takes no part in equality."""

    evaluation: str | None
    variant: Any = None
    label: str = "main"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StageKey) and (self.evaluation, self.variant) == (other.evaluation, other.variant)

    def __hash__(self) -> int:
        return hash((self.evaluation, self.variant))


MAIN = StageKey(None)
RunsByStage = Mapping[StageKey, Sequence[Mapping[str, Any]]]


class PlanSettings(Protocol):
    """What an evaluation reads of the experiment it extends (core.lab.experiment.plan.Plan has all of it)."""

    models: list[str]
    seeds: list[int]
    config: TrainConfig
    cutting: dict[str, Any]  # make_windows' keywords: window, stride, shares, windowing, seed
    evaluations: Mapping[str, Any]

    @property
    def main_windowing(self) -> str:
        """ "time" or "random": the windowing of the experiment's own windows."""
        ...


@dataclass
class Stage:
    """One batch of training runs: the experiment itself (MAIN), or the runs one evaluation needs."""

    key: StageKey
    windows: WindowSet
    models: list[str]
    config: TrainConfig
    fixed_test_sets: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # scored by every run


@dataclass
class PlanContext:
    """What an evaluation's `prepare` sees: the plan, the experiment's recordings and stage, and the way to
    add stages of its own."""

    plan: PlanSettings
    recordings: list[Recording] | None  # None when the plan was given a finished WindowSet
    main: Stage
    stages: list[Stage]

    def cut(self, recordings: Sequence[Recording], **overrides: Any) -> WindowSet:
        """Windows of `recordings` cut as the plan cuts its own, with `overrides` (e.g. windowing="random")."""
        return make_windows(list(recordings), **{**self.plan.cutting, **overrides})

    def add_stage(
        self,
        key: StageKey,
        windows: WindowSet,
        models: Sequence[str],
        config: TrainConfig | None = None,
        fixed_test_sets: dict[str, tuple[Any, Any]] | None = None,
    ) -> Stage:
        """Add a stage of runs (at the plan's config unless `config` is given) and return it."""
        stage = Stage(key, windows, list(models), config or self.plan.config, dict(fixed_test_sets or {}))
        self.stages.append(stage)
        return stage


def checked_runs(
    models: Sequence[str], seeds: Sequence[int], known: Sequence[str], metric: str, metrics: Sequence[str], workers: int
) -> tuple[list[str], list[int]]:
    """A plan's models and seeds as lists, checked alike for the experiment and the study (ValueError naming what
    is wrong): at least one of each and none repeated, every model among `known`, the metric among `metrics`, and
    the workers a positive integer."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    models, seeds = list(models), [int(seed) for seed in seeds]
    if not models or not seeds:
        raise ValueError("a plan needs at least one model and one seed")
    unknown = [model for model in models if model not in known]
    if unknown:
        raise ValueError(f"unknown models {unknown}; choose from {', '.join(known)}")
    if metric not in metrics:
        raise ValueError(f"metric must be one of {tuple(metrics)}, got {metric!r}")
    if len(set(models)) != len(models) or len(set(seeds)) != len(seeds):
        raise ValueError(f"models and seeds must not repeat; got models {models}, seeds {seeds}")
    return models, seeds


# --- progress events ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class StageStarted:
    """A stage is about to train: its windows and how many runs it holds."""

    stage: StageKey
    windows: WindowSet
    n_runs: int  # runs of this stage


@dataclass(frozen=True)
class RunStarted:
    """One run begins (sent from the thread that trains it)."""

    stage: StageKey
    model: str
    seed: int


@dataclass(frozen=True)
class EpochEnded:
    """One epoch of one run ended (sent from the thread that trains it)."""

    stage: StageKey
    model: str
    seed: int
    epoch: int
    metrics: dict[str, float]  # the run's history row: epoch, train_loss, val_loss, val_accuracy


@dataclass(frozen=True)
class RunFinished:
    """One run finished (sent from the caller's thread)."""

    stage: StageKey
    run: dict[str, Any]  # as train() returns it, with "stage" (the stage's label); "weights" if kept


Event = StageStarted | RunStarted | EpochEnded | RunFinished


class PlanStopped(TrainingStopped):
    """`should_stop()` turned True during a plan; `results` is the JSON of the runs finished before (or None)."""

    def __init__(self, results: dict[str, Any] | None):
        super().__init__("the experiment was stopped on request")
        self.results = results


# --- the runs ---------------------------------------------------------------------------------------


def ignore_event(event: Event) -> None:
    """The progress callback of a caller that follows nothing."""
    pass


def train_run(
    stage: Stage,
    seed: int,
    model: str,
    stop: Callable[[], bool] | None,
    device: str | None,
    emit: Callable[[Event], None],
    test_sets: dict[str, tuple[Any, Any]] | None = None,
    keep_weights: bool = False,
    trainer: Callable[..., dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One training run of a stage, announced (RunStarted) and followed (EpochEnded, on the local backend)
    through `emit`; `trainer` replaces core.lab.training.train (core.lab.backends.RayBackend.train). A baseline
    (spectrum-LR: seconds, no epochs) is always fitted here, by core.lab.spectrum_baseline."""
    emit(RunStarted(stage.key, model, seed))

    def epoch_ended(epoch: int, metrics: dict[str, float]) -> None:
        emit(EpochEnded(stage.key, model, seed, epoch, metrics))

    fit = fit_function(model, trainer)
    run = fit(stage.windows, model, stage.config, seed, device, epoch_ended, stop, keep_weights, test_sets or None)
    run["stage"] = stage.key.label
    return run


def fit_function(model: str, trainer: Callable[..., dict[str, Any]] | None = None) -> Callable[..., dict[str, Any]]:
    """What fits `model`: core.lab.training.train (or `trainer`, e.g. a Ray backend's), or for a baseline
    core.lab.spectrum_baseline.train_spectrum_lr; each takes train's arguments and returns its run dict."""
    return train_spectrum_lr if model in BASELINE_MODELS else (trainer or train)


def longest_first(tasks: Sequence[tuple[int, str]]) -> list[int]:
    """The (seed, model) tasks' indices in the order they start side by side: the models with an input
    embedding before those without, otherwise as given. Early stopping ends A and A+PE sooner than the
    embedding models on the Fault lab's data (the default press: A stops after 28-40 epochs, B runs to the cap),
    and a round of workers waits for its slowest run, so starting the long runs first leaves the short ones to
    fill the last round instead of one long run training alone at the end."""
    return sorted(range(len(tasks)), key=lambda index: (not _has_embedding(tasks[index][1]), index))


def _has_embedding(model: str) -> bool:
    if model in BASELINE_MODELS:  # seconds: it fills the last round
        return False
    variant = TRANSFORMER_VARIANTS.get(model)
    return variant is None or variant[0]  # the CNN, no Transformer variant, starts with the long runs too


def train_stages(
    stages: Sequence[Stage],
    seeds: Sequence[int],
    train_one: Callable[[Stage, int, str, Callable[[], bool] | None], dict[str, Any]],
    workers: int,
    device: str | None,
    emit: Callable[[Event], None],
    should_stop: Callable[[], bool] | None = None,
) -> tuple[dict[StageKey, list[dict[str, Any]]], bool]:
    """Every (seed, model) run of every stage, seeds outer, one at a time or `workers` side by side: the
    finished runs per stage in that order, and whether a stop ended the training early."""
    runs: dict[StageKey, list[dict[str, Any]]] = {stage.key: [] for stage in stages}
    for stage in stages:
        tasks = list(itertools.product(seeds, stage.models))
        emit(StageStarted(stage.key, stage.windows, len(tasks)))
        if workers == 1:
            for seed, model in tasks:
                try:
                    run = train_one(stage, seed, model, should_stop)
                except TrainingStopped:
                    return runs, True
                runs[stage.key].append(run)
                emit(RunFinished(stage.key, run))
            continue
        threads = stage.config.threads if pick_device(device).type == "cpu" else None
        finished, stopped = train_side_by_side(
            tasks,
            lambda task, stop, stage=stage: train_one(stage, *task, stop),
            workers,
            threads,
            should_stop,
            on_finished=lambda run, stage=stage: emit(RunFinished(stage.key, run)),
            start_order=longest_first(tasks),
        )
        runs[stage.key].extend(finished)  # in task order, whatever order they finished in
        if stopped:
            return runs, True
    return runs, False
