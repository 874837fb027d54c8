"""Simulated studies with a known truth, to check the study's statistics (tests and bench/study_stats.py).

Each window of each fold is classified right or wrong by each model, run by run, from a probit model with the
components a real study has:

    eta_a = mu      + window + fold_a + run_a             (per fold f, window w, seed s)
    eta_b = mu + dt + window + fold_b + run_b + window_b  P(right) = Phi(eta)

`window` is the difficulty both models share, `window_b` how differently b finds a window (the model x window
part), `fold_*` a time block being easier or harder for one model, `run_*` the training seed. With normal
components the expected accuracy is closed form, Phi(mu / sqrt(1 + variance)), so the true difference in
points is exact and `shift_for` finds the dt that gives a wanted one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats


@dataclass(frozen=True)
class Components:
    """Standard deviations on the probit scale; the defaults are sized from CWRU 0 HP runs (accuracy near
    98 %, a run's accuracy moving about 2 points with its seed, a few windows every model gets wrong)."""

    accuracy: float = 0.98  # model a's expected accuracy
    window: float = 1.0
    window_b: float = 0.3
    fold: float = 0.15
    run: float = 0.4

    def total_a(self) -> float:
        """The standard deviation of model a's latent score: unit noise plus every component."""
        return math.sqrt(1 + self.window**2 + self.fold**2 + self.run**2)

    def total_b(self) -> float:
        """The same for model b, with its own part of the window component."""
        return math.sqrt(1 + self.window**2 + self.window_b**2 + self.fold**2 + self.run**2)

    @property
    def mu(self) -> float:
        """The latent mean that gives model a its expected accuracy."""
        return float(stats.norm.ppf(self.accuracy) * self.total_a())

    def true_difference(self, shift: float) -> float:
        """Expected accuracy of b minus a, in points, for b's shift `shift` on the probit scale."""
        return 100 * float(stats.norm.cdf((self.mu + shift) / self.total_b()) - self.accuracy)

    def shift_for(self, points: float) -> float:
        """The probit shift of b that makes the true difference `points`."""
        return float(optimize.brentq(lambda shift: self.true_difference(shift) - points, -10, 10))


def simulate_differences(
    rng: np.random.Generator, studies: int, folds: int, seeds: int, windows: int, points: float, parts: Components
) -> np.ndarray:
    """(studies, folds, seeds) tables of accuracy(b) - accuracy(a) in points, each from simulated per-window
    correctness of `windows` test windows per fold, at a true difference of `points`."""
    shift = parts.shift_for(points)
    shape = (studies, folds, 1, windows)
    shared = parts.window * rng.standard_normal(shape)  # the same windows' difficulty for both models
    eta_a = parts.mu + shared + parts.fold * rng.standard_normal((studies, folds, 1, 1))
    eta_a = eta_a + parts.run * rng.standard_normal((studies, folds, seeds, 1))
    eta_b = parts.mu + shift + shared + parts.window_b * rng.standard_normal(shape)
    eta_b = eta_b + parts.fold * rng.standard_normal((studies, folds, 1, 1))
    eta_b = eta_b + parts.run * rng.standard_normal((studies, folds, seeds, 1))
    right_a = rng.random(eta_a.shape) < stats.norm.cdf(eta_a)  # (studies, folds, seeds, windows)
    right_b = rng.random(eta_b.shape) < stats.norm.cdf(eta_b)
    return 100 * (right_b.mean(axis=3) - right_a.mean(axis=3))
