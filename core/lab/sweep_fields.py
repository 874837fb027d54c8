"""The model fields a sweep can vary, each defined once for both pipelines: the experiment's sweep cells
(core.lab.evaluations.model_sweep: its own windows at each value) and the study's sweep on every fold
(core.lab.study.sweep: the encoding's effect at each value). A field names the models it changes and how its
values are checked, so the two pipelines sweep the same models and refuse the same values in the same words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.lab.models import embedding_models, has_position


def position_models(models: Sequence[str]) -> list[str]:
    """The models given a position signal (core.lab.models.has_position), in their order."""
    return [model for model in models if has_position(model)]


def check_pe_scales(values: Sequence[Any], heads: int) -> list[float]:
    """Distinct, finite scales >= 0, as floats (ValueError otherwise); the heads play no part."""
    scales = [float(value) for value in values]
    if not scales or len(set(scales)) != len(scales) or not all(np.isfinite(scales)) or min(scales) < 0:
        raise ValueError(f"pe_scale values must be distinct numbers >= 0, got {list(values)!r}")
    return scales


def check_d_models(d_models: Sequence[Any] | None, heads: int) -> list[int] | None:
    """The widths as ints (None: no sweep); ValueError unless distinct, positive and divisible by `heads`."""
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


@dataclass(frozen=True)
class SweptField:
    """One field of core.lab.models.ModelConfig that a sweep varies."""

    name: str
    applies_to: str  # the models it changes, in words, for the message when a plan has none of them
    models: Callable[[Sequence[str]], list[str]]  # the models of a list that the field changes, in their order
    check_values: Callable[[Sequence[Any], int], Any]  # (values, heads) -> the values checked
    counts_parameters: bool = False  # the field changes the network's size: parameter counts are worth storing
    integer: bool = False
    zero_removes_encoding: bool = False  # at 0 a model equals its partner without the encoding (pe_scale)
    unset_means: str | None = None  # the field whose value an unset (None) one takes (d_model: the patch)

    def value_in(self, model: Mapping[str, Any]) -> Any:
        """The value a model config (as a dict, e.g. a stored config.train.model) runs its swept models at."""
        value = model[self.name]
        return model[self.unset_means] if value is None and self.unset_means else value


FIELDS = {
    "pe_scale": SweptField(
        "pe_scale",
        "a model with a position signal (A+PE, B, B-learned, B-concat)",
        position_models,
        check_pe_scales,
        zero_removes_encoding=True,
    ),
    "d_model": SweptField(
        "d_model",
        "an embedding model (B, B-noPE, B-learned, B-concat)",
        embedding_models,
        check_d_models,
        counts_parameters=True,
        integer=True,
        unset_means="patch",
    ),
}


def swept_field(name: str) -> SweptField:
    """The field called `name`; ValueError naming the fields a sweep can vary."""
    if name not in FIELDS:
        raise ValueError(f"a sweep varies one of {', '.join(FIELDS)}, not {name!r}")
    return FIELDS[name]
