"""Is model b better than model a? The comparison of a study: a difference, its intervals, what the design
could detect, and a verdict that claims no more than that.

A study trains every model on every (fold, seed): folds are blocks of the recordings cut in time (or held-out
loads, or fault sizes), seeds are training runs. For each (fold, seed) both models are scored on the same test
windows, so the difference d[f, s] = metric(b) - metric(a) is paired: how hard each window is cancels.

The interval has to hold two sources of variation: the training seed, and which windows are tested. Both act
through the fold means M_f = mean over seeds of d[f, s]: a fold mean moves with its seeds' training noise and
with the windows (and time block) its test set happens to hold. The folds test disjoint windows, so the fold
means are taken as independent draws, and

    diff = mean of d[f, s],   SE = sd(M_f) / sqrt(F),   t reference on F - 1 degrees of freedom.

This is the variance-components estimate of Var(diff) = (sigma_fold^2 + sigma_seed^2 / S) / F, read off the
fold means, so it needs no assumption about how large either part is; a percentile bootstrap over a handful
of seeds, by contrast, under-covers. The parts (`Components`) are estimated too: the seed part from the spread
of d within each fold (F (S - 1) degrees of freedom), the fold part from what the fold means spread beyond it,
floored at 0. When that floor binds, a few fold means happened to agree better than their own seeds allow, and
the seed part alone sets the standard error (on its own degrees of freedom) rather than a chance agreement.
They give `mde80`, the smallest difference this design detects with 80 % power, and the half-width another
number of folds and seeds would give. With one fold (the quick comparison's single split) only the seeds vary:
the interval is then on S - 1 degrees of freedom and covers training noise alone, and the sentence says so.
Caveat: the folds' training sets overlap, which can correlate fold means (Nadeau & Bengio, 2003); the interval
assumes they do not. `tests/test_study_analysis.py` and `bench/study_stats.py` check coverage, type-I error and
power on simulated studies with seed, fold and window components and a known truth.

Units: every number (diff, CIs, margin, mde80) is in percentage points, 100 x a difference of fractions; for
log loss, 0.01 nats, and lower is better, so "better" means a negative difference there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

LOWER_IS_BETTER = ("log_loss",)


@dataclass(frozen=True)
class Components:
    """Variance components of a paired difference, in points: `fold_sd` is how much fold means differ beyond
    their seeds' noise (the windows and time block a fold tests), `seed_sd` the spread of one run's difference
    around its fold's mean (training noise, and the runs' share of window noise)."""

    fold_sd: float
    seed_sd: float

    def standard_error(self, folds: int, seeds: int) -> float:
        """The standard error of the mean difference of a design with this many folds and seeds."""
        return math.sqrt((self.fold_sd**2 + self.seed_sd**2 / seeds) / folds)


@dataclass(frozen=True)
class Interval:
    """The mean difference of a (fold, seed) table and what it supports, in points."""

    diff: float
    se: float | None  # None: one run, no spread to measure
    df: int
    folds: int
    seeds: int
    components: Components

    def ci(self, confidence: float) -> list[float] | None:
        """[low, high] of the difference at `confidence` on the t reference, or None without a spread."""
        if self.se is None:
            return None
        half = stats.t.ppf(0.5 + confidence / 2, self.df) * self.se
        return [self.diff - half, self.diff + half]

    @property
    def p(self) -> float | None:
        """Two-sided p-value of diff = 0."""
        if self.se is None:
            return None
        if self.se == 0:
            return 1.0 if self.diff == 0 else 0.0
        return float(2 * stats.t.sf(abs(self.diff) / self.se, self.df))

    @property
    def mde80(self) -> float | None:
        """The smallest true difference a two-sided 5 % test of this design detects with 80 % power."""
        if self.se is None:
            return None
        return float((stats.t.ppf(0.975, self.df) + stats.t.ppf(0.80, self.df)) * self.se)


def paired_interval(differences: np.ndarray) -> Interval:
    """The interval of a (folds, seeds) table of paired differences in points (see the module docstring)."""
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 2 or d.size == 0 or not np.all(np.isfinite(d)):
        raise ValueError(f"differences must be a complete (folds, seeds) table of finite numbers, got shape {d.shape}")
    folds, seeds = d.shape
    seed_var = float(np.mean(np.var(d, axis=1, ddof=1))) if seeds > 1 else 0.0
    if folds > 1:
        between = float(np.var(d.mean(axis=1), ddof=1))
        fold_var = max(0.0, between - seed_var / seeds)
        if fold_var > 0 or seeds == 1:
            se, df = math.sqrt(between / folds), folds - 1
        else:  # the fold means agree better than their own seeds allow: the seed part alone sets the floor
            se, df = math.sqrt(seed_var / seeds / folds), folds * (seeds - 1)
    elif seeds > 1:
        fold_var, se, df = 0.0, math.sqrt(seed_var / seeds), seeds - 1
    else:
        fold_var, se, df = 0.0, None, 0
    return Interval(float(d.mean()), se, df, folds, seeds, Components(math.sqrt(fold_var), math.sqrt(seed_var)))


def verdict(interval: Interval, margin: float, lower_is_better: bool = False) -> str:
    """equivalent if the 90 % CI lies inside (-margin, +margin); else better if the 95 % CI lies above 0 (below,
    when lower is better); else worse if it lies on the other side; else inconclusive."""
    ci90, ci95 = interval.ci(0.90), interval.ci(0.95)
    if ci90 is None:
        return "inconclusive"
    if -margin < ci90[0] and ci90[1] < margin:
        return "equivalent"
    low, high = ci95
    if (low > 0 and not lower_is_better) or (high < 0 and lower_is_better):
        return "better"
    if (high < 0 and not lower_is_better) or (low > 0 and lower_is_better):
        return "worse"
    return "inconclusive"


def design_words(interval: Interval, population: str) -> str:
    """ "6 seeds × 5 folds, 1,126 test windows of these ten recordings" (or one split's caveat)."""
    seeds = f"{interval.seeds} seed{'s' if interval.seeds != 1 else ''}"
    if interval.folds == 1:
        return f"{seeds} on one split, {population}; the test windows are fixed, so only training noise is counted"
    return f"{seeds} × {interval.folds} folds, {population}"


def sentence(a: str, b: str, metric: str, interval: Interval, margin: float, word: str, population: str) -> str:
    """The verdict in words: the design and the population it speaks for, and no more than the data allow."""
    design = design_words(interval, population)
    what = "" if metric == "accuracy" else f" in {metric.replace('_', ' ')}"
    unit = "points" if metric not in LOWER_IS_BETTER else "x 0.01 nats"
    if interval.se is None:
        return (
            f"Inconclusive: one run of each gives no interval ({b} - {a}{what} {interval.diff:+.1f} {unit}; {design})."
        )
    low95, high95 = interval.ci(0.95)
    low90, high90 = interval.ci(0.90)
    if word == "equivalent":
        return (
            f"{b} and {a} are equivalent within ±{margin:g} {unit}{what}: {interval.diff:+.1f} "
            f"(90 % CI {low90:+.1f} to {high90:+.1f}; {design})."
        )
    if word in ("better", "worse"):
        small = abs(interval.diff) < margin
        size = "a small but clear " if small else ""
        return (
            f"{b} is {word} than {a} by {size}{interval.diff:+.1f} {unit}{what} "
            f"(95 % CI {low95:+.1f} to {high95:+.1f}; {design})."
        )
    return (
        f"Inconclusive: {b} - {a}{what} {interval.diff:+.1f} {unit} (95 % CI {low95:+.1f} to {high95:+.1f}); "
        f"this study could only detect differences of {interval.mde80:.1f} {unit} or more ({design})."
    )


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment of `p_values` (same order back), each capped at 1."""
    order = np.argsort(p_values)
    adjusted = np.empty(len(p_values))
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return [float(v) for v in adjusted]
