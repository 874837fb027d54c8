"""The windowing comparison: the same experiment again under the other windowing, and the leak as a number.

Random windowing leaks (neighbouring windows of one recording are near copies), so its accuracy minus the
time windowing's accuracy, paired by seed, measures how much the leak flatters every model. On the CLI it is
the second value of the core flag: `--windowing time,random`.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from core.lab.contract import BLOCK_METRICS, check_cells_by_model, check_keys, require, run_models
from core.lab.evaluations.base import MAIN, Evaluation, RunsByStage, Setting
from core.lab.names import WINDOWINGS
from core.lab.stats.summary import cell
from core.lab.stats.words import percent_cell, with_interval
from core.lab.study.checks import check_comparison
from core.lab.study.leak import leak_comparisons


def other_windowing(windowing: str) -> str:
    """The windowing that is not `windowing`: random for time, time for random."""
    if windowing not in WINDOWINGS:
        raise ValueError(f"windowing must be one of {WINDOWINGS}, got {windowing!r}")
    return WINDOWINGS[1 - WINDOWINGS.index(windowing)]


def windowing_comparison_block(
    runs_by_windowing: Mapping[str, Sequence[Mapping[str, Any]]], models: Sequence[str], seeds: Sequence[int]
) -> dict[str, Any]:
    """The `windowing_comparison` block: each model under both windowings (the experiment's own first), and
    the leak = random minus time accuracy in points, a one-fold comparison paired by seed (a seed starts both
    runs from the same weights; core.lab.study.leak.leak_comparisons)."""
    windowings = list(runs_by_windowing)
    block = {
        "windowings": windowings,
        **{
            metric: {
                model: [
                    cell([run[metric] for run in runs_by_windowing[windowing] if run["model"] == model])
                    for windowing in windowings
                ]
                for model in models
            }
            for metric in BLOCK_METRICS
        },
    }
    return {**block, "leak": leak_comparisons(block, seeds)}


def windowing_table(block: Mapping[str, Any]) -> pd.DataFrame:
    """Rows: models; columns: accuracy under each windowing and the leak in points (with its 95 % interval)."""
    rows = {
        model: [percent_cell(c) for c in cells]
        + [with_interval(block["leak"][model]["diff"], block["leak"][model]["ci95"])]
        for model, cells in block["accuracy"].items()
    }
    columns = [f"{windowing} windowing" for windowing in block["windowings"]] + ["leak (random - time), points"]
    return pd.DataFrame(rows, index=columns).T


class WindowingComparison(Evaluation):
    """The experiment again under the other windowing; its block holds both and the leak between them."""

    key = "windowing_comparison"
    title = "Time windowing vs random windowing"
    settings = (
        Setting(
            "compare_windowings",
            "flag",
            "train again under the other windowing; on the CLI: --windowing time,random",
            default=False,
            label="Also train with the other windowing (time ↔ random) and show the leak",
            key="compare_windowings",
        ),
    )
    needs_recordings = True
    caption = "The leak: random minus time windowing accuracy, paired by seed, in points with its 95 % interval."

    @classmethod
    def check(cls, values, plan):
        """On when compare_windowings is set."""
        return {"compare_windowings": True} if values["compare_windowings"] else None

    def runs_per_seed(self, plan):
        """Every model once more, under the other windowing."""
        return len(plan.models)

    def stage_label(self, variant):
        """E.g. "random windowing"."""
        return f"{variant} windowing"

    def prepare(self, context):
        """Cut the recordings again with the other windowing: one stage of every model."""
        other = other_windowing(context.plan.main_windowing)
        windows = context.cut(context.recordings, windowing=other)
        context.add_stage(self.stage_key(other), windows, context.plan.models)

    def block(self, plan, runs: RunsByStage):
        """Both windowings' runs, the experiment's own first, and the leak."""
        other = other_windowing(plan.main_windowing)
        by_windowing = {plan.main_windowing: runs[MAIN], other: runs[self.stage_key(other)]}
        return windowing_comparison_block(by_windowing, plan.models, plan.seeds)

    @classmethod
    def validate(cls, block, results):
        """Both windowings, a cell per model and windowing, and one paired leak per model."""
        check_keys("windowing_comparison", block, ("windowings", *BLOCK_METRICS, "leak"))
        windowings = block["windowings"]
        require(
            isinstance(windowings, list) and sorted(windowings) == ["random", "time"],
            "windowing_comparison.windowings must be time and random",
        )
        models = run_models(results)
        check_cells_by_model("windowing_comparison", block, models, (2,))
        require(
            isinstance(block["leak"], Mapping) and set(block["leak"]) == models,
            "windowing_comparison.leak must hold one comparison per model",
        )
        for model, comparison in block["leak"].items():
            check_comparison(f"windowing_comparison.leak[{model!r}]", comparison)

    @classmethod
    def tables(cls, block):
        """One table: accuracy under each windowing and the leak."""
        return [
            (
                "Windowing comparison, accuracy % (mean ± sd); the leak in points with its 95 % CI",
                windowing_table(block),
            )
        ]

    # The CLI writes the comparison as a second value of the core flag: --windowing time,random.

    @classmethod
    def add_arguments(cls, group):
        """No flag of its own: --windowing takes the second value."""

    @classmethod
    def from_args(cls, args: argparse.Namespace):
        """On when --windowing (or its old name --split) names both windowings."""
        return {"compare_windowings": len(args.windowing) == 2}

    @classmethod
    def argv(cls, values, config):
        """--windowing with the experiment's own windowing first, then the other."""
        if not values.get("compare_windowings"):
            return []
        windowing = config["data"]["windowing"]
        return ["--windowing", f"{windowing},{other_windowing(windowing)}"]
