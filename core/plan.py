"""One experiment, start to finish: a Plan, the stages of training runs it needs, and `run_plan`.

    plan = Plan(data=recordings, windowing={"window": 1024}, models=["A", "B"], seeds=[0, 1, 2],
                evaluations={"snr_db": [-4, 0, 4, 8], "compare_splits": True})
    results = run_plan(plan, progress=print)   # the results JSON (core.results)

The CLI (`python -m core.experiment`) and the Fault lab's background job (core.jobs) both call `run_plan`,
so every number on the page can be reproduced headless. The path one plan takes:

1. `Plan.__post_init__` checks the settings, and asks every registered evaluation (core.evaluations) to
   check its own: those that are on become `plan.active`, and `plan.evaluations` records every setting.
2. `plan_stages` loads the data if it is a callable, lets the evaluations narrow the recordings, cuts the
   experiment's windows (the MAIN stage), then lets each evaluation add its stages and test sets. Every
   window set is cut here, before any training, so bad data fails at once.
3. Each stage trains every (seed, model), seeds outer, one at a time or side by side (core.side_by_side).
4. Each evaluation turns the finished runs of all stages into its block; core.results builds and checks
   the JSON.

`progress` receives typed events (StageStarted, RunStarted, EpochEnded, RunFinished) carrying everything
the CLI's lines and the page's progress panel show. With runs side by side it is called from several
threads: RunStarted and EpochEnded from the thread training that run, the others from the caller's.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core import backends, evaluations
from core.contract import METRICS
from core.evaluations import MAIN, Evaluation, StageKey
from core.models import MODEL_NAMES
from core.results import build_results
from core.side_by_side import train_side_by_side
from core.training import TrainConfig, TrainingStopped, pick_device, train
from core.vibration.types import Recording
from core.vibration.windows import WindowSet, make_windows

__all__ = ["MAIN", "Plan", "PlanStopped", "Stage", "StageKey", "run_plan"]

WINDOWING_KEYS = ("window", "stride", "split", "mode", "seed")  # keyword arguments of make_windows
DEFAULT_SHARES = (0.7, 0.2, 0.1)  # make_windows' default (train, val, test) shares
PlanData = WindowSet | Sequence[Recording]


@dataclass
class Plan:
    """What to run: the data, the models and seeds to cross, the shared training config, the evaluations.

    `data` is a WindowSet, a list of Recordings, or a callable that returns either (loading then runs on
    the worker, not in the page). Recordings are cut with `windowing` (make_windows keyword arguments:
    window, stride, split, mode, seed); evaluations that cut recordings themselves need recordings.
    `data_settings` records where the data came from (core.data_spec.DataSpec.to_dict()) in the JSON config.
    `metric` is the one the paired comparison with A and the verdict use. `evaluations` holds the settings
    of the evaluations to run (names from core.evaluations, e.g. {"snr_db": [0, 8]}); after construction it
    holds every registered setting, off ones at their default, as the results config records them.
    """

    data: PlanData | Callable[[], PlanData]
    models: Sequence[str]
    seeds: Sequence[int]
    config: TrainConfig = field(default_factory=TrainConfig)
    device: str | None = None
    data_settings: Mapping[str, Any] = field(default_factory=dict)
    metric: str = "accuracy"
    keep_weights: bool = True  # a few hundred kB per run; lets the page offer the trained models
    windowing: Mapping[str, Any] = field(default_factory=dict)
    evaluations: Mapping[str, Any] = field(default_factory=dict)
    workers: int = 1  # runs trained side by side, each in a thread with `config.threads` torch threads
    backend: str = "local"  # or "ray": each run a Ray task (core.backends); the numbers do not change
    ray_address: str = "auto"
    active: list[Evaluation] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"workers must be a positive integer, got {self.workers!r}")
        self.models, self.seeds = list(self.models), [int(seed) for seed in self.seeds]
        if not self.models or not self.seeds:
            raise ValueError("a plan needs at least one model and one seed")
        unknown = [model for model in self.models if model not in MODEL_NAMES]
        if unknown:
            raise ValueError(f"unknown models {unknown}; choose from {', '.join(MODEL_NAMES)}")
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {self.metric!r}")
        if len(set(self.models)) != len(self.models) or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"models and seeds must not repeat; got models {self.models}, seeds {self.seeds}")
        unknown_windowing = sorted(set(self.windowing) - set(WINDOWING_KEYS))
        if unknown_windowing:
            raise ValueError(f"windowing takes {WINDOWING_KEYS}, got unknown {unknown_windowing}")
        self.windowing = dict(self.windowing)
        self.evaluations, self.active = evaluations.configure(self.evaluations, self)
        for evaluation in self.active:
            self.config = evaluation.main_config(self.config)

    @property
    def split_mode(self) -> str:
        return self.windowing.get("mode", "time")

    def run_count(self) -> int:
        """Training runs in all: the experiment, plus those the evaluations add."""
        per_seed = len(self.models) + sum(evaluation.runs_per_seed(self) for evaluation in self.active)
        return per_seed * len(self.seeds)


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

    plan: Plan
    recordings: list[Recording] | None  # None when the plan was given a finished WindowSet
    main: Stage
    stages: list[Stage]

    def cut(self, recordings: Sequence[Recording], **overrides: Any) -> WindowSet:
        """Windows of `recordings` cut as the plan cuts its own, with `overrides` (e.g. mode="random")."""
        return make_windows(list(recordings), **{**self.plan.windowing, **overrides})

    def add_stage(
        self,
        key: StageKey,
        windows: WindowSet,
        models: Sequence[str],
        config: TrainConfig | None = None,
        fixed_test_sets: dict[str, tuple[Any, Any]] | None = None,
    ) -> Stage:
        stage = Stage(key, windows, list(models), config or self.plan.config, dict(fixed_test_sets or {}))
        self.stages.append(stage)
        return stage


# --- progress events ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class StageStarted:
    stage: StageKey
    windows: WindowSet
    n_runs: int  # runs of this stage


@dataclass(frozen=True)
class RunStarted:
    stage: StageKey
    model: str
    seed: int


@dataclass(frozen=True)
class EpochEnded:
    stage: StageKey
    model: str
    seed: int
    epoch: int
    metrics: dict[str, float]  # the run's history row: epoch, train_loss, val_loss, val_accuracy


@dataclass(frozen=True)
class RunFinished:
    stage: StageKey
    run: dict[str, Any]  # as train() returns it, with "stage" (the stage's label); "weights" if kept


Event = StageStarted | RunStarted | EpochEnded | RunFinished


class PlanStopped(TrainingStopped):
    """`should_stop()` turned True during a plan; `results` is the JSON of the runs finished before (or None)."""

    def __init__(self, results: dict[str, Any] | None):
        super().__init__("the experiment was stopped on request")
        self.results = results


# --- the stages and the run -------------------------------------------------------------------------------


def experiment_config(plan: Plan, windows: WindowSet) -> dict[str, Any]:
    """Every setting of an experiment, as recorded under "config" in the results JSON."""
    cut = {}
    if plan.windowing:
        cut = {
            "shares": list(plan.windowing.get("split", DEFAULT_SHARES)),
            "split_seed": int(plan.windowing.get("seed", 0)),
        }
    return {
        "models": list(plan.models),
        "seeds": list(plan.seeds),
        "metric": plan.metric,
        "device": None if plan.device is None else str(plan.device),
        "train": plan.config.to_dict(),
        "data": {
            **dict(plan.data_settings),
            **cut,
            "window": int(windows.window),
            "stride": int(windows.stride),
            "split_mode": windows.mode,
            "sample_rate": float(windows.sample_rate),
            "normalisation": {"mean": float(windows.mean), "std": float(windows.std)},
            "counts": windows.counts,
        },
        "evaluations": dict(plan.evaluations),
    }


def plan_stages(plan: Plan, data: PlanData) -> list[Stage]:
    """The stages of `plan` on `data` (a WindowSet or recordings), the experiment itself first."""
    if isinstance(data, WindowSet):
        cutting = [evaluation.title for evaluation in plan.active if evaluation.needs_recordings]
        if cutting:
            raise ValueError(
                f"{' and '.join(cutting)} cut the recordings themselves: give the plan the recordings (or a "
                f"callable returning them) and `windowing`, not a finished WindowSet"
            )
        windows, recordings = data, None
    else:
        recordings = list(data)
        for evaluation in plan.active:
            recordings = evaluation.main_recordings(recordings)
        windows = make_windows(recordings, **plan.windowing)
    main = Stage(MAIN, windows, list(plan.models), plan.config)
    context = PlanContext(plan, recordings, main, [main])
    for evaluation in plan.active:
        evaluation.prepare(context)
    return context.stages


def run_plan(
    plan: Plan,
    progress: Callable[[Event], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """Train every model on every seed, then the runs the plan's evaluations need; return the results JSON.

    The experiment itself comes first, seeds as the outer loop, so a plan stopped midway holds whole model
    comparisons for the seeds it finished. If `should_stop()` turns True the run in progress is abandoned
    and PlanStopped is raised, carrying the results of the finished runs of the experiment itself (without
    evaluation blocks).
    """
    emit = progress or _ignore
    data = plan.data() if callable(plan.data) else plan.data
    stages = plan_stages(plan, data)
    main_windows = stages[0].windows
    config = experiment_config(plan, main_windows)

    def train_one(stage: Stage, seed: int, model: str, stop: Callable[[], bool] | None) -> dict[str, Any]:
        test_sets = dict(stage.fixed_test_sets)
        for evaluation in plan.active:
            test_sets.update(evaluation.run_test_sets(stage, seed))
        keep_weights = plan.keep_weights and stage.key == MAIN
        return train_run(stage, seed, model, stop, plan.device, emit, test_sets, keep_weights, trainer)

    runner = backends.backend(plan.backend, plan.ray_address)
    trainer = None if runner is None else runner.train
    runs, stopped = train_stages(stages, plan.seeds, train_one, plan.workers, plan.device, emit, should_stop)
    if stopped:
        done = runs[MAIN]
        raise PlanStopped(build_results(config, main_windows.class_names, done, plan.metric) if done else None)
    blocks = {evaluation.key: evaluation.block(plan, runs) for evaluation in plan.active}
    return build_results(config, main_windows.class_names, runs[MAIN], plan.metric, blocks)


def _ignore(event: Event) -> None:
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
    through `emit`; `trainer` replaces core.training.train (core.backends.RayBackend.train)."""
    emit(RunStarted(stage.key, model, seed))

    def epoch_ended(epoch: int, metrics: dict[str, float]) -> None:
        emit(EpochEnded(stage.key, model, seed, epoch, metrics))

    fit = trainer or train
    run = fit(stage.windows, model, stage.config, seed, device, epoch_ended, stop, keep_weights, test_sets or None)
    run["stage"] = stage.key.label
    return run


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
        )
        runs[stage.key].extend(finished)  # in task order, whatever order they finished in
        if stopped:
            return runs, True
    return runs, False
