"""A positive control for positional encoding: a vibration-like task whose class lives only in the patch order.

Think of a shaft whose vibration is cut into revolutions at a once-per-revolution tachometer pulse, as order
tracking does: every window starts where a revolution starts. Each revolution is `PATCHES_PER_REVOLUTION`
patches of `patch` samples, each one of four vibration-like shapes at a fixed RMS per shape (an impulse train,
a ringing resonance, a noise burst, a slow hum), with a random sign and random details per patch, on a faint
noise floor. Every revolution of every class holds the same multiset of shapes (8 of each); the classes differ
only in the angle at which each shape occurs, a fixed arrangement per class. What an order-blind model sees is
the same for every class:

- the multiset of patches (shapes, energies, RMS, kurtosis) of every window cut at a revolution start;
- the spectrum: the random sign of each patch makes every cross term between two patches average to zero, so
  the expected power spectrum is the sum of the patches' spectra, the same for every class.

So Model A and B-noPE (no position signal, mean-pooled over tokens) are at chance, 1 / n_classes, while a model
that knows where each token sits in the window can read the class. Windows must start on a revolution:
`revolution_grid` gives the grid that the window cutters (core.lab.vibration.windows, core.lab.study.folds)
put every window start on, and refuses a stride that would leave it. tests/test_order_control.py checks both
sides with logistic regressions.

A first design (de Bruijn cycles told apart only by the second neighbour, invariant to where a window starts)
was not learnt by model B at all (26 % of 4 classes) and was replaced before any study was run on it: see
results/study_protocol.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.lab.vibration.rates import checked_sample_rate
from core.lab.vibration.types import DataError, Recording

SAMPLE_RATE = 12_000.0  # nominal, the CWRU rate; the task is counted in samples, so it sets only the time axis
DEFAULT_PATCH = 32  # = ModelConfig.patch, so a default 1024-sample window is one revolution of 32 tokens
SHAPES: tuple[str, ...] = ("impulses", "resonance", "noise", "hum")
SHAPE_RMS = np.array([1.0, 0.6, 0.35, 0.2])  # fixed per shape: a patch's energy names its shape
NOISE_FLOOR_RMS = 0.02
PATCHES_PER_REVOLUTION = 32  # 8 of each shape
MAX_CLASSES = 10
MAX_DURATION_S = 600.0  # per class: 10 classes at 12 kHz stay under 600 MB of float64 on the command line
_CLASS_SEED = 20_261_201  # the classes' arrangements are fixed (the data seed draws only the patches' details)
_CANDIDATES = 2000


def load_order_control(
    seed: int = 0,
    n_classes: int = 4,
    duration_s: float = 10.0,
    patch: int = DEFAULT_PATCH,
    sample_rate: float = SAMPLE_RATE,
) -> list[Recording]:
    """One `Recording` per class ("order0", "order1", ...), about `duration_s` long (whole revolutions),
    deterministic in `seed`; `meta["cycle"]` is the revolution in samples, where every window must start."""
    if isinstance(n_classes, bool) or not 2 <= int(n_classes) <= MAX_CLASSES:
        raise DataError(f"The order control has 2 to {MAX_CLASSES} classes, got {n_classes!r}.")
    if isinstance(patch, bool) or not 8 <= int(patch) <= 4096:
        raise DataError(f"The order control's patch must be 8 to 4096 samples, got {patch!r}.")
    duration = float(duration_s) if isinstance(duration_s, (int, float)) and not isinstance(duration_s, bool) else -1.0
    sample_rate = checked_sample_rate(sample_rate)
    if not np.isfinite(duration) or not 0 < duration <= MAX_DURATION_S:
        raise DataError(f"The order control's duration must be above 0 and at most {MAX_DURATION_S:g} s per class.")
    revolution = PATCHES_PER_REVOLUTION * int(patch)
    n_revolutions = int(round(duration * sample_rate / revolution))
    if n_revolutions < 2:
        raise DataError(f"The order control needs at least two revolutions ({2 * revolution} samples) per class.")
    rng = np.random.default_rng([int(seed), int(n_classes), int(patch)])
    recordings = []
    for index, arrangement in enumerate(class_arrangements(int(n_classes))):
        signal = patch_stream(np.tile(arrangement, n_revolutions), int(patch), rng)
        meta = {
            "source": "order_control",
            "arrangement": "".join("ABCD"[s] for s in arrangement),
            "patch": int(patch),
            "cycle": revolution,
            "data_seed": int(seed),
        }
        recordings.append(Recording(signal=signal, sample_rate=sample_rate, label=f"order{index}", meta=meta))
    return recordings


def class_arrangements(n_classes: int) -> list[np.ndarray]:
    """The shape of each of the 32 patches of a revolution, per class: 8 of each shape, arranged differently,
    chosen once and for all so that every two classes differ at as many angles as possible."""
    rng = np.random.default_rng(_CLASS_SEED)
    multiset = np.repeat(np.arange(len(SHAPES)), PATCHES_PER_REVOLUTION // len(SHAPES))
    pool = np.array([rng.permutation(multiset) for _ in range(_CANDIDATES)])
    chosen = [0]
    while len(chosen) < n_classes:  # greedy: the candidate that differs most from its nearest chosen one
        agreement = np.max([(pool == pool[c]).sum(axis=1) for c in chosen], axis=0)
        agreement[chosen] = PATCHES_PER_REVOLUTION + 1
        chosen.append(int(np.argmin(agreement)))
    return [pool[c] for c in chosen]


def revolution_grid(recordings: Sequence[Recording], stride: int) -> int:
    """The grid, in samples, that every window start must sit on: the revolution of an order control, else 1.

    Raises DataError when `stride` would step off the grid (windows would start mid-revolution)."""
    cycles = {int(r.meta.get("cycle") or 1) for r in recordings}
    cycle = max(cycles)
    if len(cycles) > 1:
        raise DataError("These recordings have different revolution lengths, so their windows cannot share a grid.")
    if int(stride) % cycle:
        raise DataError(
            f"The order control's windows start at a revolution, every {cycle} samples: make the stride (by default "
            f"the window) a multiple of {cycle}; it is {int(stride)}."
        )
    return cycle


def on_grid(begin: int, grid: int) -> int:
    """The first sample at or after `begin` that sits on the grid."""
    return -(-int(begin) // grid) * grid


def patch_stream(shapes: np.ndarray, patch: int, rng: np.random.Generator) -> np.ndarray:
    """The signal of a sequence of shape indices: one patch per index, each at its shape's RMS with a random
    sign, plus the noise floor."""
    patches = np.empty((shapes.size, patch))
    for shape in range(len(SHAPES)):
        where = np.flatnonzero(shapes == shape)
        drawn = _draw(shape, where.size, patch, rng)
        drawn *= SHAPE_RMS[shape] / np.sqrt(np.mean(drawn**2, axis=1, keepdims=True))
        patches[where] = drawn * rng.choice([-1.0, 1.0], size=(where.size, 1))
    return patches.ravel() + NOISE_FLOOR_RMS * rng.standard_normal(patches.size)


def _draw(shape: int, count: int, patch: int, rng: np.random.Generator) -> np.ndarray:
    """`count` patches of one shape, (count, patch), before scaling to its RMS."""
    t = np.arange(patch)[None, :]
    phase = rng.uniform(0, 2 * np.pi, size=(count, 1))
    if SHAPES[shape] == "impulses":  # four struck impacts per patch, each ringing briefly at a quarter of fs
        period = patch // 4
        since = (t - rng.integers(period, size=(count, 1))) % period
        strength = rng.lognormal(0.0, 0.3, size=(count, 1))
        return strength * np.exp(-since / (period / 4)) * np.cos(0.5 * np.pi * since)
    if SHAPES[shape] == "resonance":  # one decaying ring at a random frequency near 0.12 fs
        frequency = rng.uniform(0.10, 0.14, size=(count, 1))
        return np.exp(-t / (patch / 3)) * np.sin(2 * np.pi * frequency * t + phase)
    if SHAPES[shape] == "noise":
        return rng.standard_normal((count, patch))
    return np.sin(2 * np.pi * 1.5 * t / patch + phase) + 0.05 * rng.standard_normal((count, patch))  # hum
