"""One experiment, start to finish: a Plan, the stages of training runs it needs, and `run_plan`.

    plan = Plan(data=recordings, cutting={"window": 1024}, models=["A", "B"], seeds=[0, 1, 2],
                evaluations={"snr_db": [-4, 0, 4, 8], "compare_windowings": True})
    results = run_plan(plan, progress=print)   # the results JSON (core.lab.experiment.results)

The CLI (`python -m core.experiment`) and the Fault lab's background job (core.lab.jobs) both call `run_plan`,
so every number on the page can be reproduced headless. The path one plan takes:

1. `Plan.__post_init__` checks the settings, and asks every registered evaluation (core.lab.evaluations) to
   check its own: those that are on become `plan.active`, and `plan.evaluations` records every setting.
2. `plan_stages` loads the data if it is a callable, lets the evaluations narrow the recordings, cuts the
   experiment's windows (the MAIN stage), then lets each evaluation add its stages and test sets. Every
   window set is cut here, before any training, so bad data fails at once.
3. Each stage trains every (seed, model), seeds outer, one at a time or side by side (core.lab.side_by_side).
4. Each evaluation turns the finished runs of all stages into its block; core.lab.experiment.results builds and checks
   the JSON.

`progress` receives typed events (StageStarted, RunStarted, EpochEnded, RunFinished) carrying everything
the CLI's lines and the page's progress panel show. With runs side by side it is called from several
threads: RunStarted and EpochEnded from the thread training that run, the others from the caller's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any

from core.lab import backends, evaluations
from core.lab.contract import METRICS
from core.lab.evaluations import Evaluation
from core.lab.evaluations.cross_load import CrossLoad
from core.lab.evaluations.model_sweep import ModelSweep
from core.lab.evaluations.windowing_comparison import WindowingComparison, other_windowing
from core.lab.experiment.results import build_results
from core.lab.models import BASELINE_MODELS, MODEL_NAMES
from core.lab.names import CUTTING_KEY_RENAMES, ONE_FOLD, SETTING_RENAMES, renamed
from core.lab.runs import (
    MAIN,
    Event,
    PlanContext,
    PlanStopped,
    Stage,
    StageKey,
    checked_runs,
    ignore_event,
    train_run,
    train_stages,
)
from core.lab.study.comparisons import STUDY_METRICS
from core.lab.study.contract import study_run, validate_study
from core.lab.study.final_runs import with_extra_tests
from core.lab.study.folds import fold_of, make_folds
from core.lab.study.record import build_study
from core.lab.study.runner import StudyPlan
from core.lab.study.sweep import swept_models
from core.lab.training import TrainConfig
from core.lab.vibration.types import Recording
from core.lab.vibration.windows import DEFAULT_SHARES, WindowSet, count_windows, make_windows

CUTTING_KEYS = ("window", "stride", "shares", "windowing", "windowing_seed")  # keyword arguments of make_windows
PlanData = WindowSet | Sequence[Recording]


@dataclass
class Plan:
    """What to run: the data, the models and seeds to cross, the shared training config, the evaluations.

    `data` is a WindowSet, a list of Recordings, or a callable that returns either (loading then runs on
    the worker, not in the page). Recordings are cut with `cutting` (make_windows keyword arguments:
    window, stride, shares, windowing, windowing_seed); evaluations that cut recordings themselves need recordings.
    `windowing` is the old name of `cutting` (its old keys split and mode read as shares and windowing).
    `data_settings` records where the data came from (core.lab.data_spec.DataSpec.to_dict()) in the JSON config.
    `metric` is the one the paired comparison with A and the verdict use. `evaluations` holds the settings
    of the evaluations to run (names from core.lab.evaluations, e.g. {"snr_db": [0, 8]}); after construction it
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
    cutting: Mapping[str, Any] = field(default_factory=dict)
    evaluations: Mapping[str, Any] = field(default_factory=dict)
    workers: int = 1  # runs trained side by side, each in a thread with `config.threads` torch threads
    backend: str = "local"  # or "ray": each run a Ray task (core.lab.backends); the numbers do not change
    ray_address: str = "auto"
    windowing: InitVar[Mapping[str, Any] | None] = None  # the old name of `cutting`, still accepted
    active: list[Evaluation] = field(init=False, repr=False)

    def __post_init__(self, windowing: Mapping[str, Any] | None) -> None:
        self.models, self.seeds = checked_runs(self.models, self.seeds, MODEL_NAMES, self.metric, METRICS, self.workers)
        if windowing is not None and self.cutting:
            raise ValueError("give cutting, or its old name windowing, not both")
        self.cutting = renamed(self.cutting if windowing is None else windowing, CUTTING_KEY_RENAMES)
        unknown_keys = sorted(set(self.cutting) - set(CUTTING_KEYS))
        if unknown_keys:
            raise ValueError(f"cutting takes {CUTTING_KEYS}, got unknown {unknown_keys}")
        settings = renamed(self.evaluations, SETTING_RENAMES)
        self.evaluations, self.active = evaluations.configure(settings, self)
        for evaluation in self.active:
            self.config = evaluation.main_config(self.config)

    @property
    def main_windowing(self) -> str:
        """ "time" or "random": the windowing of the experiment's own windows."""
        return self.cutting.get("windowing", "time")

    def run_count(self) -> int:
        """Training runs in all: the experiment, plus those the evaluations add."""
        per_seed = len(self.models) + sum(evaluation.runs_per_seed(self) for evaluation in self.active)
        return per_seed * len(self.seeds)


# --- the stages and the run -------------------------------------------------------------------------------


def experiment_config(plan: Plan, windows: WindowSet) -> dict[str, Any]:
    """Every setting of an experiment, as recorded under "config" in the results JSON."""
    cut = {}
    if plan.cutting:
        cut = {
            "shares": list(plan.cutting.get("shares", DEFAULT_SHARES)),
            "windowing_seed": int(plan.cutting.get("windowing_seed", 0)),
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
            "windowing": windows.windowing,
            "sample_rate": float(windows.sample_rate),
            "normalisation": {"mean": float(windows.mean), "std": float(windows.std)},
            "counts": windows.counts,
        },
        "evaluations": dict(plan.evaluations),
    }


def main_recordings(plan: Plan, data: Sequence[Recording]) -> list[Recording]:
    """The recordings the experiment itself cuts its windows from: the data, narrowed by its evaluations."""
    recordings = list(data)
    for evaluation in plan.active:
        recordings = evaluation.main_recordings(recordings)
    return recordings


def main_test_windows(plan: Plan, data: PlanData) -> int:
    """The test windows of the experiment itself (the MAIN stage, on which every model is compared with A),
    counted before any training from the cut `plan_stages` makes, without cutting a window."""
    if isinstance(data, WindowSet):
        return len(data.y_test)
    return count_windows(main_recordings(plan, data), **plan.cutting)["test"]


def plan_stages(plan: Plan, data: PlanData) -> list[Stage]:
    """The stages of `plan` on `data` (a WindowSet or recordings), the experiment itself first."""
    if isinstance(data, WindowSet):
        cutting = [evaluation.title for evaluation in plan.active if evaluation.needs_recordings]
        if cutting:
            raise ValueError(
                f"{' and '.join(cutting)} cut the recordings themselves: give the plan the recordings (or a "
                f"callable returning them) and `cutting`, not a finished WindowSet"
            )
        windows, recordings = data, None
    else:
        recordings = main_recordings(plan, data)
        windows = make_windows(recordings, **plan.cutting)
    main = Stage(MAIN, windows, list(plan.models), plan.config)
    context = PlanContext(plan, recordings, main, [main])
    for evaluation in plan.active:
        evaluation.prepare(context)
    return context.stages


@dataclass
class TrainedPlan:
    """What `train_plan` trained: the data as the plan gave it, the stages, each stage's finished runs (as
    core.lab.training.train returns them), and whether a stop ended the training early."""

    data: PlanData
    stages: list[Stage]
    runs: dict[StageKey, list[dict[str, Any]]]
    stopped: bool


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
    return plan_results(plan, train_plan(plan, progress, should_stop))


def train_plan(
    plan: Plan,
    progress: Callable[[Event], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TrainedPlan:
    """Every run of `plan` (see run_plan), trained and kept whole: `plan_results` makes the results JSON of them and
    `one_fold_study` the study JSON of the experiment's own runs, neither training anything again."""
    emit = progress or ignore_event
    data = plan.data() if callable(plan.data) else plan.data
    stages = plan_stages(plan, data)

    def train_one(stage: Stage, seed: int, model: str, stop: Callable[[], bool] | None) -> dict[str, Any]:
        test_sets = dict(stage.fixed_test_sets)
        for evaluation in plan.active:
            test_sets.update(evaluation.run_test_sets(stage, seed))
        keep_weights = plan.keep_weights and stage.key == MAIN
        return train_run(stage, seed, model, stop, plan.device, emit, test_sets, keep_weights, trainer)

    runner = backends.backend(plan.backend, plan.ray_address)
    trainer = None if runner is None else runner.train
    runs, stopped = train_stages(stages, plan.seeds, train_one, plan.workers, plan.device, emit, should_stop)
    return TrainedPlan(data, stages, runs, stopped)


def plan_results(plan: Plan, trained: TrainedPlan) -> dict[str, Any]:
    """The results JSON of what `train_plan` trained; PlanStopped (with the finished runs' results) after a stop."""
    main_windows = trained.stages[0].windows
    config = experiment_config(plan, main_windows)
    if trained.stopped:
        done = trained.runs[MAIN]
        raise PlanStopped(build_results(config, main_windows.class_names, done, plan.metric) if done else None)
    blocks = {evaluation.key: evaluation.block(plan, trained.runs) for evaluation in plan.active}
    return build_results(config, main_windows.class_names, trained.runs[MAIN], plan.metric, blocks)


def check_study_metric(metric: str) -> None:
    """ValueError unless a study compares on `metric` (an experiment's precision and recall it does not)."""
    if metric not in STUDY_METRICS:
        raise ValueError(f"a study compares on one of {', '.join(STUDY_METRICS)}, not {metric}")


def one_fold_study(
    plan: Plan,
    trained: TrainedPlan,
    command: str = "",
    windowing: str | None = None,
    train_load: int | None = None,
    swept: str | None = None,
) -> dict[str, Any]:
    """The experiment's own runs as a study with one fold (core.lab.study, design one-fold): its own windows placed
    in the study's one fold (the fold's starts are theirs; nothing is cut or trained again), its runs recorded and
    compared as a study's, each with its per-window predictions, with the noise, the cross-load scores and the first
    sweep it ran as the study's noise and cross-load tests and sweep. `windowing` the other one of a windowing
    comparison: that stage's runs as a study of their own (no extra tests or sweep: those ran under the experiment's own
    windowing), which core.lab.study.leak compares with the first. `train_load` a further train load of a cross-load
    evaluation: the runs trained there as a study with its cross-load tests. `swept` the field of a further sweep (a
    study sweeps one field): the experiment's own runs again with that sweep's. ValueError where there is no such study:
    a plan given finished windows (a study keeps where each window comes from), a metric a study does not compare
    on, a windowing or train load the plan did not train."""
    if isinstance(trained.data, WindowSet):
        raise ValueError("a study of an experiment needs its recordings, not a finished WindowSet")
    check_study_metric(plan.metric)
    stage, recordings, cutting, extra, sweep, sweep_runs = _study_part(plan, trained, windowing, train_load, swept)
    study_plan = StudyPlan(
        recordings,
        design=ONE_FOLD,
        models=plan.models,
        seeds=plan.seeds,
        config=stage.config,
        window=plan.cutting.get("window", 1024),
        stride=plan.cutting.get("stride"),
        metric=plan.metric,
        device=plan.device,
        data_settings=dict(plan.data_settings),
        command=command,
        cutting=cutting,
        **extra,  # the noise and cross-load evaluations' scores are the extra tests'
        **sweep,
    )
    build = fold_of(stage.windows)  # the windows of those same starts, already cut: not cut again
    folds = make_folds(
        ONE_FOLD, recordings, study_plan.window, 1, study_plan.stride, 1, build, **study_plan.fold_options()
    )
    rate = plan.config.learning_rate
    runs = [
        with_extra_tests(study_run(run, 0, 0, None if run["model"] in BASELINE_MODELS else rate), run, study_plan)
        for run in trained.runs[stage.key]
    ]
    study = build_study(study_plan, recordings, folds, runs, sweep=sweep_runs)
    validate_study(study)
    return study


def _study_part(
    plan: Plan, trained: TrainedPlan, windowing: str | None, train_load: int | None, swept: str | None
) -> tuple:
    """(stage, recordings, cutting, extra tests, sweep settings, sweep runs) of one of the experiment's one-fold studies
    (see one_fold_study)."""
    cutting = {key: plan.cutting[key] for key in ("shares", "windowing", "windowing_seed") if key in plan.cutting}
    cross_load = next((e for e in plan.active if isinstance(e, CrossLoad)), None)
    if swept is not None:  # the experiment's own runs with a further sweep, its extra tests left to its own study
        sweep, runs = study_sweep(plan, trained, swept)
        if not sweep:
            raise ValueError(f"this experiment has no {swept} sweep a study can compare")
        return trained.stages[0], main_recordings(plan, trained.data), cutting, {}, sweep, runs
    if windowing not in (None, plan.main_windowing):
        where = f"under the {windowing} windowing (--windowing time,random)"
        stage = _stage_of(plan, trained, WindowingComparison, windowing, where)
        return stage, main_recordings(plan, trained.data), {**cutting, "windowing": windowing}, {}, {}, []
    extra: dict[str, Any] = {"snr_db": plan.evaluations.get("snr_db") or ()}
    recordings, stage = main_recordings(plan, trained.data), trained.stages[0]
    if cross_load is not None:  # the fold is cut at its train load, of the classes the experiment kept
        train_loads, test_loads = cross_load.values["train_loads"], cross_load.values["test_loads"]
        recordings = [r for r in trained.data if r.label in cross_load.classes]
        extra.update(train_loads=train_loads[:1], test_loads=test_loads)
        if train_load not in (None, train_loads[0]):
            stage = _stage_of(plan, trained, CrossLoad, train_load, f"at train load {train_load} (--train-loads)")
            return stage, recordings, cutting, {"train_loads": [train_load], "test_loads": test_loads}, {}, []
    elif train_load is not None:
        raise ValueError("this experiment has no cross-load evaluation (--train-loads, --test-loads)")
    return stage, recordings, cutting, extra, *study_sweep(plan, trained)


def experiment_studies(plan: Plan, trained: TrainedPlan, command: str = "") -> dict[str, dict[str, Any]]:
    """Every one-fold study of the experiment's runs, by name: its own (`one_fold_study`) under its windowing's name,
    with a windowing comparison the other windowing's, the two whose comparison (core.lab.study.leak) is the leak,
    with a cross-load evaluation each further train load's ("load1": trained at load 1), and with a second sweep its
    own ("pe_scale_sweep": a study sweeps one field). ValueError where there is no study of it (see
    one_fold_study)."""
    studies = {plan.main_windowing: one_fold_study(plan, trained, command)}
    first = studies[plan.main_windowing]["config"].get("sweep", {}).get("field")
    for evaluation in plan.active:
        if isinstance(evaluation, ModelSweep) and evaluation.swept_field.name != first:
            field = evaluation.swept_field.name
            if study_sweep(plan, trained, field)[0]:
                studies[f"{field}_sweep"] = one_fold_study(plan, trained, command, swept=field)
        if isinstance(evaluation, WindowingComparison):
            other = other_windowing(plan.main_windowing)
            studies[other] = one_fold_study(plan, trained, command, windowing=other)
        if isinstance(evaluation, CrossLoad):
            for load in evaluation.values["train_loads"][1:]:
                studies[f"load{load}"] = one_fold_study(plan, trained, command, train_load=load)
    return studies


def _stage_of(plan: Plan, trained: TrainedPlan, kind: type, variant: Any, where: str) -> Stage:
    """The stage an evaluation of `kind` trained for `variant` (a windowing, a train load); ValueError when none
    did (`where`: the runs asked for, with the flag that trains them)."""
    keys = [evaluation.stage_key(variant) for evaluation in plan.active if isinstance(evaluation, kind)]
    stage = next((stage for stage in trained.stages if stage.key in keys), None)
    if stage is None:
        raise ValueError(f"this experiment trained no runs {where}")
    return stage


def study_sweep(plan: Plan, trained: TrainedPlan, field: str | None = None) -> tuple[dict[str, Any], list[dict]]:
    """The experiment's first model sweep (or its sweep of `field`) as a one-fold study's sweep
    (core.lab.study.sweep): its StudyPlan settings and its runs, those of each compared pair at each further value (a
    study sweeps one field; a pe_scale of 0 is the partner itself, which a study never trains); ({}, []) where the
    plan has no such sweep a study can compare."""
    for evaluation in plan.active:
        if not isinstance(evaluation, ModelSweep) or field not in (None, evaluation.swept_field.name):
            continue
        field = evaluation.swept_field.name
        swept = swept_models(plan.models, field)
        values = [value for value in evaluation.values_swept[1:] if value > 0]
        if not swept or not values:
            return {}, []
        rate = plan.config.learning_rate
        runs = [
            {**study_run(run, 0, 0, rate), field: value}
            for value in values
            for run in trained.runs[evaluation.stage_key(value)]
            if run["model"] in swept
        ]
        return {"sweep_field": field, "sweep_values": values}, runs
    return {}, []
