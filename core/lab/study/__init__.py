"""The study: a comparison that can answer "does positional encoding help?" (statistics: core.lab.stats.intervals).

    study = run_study(StudyPlan(recordings, design="time-cv", models=["A", "B"], seeds=range(6)))
    compare(study, "A", "B", metric="accuracy", margin=2.0)   # diff, ci95, ci90, mde80, p, verdict, sentence

`python -m core.study` runs one from the command line (core.lab.study.cli) and writes its JSON
(core.lab.study.contract).
"""

from __future__ import annotations

from core.lab.study.comparisons import compare, compare_all, comparisons_table
from core.lab.study.contract import load_study, read_study, save_study, validate_study
from core.lab.study.runner import StudyPlan, run_study

__all__ = [
    "StudyPlan",
    "compare",
    "compare_all",
    "comparisons_table",
    "load_study",
    "read_study",
    "run_study",
    "save_study",
    "validate_study",
]
