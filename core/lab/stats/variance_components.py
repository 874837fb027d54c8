"""The protocol-3 interval of a repeated time-cv study: variance components for seeds, folds and retested windows.

A study with R repeats of K folds and S seeds gives a (repeats, folds, seeds) table of paired differences in points,
`cells`. Three things move its mean difference, and the shifted-block design treats each differently:

    seeds     a run's difference around its fold's mean (training seed, the runs' share of window noise):
              independent across runs, so it shrinks as 1 / (R K S)                               seed_sd
    folds     a fold's training set, validation block and recipe choices move its mean; the one such failure
              on record (CWRU 0 HP, repeat 2, block 5, v2) was not shared by the two folds of the other repeats
              that train on nearly the same windows, so this part is taken as independent across folds,
              shrinking as 1 / (R K)                                                                fold_sd
    windows   the time blocks a fold tests: some stretches of a recording suit one model better. Every repeat
              tests every window once, so repeats retest the same windows and this part does not shrink with
              R: fold means of different repeats share it in proportion to the test windows they share
              (`overlap`, known from the design: repeat r shifts the blocks by r / R of a block)    block_sd

    fold means M_j = mean over seeds;  Cov(M) = (sigma^2 / S + tau^2) I + b O,  O[j, j'] = share of test windows
    Var(diff) = sigma^2 / (J S) + tau^2 / J + b 1'O1 / J^2    (J = R K; 1'O1 / J^2 = 1 / K for shifted blocks)

The components are estimated by restricted maximum likelihood (REML) from the J - 1 contrasts of the fold means
(in the basis that diagonalises O, where they are independent with variances sigma^2 / S + tau^2 + b lambda_i)
and the pooled within-fold seed variance (J (S - 1) degrees of freedom), with tau^2, b >= 0. The interval is
diff +- t * sqrt(Var), t on Satterthwaite's degrees of freedom from the REML information. Why this and not v2's
corrected resampled t (core.lab.stats.resampled): the Nadeau-Bengio factor (1 / J + n_test / n_train) multiplies
the seed noise too, which is independent across folds, and the design fixes how far fold means share windows,
so nothing needs guessing there. A training effect that every fold shares alike (what the whole data set
teaches) cannot be told apart from the true difference in one study (Bengio & Grandvalet, 2004); it is not
covered, and the population the verdict names is these recordings.

Small-sample correction: b is seen only through a few long-wavelength contrasts (about K - 1 degrees of freedom),
and a variance estimate truncated at 0 is biased upward when the component is small: for an estimate with
standard error s, by s phi(b / s) - b Phi(-b / s). That bias is subtracted at the estimate (clipped at 0) before
Var is formed. On Gaussian tables of this design, b / (sigma^2 / S) from 0 to 4 and tau^2 from 0 to twice the
seed part, the 95 % coverage so corrected stays within 0.933-0.967 (uncorrected REML: 0.945-0.972, conservative
when b is near 0). core.lab.stats.block_simulation checks it on simulated studies of the real design
(tests/test_variance_components.py, bench/coverage_v3.py). With one repeat (O = I) the fold and window parts
cannot be told apart and need not be: both shrink as 1 / K.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special, stats

from core.lab.stats.intervals import Components, Interval

METHOD = "REML variance components (seeds, folds, retested windows), Satterthwaite df, {repeats} x {folds} folds"
RATIO_GRID = np.concatenate([[0.0], np.logspace(-4, 4, 321)])  # b / (sigma^2 / S + tau^2), profiled out
GOLDEN_STEPS = 30


@dataclass(frozen=True)
class BlockComponents(Components):
    """Components in points: `seed_sd` one run around its fold's mean, `fold_sd` a fold's mean beyond its seeds and
    its tested windows, `block_sd` a fold's mean from the windows it tests (measured with `blocks` folds a repeat)."""

    block_sd: float = 0.0
    blocks: int = 1

    @property
    def window_sd(self) -> float:
        """The part of the mean difference's SD that no number of seeds, folds or repeats removes: the mean over
        every window of the recordings (block_sd / sqrt(blocks))."""
        return self.block_sd / math.sqrt(self.blocks)

    def standard_error(self, folds: int, seeds: int, repeats: int = 1) -> float:
        """The standard error of the mean difference of a design with this many folds a repeat, seeds, repeats
        (fold and seed parts taken as the same at another number of folds)."""
        cells = repeats * folds
        return math.sqrt(self.seed_sd**2 / (cells * seeds) + self.fold_sd**2 / cells + self.window_sd**2)


def shifted_block_overlap(repeats: int, folds: int) -> np.ndarray:
    """(R K, R K) share of test windows two folds hold in common when repeat r shifts every block boundary by
    r / R of a block (repeat-major, as the study's tables): 1 on the diagonal, 1 - |shift| between a repeat's
    block and the blocks of another repeat it overlaps, 0 within a repeat."""
    if repeats < 1 or folds < 1:
        raise ValueError(f"repeats and folds must be >= 1, got {repeats} and {folds}")
    start = np.array([k + r / repeats for r in range(repeats) for k in range(folds)])  # in blocks, circular
    gap = np.abs(start[:, None] - start[None, :]) % folds
    gap = np.minimum(gap, folds - gap)
    return np.clip(1.0 - gap, 0.0, None)


def _check_overlap(overlap: np.ndarray, folds: int) -> np.ndarray:
    o = np.asarray(overlap, dtype=np.float64)
    if o.shape != (folds, folds) or not np.all(np.isfinite(o)) or not np.allclose(o, o.T):
        raise ValueError(f"overlap must be a symmetric ({folds}, {folds}) matrix of shares, got shape {o.shape}")
    return o


def _contrasts(overlap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(eigenvalues, (J, J - 1) basis): orthonormal contrasts of J fold means (orthogonal to their mean) in which
    the overlap matrix is diagonal, so the contrasts are independent."""
    j = overlap.shape[0]
    basis = np.linalg.qr(np.column_stack([np.ones(j), np.eye(j)[:, : j - 1]]))[0][:, 1:]
    lam, rotation = np.linalg.eigh(basis.T @ overlap @ basis)
    return lam, basis @ rotation


def _profile(y2: np.ndarray, w: np.ndarray, lam: np.ndarray, seeds: int, ratio: np.ndarray) -> tuple:
    """REML log-likelihood, sigma^2 and alpha = sigma^2 / S + tau^2 at b = ratio * alpha (ratio: (n, H)); alpha is
    profiled in closed form, pooled with the seeds' variance where the constraint alpha >= sigma^2 / S binds."""
    m = lam.size
    df_w = (seeds - 1) * (m + 1)  # J (S - 1)
    scale = 1.0 + ratio[..., None] * lam  # (n, H, m)
    z = (y2[:, None, :] / scale).sum(-1)
    alpha = z / m
    w_ = w[:, None]
    if seeds > 1:
        pooled = (df_w * w_ + seeds * z) / (df_w + m)
        bound = alpha < w_ / seeds
        sigma2 = np.where(bound, pooled, w_)
        alpha = np.where(bound, pooled / seeds, alpha)
    else:
        sigma2 = np.zeros_like(alpha)
    tiny = 1e-300
    ll = -0.5 * (m * np.log(np.maximum(alpha, tiny)) + np.log(scale).sum(-1) + z / np.maximum(alpha, tiny))
    if seeds > 1:
        ll = ll - 0.5 * df_w * (np.log(np.maximum(sigma2, tiny)) + w_ / np.maximum(sigma2, tiny))
    return ll, sigma2, alpha


def _reml(y2: np.ndarray, w: np.ndarray, lam: np.ndarray, seeds: int) -> tuple[np.ndarray, ...]:
    """(sigma^2, tau^2, b) per table: the ratio b / alpha on a grid, then refined by golden section in log."""
    n = y2.shape[0]
    if np.ptp(lam) < 1e-9:  # one repeat: folds and windows not separable; both shrink as 1 / K
        ll, sigma2, alpha = _profile(y2, w, lam, seeds, np.zeros((n, 1)))
        return sigma2[:, 0], np.maximum(alpha[:, 0] - sigma2[:, 0] / seeds, 0.0), np.zeros(n)
    grid = np.broadcast_to(RATIO_GRID, (n, RATIO_GRID.size))
    best = np.argmax(_profile(y2, w, lam, seeds, grid)[0], axis=1)
    inner = best > 0
    low = np.log(RATIO_GRID[np.maximum(best - 1, 1)])
    high = np.log(RATIO_GRID[np.minimum(best + 1, RATIO_GRID.size - 1)])
    golden = (math.sqrt(5) - 1) / 2
    for _ in range(GOLDEN_STEPS):
        a, b = high - golden * (high - low), low + golden * (high - low)
        ll = _profile(y2, w, lam, seeds, np.exp(np.stack([a, b], axis=1)))[0]
        high, low = np.where(ll[:, 0] > ll[:, 1], b, high), np.where(ll[:, 0] > ll[:, 1], low, a)
    ratio = np.where(inner, np.exp((low + high) / 2), 0.0)
    _, sigma2, alpha = _profile(y2, w, lam, seeds, ratio[:, None])
    sigma2, alpha = sigma2[:, 0], alpha[:, 0]
    return sigma2, np.maximum(alpha - sigma2 / seeds, 0.0), ratio * alpha


def _information(sigma2, tau2, b, lam, seeds: int, cells: int) -> np.ndarray:
    """(n, 3, 3) REML expected information of (sigma^2, tau^2, b)."""
    v = np.maximum((sigma2 / seeds + tau2)[:, None] + b[:, None] * lam, 1e-150)  # (n, m)
    parts = [np.full_like(v, 1.0 / seeds), np.ones_like(v), np.broadcast_to(lam, v.shape)]
    info = np.empty((v.shape[0], 3, 3))
    for x in range(3):
        for y in range(3):
            info[:, x, y] = 0.5 * (parts[x] * parts[y] / v**2).sum(-1)
    if seeds > 1:
        info[:, 0, 0] += cells * (seeds - 1) / (2 * np.maximum(sigma2, 1e-150) ** 2)
    return info


def _covariance(info: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Inverse information over the free parameters, zero elsewhere."""
    mask = free[:, :, None] & free[:, None, :]
    return np.linalg.inv(np.where(mask, info, np.eye(3))) * mask


def _debiased(b: np.ndarray, se: np.ndarray) -> np.ndarray:
    """b minus the upward bias of a zero-truncated estimate at b (s phi(b/s) - b Phi(-b/s)), clipped at 0."""
    t = b / np.maximum(se, 1e-300)
    bias = se * np.exp(-0.5 * t**2) / math.sqrt(2 * math.pi) - b * special.ndtr(-t)
    return np.where(b > 0, np.maximum(b - bias, 0.0), 0.0)


def _satterthwaite(var, info, sigma2, tau2, b, share, seeds: int, cells: int) -> np.ndarray:
    """Degrees of freedom 2 Var^2 / Var(Var-hat) of Var = sigma^2 / (J S) + tau^2 / J + b share (delta method)."""
    free = np.stack([sigma2 > 0, tau2 > 0, b > 0], axis=1)
    gradient = np.stack([np.full(var.shape, 1 / (cells * seeds)), np.full(var.shape, 1 / cells), share], 1) * free
    spread = np.einsum("ni,nij,nj->n", gradient, _covariance(info, free), gradient)
    most = max(cells * seeds - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(spread > 0, 2 * var**2 / spread, most)
    return np.clip(df, 1.0, most)


@dataclass(frozen=True)
class Fit:
    """Per table (arrays over a leading axis of tables): the mean difference, its standard error and degrees of
    freedom, and the variances behind them (points^2): sigma^2 (a run), tau^2 (a fold), b (a fold's windows)."""

    diff: np.ndarray
    se: np.ndarray
    df: np.ndarray
    seed_var: np.ndarray
    fold_var: np.ndarray
    block_var: np.ndarray


def fit_tables(tables: np.ndarray, overlap: np.ndarray) -> Fit:
    """Fit every (J, S) table of `tables` (n, J, S): J fold means (repeat-major), S seeds each, paired differences
    in points; `overlap` the (J, J) share of test windows two folds hold in common (see the module docstring)."""
    d = np.asarray(tables, dtype=np.float64)
    n, cells, seeds = d.shape
    o = _check_overlap(overlap, cells)
    means = d.mean(axis=2)
    within = d.var(axis=2, ddof=1).mean(axis=1) if seeds > 1 else np.zeros(n)
    lam, basis = _contrasts(o)
    sigma2, tau2, b = _reml((means @ basis) ** 2, within, lam, seeds)
    info = _information(sigma2, tau2, b, lam, seeds, cells)
    if np.ptp(lam) >= 1e-9:  # the retested-window part's own standard error, every component free
        every = np.stack([np.full(n, seeds > 1), np.ones(n, bool), np.ones(n, bool)], axis=1)
        b = _debiased(b, np.sqrt(np.maximum(_covariance(info, every)[:, 2, 2], 0.0)))
    share = np.full(n, o.sum() / cells**2)
    var = sigma2 / (cells * seeds) + tau2 / cells + b * share
    df = _satterthwaite(var, info, sigma2, tau2, b, share, seeds, cells)
    return Fit(d.reshape(n, -1).mean(axis=1), np.sqrt(var), df, sigma2, tau2, b)


def _cells(cells: np.ndarray) -> np.ndarray:
    d = np.asarray(cells, dtype=np.float64)
    if d.ndim != 3 or d.size == 0 or not np.all(np.isfinite(d)):
        raise ValueError(
            f"cells must be a complete (repeats, folds, seeds) table of finite numbers, got shape {d.shape}"
        )
    return d


def block_interval(cells: np.ndarray, overlap: np.ndarray | None = None) -> Interval:
    """The protocol-3 interval of a (repeats, folds, seeds) table of paired differences in points (see the
    module docstring). `overlap`: the (R K, R K) share of test windows two folds hold in common, repeat-major;
    shifted_block_overlap(R, K) when None. With one fold only the seeds vary (S - 1 df)."""
    d = _cells(cells)
    repeats, folds, seeds = d.shape
    method = METHOD.format(repeats=repeats, folds=folds)
    if repeats * folds == 1:
        se = float(d.std(ddof=1) / math.sqrt(seeds)) if seeds > 1 else None
        parts = BlockComponents(0.0, math.sqrt(float(d.var(ddof=1))) if seeds > 1 else 0.0, 0.0, 1)
        return Interval(float(d.mean()), se, max(seeds - 1, 0), 1, seeds, parts, method=method, repeats=1)
    o = shifted_block_overlap(repeats, folds) if overlap is None else overlap
    fit = fit_tables(d.reshape(1, repeats * folds, seeds), o)
    parts = BlockComponents(math.sqrt(fit.fold_var[0]), math.sqrt(fit.seed_var[0]), math.sqrt(fit.block_var[0]), folds)
    se = float(fit.se[0])
    return Interval(float(d.mean()), se, float(fit.df[0]), folds, seeds, parts, method=method, repeats=repeats)


def block_leave_one_out(cells: np.ndarray, overlap: np.ndarray | None = None) -> list[dict]:
    """For each (repeat, fold) left out, in order: {"repeat", "fold", "diff", "ci95"} of the others by the
    protocol-3 fit (their overlap matrix without that fold); ci95 None when fewer than two folds remain."""
    d = _cells(cells)
    repeats, folds, seeds = d.shape
    o = _check_overlap(shifted_block_overlap(repeats, folds) if overlap is None else overlap, repeats * folds)
    flat = d.reshape(repeats * folds, seeds)
    rows = []
    for j in range(flat.shape[0]):
        keep = np.arange(flat.shape[0]) != j
        rest = flat[keep]
        ci95 = None
        if rest.shape[0] >= 2:
            fit = fit_tables(rest[None], o[np.ix_(keep, keep)])
            half = float(stats.t.ppf(0.975, fit.df[0]) * fit.se[0])
            ci95 = [float(fit.diff[0]) - half, float(fit.diff[0]) + half]
        rows.append({"repeat": j // folds, "fold": j % folds, "diff": float(rest.mean()), "ci95": ci95})
    return rows


def components_record(interval: Interval) -> dict | None:
    """{"seed_sd", "fold_sd", "block_sd", "window_sd", "df"} of a protocol-3 interval, in points, for the study
    JSON (None for any other interval)."""
    parts = interval.components
    if not isinstance(parts, BlockComponents):
        return None
    return {
        "seed_sd": parts.seed_sd,
        "fold_sd": parts.fold_sd,
        "block_sd": parts.block_sd,
        "window_sd": parts.window_sd,
        "df": float(interval.df),
    }


def planned_half_width(parts: BlockComponents, repeats: int, folds: int, seeds: int, confidence: float = 0.95) -> float:
    """The half-width a design of repeats x folds x seeds would give with these components (the fold and seed
    parts taken as the same at another number of folds; the windows' part fixed by the recordings), on the
    Satterthwaite degrees of freedom the fit would expect there."""
    if repeats < 1 or folds < 2 or seeds < 2:
        raise ValueError(f"a planned design needs repeats >= 1, folds >= 2, seeds >= 2; got {repeats, folds, seeds}")
    cells = repeats * folds
    lam = _shifted_eigenvalues(repeats, folds)
    one = np.ones(1)
    sigma2, tau2, b = parts.seed_sd**2 * one, parts.fold_sd**2 * one, parts.window_sd**2 * folds * one
    if np.ptp(lam) < 1e-9:  # one repeat: the windows' part is a fold part
        tau2, b = tau2 + b, 0.0 * b
    var = np.array([parts.standard_error(folds, seeds, repeats) ** 2])
    info = _information(sigma2, tau2, b, lam, seeds, cells)
    df = _satterthwaite(var, info, sigma2, tau2, b, one / folds, seeds, cells)
    return float(stats.t.ppf(0.5 + confidence / 2, df[0]) * math.sqrt(var[0]))


@lru_cache(maxsize=64)
def _shifted_eigenvalues(repeats: int, folds: int) -> np.ndarray:
    return _contrasts(shifted_block_overlap(repeats, folds))[0]


def design_reaching(
    parts: BlockComponents, target: float, folds: int, max_repeats: int = 10, max_seeds: int = 50
) -> dict | None:
    """The design with the fewest runs (repeats x folds x seeds, fewer repeats first on a tie) whose planned 95 %
    half-width is at most `target` points: {"repeats", "folds", "seeds", "half_width"}; None when none within
    the limits does (the windows' part alone may keep it above the target)."""
    best = None
    for repeats in range(1, max_repeats + 1):
        for seeds in range(2, max_seeds + 1):
            half = planned_half_width(parts, repeats, folds, seeds)
            if half <= target:
                runs = repeats * folds * seeds
                if best is None or runs < best[0]:
                    best = (runs, {"repeats": repeats, "folds": folds, "seeds": seeds, "half_width": half})
                break
    return None if best is None else best[1]
