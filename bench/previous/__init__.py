"""Verbatim copies of core/training.py and core/models.py from the commit issue 15 (a faster training loop)
starts at, so bench/train.py can time the previous loop beside the new one in the same run.

`load()` imports them as a pair: the copied training module's `from core.lab.models import ...` binds to the
copied models module, not to today's core.lab.models. `as_previous_config` and `trainer` let today's callers
hand the copied loop today's TrainConfig (settings renamed since, and min_delta, which it predates).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
# today's model settings that the copied loop spells its own way
RENAMED = {"heads": "n_heads", "layers": "n_layers"}


def _module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def load() -> ModuleType:
    """The previous training module, wired to the previous models module."""
    models = _module("pe_lab_previous_models", HERE / "models.py")
    saved = sys.modules.get("core.lab.models")
    sys.modules["core.lab.models"] = models
    try:
        return _module("pe_lab_previous_training", HERE / "training.py")
    finally:
        if saved is not None:
            sys.modules["core.lab.models"] = saved


def as_previous_config(training: ModuleType, config: Any, **changes: Any) -> Any:
    """Today's TrainConfig (with `changes`) as the copied loop's own TrainConfig: renamed settings under their
    old names; a setting the copied loop predates must be at today's default, where it changes nothing."""
    settings = {**config.to_dict(), **changes}
    model_fields = {field.name for field in dataclasses.fields(training.ModelConfig)}
    model = {RENAMED.get(key, key): value for key, value in settings.pop("model").items()}
    train_fields = {field.name for field in dataclasses.fields(training.TrainConfig)}
    defaults = type(config)().to_dict()
    moved = sorted(key for key in set(settings) - train_fields if settings[key] != defaults[key])
    if moved:
        raise ValueError(f"the previous loop has no setting {', '.join(moved)}: leave it at its default")
    kept = {key: value for key, value in settings.items() if key in train_fields}
    return training.TrainConfig(model={k: v for k, v in model.items() if k in model_fields}, **kept)


def trainer(training: ModuleType) -> Callable[..., dict[str, Any]]:
    """The copied loop's `train`, taking today's TrainConfig: a trainer for core.lab.runs."""

    def train(windows: Any, model_name: str, config: Any, seed: int, *more: Any, **options: Any):
        return training.train(windows, model_name, as_previous_config(training, config), seed, *more, **options)

    return train
