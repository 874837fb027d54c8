"""The statistics of the Fault lab's tables: mean ± sd over seeds, a table cell, the test windows of a set of
runs, and the constants every comparison starts from (the reference model, the primary pair, the margin). Two
models are compared by core.lab.study.comparisons, an experiment as a study with one fold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

REFERENCE_MODEL = "A"
# the study's primary question, asked on one split too when both ran: B against B-noPE, the encoding alone
PRIMARY_PAIR = ("B-noPE", "B")
DEFAULT_MARGIN = 2.0  # points: the equivalence margin of every comparison (results/study_protocol.md says why)


def mean_sd(values: Sequence[float]) -> dict[str, Any]:
    """{"mean", "sd", "n"}; sd uses ddof = 1 and is None for a single value (no spread to measure)."""
    values = np.asarray(values, dtype=np.float64)
    n = int(values.size)
    return {
        "mean": float(values.mean()) if n else None,
        "sd": float(values.std(ddof=1)) if n >= 2 else None,
        "n": n,
    }


def cell(values: Sequence[float]) -> dict[str, Any]:
    """{"mean", "sd", "n", "values"}: the summary of one table cell over seeds, and the seeds' values."""
    return {**mean_sd(values), "values": [float(v) for v in values]}


def count_test_windows(runs: Sequence[Mapping[str, Any]]) -> int | None:
    """Test windows per run, read from the confusion matrices (they agree when runs share their windows)."""
    sizes = {int(np.sum(run["confusion_matrix"])) for run in runs if "confusion_matrix" in run}
    return max(sizes) if sizes else None
