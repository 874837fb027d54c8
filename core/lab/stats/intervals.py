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

Words: `verdict` gives the value (better / worse / equivalent / inconclusive); `verdict_words` its nuance
against the margin; `study_sentence` (or `sentence(..., roles=MODEL_ROLES)`) says what each model is, the
error-rate ratio, the design and which interval was used. `bonferroni_confidence` sizes the intervals of
secondary comparisons.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats

from core.lab.stats.power import clipped_words, metric_bound

LOWER_IS_BETTER = ("log_loss",)
MODEL_ROLES = {  # what each model is, in the few words a verdict sentence names it by (core.lab.models builds them)
    "A": "raw patches, no encoding",
    "A+PE": "raw patches + sinusoidal encoding",
    "B-noPE": "embedding, no encoding",
    "B": "embedding + sinusoidal encoding",
    "B-learned": "embedding + learned position table",
    "B-concat": "embedding, sinusoidal encoding concatenated",
    "CNN": "1-D CNN baseline",
}


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
    # the largest |difference| the metric allows (100 points for accuracy; core.lab.stats.power.metric_bound):
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


def clip_words(interval: Interval) -> str:
    """What the sentence adds when the interval or the detectable difference was cut at the bound, else ""."""
    return clipped_words(interval.bound) if interval.clipped else ""


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


def beyond_margin(interval: Interval, margin: float) -> bool:
    """Whether the 95 % CI lies wholly outside ±margin (a better / worse verdict "by more than the margin");
    False when it crosses the margin (the difference may be smaller than the margin) or there is no interval."""
    ci95 = interval.ci(0.95)
    return ci95 is not None and (ci95[0] > margin or ci95[1] < -margin)


def verdict_words(interval: Interval, margin: float, lower_is_better: bool = False) -> str:
    """The verdict of the issue's rules, in order, in words (the verdict VALUE stays `verdict(...)`):
    "equivalent" (90 % CI inside ±margin); "better/worse by more than the margin" (95 % CI excludes 0 and lies
    wholly beyond the margin); "better/worse, possibly by less than the margin" (95 % CI excludes 0 and crosses
    the margin); else "inconclusive" (the sentence then states the mde80)."""
    word = verdict(interval, margin, lower_is_better)
    if word not in ("better", "worse"):
        return word
    if beyond_margin(interval, margin):
        return f"{word} by more than the margin"
    return f"{word}, possibly by less than the margin"


def bonferroni_confidence(level: float, m: int) -> float:
    """The confidence level of each of m intervals so that all m hold together with `level`:
    1 - (1 - level) / m (0.95 with 5 comparisons -> 0.99)."""
    if not 0 < level < 1 or m < 1:
        raise ValueError(f"level must lie in (0, 1) and m be at least 1, got level={level}, m={m}")
    return 1 - (1 - level) / m


def design_words(interval: Interval, population: str) -> str:
    """ "6 seeds × 5 folds, 1,126 test windows of these ten recordings" (or one split's caveat)."""
    seeds = f"{interval.seeds} seed{'s' if interval.seeds != 1 else ''}"
    if interval.folds == 1 and interval.repeats == 1:
        return f"{seeds} on one split, {population}; the test windows are fixed, so only training noise is counted"
    repeats = f" × {interval.repeats} repeats" if interval.repeats > 1 else ""
    folds = f"{interval.folds} fold{'s' if interval.folds != 1 else ''}"
    return f"{seeds} × {folds}{repeats}, {population}"


def sentence(
    a: str,
    b: str,
    metric: str,
    interval: Interval,
    margin: float,
    word: str,
    population: str,
    *,
    roles: Mapping[str, str] | None = None,
    error_ratio: float | None = None,
    room: str | None = None,
) -> str:
    """The verdict in words: the design and the population it speaks for, and no more than the data allow.
    With `roles` (e.g. MODEL_ROLES) or `error_ratio`, the study's sentence (`study_sentence`): what each model
    is, the nuance of a better / worse verdict against the margin, the error-rate ratio, the room order has
    (`room`, core.lab.study.order_gap.room_words) and the interval used. Without them, the one-split sentence
    the experiment's results have always carried."""
    if roles is not None or error_ratio is not None:
        return study_sentence(
            a, b, metric, interval, margin, word, population, roles=roles, error_ratio=error_ratio, room=room
        )
    design = "; ".join(filter(None, (design_words(interval, population), clip_words(interval))))
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
            f"{b} is {word} than {a} by {size}{abs(interval.diff):.1f} {unit}{what} "  # the word carries the sign
            f"(95 % CI {low95:+.1f} to {high95:+.1f}; {design})."
        )
    return (
        f"Inconclusive: {b} - {a}{what} {interval.diff:+.1f} {unit} (95 % CI {low95:+.1f} to {high95:+.1f}); "
        f"this study could only detect differences of {interval.mde80:.1f} {unit} or more ({design})."
    )


def described(model: str, roles: Mapping[str, str] | None) -> str:
    """ "B (embedding + sinusoidal encoding)": the model and what it is, or the bare name outside `roles`."""
    role = (MODEL_ROLES if roles is None else roles).get(model)
    return f"{model} ({role})" if role else model


def _units(metric: str, margin: float) -> tuple[str, str, str]:
    """(" in f1" or "", the unit, "the 2-point margin") of a metric."""
    what = "" if metric == "accuracy" else f" in {metric.replace('_', ' ')}"
    if metric in LOWER_IS_BETTER:
        return what, "x 0.01 nats", f"the ±{margin:g} x 0.01 nats margin"
    return what, "points", f"the {margin:g}-point margin"


def _finding(b: str, metric: str, interval: Interval, margin: float, word: str) -> tuple[str, list[str]]:
    """The study sentence's statement, and the first items of its bracket (the interval it rests on)."""
    what, unit, margin_words = _units(metric, margin)
    diff = f"{interval.diff:+.1f} {unit}{what}"
    if interval.se is None:
        return f"inconclusive, {diff}", ["one run of each gives no interval"]
    low95, high95 = interval.ci(0.95)
    ci95 = f"95 % CI {low95:+.1f} to {high95:+.1f}"
    if word == "equivalent":
        low90, high90 = interval.ci(0.90)
        return f"equivalent within ±{margin:g} {unit}{what}, {interval.diff:+.1f}", [
            f"90 % CI {low90:+.1f} to {high90:+.1f}"
        ]
    if word in ("better", "worse"):
        if beyond_margin(interval, margin):
            return f"{b} is {word} by more than {margin_words}, {diff}", [ci95]
        return f"{b} is {word}, possibly by less than {margin_words}, {diff}", [ci95]
    mde = f"this study could only detect differences of {interval.mde80:.1f} {unit} or more"
    return f"inconclusive, {diff}", [ci95, mde]


def study_sentence(
    a: str,
    b: str,
    metric: str,
    interval: Interval,
    margin: float,
    word: str,
    population: str,
    *,
    roles: Mapping[str, str] | None = None,
    error_ratio: float | None = None,
    room: str | None = None,
) -> str:
    """The study's verdict sentence: "B (embedding + sinusoidal encoding) vs B-noPE (embedding, no encoding):
    B is worse, possibly by less than the 2-point margin, -1.2 points (95 % CI -2.3 to -0.1; B makes 1.9x
    B-noPE's errors; 6 seeds × 5 folds × 3 repeats, <population>; corrected resampled t ...)." `word` is the
    verdict value; `roles` defaults to MODEL_ROLES; `error_ratio` is (1 - acc_b) / (1 - acc_a) when given;
    `room`, the clause of the room order has, follows it when given (a study that ran spectrum-LR)."""
    statement, items = _finding(b, metric, interval, margin, word)
    items += [clip_words(interval)] if interval.clipped else []
    if error_ratio is not None:
        items.append(error_words(a, b, error_ratio))
    if room is not None:
        items.append(room)
    items += [design_words(interval, population), interval.method]
    return f"{described(b, roles)} vs {described(a, roles)}: {statement} ({'; '.join(items)})."


def error_words(a: str, b: str, error_ratio: float) -> str:
    """How many of a's errors b makes, in words: "B makes 1.9x A's errors"; a ratio that would print as 0.0x
    says what it is ("B makes no errors", "B makes under 0.05x A's errors")."""
    if error_ratio == 0:
        return f"{b} makes no errors"
    if error_ratio < 0.05:
        return f"{b} makes under 0.05x {a}'s errors"
    return f"{b} makes {error_ratio:.1f}x {a}'s errors"


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment of `p_values` (same order back), each capped at 1."""
    order = np.argsort(p_values)
    adjusted = np.empty(len(p_values))
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return [float(v) for v in adjusted]
