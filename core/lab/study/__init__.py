"""The study: a comparison that can answer "does positional encoding help?" (statistics: core.lab.stats.intervals).

    study = run_study(StudyPlan(recordings, design="time-cv", models=["A", "B-noPE", "B"], seeds=range(6), repeats=3))
    compare(study, "B-noPE", "B", metric="accuracy", margin=2.0)   # diff, ci95, ci90, mde80, p, verdict, sentence

The primary comparison is B vs B-noPE (the encoding alone); study["decomposition"] splits B - A into the
embedding's and the encoding's effects (core.lab.study.comparisons). A checkpoint (StudyPlan.checkpoint,
core.lab.study.checkpoint) lets a stopped study resume.

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
