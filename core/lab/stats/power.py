"""How small a difference a test set can show, before any training: the check that stops a run on too few test
windows from reporting a number that cannot answer anything.

Two models scored on n test windows, both near accuracy p, differ by a true d (a fraction). A two-sided test at
level alpha finds it with probability `power` when

    d >= (z_(1 - alpha/2) + z_power) * sqrt(2 p (1 - p) / n),

the normal approximation to two binomial proportions (each model's accuracy has variance p (1 - p) / n). At
p = 0.9, alpha = 5 % and 80 % power, 100 test windows detect 11.9 points and 36 windows 19.8; 35 windows or
fewer cannot detect 20 points (WIDE_POINTS), and the Fault lab and both CLIs then say so before training
(`too_few_windows`). The models share their test windows, which helps a paired test somewhat; the estimate is a
guide to whether an answer is possible, not the interval a finished run reports.

Differences of accuracies (and of balanced accuracy, F1, precision, recall: fractions in [0, 1]) lie within
±100 points, so intervals and detectable differences are reported within that bound (ACCURACY_BOUND,
core.lab.stats.intervals.metric_bound; the sentences say so).
"""

from __future__ import annotations

import math

from scipy import stats

from core.lab.stats.intervals import ACCURACY_BOUND
from core.lab.stats.words import too_few_windows_line

WIDE_POINTS = 20.0  # a detectable difference above this gets one line and a confirmation before training
ASSUMED_ACCURACY = 0.9
POWER, ALPHA = 0.8, 0.05


def detectable_difference(
    n_test: int, accuracy: float = ASSUMED_ACCURACY, power: float = POWER, alpha: float = ALPHA
) -> float:
    """The smallest true difference in points between two models' accuracies (both near `accuracy`), each
    scored on `n_test` windows, that a two-sided test at level `alpha` finds with probability `power` (see the
    module docstring); not clipped: compare it with ACCURACY_BOUND to say so."""
    if isinstance(n_test, bool) or not isinstance(n_test, int) or n_test < 1:
        raise ValueError(f"n_test must be a positive number of test windows, got {n_test!r}")
    if not 0 < accuracy < 1 or not 0 < power < 1 or not 0 < alpha < 1:
        raise ValueError(f"accuracy, power and alpha must lie in (0, 1), got {accuracy}, {power}, {alpha}")
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return float(100 * z * math.sqrt(2 * accuracy * (1 - accuracy) / n_test))


def reaches_bound(ends: list[float] | None, bound: float = ACCURACY_BOUND) -> bool:
    """Whether a stored interval [low, high] was cut at ±bound (an end that lies on it)."""
    return ends is not None and any(abs(end) >= bound for end in ends)


def too_few_windows(n_test: int, what: str, advice: str) -> str | None:
    """One line when `n_test` test windows cannot detect WIDE_POINTS (what it could detect, and `advice`, what to
    do); None when they can. `what`: "this experiment" or "this study"."""
    detectable = detectable_difference(n_test)
    if detectable <= WIDE_POINTS:
        return None
    windows = f"{n_test:,} test window{'' if n_test == 1 else 's'}"
    return too_few_windows_line(windows, what, detectable, ACCURACY_BOUND, advice)


EXPERIMENT_ADVICE = "longer recordings, a smaller window, or a study, which tests every window once"
STUDY_ADVICE = "longer recordings or a smaller window"
