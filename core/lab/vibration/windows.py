"""Cut recordings into fixed-length windows and assign them to the train, validation and test roles.

The honest windowing (`windowing="time"`, the default) cuts every recording along time into a train block,
a validation block and a test block, with one window of unused samples between blocks, so no sample has two
roles. The common windowing (`windowing="random"`) shuffles all windows of a recording before dealing them
out; neighbouring windows of one continuous recording are nearly the same, so it leaks and flatters the
score. It is kept so the app can show the difference. `shares` are the (train, val, test) proportions.

Normalisation statistics (one mean, one std) come from the training windows only and are applied to all
three roles.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.lab.names import WINDOWINGS
from core.lab.vibration.order_control import on_grid, revolution_grid
from core.lab.vibration.types import CLASS_NAMES, DataError, Recording

ROLES = ("train", "val", "test")
DEFAULT_SHARES = (0.7, 0.2, 0.1)  # the (train, val, test) proportions of each recording


@dataclass
class WindowSet:
    """Windows ready for a classifier: x_* float32 (n, window) normalised with train statistics, y_* int64."""

    x_train: np.ndarray  # (n_train, window)
    y_train: np.ndarray  # (n_train,) index into class_names
    x_val: np.ndarray  # (n_val, window)
    y_val: np.ndarray  # (n_val,)
    x_test: np.ndarray  # (n_test, window)
    y_test: np.ndarray  # (n_test,)
    class_names: list[str]
    sample_rate: float
    window: int
    stride: int
    windowing: str  # "time" or "random"; a study's folds write their design here
    mean: float
    std: float
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # counts[role][class_name]
    ranges: list[dict] = field(default_factory=list)  # per recording: sample ranges of each role

    @property
    def mode(self) -> str:
        """The old name of `windowing`, still read."""
        return self.windowing


def make_windows(
    recordings: list[Recording],
    window: int = 1024,
    stride: int | None = None,
    shares: tuple[float, float, float] = DEFAULT_SHARES,
    windowing: str = "time",
    windowing_seed: int = 0,
    *,
    split: tuple[float, float, float] | None = None,
    mode: str | None = None,
    seed: int | None = None,
) -> WindowSet:
    """Windows of `window` samples every `stride` samples (default: no overlap), assigned per recording.

    `shares` is the (train, val, test) proportion of each recording; `windowing_seed` deals the random
    windowing's windows. With time windowing `ranges` gives, per recording, the (start, stop) sample range of
    each role's block; with random windowing those are None. `split`, `mode` and `seed` are the old names of
    `shares`, `windowing` and `windowing_seed`, still accepted.
    """
    shares = shares if split is None else split
    windowing = windowing if mode is None else mode
    windowing_seed = windowing_seed if seed is None else seed
    recordings = list(recordings)
    window, stride, _, starts_by_role, ranges = _checked_starts(
        recordings, window, stride, shares, windowing, windowing_seed
    )
    class_names = _ordered_class_names(recordings)
    labels = [class_names.index(recording.label) for recording in recordings]
    return windows_from_starts(recordings, starts_by_role, labels, class_names, window, stride, windowing, ranges)


def windows_from_starts(
    recordings: Sequence[Recording],
    starts_by_role: dict[str, list[tuple[int, np.ndarray]]],
    labels: Sequence[int],
    class_names: list[str],
    window: int,
    stride: int,
    windowing: str,
    ranges: list[dict] | None = None,
) -> WindowSet:
    """The WindowSet of the windows that start at `starts_by_role` (per role: recording index, starts), recording
    i's windows labelled `labels[i]`, every role normalised with the training windows' mean and std: how
    `make_windows` and every fold of a study (core.lab.study.folds) cut their windows, one way."""
    x = {name: _gather(recordings, starts_by_role[name], window) for name in ROLES}
    y = {name: _labels(starts_by_role[name], labels) for name in ROLES}
    mean = float(x["train"].mean())
    std = float(x["train"].std())
    if not std > 0:
        raise DataError("The training windows are constant (std 0), so they cannot be normalised. Check the signals.")
    normalised = {name: ((x[name] - mean) / std).astype(np.float32) for name in ROLES}
    counts = {name: {label: int(np.sum(y[name] == i)) for i, label in enumerate(class_names)} for name in ROLES}
    return WindowSet(
        x_train=normalised["train"],
        y_train=y["train"],
        x_val=normalised["val"],
        y_val=y["val"],
        x_test=normalised["test"],
        y_test=y["test"],
        class_names=class_names,
        sample_rate=float(recordings[0].sample_rate),
        window=window,
        stride=stride,
        windowing=windowing,
        mean=mean,
        std=std,
        counts=counts,
        ranges=ranges or [],
    )


def count_training_windows(
    recordings: list[Recording],
    window: int = 1024,
    stride: int | None = None,
    shares: tuple[float, float, float] = DEFAULT_SHARES,
    windowing: str = "time",
    windowing_seed: int = 0,
    *,
    seed: int | None = None,
) -> int:
    """How many training windows `make_windows` cuts with these settings, counted from the window starts: no
    window is copied. The page's wait estimate asks it of data sets whose windows would take hundreds of MB.
    `seed` is the old name of `windowing_seed`."""
    return count_windows(recordings, window, stride, shares, windowing, windowing_seed, seed=seed)["train"]


def count_windows(
    recordings: list[Recording],
    window: int = 1024,
    stride: int | None = None,
    shares: tuple[float, float, float] = DEFAULT_SHARES,
    windowing: str = "time",
    windowing_seed: int = 0,
    *,
    seed: int | None = None,
) -> dict[str, int]:
    """How many windows of each role (train, val, test) `make_windows` cuts with these settings, counted from the
    window starts alone (see count_training_windows; `seed` is the old name of `windowing_seed`)."""
    windowing_seed = windowing_seed if seed is None else seed
    starts_by_role = _checked_starts(list(recordings), window, stride, shares, windowing, windowing_seed)[3]
    return {role: sum(int(starts.size) for _, starts in starts_by_role[role]) for role in ROLES}


def one_fold_starts(
    recordings: list[Recording], window: int, stride: int | None = None, **cut: Any
) -> tuple[dict[str, list[tuple[int, np.ndarray]]], list[str]]:
    """Where `make_windows` cuts each role's windows, as (recording index, window starts) per role, and its class
    order: a study's one fold (core.lab.study.folds) cuts the experiment's windows from them, no other way. `cut`
    holds make_windows' shares, windowing and windowing_seed (its defaults where left out)."""
    settings = {"shares": DEFAULT_SHARES, "windowing": "time", "windowing_seed": 0}
    if set(cut) - set(settings):
        raise TypeError(f"one_fold_starts takes {sorted(settings)}, got {sorted(cut)}")
    settings.update(cut)
    recordings = list(recordings)
    starts = _checked_starts(recordings, window, stride, *settings.values())[3]
    return starts, _ordered_class_names(recordings)


def _checked_starts(
    recordings: list[Recording],
    window: int,
    stride: int | None,
    shares: tuple[float, float, float],
    windowing: str,
    seed: int,
) -> tuple[int, int, float, dict[str, list[tuple[int, np.ndarray]]], list[dict]]:
    """The settings checked, then (window, stride, sample rate, starts per role, ranges) as `_assign` gives them."""
    window, stride = _check_window(window, stride)
    shares = _check_shares(shares)
    if windowing not in WINDOWINGS:
        raise ValueError(f"windowing must be one of {WINDOWINGS}, got {windowing!r}")
    sample_rate = _check_recordings(recordings)
    starts_by_role, ranges = _assign(recordings, window, stride, shares, windowing, np.random.default_rng(seed))
    return window, stride, sample_rate, starts_by_role, ranges


def _assign(
    recordings: list[Recording],
    window: int,
    stride: int,
    shares: tuple[float, float, float],
    windowing: str,
    rng: np.random.Generator,
) -> tuple[dict[str, list[tuple[int, np.ndarray]]], list[dict]]:
    """Per role, (recording index, window starts) of every recording; and per recording, its role blocks."""
    starts_by_role: dict[str, list[tuple[int, np.ndarray]]] = {name: [] for name in ROLES}
    ranges = []
    grid = revolution_grid(recordings, stride)  # random windowing starts at 0 every `stride`: on the grid already
    for index, recording in enumerate(recordings):
        if windowing == "time":
            starts, blocks = _time_windowing(recording, window, stride, shares, grid)
        else:
            starts, blocks = _random_windowing(recording, window, stride, shares, rng)
        for name in ROLES:
            starts_by_role[name].append((index, starts[name]))
        meta = recording.meta
        ranges.append(
            {
                "label": recording.label,
                "source": meta.get("source"),
                "file": meta.get("file"),
                "length": len(recording.signal),
            }
            | blocks
        )
    return starts_by_role, ranges


def _check_window(window: int, stride: int | None) -> tuple[int, int]:
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 2:
        raise ValueError(f"window must be an integer number of samples >= 2, got {window!r}")
    if stride is None:
        return int(window), int(window)
    if isinstance(stride, bool) or not isinstance(stride, (int, np.integer)) or stride < 1:
        raise ValueError(f"stride must be an integer number of samples >= 1 (or None), got {stride!r}")
    return int(window), int(stride)


def _check_shares(shares: tuple[float, float, float]) -> tuple[float, float, float]:
    shares = tuple(float(share) for share in shares)
    if len(shares) != 3 or min(shares) <= 0 or not math.isclose(sum(shares), 1.0, abs_tol=1e-6):
        raise ValueError(f"shares must be three positive numbers (train, val, test) that add up to 1, got {shares}")
    return shares


def _check_recordings(recordings: list[Recording]) -> float:
    labels = {recording.label for recording in recordings}
    if len(labels) < 2:
        raise DataError(
            f"A classifier needs at least two classes; got {len(labels)} ({', '.join(sorted(labels)) or 'none'}). "
            f"Add recordings of another class."
        )
    rates = {recording.sample_rate for recording in recordings}
    if len(rates) > 1:
        raise DataError(
            f"All recordings must share one sample rate to be windowed together; got {sorted(rates)} Hz. "
            f"Resample them to one rate first."
        )
    return rates.pop()


def _ordered_class_names(recordings: list[Recording]) -> list[str]:
    labels = list(dict.fromkeys(recording.label for recording in recordings))
    known = [name for name in CLASS_NAMES if name in labels]
    return known + [label for label in labels if label not in CLASS_NAMES]


def _window_starts(length: int, window: int, stride: int) -> np.ndarray:
    if length < window:
        return np.empty(0, dtype=np.int64)
    return np.arange(0, length - window + 1, stride, dtype=np.int64)


def _time_blocks(length: int, window: int, shares: tuple[float, float, float]) -> dict[str, tuple[int, int]]:
    # One window of samples is left out between blocks: with overlapping windows or a stride that
    # does not divide a block, a window at the edge of one block could otherwise reach into the next.
    usable = length - 2 * window
    train_end = round(shares[0] * usable)
    val_end = round((shares[0] + shares[1]) * usable)
    return {
        "train": (0, train_end),
        "val": (train_end + window, val_end + window),
        "test": (val_end + 2 * window, length),
    }


def _time_windowing(
    recording: Recording, window: int, stride: int, shares: tuple[float, float, float], grid: int = 1
) -> tuple[dict[str, np.ndarray], dict[str, tuple[int, int]]]:
    length = len(recording.signal)
    blocks = _time_blocks(length, window, shares)
    starts = {}
    for name, (start, stop) in blocks.items():
        first = on_grid(start, grid)  # an order control's windows start at a revolution
        starts[name] = first + _window_starts(stop - first, window, stride)
    if any(starts[name].size == 0 for name in ROLES):
        _raise_too_short(recording, window, length, _shortest_time_length(window, shares), "time")
    return starts, blocks


def _shortest_time_length(window: int, shares: tuple[float, float, float]) -> int:
    # Rounding moves block edges by up to a sample, so step up from a bound just below the shortest.
    length = 2 * window + int((window - 1) / min(shares))
    while True:
        blocks = _time_blocks(length, window, shares)
        if all(stop - start >= window for start, stop in blocks.values()):
            return length
        length += 1


def _random_counts(n_windows: int, shares: tuple[float, float, float]) -> tuple[int, int, int]:
    n_val = round(shares[1] * n_windows)
    n_test = round(shares[2] * n_windows)
    return n_windows - n_val - n_test, n_val, n_test


def _random_windowing(
    recording: Recording,
    window: int,
    stride: int,
    shares: tuple[float, float, float],
    rng: np.random.Generator,
) -> tuple[dict[str, np.ndarray], dict[str, None]]:
    length = len(recording.signal)
    all_starts = rng.permutation(_window_starts(length, window, stride))
    n_train, n_val, n_test = _random_counts(all_starts.size, shares)
    if min(n_train, n_val, n_test) < 1:
        n_needed = all_starts.size + 1
        while min(_random_counts(n_needed, shares)) < 1:
            n_needed += 1
        _raise_too_short(recording, window, length, window + (n_needed - 1) * stride, "random")
    starts = {
        "train": np.sort(all_starts[:n_train]),
        "val": np.sort(all_starts[n_train : n_train + n_val]),
        "test": np.sort(all_starts[n_train + n_val :]),
    }
    return starts, {name: None for name in ROLES}


def _raise_too_short(recording: Recording, window: int, length: int, needed: int, windowing: str) -> None:
    where = recording.meta.get("file") or recording.meta.get("source") or "a recording"
    raise DataError(
        f"Class {recording.label!r} ({where}) has {length} samples ({length / recording.sample_rate:.2f} s), too short "
        f"to give every role (train, val, test) at least one {window}-sample window with {windowing} windowing. It "
        f"needs at least {needed} samples "
        f"({needed / recording.sample_rate:.2f} s): use a longer recording or a smaller window."
    )


def _gather(recordings: Sequence[Recording], starts: list[tuple[int, np.ndarray]], window: int) -> np.ndarray:
    offsets = np.arange(window)
    pieces = [recordings[index].signal[block_starts[:, None] + offsets] for index, block_starts in starts]
    return np.concatenate(pieces, axis=0)  # (n_windows, window), float64 until normalised


def _labels(starts: list[tuple[int, np.ndarray]], labels: Sequence[int]) -> np.ndarray:
    pieces = [np.full(block_starts.size, labels[index]) for index, block_starts in starts]
    return np.concatenate(pieces).astype(np.int64)
