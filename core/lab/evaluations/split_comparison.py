"""The split comparison: the same experiment again under the other split, and the leak as a number.

A random window split leaks (neighbouring windows of one recording are near copies), so its accuracy minus
the time split's accuracy, paired by seed, measures how much the leak flatters every model.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from core.lab.contract import BLOCK_METRICS, check_cells_by_model, check_keys, check_pair, require, run_models
from core.lab.evaluations.base import MAIN, Evaluation, RunsByStage, Setting
from core.lab.report import difference_with_ci, percent_cell
from core.lab.stats.summary import cell, paired_differences
from core.lab.vibration.windows import MODES as SPLIT_MODES


def other_split_mode(mode: str) -> str:
    if mode not in SPLIT_MODES:
        raise ValueError(f"split mode must be one of {SPLIT_MODES}, got {mode!r}")
    return SPLIT_MODES[1 - SPLIT_MODES.index(mode)]


def split_comparison_block(
    runs_by_mode: Mapping[str, Sequence[Mapping[str, Any]]], models: Sequence[str]
) -> dict[str, Any]:
    """The `split_comparison` block: each model under both splits (the experiment's own split first), and
    the leak = random-split minus time-split accuracy, paired by seed (a seed starts both runs from the
    same weights)."""
    modes = list(runs_by_mode)
    leak = {}
    for model in models:
        # the two modes' runs as two "models", so the paired machinery applies
        pairs = [dict(run, model=mode) for mode in SPLIT_MODES for run in runs_by_mode[mode] if run["model"] == model]
        leak[model] = paired_differences(pairs, "accuracy", reference="time")["random"]
    return {
        "modes": modes,
        **{
            metric: {
                model: [cell([run[metric] for run in runs_by_mode[mode] if run["model"] == model]) for mode in modes]
                for model in models
            }
            for metric in BLOCK_METRICS
        },
        "leak": leak,
    }


def split_table(block: Mapping[str, Any]) -> pd.DataFrame:
    """Rows: models; columns: accuracy under each split and the leak in points (with its 95 % interval)."""
    rows = {
        model: [percent_cell(c) for c in cells] + [difference_with_ci(block["leak"][model])]
        for model, cells in block["accuracy"].items()
    }
    columns = [f"{mode} split" for mode in block["modes"]] + ["leak (random - time), points"]
    return pd.DataFrame(rows, index=columns).T


class SplitComparison(Evaluation):
    key = "split_comparison"
    title = "Time split vs random split"
    settings = (
        Setting(
            "compare_splits",
            "flag",
            "train again under the other split; on the CLI: --split time,random",
            default=False,
            label="Also train on the other split (time ↔ random) and show the leak",
            key="cmp",
        ),
    )
    needs_recordings = True
    caption = "The leak: random-split minus time-split accuracy, paired by seed, in points with its 95 % interval."

    @classmethod
    def check(cls, values, plan):
        return {"compare_splits": True} if values["compare_splits"] else None

    def runs_per_seed(self, plan):
        return len(plan.models)

    def stage_label(self, variant):
        return f"{variant} split"

    def prepare(self, context):
        other = other_split_mode(context.plan.split_mode)
        windows = context.cut(context.recordings, mode=other)
        context.add_stage(self.stage_key(other), windows, context.plan.models)

    def block(self, plan, runs: RunsByStage):
        other = other_split_mode(plan.split_mode)
        return split_comparison_block({plan.split_mode: runs[MAIN], other: runs[self.stage_key(other)]}, plan.models)

    @classmethod
    def validate(cls, block, results):
        check_keys("split_comparison", block, ("modes", *BLOCK_METRICS, "leak"))
        modes = block["modes"]
        require(
            isinstance(modes, list) and sorted(modes) == ["random", "time"],
            "split_comparison.modes must be time and random",
        )
        models = run_models(results)
        check_cells_by_model("split_comparison", block, models, (2,))
        require(
            isinstance(block["leak"], Mapping) and set(block["leak"]) == models,
            "split_comparison.leak must hold one paired difference per model",
        )
        for model, pair in block["leak"].items():
            check_pair(f"split_comparison.leak[{model!r}]", pair)

    @classmethod
    def tables(cls, block):
        return [("Split comparison, accuracy % (mean ± sd); the leak in points with its 95 % CI", split_table(block))]

    # The CLI writes the comparison as a second mode of the core --split flag: --split time,random.

    @classmethod
    def add_arguments(cls, group):
        pass

    @classmethod
    def from_args(cls, args: argparse.Namespace):
        return {"compare_splits": len(args.split) == 2}

    @classmethod
    def argv(cls, values, config):
        if not values.get("compare_splits"):
            return []
        mode = config["data"]["split_mode"]
        return ["--split", f"{mode},{other_split_mode(mode)}"]
