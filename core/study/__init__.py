"""The study: a comparison that can answer "does positional encoding help?" (see core.study.analysis).

    study = run_study(StudyPlan(recordings, split="time-cv", models=["A", "B"], seeds=range(6)))
    compare(study, "A", "B", metric="accuracy", margin=2.0)   # diff, ci95, ci90, mde80, p, verdict, sentence

`python -m core.study` runs one from the command line and writes its JSON (core.study.contract). Names resolve
lazily, so the statistics (core.study.analysis) import without the training machinery.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "compare": "core.study.comparisons",
    "compare_all": "core.study.comparisons",
    "comparisons_table": "core.study.comparisons",
    "load_study": "core.study.contract",
    "read_study": "core.study.contract",
    "save_study": "core.study.contract",
    "validate_study": "core.study.contract",
    "StudyPlan": "core.study.runner",
    "run_study": "core.study.runner",
}
__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'core.study' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
