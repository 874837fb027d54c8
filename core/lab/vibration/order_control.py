"""A positive control for positional encoding: a vibration-like task whose class lives only in the patch order.

Every recording is a stream of patches of `patch` samples, each one of four vibration-like shapes at a fixed
RMS per shape (an impulse train, a ringing resonance, a noise burst, a slow hum), with a random sign and random
details per patch, on a faint noise floor. The classes differ only in the order in which the shapes follow
each other: class c repeats its own cyclic sequence of 16 shapes, a de Bruijn sequence over the four shapes,
so every class holds each shape 4 times and each ordered pair of neighbouring shapes exactly once per cycle.

At the model's default patch (ModelConfig.patch = 32) and window (1024 samples), a window is 32 tokens,
exactly two cycles: the class lives in the token order. What an order-blind model can see is the same for
every class:

- the multiset of patches (shapes, energies, RMS, kurtosis): identical in every window cut on the patch grid;
- a token cut off the grid straddles two neighbouring patches, and the pairs of neighbours are balanced too;
- the spectrum: the random sign of each patch makes every cross term between two patches average to zero, so
  the expected power spectrum is the sum of the patches' spectra, the same for every class.

The classes differ from the second neighbour on (which shape comes two patches later), so a model has to
relate tokens by their positions to tell them apart; Model A (no position signal, mean-pooled) stays at
chance, 1 / n_classes. tests/test_order_control.py checks both sides with logistic regressions.
"""

from __future__ import annotations

import numpy as np

from core.lab.vibration.rates import checked_sample_rate
from core.lab.vibration.types import DataError, Recording

SAMPLE_RATE = 12_000.0  # nominal, the CWRU rate; the task is counted in samples, so it sets only the time axis
DEFAULT_PATCH = 32  # = ModelConfig.patch: the model's tokens must fall on the task's patches
SHAPES: tuple[str, ...] = ("impulses", "resonance", "noise", "hum")
SHAPE_RMS = np.array([1.0, 0.6, 0.35, 0.2])  # fixed per shape: a patch's energy names its shape
NOISE_FLOOR_RMS = 0.02
CYCLE = len(SHAPES) ** 2  # patches per class cycle: every ordered pair of shapes once
MAX_CLASSES = 10
MAX_DURATION_S = 600.0  # per class: 10 classes at 12 kHz stay under 600 MB of float64 on the command line
_CLASS_SEED = 20_240_522  # the classes' sequences are fixed (the data seed draws only the patches' details)
_CANDIDATES = 400


def load_order_control(
    seed: int = 0,
    n_classes: int = 4,
    duration_s: float = 10.0,
    patch: int = DEFAULT_PATCH,
    sample_rate: float = SAMPLE_RATE,
) -> list[Recording]:
    """One `Recording` per class ("order0", "order1", ...), each `duration_s` long, deterministic in `seed`.

    The class lives only in the order of the patches (see the module docstring): train with the model's patch
    equal to `patch` (the default 32 is ModelConfig's), so that each token is one patch of the task.
    """
    if isinstance(n_classes, bool) or not 2 <= int(n_classes) <= MAX_CLASSES:
        raise DataError(f"The order control has 2 to {MAX_CLASSES} classes, got {n_classes!r}.")
    if isinstance(patch, bool) or not 8 <= int(patch) <= 4096:
        raise DataError(f"The order control's patch must be 8 to 4096 samples, got {patch!r}.")
    duration = float(duration_s) if isinstance(duration_s, (int, float)) and not isinstance(duration_s, bool) else -1.0
    sample_rate = checked_sample_rate(sample_rate)
    if not np.isfinite(duration) or not 0 < duration <= MAX_DURATION_S:
        raise DataError(f"The order control's duration must be above 0 and at most {MAX_DURATION_S:g} s per class.")
    n_patches = int(np.ceil(duration * sample_rate / int(patch)))
    if n_patches < 2 * CYCLE:
        raise DataError(f"The order control needs at least {2 * CYCLE} patches per class; got {duration_s!r} s.")
    rng = np.random.default_rng([int(seed), int(n_classes), int(patch)])
    recordings = []
    for index, sequence in enumerate(class_sequences(int(n_classes))):
        shapes = np.resize(np.roll(sequence, -int(rng.integers(CYCLE))), n_patches)  # a random phase in the cycle
        signal = patch_stream(shapes, int(patch), rng)
        meta = {
            "source": "order_control",
            "sequence": "".join("ABCD"[s] for s in sequence),
            "patch": int(patch),
            "data_seed": int(seed),
        }
        recordings.append(Recording(signal=signal, sample_rate=sample_rate, label=f"order{index}", meta=meta))
    return recordings


def class_sequences(n_classes: int) -> list[np.ndarray]:
    """The cyclic shape sequence of each class: de Bruijn sequences over the four shapes (every shape 4 times,
    every ordered pair of neighbours once), chosen once and for all to differ most at the second neighbour."""
    rng = np.random.default_rng(_CLASS_SEED)
    candidates: dict[tuple[int, ...], np.ndarray] = {}
    for _ in range(_CANDIDATES):
        sequence = _de_bruijn_circuit(rng)
        candidates.setdefault(_canonical(sequence), sequence)
    pool = list(candidates.values())
    signatures = np.array([lag_pairs(s, 2).ravel() for s in pool])
    chosen = [0]
    while len(chosen) < n_classes:  # greedy: the candidate farthest from every one chosen so far
        distance = np.min([np.abs(signatures - signatures[c]).sum(axis=1) for c in chosen], axis=0)
        chosen.append(int(np.argmax(distance)))
    return [pool[c] for c in chosen]


def lag_pairs(sequence: np.ndarray, lag: int) -> np.ndarray:
    """(4, 4) counts of (shape at t, shape at t + lag) around a cyclic sequence of shape indices."""
    counts = np.zeros((len(SHAPES), len(SHAPES)), dtype=np.int64)
    np.add.at(counts, (sequence, np.roll(sequence, -lag)), 1)
    return counts


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


def _de_bruijn_circuit(rng: np.random.Generator) -> np.ndarray:
    """A random Eulerian circuit of the complete directed graph with loops on the four shapes (Hierholzer):
    a cyclic sequence of 16 shapes in which every ordered pair of neighbours occurs once."""
    k = len(SHAPES)
    unused = {node: list(rng.permutation(k)) for node in range(k)}
    stack, circuit = [0], []
    while stack:
        node = stack[-1]
        if unused[node]:
            stack.append(int(unused[node].pop()))
        else:
            circuit.append(stack.pop())
    return np.array(circuit[::-1][:-1], dtype=np.int64)  # the circuit returns to its start: drop the repeat


def _canonical(sequence: np.ndarray) -> tuple[int, ...]:
    """The smallest rotation, so two phases of one cyclic sequence count as one."""
    return min(tuple(np.roll(sequence, -shift)) for shift in range(sequence.size))
