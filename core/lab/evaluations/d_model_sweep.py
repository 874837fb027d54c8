"""The d_model sweep: the embedding models again at several widths; the experiment itself uses the first.

A and A+PE run at the patch width (they have no embedding) and the CNN has no d_model, so only the
embedding models (core.lab.models.embedding_models) are swept. The stages, block and table are
core.lab.evaluations.model_sweep's; the block's values are "d_models", with each model's parameter count.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from core.lab.evaluations.base import Setting, sweep_values
from core.lab.evaluations.model_sweep import ModelSweep
from core.lab.models import embedding_models


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


class DModelSweep(ModelSweep):
    """The embedding models again at several widths; the experiment itself runs at the first."""

    key = "d_model_sweep"
    title = "Width of the embedding (d_model)"
    field, values_key, setting_name = "d_model", "d_models", "d_models"
    counts_parameters = integer_values = True
    applies_to = "an embedding model (B, B-noPE, B-learned, B-concat)"
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
    swept = staticmethod(embedding_models)

    @classmethod
    def checked_values(cls, values, plan):
        """Distinct positive widths that the heads divide."""
        return check_d_models(values, plan.config.model.heads)

    @classmethod
    def from_args(cls, args: argparse.Namespace):
        """--d-model-sweep, or a list after --d-model (the old spelling of the sweep)."""
        return {"d_models": sweep_values(args.d_models, args.d_model, "--d-model")}
