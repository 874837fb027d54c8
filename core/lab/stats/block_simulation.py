"""Simulated time-cv studies of the real shifted-block design with a known truth, to check the protocol-3 interval
(core.lab.stats.variance_components): its coverage and power (tests/test_variance_components.py;
bench/coverage_v3.py writes results/coverage_v3.json).

The design is the study's: `recordings` recordings of `windows` windows each, each cut into K contiguous blocks;
repeat r moves every boundary r / R of a block later (rounded to whole windows, the last block wrapping to the
recording's start), fold k of repeat r tests block k, so every window is tested once a repeat and repeats retest
the same windows. Each window of each run is right or wrong by a probit model, per model m:

    eta = mu_m + recording_i + u_w + v_mw + T_m(r,k) + F(r,k) + e_m(run) + g_m(run, i),   P(right) = Phi(eta)

recording_i  fixed per-recording difficulty (normal quantiles: one recording hard, most easy, as CWRU's)
u_w          window difficulty both models share; v_mw each model's own (model x window): both AR(1) along a
             recording, so neighbouring windows agree; v is what retested windows carry from repeat to repeat
T, F         a fold's effect on one model (its training set, validation block and recipe: independent across
             folds) and on both; `common` > 0 shares that part of it among all folds (Nadeau-Bengio's picture,
             for sensitivity checks)
e, g         a run's effect (Student-t: a bad seed now and then) and a run's effect on one recording

The better model ("hi") has expected accuracy `accuracy`; the other is shifted down by the true difference. The
recording offsets are fixed and every random part has mean 0, so the expected accuracy is an average over
recordings of a normal integral (over the t-distributed run effect by quadrature), and the truth is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from core.lab.stats.variance_components import fit_tables

CHUNK = 125  # studies drawn at once: about 40 MB per array at the default design


@dataclass(frozen=True)
class StudyParts:
    """Standard deviations on the probit scale of the parts of the module docstring's model; the defaults are the
    CWRU-like set (CWRU 0 HP time-cv, B vs B-noPE, v2: accuracy 96.9 %, a run's difference moving 2.2 points
    with its seed, a window's persistent difference variance 0.0015-0.0019, fold means agreeing to their seeds)."""

    accuracy: float = 0.969
    recording: float = 0.8
    window: float = 1.0
    own: float = 0.3
    correlation: float = 0.5  # of adjacent windows' u and v
    fold: float = 0.0
    fold_shared: float = 0.3
    run: float = 0.18
    run_recording: float = 0.22
    run_df: float = 5.0  # 0: normal run effects
    common: float = 0.0

    def offsets(self, recordings: int) -> np.ndarray:
        """The fixed per-recording difficulty."""
        return self.recording * stats.norm.ppf((np.arange(recordings) + 0.5) / recordings)

    def run_quantiles(self, points: int = 2000) -> np.ndarray:
        """The run effect at evenly spaced quantiles (the quadrature of the expected accuracy)."""
        q = (np.arange(points) + 0.5) / points
        if not self.run_df:
            return self.run * stats.norm.ppf(q)
        return self.run * stats.t.ppf(q, self.run_df) * math.sqrt((self.run_df - 2) / self.run_df)

    def expected_accuracy(self, mu: float, recordings: int) -> float:
        """A model's expected accuracy (fraction) at latent mean `mu`."""
        rest = math.sqrt(1 + self.window**2 + self.own**2 + self.fold**2 + self.fold_shared**2 + self.run_recording**2)
        eta = mu + self.offsets(recordings)[:, None] + self.run_quantiles()[None, :]
        return float(special.ndtr(eta / rest).mean())

    def mean_for(self, accuracy: float, recordings: int) -> float:
        """The latent mean that gives a model this expected accuracy."""
        return float(optimize.brentq(lambda mu: self.expected_accuracy(mu, recordings) - accuracy, -30, 30))


SETS = {
    "CWRU-like": StudyParts(),
    # fold means spread far beyond their seeds: stretches of the recordings that suit one model (the windows'
    # own part long-correlated, as A+PE vs A in the v2 study) and fold-to-fold training differences
    "heavy fold variance": StudyParts(own=0.6, correlation=0.8, fold=0.3, run=0.25, run_recording=0.3),
    "near the ceiling": StudyParts(accuracy=0.995, fold=0.1),
}
DIFFERENCES = (0.0, 2.0, 5.0)


def blocks_tested(windows: int, folds: int, repeats: int) -> np.ndarray:
    """(repeats, folds, windows // folds) window indices each fold tests: repeat r's boundaries moved by
    round(r * block / repeats) windows, wrapping."""
    block = windows // folds
    return np.array(
        [
            [(k * block + round(r * block / repeats) + np.arange(block)) % windows for k in range(folds)]
            for r in range(repeats)
        ]
    )


def block_overlap(blocks: np.ndarray) -> np.ndarray:
    """(R K, R K) share of test windows two folds of `blocks` (blocks_tested) hold in common, repeat-major."""
    flat = blocks.reshape(-1, blocks.shape[-1])
    held = np.zeros((flat.shape[0], int(flat.max()) + 1))
    np.put_along_axis(held, flat, 1.0, axis=1)
    return held @ held.T / flat.shape[1]


def _along_recordings(rng: np.random.Generator, shape: tuple[int, ...], correlation: float) -> np.ndarray:
    """Unit-variance AR(1) series along the last axis."""
    z = rng.standard_normal(shape)
    out = np.empty(shape)
    out[..., 0] = z[..., 0]
    keep = math.sqrt(1 - correlation**2)
    for t in range(1, shape[-1]):
        out[..., t] = correlation * out[..., t - 1] + keep * z[..., t]
    return out


def _fold_effects(rng: np.random.Generator, studies: int, repeats: int, folds: int, common: float) -> np.ndarray:
    """(studies, R, K) unit-variance fold effects, a share `common` of the variance shared by every fold."""
    shared = rng.standard_normal((studies, 1, 1))
    return math.sqrt(common) * shared + math.sqrt(1 - common) * rng.standard_normal((studies, repeats, folds))


def _runs(rng: np.random.Generator, parts: StudyParts, shape: tuple[int, ...]) -> np.ndarray:
    if not parts.run_df:
        return parts.run * rng.standard_normal(shape)
    return parts.run * rng.standard_t(parts.run_df, shape) * math.sqrt((parts.run_df - 2) / parts.run_df)


def _draw(rng, parts: StudyParts, means, studies, blocks, seeds, recordings, windows) -> np.ndarray:
    """(studies, R, K, S) accuracy(hi) - accuracy(lo) in points, one chunk of studies."""
    repeats, folds, _ = blocks.shape
    offsets = parts.offsets(recordings)[:, None]
    shared = parts.window * _along_recordings(rng, (studies, recordings, windows), parts.correlation)
    both = parts.fold_shared * _fold_effects(rng, studies, repeats, folds, parts.common)
    accuracy = []
    for mu in means:
        own = parts.own * _along_recordings(rng, (studies, recordings, windows), parts.correlation)
        tested = np.moveaxis((shared + own + offsets)[:, :, blocks], 1, 3)  # (studies, R, K, recordings, block)
        fold = parts.fold * _fold_effects(rng, studies, repeats, folds, parts.common) + both
        run = fold[..., None] + _runs(rng, parts, (studies, repeats, folds, seeds))  # (studies, R, K, S)
        per_recording = parts.run_recording * rng.standard_normal((studies, repeats, folds, seeds, recordings))
        eta = mu + tested[:, :, :, None] + run[..., None, None] + per_recording[..., None]
        right = rng.random(eta.shape) < special.ndtr(eta)  # (studies, R, K, S, recordings, block)
        accuracy.append(100 * right.mean(axis=(-1, -2)))
    return accuracy[0] - accuracy[1]


def simulate(
    rng: np.random.Generator,
    parts: StudyParts,
    points: float,
    studies: int,
    repeats: int = 3,
    folds: int = 5,
    seeds: int = 5,
    recordings: int = 10,
    windows: int = 110,
) -> np.ndarray:
    """(studies, R, K, S) paired differences accuracy(hi) - accuracy(lo) in points at a true difference of
    `points` (hi at parts.accuracy), from per-window draws of the shifted-block design."""
    means = (parts.mean_for(parts.accuracy, recordings), parts.mean_for(parts.accuracy - points / 100, recordings))
    blocks = blocks_tested(windows, folds, repeats)
    chunks = [
        _draw(rng, parts, means, min(CHUNK, studies - start), blocks, seeds, recordings, windows)
        for start in range(0, studies, CHUNK)
    ]
    return np.concatenate(chunks)


def judge(cells: np.ndarray, overlap: np.ndarray, points: float) -> dict[str, float]:
    """Coverage of the 95 % interval of each study's (R, K, S) table at the truth `points`, and power: the share
    whose 95 % CI lies wholly on the truth's side of 0 (at a truth of 0, the share that excludes 0 at all: a
    false finding). Also the studies' SD of the mean difference, the root-mean-square standard error and the
    root-mean-square fitted components (seed_sd, fold_sd, block_sd)."""
    n, repeats, folds, seeds = cells.shape
    fit = fit_tables(cells.reshape(n, repeats * folds, seeds), overlap)
    half = stats.t.ppf(0.975, fit.df) * fit.se
    low, high = fit.diff - half, fit.diff + half
    found = (low > 0) | (high < 0) if points == 0 else (low > 0 if points > 0 else high < 0)
    return {
        "coverage": float(np.mean((low <= points) & (points <= high))),
        "power": float(np.mean(found)),
        "sd": float(fit.diff.std()),
        "rms_se": float(np.sqrt(np.mean(fit.se**2))),
        "seed_sd": float(np.sqrt(fit.seed_var.mean())),
        "fold_sd": float(np.sqrt(fit.fold_var.mean())),
        "block_sd": float(np.sqrt(fit.block_var.mean())),
    }
