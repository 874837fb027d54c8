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
from scipy import optimize, special, stats


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


@dataclass(frozen=True)
class OverlapComponents(Components):
    """Standard deviations on the probit scale of a repeated K-fold study whose folds share training data.

    `train` is the effect of a fold's training set that both models share, `train_model` each model's own part of
    it (the part that moves their difference); both are sums over the data's blocks, so two folds that train on
    a shared fraction of the blocks have effects correlated by that fraction. `block` is how hard a tested time
    block of a recording is for both models, `block_b` how differently b finds it; `window`, `window_b` and
    `run` are as in Components, and `fold` (0 by default) any remaining independent per-fold part. The defaults
    keep A near 98 % and put most of the fold-to-fold movement in parts both models share, so A's and B's fold
    means correlate strongly (about 0.8 over the 15 fold means of 3 repeats x 5 folds, 120 windows a fold and 3
    seeds; the real CWRU 0 HP time-cv study measured 0.99 over 5 fold means, one hard block dominating it);
    the difference's fold means correlate through the shared training blocks and the retested windows."""

    window: float = 0.7
    fold: float = 0.0
    run: float = 0.2
    block: float = 1.5
    block_b: float = 0.3
    train: float = 1.5
    train_model: float = 0.4

    def total_a(self) -> float:
        """The standard deviation of model a's latent score: unit noise plus every component a has."""
        shared = self.window**2 + self.block**2 + self.train**2 + self.train_model**2
        return math.sqrt(1 + shared + self.fold**2 + self.run**2)

    def total_b(self) -> float:
        """The same for model b, with its own window and block parts."""
        return math.sqrt(self.total_a() ** 2 + self.window_b**2 + self.block_b**2)


def fold_assignment(rng: np.random.Generator, studies: int, repeats: int, folds: int, blocks: int) -> np.ndarray:
    """(studies, repeats, folds * blocks): the fold each of the data's blocks is tested in, per repeat; each
    repeat a fresh random partition into `folds` groups of `blocks` blocks."""
    groups = np.repeat(np.arange(folds), blocks)
    return rng.permuted(np.broadcast_to(groups, (studies, repeats, groups.size)), axis=-1)


def training_effects(
    rng: np.random.Generator, assignment: np.ndarray, folds: int, validation: bool, count: int
) -> np.ndarray:
    """(count, studies, repeats, folds) unit-variance training-set effects: each of `count` effects is a sum of
    per-block normals over the blocks fold (r, k) trains on, over sqrt(their number), so two folds correlate by
    the fraction of training blocks they share. Fold k tests group k and, with `validation`, validates on group
    k + 1 (mod K): both are left out of its training set."""
    studies, _, units = assignment.shape
    k = np.arange(folds)[:, None]  # (K, 1)
    held = assignment[:, :, None, :] == k  # (studies, R, K, U)
    if validation:
        held = held | (assignment[:, :, None, :] == (k + 1) % folds)
    train = (~held).astype(np.float64)
    z = rng.standard_normal((count, studies, units))
    return np.einsum("srku,csu->csrk", train, z) / np.sqrt(train.sum(axis=-1))


def simulate_overlapping_folds(
    rng: np.random.Generator,
    studies: int,
    repeats: int,
    folds: int,
    seeds: int,
    windows: int,
    points: float,
    parts: OverlapComponents,
    blocks: int = 4,
    validation: bool = True,
) -> dict[str, np.ndarray]:
    """Repeated K-fold studies whose folds share training data, at a true difference of `points`:
    {"diff": (studies, repeats, folds, seeds) accuracy(b) - accuracy(a) in points, "a", "b": each model's
    accuracy in points}. The data are folds x `blocks` blocks of windows // blocks windows each (a block: a time
    stretch of a recording); each repeat partitions the blocks into folds afresh, so a window is tested once per
    repeat, by the same windows' and blocks' difficulty every time. No training: one vectorised draw."""
    shift = parts.shift_for(points)
    per_block = max(1, windows // blocks)
    units = folds * blocks
    assignment = fold_assignment(rng, studies, repeats, folds, blocks)
    effects = training_effects(rng, assignment, folds, validation, 3)  # shared, a's own, b's own
    a_t = parts.train * effects[0] + parts.train_model * effects[1]
    b_t = parts.train * effects[0] + parts.train_model * effects[2]
    # per window of the data: difficulty for both, b's own part, and its block's parts
    block = rng.standard_normal((2, studies, units, 1)) * np.array([parts.block, parts.block_b])[:, None, None, None]
    window = parts.window * rng.standard_normal((studies, units, per_block)) + block[0]
    window_b = parts.window_b * rng.standard_normal((studies, units, per_block)) + block[1]
    tested = np.argsort(assignment, axis=-1, kind="stable").reshape(studies, repeats, folds, blocks)
    pick = np.arange(studies)[:, None, None, None]
    base = window[pick, tested].reshape(studies, repeats, folds, 1, blocks * per_block)
    own_b = window_b[pick, tested].reshape(base.shape)
    out = {}
    for name, offset, train_effect in (("a", 0.0, a_t), ("b", shift, b_t)):
        fold_part = train_effect + parts.fold * rng.standard_normal(train_effect.shape)
        run = parts.run * rng.standard_normal((studies, repeats, folds, seeds, 1))
        eta = parts.mu + offset + base + fold_part[..., None, None] + run + (own_b if name == "b" else 0.0)
        out[name] = 100 * (rng.random(eta.shape) < special.ndtr(eta)).mean(axis=-1)
    out["diff"] = out["b"] - out["a"]
    return out
