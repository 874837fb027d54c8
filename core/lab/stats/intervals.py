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
Caveat: the folds' training sets overlap, which can correlate fold means (Nadeau & Bengio, 2003); this interval
assumes they do not. With repeats of the K-fold partition it under-covers, and core.lab.stats.resampled gives the
corrected resampled t instead (each Interval names its `method`). `tests/test_study_analysis.py` and
`bench/study_stats.py` check coverage, type-I error and power on simulated studies with seed, fold and window
components and a known truth.

Units: every number (diff, CIs, margin, mde80) is in percentage points, 100 x a difference of fractions; for
log loss, 0.01 nats, and lower is better, so "better" means a negative difference there.

`verdict` gives the value (one of core.lab.stats.words.VERDICTS, the module that words it: the sentence, the
nuance against the margin); `bonferroni_confidence` sizes the intervals of secondary comparisons. Differences of
fractions lie within ±100 points (`metric_bound`), so intervals and detectable differences stop there.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from core.lab.stats.words import BETTER, CANNOT_TELL, EQUIVALENT, WORSE

ACCURACY_BOUND = 100.0  # points: the largest difference two fractions in [0, 1] can have
BOUNDED_METRICS = ("accuracy", "balanced_accuracy", "f1", "precision", "recall")  # fractions; log loss is not


def metric_bound(metric: str) -> float | None:
    """The largest |difference| in points a metric allows: ACCURACY_BOUND for fractions, None for log loss."""
    return ACCURACY_BOUND if metric in BOUNDED_METRICS else None


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
    method: str = "fold means taken as independent"  # which interval this is, in words (the sentence names it)
    repeats: int = 1  # repeats of the K-fold partition (core.lab.stats.resampled); folds is K per repeat
    # the largest |difference| the metric allows (100 points for accuracy; metric_bound):
    # ci and mde80 stop there, and `clipped` says whether they had to; None: unbounded (log loss)
    bound: float | None = None

    def ci(self, confidence: float) -> list[float] | None:
        """[low, high] of the difference at `confidence` on the t reference, within ±bound, or None without a
        spread."""
        if self.se is None:
            return None
        half = stats.t.ppf(0.5 + confidence / 2, self.df) * self.se
        low, high = self.diff - half, self.diff + half
        if self.bound is None:
            return [low, high]
        return [max(low, -self.bound), min(high, self.bound)]

    @property
    def clipped(self) -> bool:
        """Whether the 95 % CI (the widest a sentence shows) or mde80 reached past ±bound and was cut there."""
        if self.bound is None or self.se is None:
            return False
        free = dataclasses.replace(self, bound=None)
        low, high = free.ci(0.95)
        return low < -self.bound or high > self.bound or free.mde80 > self.bound

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
        detectable = float((stats.t.ppf(0.975, self.df) + stats.t.ppf(0.80, self.df)) * self.se)
        return detectable if self.bound is None else min(detectable, self.bound)


def bounded(interval: Interval, metric: str) -> Interval:
    """`interval` reported within what `metric` allows (±100 points for accuracy and the other fractions)."""
    return dataclasses.replace(interval, bound=metric_bound(metric))


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
    parts = Components(math.sqrt(fold_var), math.sqrt(seed_var))
    method = "fold means taken as independent" if folds > 1 else "training seeds only"
    return Interval(float(d.mean()), se, df, folds, seeds, parts, method=method)


def verdict(interval: Interval, margin: float, lower_is_better: bool = False) -> str:
    """equivalent if the 90 % CI lies inside (-margin, +margin); else better if the 95 % CI lies above 0 (below,
    when lower is better); else worse if it lies on the other side; else neither (CANNOT_TELL: the data cannot tell)."""
    ci90, ci95 = interval.ci(0.90), interval.ci(0.95)
    if ci90 is None:
        return CANNOT_TELL
    if -margin < ci90[0] and ci90[1] < margin:
        return EQUIVALENT
    low, high = ci95
    if (low > 0 and not lower_is_better) or (high < 0 and lower_is_better):
        return BETTER
    if (high < 0 and not lower_is_better) or (low > 0 and lower_is_better):
        return WORSE
    return CANNOT_TELL


def bonferroni_confidence(level: float, m: int) -> float:
    """The confidence level of each of m intervals so that all m hold together with `level`:
    1 - (1 - level) / m (0.95 with 5 comparisons -> 0.99)."""
    if not 0 < level < 1 or m < 1:
        raise ValueError(f"level must lie in (0, 1) and m be at least 1, got level={level}, m={m}")
    return 1 - (1 - level) / m


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment of `p_values` (same order back), each capped at 1."""
    order = np.argsort(p_values)
    adjusted = np.empty(len(p_values))
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return [float(v) for v in adjusted]
