"""Verbatim copies of core/training.py and core/models.py from the commit issue 15 (a faster training loop)
starts at, so bench/train.py can time the previous loop beside the new one in the same run.

`load()` imports them as a pair: the copied training module's `from core.lab.models import ...` binds to the
copied models module, not to today's core.lab.models.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent


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
