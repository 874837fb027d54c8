"""A study's cross-load tests: does the encoding's effect hold at motor loads the models never trained at?

A one-fold study given one train load and its test loads (StudyPlan(design="one-fold", train_loads=[0],
test_loads=[1, 2, 3]); `python -m core.study --design one-fold --train-loads 0 --test-loads 1,2,3`) cuts its fold
from the recordings at the train load, of the classes recorded at every chosen load
(core.lab.vibration.loads.common_classes), and scores every run also at each test load: the train load itself on
the fold's own test windows, any other load on all its windows, normalised with the fold's training statistics
(core.lab.vibration.loads.cross_load_test_sets). That is how the experiment's cross-load evaluation scores its own
runs, so a one-fold study of an experiment with cross-load records the experiment's own scores. Each run records
`cross_load` {accuracy, f1}, one score per load of config.test_loads, in that order; `cross_load_effects`
compares the study's pairs at each load (core.lab.study.extra_tests). The load-out design differs: it trains a fold
per test load, on every window at the train loads, and compares on the held-out load itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from core.lab.contract import is_int, require
from core.lab.names import ONE_FOLD
from core.lab.runs import Stage
from core.lab.study.extra_tests import ExtraTest, effects, effects_frame
from core.lab.vibration.loads import cross_load_test_sets, load_name
from core.lab.vibration.types import Recording

CROSS_LOAD = ExtraTest(
    "cross_load", "test_loads", "test_load", "test load", load_name, lambda load: f"at load {load}", design=ONE_FOLD
)


def check_one_fold_loads(
    train_loads: Sequence[int] | None, test_loads: Sequence[int] | None
) -> tuple[list[int] | None, list[int] | None]:
    """A one-fold study's loads: none, or one train load and at least one test load, none repeated, as the study
    JSON records them (test loads in ascending order); ValueError in words otherwise."""
    if train_loads is None and test_loads is None:
        return None, None
    if train_loads is None or test_loads is None or len(train_loads) != 1 or not len(test_loads):
        raise ValueError(
            "a one-fold study with loads trains at one load and scores at the test loads, e.g. --train-loads 0 "
            f"--test-loads 1,2,3 (each further train load is a study of its own); got train {train_loads}, test "
            f"{test_loads}"
        )
    if len(set(test_loads)) != len(test_loads):
        raise ValueError(f"test loads must not repeat; got {list(test_loads)}")
    return [int(train_loads[0])], sorted(int(load) for load in test_loads)


class CrossLoadSets:
    """The test sets at the study's test loads of each stage's runs, made once per fold's windows (every seed and
    model of a fold is scored on the same windows)."""

    def __init__(self, plan: Any, recordings: Sequence[Recording]) -> None:
        applies = plan.design == ONE_FOLD and plan.test_loads is not None
        self.loads = (plan.train_loads[0], list(plan.test_loads)) if applies else None
        self.recordings = recordings
        self._made: dict[int, dict[str, tuple[Any, Any]]] = {}

    def __call__(self, stage: Stage) -> dict[str, tuple[Any, Any]]:
        """The stage's test sets by load name ({} where the study has no cross-load tests)."""
        if self.loads is None:
            return {}
        key = id(stage.windows)
        if key not in self._made:
            self._made[key] = cross_load_test_sets(self.recordings, stage.windows, *self.loads)
        return self._made[key]


def with_cross_load(record: dict[str, Any], run: Mapping[str, Any], test_loads: Sequence[int] | None) -> dict:
    """The study record of `run` with its scores at the test loads, when the study has cross-load tests."""
    return {**record, "cross_load": CROSS_LOAD.record(run, test_loads)} if test_loads else record


def check_cross_load(study: Mapping[str, Any]) -> None:
    """A one-fold study's loads (one train load with its test loads, or neither), and then each run's score at
    every test load; a run of any other study records none."""
    config = study["config"]
    if config.get("design") == ONE_FOLD:
        train, test = config.get("train_loads"), config.get("test_loads")
        require(
            (train is None and test is None)
            or (isinstance(train, list) and len(train) == 1 and isinstance(test, list) and test),
            "a one-fold study's config.train_loads holds one load and config.test_loads its test loads, or neither",
        )
        require(
            test is None or (all(is_int(load) for load in test) and len(set(test)) == len(test)),
            "config.test_loads must hold distinct loads",
        )
    CROSS_LOAD.check(study)


def cross_load_effects(study: Mapping[str, Any], metric: str = "accuracy") -> list[dict[str, Any]]:
    """Per compared pair (the primary first) and per test load, b - a in points with the study's 95 % interval,
    unadjusted, and each model's mean: rows {a, b, metric, test_load, diff, ci95, mean_a, mean_b}; [] without a
    cross-load tests."""
    return effects(CROSS_LOAD, study, metric)


def cross_load_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The table of `cross_load_effects` (page and CLI): a row per pair and test load."""
    return effects_frame(CROSS_LOAD, rows)
