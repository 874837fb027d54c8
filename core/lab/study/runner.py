"""Run a study: every model on every (fold, seed), through the run machinery (core.lab.runs.train_stages), then
the comparisons. `python -m core.study` and the Fault lab's Study part both call `run_study`."""

from __future__ import annotations

import dataclasses
import itertools
import platform
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from core.fingerprint import machine_fingerprint
from core.lab.backends import backend
from core.lab.contract import to_plain
from core.lab.models import MODEL_NAMES, TRANSFORMER_VARIANTS, build_model, check_model_settings
from core.lab.names import DESIGNS
from core.lab.probes.attention import attention_by_offset
from core.lab.probes.order import order_summary
from core.lab.probes.position import energy_ratio, learned_table, similarity_by_offset
from core.lab.runs import Event, PlanStopped, Stage, StageKey, train_run, train_stages
from core.lab.study.comparisons import STUDY_METRICS, compare_all
from core.lab.study.contract import STUDY_SCHEMA_VERSION, study_run, validate_study
from core.lab.study.folds import Fold, fault_location, make_folds
from core.lab.training import TrainConfig
from core.lab.vibration.types import Recording

LR_GRID = (1e-3, 3e-3, 1e-2)  # --tune-lr: the rates tried, on the first seed, per fold and model
NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}


@dataclass
class StudyPlan:
    """What a study runs: the data, the design and its folds, the models and seeds, one training config.
    `split` is the old name of `design`, still accepted."""

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
    tune_lr: bool = False  # choose each (fold, model)'s learning rate among LR_GRID on the fold's validation block
    backend: str = "local"  # or "ray" (core.lab.backends): the numbers do not change
    ray_address: str = "auto"
    split: InitVar[str | None] = None  # the old name of `design`

    def __post_init__(self, split: str | None) -> None:
        if split is not None:
            self.design = split
        self.models, self.seeds = list(self.models), [int(seed) for seed in self.seeds]
        if self.design not in DESIGNS:
            raise ValueError(f"design must be one of {DESIGNS}, got {self.design!r}")
        if self.design == "time-cv" and self.folds < 3:
            raise ValueError(f"time-cv needs at least 3 folds (test, validation and training blocks), got {self.folds}")
        if not self.models or not self.seeds or len(set(self.models)) != len(self.models):
            raise ValueError(f"a study needs distinct models and seeds; got {self.models}, {self.seeds}")
        unknown = [model for model in self.models if model not in MODEL_NAMES]
        if unknown:
            raise ValueError(f"unknown models {unknown}; choose from {', '.join(MODEL_NAMES)}")
        if self.metric not in STUDY_METRICS:
            raise ValueError(f"metric must be one of {STUDY_METRICS}, got {self.metric!r}")
        if not self.margin > 0:
            raise ValueError(f"the equivalence margin must be positive (points), got {self.margin}")
        check_model_settings(self.models, self.window, self.config.model)

    def fold_count(self) -> int:
        """Folds of this study: K for time-cv, one per motor load (load-out) or fault size (fault-size)."""
        if self.design == "time-cv" or callable(self.recordings):
            return self.folds
        if self.design == "load-out":
            return len({r.meta.get("load_hp") for r in self.recordings})
        return len({fault_location(r.label)[1] for r in self.recordings} - {None})

    def run_count(self) -> int:
        """Training runs in all, the learning-rate trials of --tune-lr included."""
        trials = len(LR_GRID) if self.tune_lr else 0
        return len(self.models) * (len(self.seeds) + trials) * self.fold_count()


def reanalyse(study: dict[str, Any], metric: str | None = None, margin: float | None = None) -> dict[str, Any]:
    """The study with its comparisons (and population words) computed again from its stored runs, at another
    metric or margin if given: no retraining, the runs and predictions untouched."""
    config = dict(study["config"])
    config["metric"] = metric or config["metric"]
    config["margin"] = float(margin if margin is not None else config["margin"])
    n_windows = sum(fold["n_test"] for fold in study["folds"])
    used = len({i for fold in study["folds"] for i in fold["recording"]})  # every recording is tested in some fold
    config["population"] = population(config["design"], config["data"].get("dataset", ""), used, n_windows)
    again = {**study, "config": config}
    again["comparisons"] = compare_all(again, config["metric"], config["margin"])
    validate_study(again)
    return again


def population(design: str, dataset: str, n_recordings: int, n_windows: int) -> str:
    """Which windows a study's verdict speaks for, in words (`n_recordings`: those the folds use)."""
    count = NUMBER_WORDS.get(n_recordings, str(n_recordings))
    rig = " of one test rig" if dataset == "cwru" else ""
    if design == "load-out":
        return f"{n_windows:,} test windows at a motor load held out from training, {count} recordings{rig}"
    if design == "fault-size":
        return f"{n_windows:,} test windows of a fault size held out from training, {count} recordings{rig}"
    return f"{n_windows:,} test windows of these {count} recordings{rig}"


def environment() -> dict[str, Any]:
    """What the numbers depend on besides the code and the data (`fingerprint`: core.fingerprint)."""
    try:
        root = Path(__file__).resolve().parents[3]
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    cpu = {"machine": platform.machine(), "capability": torch.backends.cpu.get_cpu_capability()}
    return {"git_commit": commit, "torch": torch.__version__, "cpu": cpu, "fingerprint": machine_fingerprint()}


def run_study(
    plan: StudyPlan, progress: Callable[[Event], None] | None = None, should_stop: Callable[[], bool] | None = None
) -> dict[str, Any]:
    """Train every (fold, seed, model) and return the study JSON (core.lab.study.contract), comparisons included.
    A stop raises core.lab.experiment.plan.PlanStopped carrying None (a study is only compared whole)."""
    emit = progress or (lambda event: None)
    recordings = list(plan.recordings() if callable(plan.recordings) else plan.recordings)
    folds = make_folds(plan.design, recordings, plan.window, plan.folds, plan.stride)

    profiles: dict[str, dict[str, Any]] = {}
    runner = backend(plan.backend, plan.ray_address)
    trainer = None if runner is None else runner.train

    def train_one(stage: Stage, seed: int, model: str, stop: Callable[[], bool] | None) -> dict[str, Any]:
        fold = stage.key.variant[0] if plan.tune_lr else stage.key.variant
        probe = fold == folds[0].index and seed == plan.seeds[0] and model in TRANSFORMER_VARIANTS
        run = train_run(stage, seed, model, stop, plan.device, emit, keep_weights=probe, trainer=trainer)
        if probe:
            profiles[model] = probe_profile(stage, model, run.pop("weights"), fold, seed)
        return study_run(run, fold)

    tuned = tune_learning_rates(plan, folds, emit, should_stop, trainer) if plan.tune_lr else None
    if tuned is None:
        stages = [Stage(StageKey("fold", f.index, f.name), f.windows, plan.models, plan.config) for f in folds]
    else:  # one stage per (fold, model), each at its chosen rate
        stages = [
            Stage(
                StageKey("fold", (f.index, m), f"{f.name}, {m}"),
                f.windows,
                [m],
                _at_rate(plan.config, tuned[f.index][m]),
            )
            for f in folds
            for m in plan.models
        ]
    runs, stopped = train_stages(stages, plan.seeds, train_one, plan.workers, plan.device, emit, should_stop)
    if stopped:
        raise PlanStopped(None)
    finished = list(itertools.chain.from_iterable(runs.values()))
    study = build_study(
        plan, recordings, folds, finished, tuned, {m: profiles[m] for m in plan.models if m in profiles}
    )
    validate_study(study)
    return study


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


def _at_rate(config: TrainConfig, rate: float) -> TrainConfig:
    return dataclasses.replace(config, learning_rate=rate)


def tune_learning_rates(
    plan: StudyPlan,
    folds: Sequence[Fold],
    emit: Callable[[Event], None],
    should_stop: Callable[[], bool] | None,
    trainer: Callable[..., dict[str, Any]] | None = None,
) -> dict[int, dict[str, float]]:
    """Per fold and model, the rate of LR_GRID whose run on the first seed reached the lowest validation loss
    on that fold's validation block (never its test block)."""
    stages = [
        Stage(
            StageKey("lr trial", (f.index, rate), f"{f.name}, rate {rate:g}"),
            f.windows,
            plan.models,
            _at_rate(plan.config, rate),
        )
        for f in folds
        for rate in LR_GRID
    ]

    def trial(stage: Stage, seed: int, model: str, stop: Callable[[], bool] | None) -> dict[str, Any]:
        return train_run(stage, seed, model, stop, plan.device, emit, trainer=trainer)

    runs, stopped = train_stages(stages, plan.seeds[:1], trial, plan.workers, plan.device, emit, should_stop)
    if stopped:
        raise PlanStopped(None)
    best: dict[int, dict[str, tuple[float, float]]] = {}
    for stage in stages:
        fold, rate = stage.key.variant
        for run in runs[stage.key]:
            loss = min(row["val_loss"] for row in run["history"])
            if run["model"] not in best.setdefault(fold, {}) or loss < best[fold][run["model"]][0]:
                best[fold][run["model"]] = (loss, rate)
    return {fold: {model: rate for model, (_, rate) in by_model.items()} for fold, by_model in best.items()}


def build_study(
    plan: StudyPlan,
    recordings: Sequence[Recording],
    folds: Sequence[Fold],
    runs: list[dict],
    tuned: dict[int, dict[str, float]] | None = None,
    profiles: dict[str, dict[str, Any]] | None = None,
) -> dict:
    """The study JSON of finished runs, its comparisons included (run_study validates it)."""
    n_windows = sum(len(fold.windows.x_test) for fold in folds)
    used = {i for fold in folds for starts in fold.starts.values() for i, s in starts if s.size}
    dataset = plan.data_settings.get("dataset", "")
    config = {
        "design": plan.design,
        "folds": len(folds),
        "seeds": plan.seeds,
        "models": plan.models,
        "margin": float(plan.margin),
        "metric": plan.metric,
        "window": plan.window,
        "stride": plan.stride or plan.window,
        "population": population(plan.design, dataset, len(used), n_windows),
        "command": plan.command,
        **environment(),
        "device": plan.device,
        "train": plan.config.to_dict(),
        "data": dict(plan.data_settings),
    }
    if tuned is not None:
        config["tuned_learning_rates"] = {str(fold): rates for fold, rates in tuned.items()}
    study = {
        "schema_version": STUDY_SCHEMA_VERSION,
        "kind": "study",
        "config": config,
        "class_names": list(folds[0].windows.class_names),
        "recordings": [
            {"label": r.label, "file": r.meta.get("file"), "load_hp": r.meta.get("load_hp")} for r in recordings
        ],
        "folds": [
            {
                "fold": fold.index,
                "name": fold.name,
                "recording": fold.test_recording,
                "start": fold.test_start,
                "n_train": len(fold.windows.x_train),
                "n_val": len(fold.windows.x_val),
                "n_test": len(fold.windows.x_test),
                "normalisation": {"mean": fold.windows.mean, "std": fold.windows.std},
            }
            for fold in folds
        ],
        "runs": runs,
        "comparisons": [],
        "order_summary": order_summary(runs),
        "profiles": profiles or {},
    }
    study = to_plain(study)
    study["comparisons"] = compare_all(study, plan.metric, plan.margin)
    return study
