"""The pe_scale sweep: the models with a position signal again at several scales of that signal; the experiment
itself uses the first. Scale 0 removes the signal (B at 0 is B-noPE, bit for bit), so the sweep reads how loud the
position must be to matter. The stages, block and table are core.lab.evaluations.model_sweep's; the block's values
are "scales"."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from core.lab.evaluations.base import Setting, sweep_values
from core.lab.evaluations.model_sweep import ModelSweep
from core.lab.models import has_position


def position_models(models: Sequence[str]) -> list[str]:
    """The models given a position signal (core.lab.models.has_position)."""
    return [model for model in models if has_position(model)]


class PEScaleSweep(ModelSweep):
    """The models with a position signal again at several scales of it; the experiment runs at the first."""

    key = "pe_scale_sweep"
    title = "How loud must the position signal be? (pe_scale)"
    field, values_key, setting_name = "pe_scale", "scales", "pe_scales"
    applies_to = "a model with a position signal (A+PE, B, B-learned, B-concat)"
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
    swept = staticmethod(position_models)

    @classmethod
    def checked_values(cls, values, plan):
        """Distinct, finite scales >= 0, as floats."""
        scales = [float(s) for s in values]
        if not scales or len(set(scales)) != len(scales) or not all(np.isfinite(scales)) or min(scales) < 0:
            raise ValueError(f"pe_scale values must be distinct numbers >= 0, got {list(values)!r}")
        return scales

    @classmethod
    def from_args(cls, args: argparse.Namespace):
        """--pe-scale-sweep, or a list after --pe-scale (the old spelling of the sweep)."""
        return {"pe_scales": sweep_values(args.pe_scales, args.pe_scale, "--pe-scale")}
