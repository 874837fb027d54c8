"""How long an experiment or a study will take before it starts, and whether one press of the page may start it.

One rule for both: runs x the training windows of one run x the epoch cap, at the measured training speed,
`workers` runs side by side. The training windows are counted from the real cut (the plan's window starts, the
study's folds), not guessed from a share of the recordings, so a window, a stride or a design that leaves
samples unused is counted as it will train. Early stopping usually ends runs sooner: the estimate is an
upper bound of the training, not a promise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.lab.report import plural
from core.lab.study.folds import training_window_counts
from core.lab.vibration.types import Recording
from core.lab.vibration.windows import count_training_windows
from core.limits import MAX_PAGE_RUNS, MAX_PAGE_SECONDS

# training windows per second of one run on one CPU thread, validation passes included, for 1024-sample
# windows (the shipped CWRU 0 HP time-cv study, two runs side by side: median 4,960 for A, 4,740 for B);
# shorter windows go proportionally faster
WINDOWS_PER_SECOND_1024 = 4_800


def windows_per_second(window: int) -> float:
    """Training windows one run gets through per second at this window length (shorter is proportionally faster)."""
    return WINDOWS_PER_SECOND_1024 * 1024 / window


def expected_seconds(
    n_training_windows: float, runs: int, epochs: int, windows_per_second: float, workers: int = 1
) -> float:
    """Seconds for `runs` runs of `n_training_windows` windows each, every run at most `epochs` epochs,
    `workers` of them side by side."""
    return runs * n_training_windows * epochs / windows_per_second / max(1, workers)


def plan_training_windows(recordings: Sequence[Recording], cutting: Mapping[str, Any]) -> int:
    """The training windows of one run of a plan: the recordings cut as the plan cuts them (`cutting`: the
    plan's make_windows keyword arguments, Plan.windowing)."""
    return count_training_windows(list(recordings), **cutting)


def fold_training_windows(
    recordings: Sequence[Recording], design: str, window: int, folds: int = 5, stride: int | None = None
) -> list[int]:
    """The training windows of each fold of a study (its design, window, fold count and stride), cut as the
    study will cut them."""
    return training_window_counts(design, recordings, window, folds, stride)


# The default press asks the short answer's question, B against B-noPE (the encoding alone), and trains A beside
# them when the press with A is told at most DEFAULT_PRESS_SECONDS: about the wait the two-model press (A and B)
# was told on a busy 2-core server (66-75 s, issue 33), so that A never makes the default press much longer than it
# was; a quiet 2-core server trains all three in about 45 s.
QUESTION_MODELS = ("B-noPE", "B")
BESIDE_MODEL = "A"
DEFAULT_PRESS_SECONDS = 90.0


def press_models(seconds_with_beside: float | None) -> tuple[str, ...]:
    """The default press's models: A, B-noPE and B when the press with A is told at most DEFAULT_PRESS_SECONDS
    (`seconds_with_beside`), else B-noPE and B (also when its wait is unknown: None)."""
    if seconds_with_beside is not None and seconds_with_beside <= DEFAULT_PRESS_SECONDS:
        return (BESIDE_MODEL, *QUESTION_MODELS)
    return QUESTION_MODELS


SECONDS_UNDER = 180  # a wait shorter than this is told in seconds: whole minutes were off by up to 50 % there


def describe_wait(seconds: float) -> str:
    """A wait in words: "about 40 s" under a minute, "about 75 s" (to 5 s) under three minutes, "about 4 min"
    from three minutes on. Whole minutes below three told a 66 s press "about 1 min" and a 75 s one "about 2 min"
    (issue 31)."""
    whole = max(1, round(seconds))
    if whole < 60:
        return f"about {whole} s"
    if 5 * round(seconds / 5) < SECONDS_UNDER:
        return f"about {5 * round(seconds / 5)} s"
    return f"about {round(seconds / 60)} min"


def page_refusal(runs: int, seconds: float) -> str | None:
    """Why one press of a shared page may not start `runs` runs of about `seconds` in all, in one line; None
    when they fit its budget (core.limits). A page with a cluster to send runs to does not ask."""
    if runs <= MAX_PAGE_RUNS and seconds <= MAX_PAGE_SECONDS:
        return None
    return (
        f"Too large for a shared page ({plural(runs, 'training run')}, {describe_wait(seconds)}; one press starts at "
        f"most {plural(MAX_PAGE_RUNS, 'run')} or {describe_limit(MAX_PAGE_SECONDS)}), and this server has no "
        "cluster to send it to. Run it where you have the cores:"
    )


def describe_limit(seconds: float) -> str:
    """A time limit in words: "10 minutes", "1 minute", and in seconds under a minute or off the minute ("40 s",
    "90 s")."""
    if seconds >= 60 and seconds % 60 == 0:
        return plural(int(seconds // 60), "minute")
    return f"{seconds:g} s"
