"""The registry of evaluations beyond one experiment: each is one `Evaluation` subclass.

    windowing_comparison  the same experiment under the other windowing  --windowing time,random
    noise                 test windows with white noise at set SNRs      --snr=-4,0,4,8
    cross_load            train at some motor loads, test at others     --train-loads 0 --test-loads 1,2,3
    model_sweep           the embedding models at several widths         --d-model-sweep 16,32,64,128
                          the position-signal models at several scales   --pe-scale-sweep 0,0.1,0.3,1

The CLI parser, the page's evaluation controls, the Plan's settings, the results validator and the report
all read this registry; adding an evaluation is adding a module that calls `register(MyEvaluation)`.
Registration order is the order of their stages, tables and page sections. Every evaluation narrows
the recordings (`main_recordings`) before any prepares its stages, so the order does not change a number.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from core.lab.evaluations.base import MAIN, Evaluation, RunsByStage, Setting, StageKey
from core.lab.evaluations.cross_load import CrossLoad
from core.lab.evaluations.model_sweep import DModelSweep, PEScaleSweep
from core.lab.evaluations.noise import Noise
from core.lab.evaluations.windowing_comparison import WindowingComparison

if TYPE_CHECKING:
    from core.lab.runs import PlanSettings

__all__ = ["MAIN", "Evaluation", "RunsByStage", "Setting", "StageKey", "register", "unregister", "registered"]

_REGISTRY: dict[str, type[Evaluation]] = {}


def register(evaluation: type[Evaluation]) -> type[Evaluation]:
    """Add an evaluation (usable as a class decorator); its block key and setting names must be new."""
    if evaluation.key in _REGISTRY:
        raise ValueError(f"an evaluation with block key {evaluation.key!r} is already registered")
    taken = {setting.name for other in _REGISTRY.values() for setting in other.settings}
    clash = sorted(taken & {setting.name for setting in evaluation.settings})
    if clash:
        raise ValueError(f"setting names {clash} are already used by another evaluation")
    _REGISTRY[evaluation.key] = evaluation
    return evaluation


def unregister(key: str) -> None:
    """Remove the evaluation with block key `key` (a test's temporary one); nothing when there is none."""
    _REGISTRY.pop(key, None)


def registered() -> list[type[Evaluation]]:
    """The registered evaluation classes, in registration order."""
    return list(_REGISTRY.values())


for _evaluation in (WindowingComparison, Noise, CrossLoad, DModelSweep, PEScaleSweep):
    register(_evaluation)


def block_keys() -> tuple[str, ...]:
    """The optional top-level blocks of the results JSON."""
    return tuple(_REGISTRY)


def setting_names() -> list[str]:
    """Every registered setting's name, in registration order."""
    return [setting.name for evaluation in _REGISTRY.values() for setting in evaluation.settings]


def configure(values: Mapping[str, Any], plan: PlanSettings) -> tuple[dict[str, Any], list[Evaluation]]:
    """(every setting's value as recorded in the results config, the evaluations that are on).
    A setting left out takes its default (off); an unknown one is a ValueError."""
    unknown = sorted(set(values) - set(setting_names()))
    if unknown:
        raise ValueError(f"unknown evaluation settings {unknown}; known: {setting_names()}")
    recorded: dict[str, Any] = {}
    active = []
    for evaluation in _REGISTRY.values():
        mine = {setting.name: values.get(setting.name, setting.default) for setting in evaluation.settings}
        checked = evaluation.check(mine, plan)
        if checked is None:
            recorded.update({setting.name: setting.default for setting in evaluation.settings})
        else:
            recorded.update(checked)
            active.append(evaluation(checked))
    return recorded, active


def validate_blocks(results: Mapping[str, Any]) -> None:
    """Check each evaluation block present in `results` with its evaluation's `validate`."""
    for key, evaluation in _REGISTRY.items():
        if key in results:
            evaluation.validate(results[key], results)


def tables(results: Mapping[str, Any]) -> list[tuple[str, pd.DataFrame]]:
    """(heading, table) for every evaluation block present in `results`, in registration order."""
    return [
        table for key, evaluation in _REGISTRY.items() if key in results for table in evaluation.tables(results[key])
    ]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every evaluation's CLI flags, in one "evaluations" group."""
    group = parser.add_argument_group("evaluations")
    for evaluation in _REGISTRY.values():
        evaluation.add_arguments(group)


def from_args(args: argparse.Namespace) -> dict[str, Any]:
    """Every evaluation setting from parsed CLI arguments."""
    return {name: value for evaluation in _REGISTRY.values() for name, value in evaluation.from_args(args).items()}


def data_loads(values: Mapping[str, Any]) -> list[int] | None:
    """The motor loads the data must hold for these evaluation settings (None: the evaluations ask for none)."""
    wanted = [evaluation.data_loads(values) for evaluation in _REGISTRY.values()]
    wanted = [loads for loads in wanted if loads is not None]
    return sorted({load for loads in wanted for load in loads}) if wanted else None


def argv(config: Mapping[str, Any]) -> list[str]:
    """The CLI words that repeat the evaluations of a results config."""
    values = config.get("evaluations") or {}
    return [word for evaluation in _REGISTRY.values() for word in evaluation.argv(values, config)]
