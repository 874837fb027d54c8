"""The pe_scale sweep: the models with a position signal again at several scales of that signal; the experiment
itself uses the first. Scale 0 removes the signal (B at 0 is B-noPE, bit for bit), so the sweep reads how loud the
position must be to matter."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from core.lab.contract import BLOCK_METRICS, check_cells_by_model, check_keys, is_number, require, run_models
from core.lab.evaluations.base import MAIN, Evaluation, RunsByStage, Setting, sweep_values
from core.lab.models import has_position
from core.lab.stats.summary import cell
from core.lab.stats.words import percent_cell


def position_models(models: Sequence[str]) -> list[str]:
    """The models given a position signal (core.lab.models.has_position)."""
    return [model for model in models if has_position(model)]


def pe_scale_block(runs_by_scale: Mapping[float, Sequence[Mapping[str, Any]]], models: Sequence[str]) -> dict[str, Any]:
    """The `pe_scale_sweep` block: each position model's cells at each scale."""
    scales = list(runs_by_scale)
    return {
        "scales": [float(s) for s in scales],
        "models": list(models),
        **{
            metric: {
                model: [cell([r[metric] for r in runs_by_scale[s] if r["model"] == model]) for s in scales]
                for model in models
            }
            for metric in BLOCK_METRICS
        },
    }


class PEScaleSweep(Evaluation):
    """The models with a position signal again at several scales of it; the experiment runs at the first."""

    key = "pe_scale_sweep"
    title = "How loud must the position signal be? (pe_scale)"
    settings = (
        Setting(
            "pe_scales",
            "floats",
            "train the models with a position signal at each of these scales, e.g. 0,0.1,0.3,1 (the first is the "
            "experiment's); a list after --pe-scale means the same",
            flag="--pe-scale-sweep",
            label="pe_scale sweep: also train the models with a position signal at",
            key="pe_scale_sweep",
            choices=(0.0, 0.1, 0.3, 1.0, 3.0),
        ),
    )
    caption = "Models with a position signal only; at pe_scale 0 the signal is gone (B equals B-noPE)."

    @classmethod
    def check(cls, values, plan):
        """The scales checked (distinct, finite, >= 0), or None without a sweep; it needs a position model."""
        scales = values["pe_scales"]
        if scales is None:
            return None
        scales = [float(s) for s in scales]
        if not scales or len(set(scales)) != len(scales) or not all(np.isfinite(scales)) or min(scales) < 0:
            raise ValueError(f"pe_scale values must be distinct numbers >= 0, got {list(values['pe_scales'])!r}")
        if not position_models(plan.models):
            raise ValueError("the pe_scale sweep needs a model with a position signal (A+PE, B, B-learned, B-concat)")
        return {"pe_scales": scales}

    def runs_per_seed(self, plan):
        """Each position model again at every scale after the first."""
        return len(position_models(plan.models)) * (len(self.values["pe_scales"]) - 1)

    def stage_label(self, variant):
        """E.g. "pe_scale 0.3"."""
        return f"pe_scale {variant:g}"

    def main_config(self, config):
        """The experiment's config at the sweep's first scale."""
        return dataclasses.replace(
            config, model=dataclasses.replace(config.model, pe_scale=self.values["pe_scales"][0])
        )

    def prepare(self, context):
        """A stage per further scale: the position models on the experiment's own windows."""
        config = context.plan.config
        for scale in self.values["pe_scales"][1:]:
            scaled = dataclasses.replace(config, model=dataclasses.replace(config.model, pe_scale=scale))
            models = position_models(context.plan.models)
            context.add_stage(self.stage_key(scale), context.main.windows, models, config=scaled)

    def block(self, plan, runs: RunsByStage):
        """Each position model's cells at each scale."""
        scales = self.values["pe_scales"]
        by_scale = {scales[0]: runs[MAIN], **{s: runs[self.stage_key(s)] for s in scales[1:]}}
        return pe_scale_block(by_scale, position_models(plan.models))

    @classmethod
    def validate(cls, block, results):
        """The scales, models that were run, and a cell per model and scale."""
        check_keys("pe_scale_sweep", block, ("scales", "models", *BLOCK_METRICS))
        scales = block["scales"]
        require(isinstance(scales, list) and scales and all(is_number(s) for s in scales), "pe_scale_sweep.scales")
        require(set(block["models"]) <= run_models(results), "pe_scale_sweep.models must name models that were run")
        check_cells_by_model("pe_scale_sweep", block, set(block["models"]), (len(scales),))

    @classmethod
    def tables(cls, block):
        """One table: accuracy per model and scale."""
        rows = {m: [percent_cell(c) for c in cells] for m, cells in block["accuracy"].items()}
        table = pd.DataFrame(rows, index=[f"pe_scale {s:g}" for s in block["scales"]]).T
        return [("pe_scale sweep, accuracy % (mean ± sd)", table)]

    @classmethod
    def from_args(cls, args: argparse.Namespace):
        """--pe-scale-sweep, or a list after --pe-scale (the old spelling of the sweep)."""
        return {"pe_scales": sweep_values(args.pe_scales, args.pe_scale, "--pe-scale")}
