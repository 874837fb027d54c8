"""One sweep over a field of the model's config: the models that field applies to, trained again at each further
value of it on the experiment's own windows; the experiment itself runs at the first value. The field (the models
it changes, how its values are checked) is core.lab.sweep_fields', which the study's sweep reads too; the stages,
the block of the results JSON, its validation and its table are this module's, the same for every field. Two
sweeps are registered (core.lab.evaluations), each a small subclass naming its setting, flag and block:

    PEScaleSweep   the models with a position signal at several scales of it; at 0 the signal is gone (B equals
                   B-noPE, bit for bit), so it reads how loud the position must be to matter. Values: "scales".
    DModelSweep    the embedding models at several widths (A and A+PE run at the patch width, the CNN has no
                   d_model). Values: "d_models", with each model's parameter count.

The block: {<values_key>: [values], "models": [...], <metric>: {model: [cell per value]} for each of
core.lab.contract.BLOCK_METRICS, and, for a field that changes the network's size, "n_parameters": {model:
[count per value]}}.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pandas as pd

from core.lab.contract import (
    BLOCK_METRICS,
    check_cells_by_model,
    check_int_list,
    check_keys,
    is_number,
    require,
    run_models,
)
from core.lab.evaluations.base import MAIN, Evaluation, RunsByStage, Setting, sweep_values
from core.lab.stats.summary import cell
from core.lab.stats.words import percent_cell
from core.lab.sweep_fields import FIELDS, SweptField


def sweep_block(
    runs_by_value: Mapping[Any, Sequence[Mapping[str, Any]]],
    models: Sequence[str],
    values_key: str,
    counts_parameters: bool = False,
) -> dict[str, Any]:
    """A sweep's block: each swept model's cells at each value (and its parameter count, when asked)."""
    values = list(runs_by_value)
    block: dict[str, Any] = {
        values_key: values,
        "models": list(models),
        **{
            metric: {
                model: [cell([r[metric] for r in runs_by_value[v] if r["model"] == model]) for v in values]
                for model in models
            }
            for metric in BLOCK_METRICS
        },
    }
    if counts_parameters:
        block["n_parameters"] = {
            model: [next(int(r["n_parameters"]) for r in runs_by_value[v] if r["model"] == model) for v in values]
            for model in models
        }
    return block


def sweep_table(block: Mapping[str, Any], field: str, values_key: str, metric: str = "accuracy") -> pd.DataFrame:
    """Rows: the swept models; columns: "<field> <value>"; cells: mean ± sd in %, with the parameter count where
    the block holds one."""
    counts = block.get("n_parameters")
    rows = {
        model: [percent_cell(c) + ("" if counts is None else f" ({counts[model][i]:,} p)") for i, c in enumerate(cells)]
        for model, cells in block[metric].items()
    }
    return pd.DataFrame(rows, index=[f"{field} {value:g}" for value in block[values_key]]).T


class ModelSweep(Evaluation):
    """Base class of a sweep over one field of core.lab.models.ModelConfig (see the module docstring): override
    `swept_field`, `values_key` and `setting_name`, with Evaluation's `key`, `title` and `settings`."""

    swept_field: ClassVar[SweptField]
    values_key: ClassVar[str]  # the block's list of values
    setting_name: ClassVar[str]  # the setting that holds the values (Plan.evaluations, the results config)

    @classmethod
    def swept(cls, models: Sequence[str]) -> list[str]:
        """The models the field applies to, in their order."""
        return cls.swept_field.models(models)

    @classmethod
    def check(cls, values, plan):
        """The values checked, or None without a sweep; ValueError when no model of the plan has the field."""
        given = values[cls.setting_name]
        if given is None:
            return None
        checked = cls.swept_field.check_values(given, plan.config.model.heads)
        if not cls.swept(plan.models):
            raise ValueError(f"the {cls.swept_field.name} sweep needs {cls.swept_field.applies_to} among the models")
        return {cls.setting_name: checked}

    @classmethod
    def from_args(cls, args: argparse.Namespace):
        """The sweep's flag, or a list after the field's own flag (the old spelling of the sweep)."""
        name = cls.swept_field.name
        flag = "--" + name.replace("_", "-")
        return {cls.setting_name: sweep_values(getattr(args, cls.setting_name), getattr(args, name), flag)}

    @property
    def values_swept(self) -> list[Any]:
        """The field's values, the experiment's own first."""
        return self.values[self.setting_name]

    def runs_per_seed(self, plan):
        """Each swept model again at every value after the first."""
        return len(self.swept(plan.models)) * (len(self.values_swept) - 1)

    def stage_label(self, variant):
        """E.g. "d_model 32", "pe_scale 0.3"."""
        return f"{self.swept_field.name} {variant:g}"

    def _at(self, config, value):
        return config.with_model(**{self.swept_field.name: value})

    def main_config(self, config):
        """The experiment's config at the sweep's first value."""
        return self._at(config, self.values_swept[0])

    def prepare(self, context):
        """A stage per further value: the swept models on the experiment's own windows."""
        for value in self.values_swept[1:]:
            config = self._at(context.plan.config, value)
            context.add_stage(self.stage_key(value), context.main.windows, self.swept(context.plan.models), config)

    def block(self, plan, runs: RunsByStage):
        """Each swept model's cells (and parameter counts) at each value."""
        values = self.values_swept
        by_value = {values[0]: runs[MAIN], **{v: runs[self.stage_key(v)] for v in values[1:]}}
        return sweep_block(by_value, self.swept(plan.models), self.values_key, self.swept_field.counts_parameters)

    @classmethod
    def validate(cls, block, results):
        """The values, models that were run, a cell per model and value, and a parameter count per value where the
        field changes the network's size."""
        key, field = cls.key, cls.swept_field
        counted = ("n_parameters",) if field.counts_parameters else ()
        check_keys(key, block, (cls.values_key, "models", *BLOCK_METRICS, *counted))
        values = block[cls.values_key]
        if field.integer:
            check_int_list(f"{key}.{cls.values_key}", values, minimum=1)
        require(isinstance(values, list) and values and all(is_number(v) for v in values), f"{key}.{cls.values_key}")
        models = block["models"]
        require(
            isinstance(models, list) and models and set(models) <= run_models(results),
            f"{key}.models must name models that were run",
        )
        check_cells_by_model(key, block, set(models), (len(values),))
        if field.counts_parameters:
            counts = block["n_parameters"]
            require(
                isinstance(counts, Mapping) and set(counts) == set(models), f"{key}.n_parameters must cover its models"
            )
            for model, numbers in counts.items():
                check_int_list(f"{key}.n_parameters[{model!r}]", numbers, minimum=1)
                require(len(numbers) == len(values), f"{key}.n_parameters[{model!r}] needs one per {field.name}")

    @classmethod
    def tables(cls, block):
        """One table: accuracy per model and value (and the parameter count)."""
        field = cls.swept_field
        heading = f"{field.name} sweep, accuracy % (mean ± sd)" + (" and parameters" if field.counts_parameters else "")
        return [(heading, sweep_table(block, field.name, cls.values_key))]


def sweep_setting(name: str, field: SweptField, what: str, example: str, choices: tuple) -> Setting:
    """The one setting of a sweep over `field`: CLI flag --<field>-sweep, page control (and URL key) <field>_sweep."""
    flag = "--" + field.name.replace("_", "-")
    return Setting(
        name,
        "ints" if field.integer else "floats",
        f"train {what} at each of these values, e.g. {example} (the first is the experiment's); a list after {flag} "
        "means the same",
        flag=f"{flag}-sweep",
        label=f"{field.name} sweep: also train {what} at",
        key=f"{field.name}_sweep",
        choices=choices,
    )


class PEScaleSweep(ModelSweep):
    """The models with a position signal again at several scales of it; the experiment runs at the first."""

    key, title = "pe_scale_sweep", "How loud must the position signal be? (pe_scale)"
    swept_field, values_key, setting_name = FIELDS["pe_scale"], "scales", "pe_scales"
    settings = (
        sweep_setting(
            setting_name, swept_field, "the models with a position signal", "0,0.1,0.3,1", (0.0, 0.1, 0.3, 1.0, 3.0)
        ),
    )
    caption = "Models with a position signal only; at pe_scale 0 the signal is gone (B equals B-noPE)."


class DModelSweep(ModelSweep):
    """The embedding models again at several widths; the experiment itself runs at the first."""

    key, title = "d_model_sweep", "Width of the embedding (d_model)"
    swept_field, values_key, setting_name = FIELDS["d_model"], "d_models", "d_models"
    settings = (sweep_setting(setting_name, swept_field, "the embedding models", "16,32,64,128", (16, 32, 64, 128)),)
    caption = "Embedding models only (A and A+PE run at the patch width); the experiment itself uses the first width."
