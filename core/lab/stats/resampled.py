"""Intervals for repeated K-fold studies, whose folds share training data.

A study with R repeats of a K-fold partition and S seeds gives a (repeats, folds, seeds) table of paired
differences in points, `cells`. Its J = R K fold means are not independent: any two folds of one repeat train
on (K - 2) / (K - 1) of the same training windows, and a later repeat tests the same windows again, so the
fold means move together and their spread understates how much the mean difference would move on new data.
`independent_interval` ignores this (today's `paired_interval` on the (R K, S) table); it is kept as the
reference that under-covers. `resampled_interval` is the corrected resampled t of Nadeau & Bengio (2003),
as Bouckaert & Frank (2004) use it for repeated K-fold cross-validation:

    M_j = mean over seeds of cells[r, k, :],  j = (r, k),  J = R K values
    diff = mean of M_j,  var = sample variance of M_j (ddof 1)
    SE = sqrt((1 / J + n_test / n_train) * var),  t reference on J - 1 degrees of freedom.

The n_test / n_train term stands for the correlation the shared training data put between fold means
(it is right when that correlation is n_test / (n_test + n_train)). The ratio is counted in windows: for each
fold, its test windows over its training windows (validation and gap windows counted in neither), averaged
over the folds of the study. Plain K-fold gives 1 / (K - 1); the study's time-cv, which also holds a block out
for validation, gives about 1 / (K - 2). tests/test_resampled.py checks coverage on simulated studies whose
folds share training data (core.lab.stats.simulation.simulate_overlapping_folds).

`leave_one_fold_out` shows how much one (repeat, fold) moves the answer; `error_rate_ratio` states a
difference near 100 % accuracy as a ratio of errors ("B makes 1.9x A's errors").
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from core.lab.stats.intervals import Components, Interval, paired_interval

CORRECTED = "corrected resampled t (Nadeau and Bengio), {repeats} x {folds} folds"
INDEPENDENT = "folds taken as independent, {repeats} x {folds} folds"


def _cells(cells: np.ndarray) -> np.ndarray:
    d = np.asarray(cells, dtype=np.float64)
    if d.ndim != 3 or d.size == 0 or not np.all(np.isfinite(d)):
        raise ValueError(
            f"cells must be a complete (repeats, folds, seeds) table of finite numbers, got shape {d.shape}"
        )
    return d


def _check_ratio(test_train_ratio: float) -> None:
    if not (math.isfinite(test_train_ratio) and test_train_ratio >= 0):
        raise ValueError(f"test_train_ratio must be a finite number >= 0 (n_test / n_train), got {test_train_ratio}")


def corrected_se(fold_means: np.ndarray, test_train_ratio: float) -> float | None:
    """sqrt((1/J + n_test/n_train) * sample variance) of J fold means; None with fewer than two."""
    m = np.asarray(fold_means, dtype=np.float64).ravel()
    if m.size < 2:
        return None
    return math.sqrt((1 / m.size + test_train_ratio) * float(np.var(m, ddof=1)))


def resampled_interval(cells: np.ndarray, test_train_ratio: float) -> Interval:
    """The corrected resampled t interval of a (repeats, folds, seeds) table of paired differences in points
    (see the module docstring): J = R K fold means over seeds, var = their sample variance,
    SE = sqrt((1/J + test_train_ratio) * var), t on J - 1 df. `test_train_ratio` is n_test / n_train in windows
    of a fold, averaged over folds. `components` are read off the (R K, S) table as `paired_interval` does."""
    d = _cells(cells)
    _check_ratio(test_train_ratio)
    repeats, folds, seeds = d.shape
    flat = d.reshape(repeats * folds, seeds)
    se = corrected_se(flat.mean(axis=1), test_train_ratio)
    parts = paired_interval(flat).components if flat.size > 1 else Components(0.0, 0.0)
    method = CORRECTED.format(repeats=repeats, folds=folds)
    df = repeats * folds - 1 if se is not None else 0
    return Interval(float(d.mean()), se, df, folds, seeds, parts, method=method, repeats=repeats)


def independent_interval(cells: np.ndarray) -> Interval:
    """`paired_interval` of the (repeats x folds, seeds) table: the interval that takes every fold mean as an
    independent draw (it under-covers when folds share training data; kept as the reference)."""
    d = _cells(cells)
    repeats, folds, seeds = d.shape
    flat = paired_interval(d.reshape(repeats * folds, seeds))
    method = INDEPENDENT.format(repeats=repeats, folds=folds)
    return Interval(flat.diff, flat.se, flat.df, folds, seeds, flat.components, method=method, repeats=repeats)


def leave_one_fold_out(cells: np.ndarray, test_train_ratio: float, bound: float | None = None) -> list[dict]:
    """For each (repeat, fold) left out, in order: {"repeat", "fold", "diff", "ci95"} of the other J - 1 fold
    means by the corrected resampled t (J - 2 df), within ±bound when one is given (100 points for accuracy);
    ci95 is None when fewer than two fold means remain."""
    d = _cells(cells)
    _check_ratio(test_train_ratio)
    repeats, folds, _ = d.shape
    means = d.mean(axis=2).ravel()  # (R K,), repeat-major
    rows = []
    for j in range(means.size):
        rest = np.delete(means, j)
        diff = float(rest.mean()) if rest.size else None
        se = corrected_se(rest, test_train_ratio)
        ci95 = None
        if se is not None:
            half = float(stats.t.ppf(0.975, rest.size - 1)) * se
            ci95 = [diff - half, diff + half] if bound is None else [max(diff - half, -bound), min(diff + half, bound)]
        rows.append({"repeat": j // folds, "fold": j % folds, "diff": diff, "ci95": ci95})
    return rows


def error_rate_ratio(accuracy_a: float, accuracy_b: float) -> float | None:
    """(1 - accuracy_b) / (1 - accuracy_a): how many of a's errors b makes (accuracies as fractions in [0, 1]);
    None when a makes no error, so no ratio exists."""
    for name, value in (("accuracy_a", accuracy_a), ("accuracy_b", accuracy_b)):
        if not (0.0 <= value <= 1.0):
            raise ValueError(f"{name} must be a fraction in [0, 1], got {value}")
    if accuracy_a == 1.0:
        return None
    return (1.0 - accuracy_b) / (1.0 - accuracy_a)
