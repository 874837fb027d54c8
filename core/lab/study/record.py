"""What a study JSON records besides its runs (`plan` is a core.lab.study.runner.StudyPlan throughout, which imports
this module): the config (the plan's settings, the population its verdicts speak
for, the environment the numbers depend on), the record of each fold, and `build_study`, which puts the finished
runs, their comparisons and decomposition together (core.lab.study.contract checks the result). The runner
(core.lab.study.runner) trains; this module writes down what it trained.
"""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from core.fingerprint import machine_fingerprint
from core.lab.contract import SCHEMA_VERSION, to_plain
from core.lab.names import ONE_FOLD
from core.lab.probes.order import order_summary
from core.lab.report import plural
from core.lab.study.comparisons import compare_all, decomposition
from core.lab.study.folds import Fold
from core.lab.study.order_gap import order_gap
from core.lab.study.tuning import Rates, nested_rates
from core.lab.vibration.types import Recording

NUMBER_WORDS = dict(enumerate("one two three four five six seven eight nine ten".split(), start=1))


def loads_config(plan: Any) -> dict[str, Any]:
    """config.train_loads and config.test_loads of a load-out study with train loads (test_loads null: every
    other load of the data)."""
    test = None if plan.test_loads is None else sorted({int(load) for load in plan.test_loads})
    return {"train_loads": sorted({int(load) for load in plan.train_loads}), "test_loads": test}


def population(design: str, dataset: str, n_recordings: int, n_windows: int, windowing: str = "time") -> str:
    """Which windows a study's verdict speaks for, in words (`n_recordings`: those the folds use; `windowing`: a
    one-fold study's, whose random windows lie beside training windows)."""
    count = NUMBER_WORDS.get(n_recordings, str(n_recordings))
    count += " recording" if n_recordings == 1 else " recordings"
    rig = " of one test rig" if dataset == "cwru" else ""
    if design == "load-out":
        return f"{plural(n_windows, 'test window')} at a motor load held out from training, {count}{rig}"
    if design == "fault-size":
        return f"{plural(n_windows, 'test window')} of a fault size held out from training, {count}{rig}"
    these = "this" if n_recordings == 1 else "these"
    leaky = ", dealt at random beside training windows (leaky)" if design == ONE_FOLD and windowing == "random" else ""
    return f"{plural(n_windows, 'test window')} of {these} {count}{rig}{leaky}"


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


def fold_record(fold: Fold) -> dict[str, Any]:
    """The study JSON's record of one fold: where its test windows come from, its sizes, its normalisation."""
    return {
        "repeat": fold.repeat,
        "fold": fold.index,
        "name": fold.name,
        "recording": fold.test_recording,
        "start": fold.test_start,
        "n_train": len(fold.windows.x_train),
        "n_val": len(fold.windows.x_val),
        "n_test": len(fold.windows.x_test),
        "normalisation": {"mean": fold.windows.mean, "std": fold.windows.std},
    }


def study_config(plan: Any, folds: Sequence[Fold], tuned: Rates | None) -> dict[str, Any]:
    """The study JSON's config: the plan's settings, the population its verdicts speak for, the environment."""
    first = [fold for fold in folds if fold.repeat == 0]  # a repeat tests the same windows again
    n_windows = sum(len(fold.windows.x_test) for fold in first)
    used = {i for fold in first for starts in fold.starts.values() for i, s in starts if s.size}
    config = {
        "design": plan.design,
        "folds": len(first),
        "repeats": len(folds) // len(first),
        "seeds": plan.seeds,
        "models": plan.models,
        "margin": float(plan.margin),
        "metric": plan.metric,
        "window": plan.window,
        "stride": plan.stride or plan.window,
        "population": population(
            plan.design,
            plan.data_settings.get("dataset", ""),
            len(used),
            n_windows,
            (plan.cutting or {}).get("windowing", "time"),
        ),
        "command": plan.command,
        **environment(),
        "device": plan.device,
        "train": plan.config.to_dict(),
        "data": dict(plan.data_settings),
    }
    if tuned is not None:
        config["tuned_learning_rates"] = nested_rates(tuned)
    if plan.sweep_values:
        config["sweep"] = {"field": plan.sweep_field, "values": list(plan.sweep_values)}
    if plan.protocol != 2:  # absent: protocol 2, as every file written before protocol 3
        config["protocol_version"] = plan.protocol
    if plan.train_loads is not None:
        config.update(loads_config(plan))
    if plan.tune_epochs is not None:
        config["tune_epochs"] = plan.tune_epochs
    if plan.cutting is not None:
        config["cutting"] = plan.cutting
    if plan.snr_db:
        config["snr_db"] = list(plan.snr_db)
    return config


def build_study(
    plan: Any,
    recordings: Sequence[Recording],
    folds: Sequence[Fold],
    runs: list[dict],
    tuned: Rates | None = None,
    profiles: dict[str, dict[str, Any]] | None = None,
    tuning: list[dict[str, Any]] | None = None,
    sweep: list[dict[str, Any]] | None = None,
) -> dict:
    """The study JSON of finished runs, its comparisons and decomposition included (run_study validates it)."""
    config = study_config(plan, folds, tuned)
    study = {
        "schema_version": SCHEMA_VERSION,
        "kind": "study",
        "config": config,
        "class_names": list(folds[0].windows.class_names),
        "recordings": [
            {"label": r.label, "file": r.meta.get("file"), "load_hp": r.meta.get("load_hp")} for r in recordings
        ],
        "folds": [fold_record(fold) for fold in folds],
        "runs": runs,
        "comparisons": [],
        "order_summary": order_summary(runs),
        "profiles": profiles or {},
        "tuning_runs": tuning or [],
        "sweep_runs": sweep or [],
        "decomposition": None,
    }
    study = to_plain(study)
    study["comparisons"] = compare_all(study, plan.metric, plan.margin)
    study["decomposition"] = decomposition(study, plan.metric)
    if (gap := order_gap(study)) is not None:
        study["order_gap"] = gap
    return study
