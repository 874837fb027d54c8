"""The d_model sweep: the embedding models again at several widths; the experiment itself uses the first.

A and A+PE run at the patch width (they have no embedding) and the CNN has no d_model, so only the
embedding models (core.lab.models.embedding_models) are swept.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from core.lab.contract import BLOCK_METRICS, check_cells_by_model, check_int_list, check_keys, require, run_models
from core.lab.evaluations.base import MAIN, Evaluation, RunsByStage, Setting, sweep_values
from core.lab.models import embedding_models
from core.lab.stats.summary import cell
from core.lab.stats.words import percent_cell


def check_d_models(d_models: Sequence[int] | None, heads: int) -> list[int] | None:
    """The widths of the sweep as ints (None: no sweep); ValueError unless distinct, positive and divisible by
    `heads`."""
    if d_models is None:
        return None
    widths = [int(width) for width in d_models]
    if not widths or len(set(widths)) != len(widths) or min(widths) < 1:
        raise ValueError(f"d_model values must be distinct positive integers, got {list(d_models)!r}")
    bad = [width for width in widths if width % heads]
    if bad:
        raise ValueError(
            f"heads={heads} must divide every d_model of the sweep; {bad} do not divide into {heads} heads"
        )
    return widths


def d_model_sweep_block(
    runs_by_width: Mapping[int, Sequence[Mapping[str, Any]]], models: Sequence[str]
) -> dict[str, Any]:
    """The `d_model_sweep` block: each embedding model's scores and parameter count at each d_model."""
    widths = list(runs_by_width)
    return {
        "d_models": [int(width) for width in widths],
        "models": list(models),
        **{
            metric: {
                model: [cell([run[metric] for run in runs_by_width[w] if run["model"] == model]) for w in widths]
                for model in models
            }
            for metric in BLOCK_METRICS
        },
        "n_parameters": {
            model: [next(int(run["n_parameters"]) for run in runs_by_width[w] if run["model"] == model) for w in widths]
            for model in models
        },
    }


def sweep_table(block: Mapping[str, Any], metric: str = "accuracy") -> pd.DataFrame:
    """Rows: embedding models; columns: d_model; cells: mean ± sd in % and the parameter count."""
    rows = {
        model: [f"{percent_cell(c)} ({n:,} p)" for c, n in zip(cells, block["n_parameters"][model])]
        for model, cells in block[metric].items()
    }
    return pd.DataFrame(rows, index=[f"d_model {width}" for width in block["d_models"]]).T


class DModelSweep(Evaluation):
    """The embedding models again at several widths; the experiment itself runs at the first."""

    key = "d_model_sweep"
    title = "Width of the embedding (d_model)"
    settings = (
        Setting(
            "d_models",
            "ints",
            "train the embedding models at each of these widths, e.g. 16,32,64,128 (the first is the experiment's); "
            "a list after --d-model means the same",
            flag="--d-model-sweep",
            label="d_model sweep: also train the embedding models at",
            key="d_model_sweep",
            choices=(16, 32, 64, 128),
        ),
    )
    caption = "Embedding models only (A and A+PE run at the patch width); the experiment itself uses the first width."

    @classmethod
    def check(cls, values, plan):
        """The widths checked against the heads, or None without a sweep; it needs an embedding model."""
        widths = check_d_models(values["d_models"], plan.config.model.heads)
        if widths is None:
            return None
        if not embedding_models(plan.models):
            raise ValueError(
                "the d_model sweep needs an embedding model among the models (B, B-noPE, B-learned, B-concat)"
            )
        return {"d_models": widths}

    def runs_per_seed(self, plan):
        """Each embedding model again at every width after the first."""
        return len(embedding_models(plan.models)) * (len(self.values["d_models"]) - 1)

    def stage_label(self, variant):
        """E.g. "d_model 32"."""
        return f"d_model {variant}"

    def main_config(self, config):
        """The experiment's config at the sweep's first width."""
        return dataclasses.replace(config, model=dataclasses.replace(config.model, d_model=self.values["d_models"][0]))

    def prepare(self, context):
        """A stage per further width: the embedding models on the experiment's own windows."""
        config = context.plan.config
        for width in self.values["d_models"][1:]:
            wider = dataclasses.replace(config, model=dataclasses.replace(config.model, d_model=width))
            models = embedding_models(context.plan.models)
            context.add_stage(self.stage_key(width), context.main.windows, models, config=wider)

    def block(self, plan, runs: RunsByStage):
        """Each embedding model's cells and parameter count at each width."""
        widths = self.values["d_models"]
        by_width = {widths[0]: runs[MAIN], **{width: runs[self.stage_key(width)] for width in widths[1:]}}
        return d_model_sweep_block(by_width, embedding_models(plan.models))

    @classmethod
    def validate(cls, block, results):
        """The widths, models that were run, a cell per model and width, a parameter count per width."""
        check_keys("d_model_sweep", block, ("d_models", "models", *BLOCK_METRICS, "n_parameters"))
        check_int_list("d_model_sweep.d_models", block["d_models"], minimum=1)
        models = block["models"]
        require(
            isinstance(models, list) and models and set(models) <= run_models(results),
            "d_model_sweep.models must name models that were run",
        )
        check_cells_by_model("d_model_sweep", block, set(models), (len(block["d_models"]),))
        counts = block["n_parameters"]
        require(
            isinstance(counts, Mapping) and set(counts) == set(models),
            "d_model_sweep.n_parameters must cover its models",
        )
        for model, values in counts.items():
            check_int_list(f"d_model_sweep.n_parameters[{model!r}]", values, minimum=1)
            require(
                len(values) == len(block["d_models"]), f"d_model_sweep.n_parameters[{model!r}] needs one per d_model"
            )

    @classmethod
    def tables(cls, block):
        """One table: accuracy and parameters per model and width."""
        return [("d_model sweep, accuracy % (mean ± sd) and parameters", sweep_table(block))]

    @classmethod
    def from_args(cls, args: argparse.Namespace):
        """--d-model-sweep, or a list after --d-model (the old spelling of the sweep)."""
        return {"d_models": sweep_values(args.d_models, args.d_model, "--d-model")}
