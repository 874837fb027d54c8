"""Cross-load: models trained at some motor loads, tested at others, on the classes recorded at every load.

CWRU has no normal record at 1-3 HP in the shared copy, so across loads that is the nine fault classes. The
experiment itself runs at the first train load; each further train load is a stage of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from core.lab.contract import (
    BLOCK_METRICS,
    check_cells_by_model,
    check_int_list,
    check_keys,
    is_int,
    require,
    run_models,
)
from core.lab.evaluations.base import MAIN, Evaluation, RunsByStage, Setting
from core.lab.report import plural
from core.lab.stats.summary import cell
from core.lab.stats.words import percent_cell
from core.lab.vibration.loads import common_classes, cross_load_test_sets, load_name, recordings_at

METHOD = (
    "one model per train load, model and seed; a test load equal to the train load is scored on the held-out "
    "test block of its own split, any other load on all its windows, normalised with the training statistics"
)


def check_loads(
    train_loads: Sequence[int] | None, test_loads: Sequence[int] | None
) -> tuple[list[int], list[int]] | None:
    """Both lists, or neither (None); loads must not repeat within a list."""
    if not train_loads and not test_loads:
        return None
    if not train_loads or not test_loads:
        raise ValueError("cross-load needs both train loads and test loads, e.g. train 0, test 1,2,3")
    train_loads, test_loads = [int(load) for load in train_loads], [int(load) for load in test_loads]
    if len(set(train_loads)) != len(train_loads) or len(set(test_loads)) != len(test_loads):
        raise ValueError(f"loads must not repeat; got train {train_loads}, test {test_loads}")
    return train_loads, test_loads


def cross_load_block(
    runs_by_train_load: Mapping[int, Sequence[Mapping[str, Any]]],
    models: Sequence[str],
    test_loads: Sequence[int],
    classes: Sequence[str],
    dropped: Sequence[str],
    test_windows: Mapping[int, int],
) -> dict[str, Any]:
    """The `cross_load` block: accuracy[model][row][column] for train load `row`, test load `column`."""

    def row(runs: Sequence[Mapping[str, Any]], model: str, metric: str) -> list[dict[str, Any]]:
        return [
            cell([run["extra_tests"][load_name(load)][metric] for run in runs if run["model"] == model])
            for load in test_loads
        ]

    return {
        "train_loads": [int(load) for load in runs_by_train_load],
        "test_loads": [int(load) for load in test_loads],
        "classes": list(classes),
        "dropped_classes": list(dropped),
        "test_windows": [int(test_windows[load]) for load in test_loads],
        "method": METHOD,
        **{
            metric: {model: [row(runs, model, metric) for runs in runs_by_train_load.values()] for model in models}
            for metric in BLOCK_METRICS
        },
    }


def cross_load_table(block: Mapping[str, Any], model: str, metric: str = "accuracy") -> pd.DataFrame:
    """One model's train-load x test-load table; cells mean ± sd in %."""
    return pd.DataFrame(
        [[percent_cell(c) for c in row] for row in block[metric][model]],
        index=[f"train {load} HP" for load in block["train_loads"]],
        columns=[f"test {load} HP" for load in block["test_loads"]],
    )


class CrossLoad(Evaluation):
    """Train at some motor loads and test at others, on the classes recorded at every chosen load."""

    key = "cross_load"
    title = "Across motor loads"
    settings = (
        Setting(
            "train_loads",
            "ints",
            "cross-load: train at these motor loads (with --test-loads)",
            flag="--train-loads",
            label="Cross-load: train at (HP)",
            key="train_loads",
            choices="loads",
        ),
        Setting(
            "test_loads",
            "ints",
            "cross-load: test at these motor loads",
            flag="--test-loads",
            label="… test at (HP)",
            key="test_loads",
            choices="loads",
        ),
    )
    needs_recordings = True
    caption = (
        "Only the classes recorded at every chosen load are used (CWRU has no normal file at 1-3 HP here); "
        "the experiment itself then runs at the first train load."
    )

    @classmethod
    def check(cls, values, plan):
        """Both lists of loads checked, or None when neither is given."""
        loads = check_loads(values["train_loads"], values["test_loads"])
        return None if loads is None else {"train_loads": loads[0], "test_loads": loads[1]}

    @classmethod
    def data_loads(cls, values):
        """Every train and test load: the data must hold them all."""
        if not values.get("train_loads") and not values.get("test_loads"):
            return None
        return sorted({*(values.get("train_loads") or []), *(values.get("test_loads") or [])})

    def runs_per_seed(self, plan):
        """Every model again at each train load after the first."""
        return len(plan.models) * (len(self.values["train_loads"]) - 1)

    def stage_label(self, variant):
        """E.g. "train load 1 HP"."""
        return f"train load {variant} HP"

    def main_recordings(self, recordings):
        """The recordings at the first train load, of the classes common to every chosen load."""
        self.recordings = recordings
        self.classes, self.dropped = common_classes(recordings, self.values["train_loads"], self.values["test_loads"])
        return recordings_at(recordings, self.values["train_loads"][0], self.classes)

    def prepare(self, context):
        """Every test load's test set for the experiment's runs, and a stage per further train load."""
        train_loads, test_loads = self.values["train_loads"], self.values["test_loads"]
        main = context.main
        main.fixed_test_sets.update(cross_load_test_sets(self.recordings, main.windows, train_loads[0], test_loads))
        for load in train_loads[1:]:
            windows = context.cut(recordings_at(self.recordings, load, self.classes))
            tests = cross_load_test_sets(self.recordings, windows, load, test_loads)
            context.add_stage(self.stage_key(load), windows, context.plan.models, fixed_test_sets=tests)
        self.test_windows = {load: len(main.fixed_test_sets[load_name(load)][1]) for load in test_loads}

    def block(self, plan, runs: RunsByStage):
        """Each model's cells, train load by test load."""
        train_loads = self.values["train_loads"]
        by_train_load = {train_loads[0]: runs[MAIN], **{load: runs[self.stage_key(load)] for load in train_loads[1:]}}
        return cross_load_block(
            by_train_load, plan.models, self.values["test_loads"], self.classes, self.dropped, self.test_windows
        )

    @classmethod
    def validate(cls, block, results):
        """The loads, classes, test window counts, method, and a cell per model, train load and test load."""
        keys = ("train_loads", "test_loads", "classes", "dropped_classes", "test_windows", "method", *BLOCK_METRICS)
        check_keys("cross_load", block, keys)
        check_int_list("cross_load.train_loads", block["train_loads"])
        check_int_list("cross_load.test_loads", block["test_loads"])
        require(block["classes"] == results["class_names"], "cross_load.classes must equal class_names")
        dropped = block["dropped_classes"]
        require(
            isinstance(dropped, list) and all(isinstance(c, str) and c not in block["classes"] for c in dropped),
            "cross_load.dropped_classes must be a list of class names not used",
        )
        windows = block["test_windows"]
        require(
            isinstance(windows, list)
            and len(windows) == len(block["test_loads"])
            and all(is_int(n) and n > 0 for n in windows),
            "cross_load.test_windows must give a positive count per test load",
        )
        require(isinstance(block["method"], str), "cross_load.method must be text")
        shape = (len(block["train_loads"]), len(block["test_loads"]))
        check_cells_by_model("cross_load", block, run_models(results), shape)

    @classmethod
    def tables(cls, block):
        """One train-load by test-load table per model."""
        dropped = block["dropped_classes"]
        left_out = f" (left out, not recorded at every load: {', '.join(dropped)})" if dropped else ""
        classes = plural(len(block["classes"]), "class", "classes")
        heading = f"Cross-load accuracy % on {classes}{left_out}, mean ± sd over seeds"
        return [(f"{heading}: {model}", cross_load_table(block, model)) for model in block["accuracy"]]
