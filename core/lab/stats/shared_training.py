"""The interval of a design whose folds share one training set (protocol 3's `--train-loads`): the seed is the unit.

When every fold trains the same models on the same windows and only tests them at another load, a seed's runs
across the folds are one trained model scored on several test sets. The folds then sample no training sets and
hold no fold variance to pool; what moves the answer from one study to the next is the training seed. Each seed's
difference is pooled over every test window, a fold weighing its test windows,

    D_s = sum_k n_k d[k, s] / sum_k n_k      d[k, s] = metric(b) - metric(a) on fold k's n_k windows, points

(for accuracy and log loss exactly the difference over all windows together), and the interval is the t interval
of the S values D_s on S - 1 degrees of freedom. It is **conditional on these test windows**: it covers the mean
of D over the population of training seeds with the test windows, and the loads they were recorded at, fixed; it
says nothing of other recordings or other loads. The per-fold differences are reported beside it (by_fold, one
test load each), not pooled into a fold variance they do not have.

`simulate_seed_coverage` draws such studies with a known truth (tests/test_shared_training.py checks the coverage).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from core.lab.stats.intervals import Components, Interval

CHUNK = 250  # simulated studies drawn at once: about 20 MB per array at the default parts
METHOD = (
    "t over {seeds} seeds of each seed's difference pooled over every test window ({df} df), conditional on these "
    "test windows; the {folds} folds share one training set"
)


@dataclass(frozen=True)
class SeedComponents(Components):
    """Components when the folds share one training set: `seed_sd` is the spread of a seed's pooled difference;
    there is no fold part (fold_sd 0), and more test sets do not shrink the seed part."""

    def standard_error(self, folds: int, seeds: int) -> float:
        """The standard error of the mean difference with this many seeds, whatever the folds."""
        return self.seed_sd / math.sqrt(seeds)


def _table(cells: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (folds, seeds) table of a (repeats, folds, seeds) one and the folds' weights, checked."""
    d = np.asarray(cells, dtype=np.float64)
    if d.ndim != 3 or d.size == 0 or not np.all(np.isfinite(d)):
        raise ValueError(
            f"cells must be a complete (repeats, folds, seeds) table of finite numbers, got shape {d.shape}"
        )
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != (d.shape[0] * d.shape[1],) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"weights must be one positive number (test windows) per fold, got {w.tolist()}")
    return d.reshape(-1, d.shape[2]), w


def pooled_seed_differences(cells: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """D_s of each seed (see the module docstring): its (repeats, folds, seeds) differences averaged over the
    folds weighted by `weights` (each fold's test windows, repeat-major)."""
    table, w = _table(cells, weights)
    return w @ table / w.sum()


def seed_interval(cells: np.ndarray, weights: np.ndarray) -> Interval:
    """The t interval over seeds of each seed's pooled difference (S - 1 df), conditional on the test windows;
    with one seed, no spread and no interval."""
    table, w = _table(cells, weights)
    pooled = w @ table / w.sum()
    seeds = pooled.size
    sd = float(pooled.std(ddof=1)) if seeds > 1 else 0.0
    se = sd / math.sqrt(seeds) if seeds > 1 else None
    df = seeds - 1
    method = METHOD.format(seeds=seeds, df=df, folds=table.shape[0])
    return Interval(float(pooled.mean()), se, df, table.shape[0], seeds, SeedComponents(0.0, sd), method=method)


def seed_leave_one_out(cells: np.ndarray, weights: np.ndarray, bound: float | None = None) -> list[dict]:
    """For each (repeat, fold) left out, in order: {"repeat", "fold", "diff", "ci95"} of seed_interval over the
    other folds, within ±bound when one is given; diff and ci95 None when no fold remains (ci95 also None with
    one seed)."""
    table, w = _table(cells, weights)
    folds = np.asarray(cells).shape[1]
    rows = []
    for j in range(table.shape[0]):
        keep = np.arange(table.shape[0]) != j
        diff = ci95 = None
        if keep.any():
            interval = seed_interval(table[keep][None], w[keep])
            diff, ci95 = interval.diff, interval.ci(0.95)
            if ci95 is not None and bound is not None:
                ci95 = [max(ci95[0], -bound), min(ci95[1], bound)]
        rows.append({"repeat": j // folds, "fold": j % folds, "diff": diff, "ci95": ci95})
    return rows


@dataclass(frozen=True)
class SeedStudyParts:
    """A simulated shared-training study, on the probit scale: every window of fold (test load) k has its
    difficulty ~ N(load_k, 1) and each model's own term on it ~ N(0, own), both drawn once per study (the fixed
    test windows); a seed moves a model by `seed` on every load at once and by `seed_load` on each load, and
    `noise` is a run's own noise on each window. A window is right when mu_m + its terms + N(0, 1) > 0."""

    accuracy: float = 0.9
    loads: tuple[float, ...] = (0.5, 0.0, -0.5)
    windows: int = 300  # per load
    own: float = 0.5
    seed: float = 0.3
    seed_load: float = 0.15
    noise: float = 0.3


def simulated_studies(
    parts: SeedStudyParts, difference: float, seeds: int, studies: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(cells (studies, loads, seeds) of b - a in points, truth (studies,)) of simulated studies of `parts`, b's
    expected accuracy about `difference` points above a's; the truth of a study is the mean pooled difference over
    the population of seeds given its test windows (exact: a normal integral per window)."""
    spread = math.sqrt(2 + parts.own**2 + _run_variance(parts))  # of a window's latent score beyond mu
    accuracy = np.array([parts.accuracy - difference / 100, parts.accuracy])
    mu = stats.norm.ppf(np.clip(accuracy, 1e-4, 1 - 1e-4)) * spread  # (models,): a, b
    loads = np.asarray(parts.loads)
    z = loads[None, :, None] + rng.standard_normal((studies, loads.size, parts.windows))  # (n, K, W)
    fixed = mu[None, :, None, None] + z[:, None] + parts.own * rng.standard_normal((studies, 2, *z.shape[1:]))
    scale = math.sqrt(1 + _run_variance(parts))
    truth = 100 * (special.ndtr(fixed[:, 1] / scale) - special.ndtr(fixed[:, 0] / scale)).mean(axis=(1, 2))
    run = parts.seed * rng.standard_normal((studies, 2, seeds, 1, 1))
    run = run + parts.seed_load * rng.standard_normal((studies, 2, seeds, loads.size, 1))
    latent = fixed[:, :, None] + run + parts.noise * rng.standard_normal((studies, 2, seeds, *z.shape[1:]))
    right = (latent + rng.standard_normal(latent.shape) > 0).mean(axis=4)  # (n, models, S, K)
    return 100 * (right[:, 1] - right[:, 0]).transpose(0, 2, 1), truth


def simulate_seed_coverage(
    parts: SeedStudyParts, difference: float, seeds: int = 5, studies: int = 2000, rng_seed: int = 0
) -> dict[str, float]:
    """{"coverage", "power", "n"} of seed_interval's 95 % CI over `studies` simulated studies (simulated_studies):
    coverage of each study's truth, what the interval claims to cover; power, the share of CIs wholly on the
    truth's side of 0."""
    rng = np.random.default_rng(rng_seed)
    weights = np.full(len(parts.loads), parts.windows)
    covered = found = 0
    for start in range(0, studies, CHUNK):
        cells, truth = simulated_studies(parts, difference, seeds, min(CHUNK, studies - start), rng)
        for table, true in zip(cells, truth):
            low, high = seed_interval(table[None], weights).ci(0.95)
            covered += int(low <= true <= high)
            found += int(low > 0 if true > 0 else high < 0)
    return {"coverage": covered / studies, "power": found / studies, "n": studies}


def _run_variance(parts: SeedStudyParts) -> float:
    """The variance a run adds to a window's latent score beyond its fixed terms (seed, seed x load, noise)."""
    return parts.seed**2 + parts.seed_load**2 + parts.noise**2
