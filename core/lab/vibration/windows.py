"""Cut recordings into fixed-length windows and split them into train / validation / test.

The honest split (`mode="time"`, the default) cuts every recording along time into a train block, a
validation block and a test block, with one window of unused samples between blocks, so no sample is in
two splits. The common split (`mode="random"`) shuffles all windows of a recording before dealing them
out; neighbouring windows of one continuous recording are nearly the same, so it leaks and flatters the
score. It is kept so the app can show the difference.

Normalisation statistics (one mean, one std) come from the training windows only and are applied to all
three splits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from core.lab.vibration.types import CLASS_NAMES, DataError, Recording

SPLITS = ("train", "val", "test")
MODES = ("time", "random")


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
    mode: str
    mean: float
    std: float
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # counts[split][class_name]
    ranges: list[dict] = field(default_factory=list)  # per recording: sample ranges of each split


def make_windows(
    recordings: list[Recording],
    window: int = 1024,
    stride: int | None = None,
    split: tuple[float, float, float] = (0.7, 0.2, 0.1),
    mode: str = "time",
    seed: int = 0,
) -> WindowSet:
    """Windows of `window` samples every `stride` samples (default: no overlap), split per recording.

    `split` is the (train, val, test) share of each recording. In time mode `ranges` gives, per
    recording, the (start, stop) sample range of each split block; in random mode those are None.
    """
    window, stride = _check_window(window, stride)
    split = _check_split(split)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    recordings = list(recordings)
    sample_rate = _check_recordings(recordings)
    class_names = _ordered_class_names(recordings)
    rng = np.random.default_rng(seed)

    starts_by_split: dict[str, list[tuple[int, np.ndarray]]] = {name: [] for name in SPLITS}
    ranges = []
    for index, recording in enumerate(recordings):
        if mode == "time":
            starts, blocks = _time_split(recording, window, stride, split)
        else:
            starts, blocks = _random_split(recording, window, stride, split, rng)
        for name in SPLITS:
            starts_by_split[name].append((index, starts[name]))
        ranges.append(
            {
                "label": recording.label,
                "source": recording.meta.get("source"),
                "file": recording.meta.get("file"),
                "length": len(recording.signal),
                **blocks,
            }
        )

    x = {name: _gather(recordings, starts_by_split[name], window) for name in SPLITS}
    y = {name: _labels(recordings, starts_by_split[name], class_names) for name in SPLITS}
    mean = float(x["train"].mean())
    std = float(x["train"].std())
    if not std > 0:
        raise DataError("The training windows are constant (std 0), so they cannot be normalised. Check the signals.")
    normalised = {name: ((x[name] - mean) / std).astype(np.float32) for name in SPLITS}
    counts = {name: {label: int(np.sum(y[name] == i)) for i, label in enumerate(class_names)} for name in SPLITS}
    return WindowSet(
        x_train=normalised["train"],
        y_train=y["train"],
        x_val=normalised["val"],
        y_val=y["val"],
        x_test=normalised["test"],
        y_test=y["test"],
        class_names=class_names,
        sample_rate=sample_rate,
        window=window,
        stride=stride,
        mode=mode,
        mean=mean,
        std=std,
        counts=counts,
        ranges=ranges,
    )


def _check_window(window: int, stride: int | None) -> tuple[int, int]:
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 2:
        raise ValueError(f"window must be an integer number of samples >= 2, got {window!r}")
    if stride is None:
        return int(window), int(window)
    if isinstance(stride, bool) or not isinstance(stride, (int, np.integer)) or stride < 1:
        raise ValueError(f"stride must be an integer number of samples >= 1 (or None), got {stride!r}")
    return int(window), int(stride)


def _check_split(split: tuple[float, float, float]) -> tuple[float, float, float]:
    split = tuple(float(share) for share in split)
    if len(split) != 3 or min(split) <= 0 or not math.isclose(sum(split), 1.0, abs_tol=1e-6):
        raise ValueError(f"split must be three positive shares (train, val, test) that add up to 1, got {split}")
    return split


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


def _time_blocks(length: int, window: int, split: tuple[float, float, float]) -> dict[str, tuple[int, int]]:
    # One window of samples is left out between blocks: with overlapping windows or a stride that
    # does not divide a block, a window at the edge of one block could otherwise reach into the next.
    usable = length - 2 * window
    train_end = round(split[0] * usable)
    val_end = round((split[0] + split[1]) * usable)
    return {
        "train": (0, train_end),
        "val": (train_end + window, val_end + window),
        "test": (val_end + 2 * window, length),
    }


def _time_split(
    recording: Recording, window: int, stride: int, split: tuple[float, float, float]
) -> tuple[dict[str, np.ndarray], dict[str, tuple[int, int]]]:
    length = len(recording.signal)
    blocks = _time_blocks(length, window, split)
    starts = {name: start + _window_starts(stop - start, window, stride) for name, (start, stop) in blocks.items()}
    if any(starts[name].size == 0 for name in SPLITS):
        _raise_too_short(recording, window, length, _shortest_time_length(window, split), "time")
    return starts, blocks


def _shortest_time_length(window: int, split: tuple[float, float, float]) -> int:
    # Rounding moves block edges by up to a sample, so step up from a bound just below the shortest.
    length = 2 * window + int((window - 1) / min(split))
    while True:
        blocks = _time_blocks(length, window, split)
        if all(stop - start >= window for start, stop in blocks.values()):
            return length
        length += 1


def _random_counts(n_windows: int, split: tuple[float, float, float]) -> tuple[int, int, int]:
    n_val = round(split[1] * n_windows)
    n_test = round(split[2] * n_windows)
    return n_windows - n_val - n_test, n_val, n_test


def _random_split(
    recording: Recording,
    window: int,
    stride: int,
    split: tuple[float, float, float],
    rng: np.random.Generator,
) -> tuple[dict[str, np.ndarray], dict[str, None]]:
    length = len(recording.signal)
    all_starts = rng.permutation(_window_starts(length, window, stride))
    n_train, n_val, n_test = _random_counts(all_starts.size, split)
    if min(n_train, n_val, n_test) < 1:
        n_needed = all_starts.size + 1
        while min(_random_counts(n_needed, split)) < 1:
            n_needed += 1
        _raise_too_short(recording, window, length, window + (n_needed - 1) * stride, "random")
    starts = {
        "train": np.sort(all_starts[:n_train]),
        "val": np.sort(all_starts[n_train : n_train + n_val]),
        "test": np.sort(all_starts[n_train + n_val :]),
    }
    return starts, {name: None for name in SPLITS}


def _raise_too_short(recording: Recording, window: int, length: int, needed: int, mode: str) -> None:
    where = recording.meta.get("file") or recording.meta.get("source") or "a recording"
    raise DataError(
        f"Class {recording.label!r} ({where}) has {length} samples ({length / recording.sample_rate:.2f} s), too short "
        f"to give every split at least one {window}-sample window in {mode} mode. It needs at least {needed} samples "
        f"({needed / recording.sample_rate:.2f} s): use a longer recording or a smaller window."
    )


def _gather(recordings: list[Recording], starts: list[tuple[int, np.ndarray]], window: int) -> np.ndarray:
    offsets = np.arange(window)
    pieces = [recordings[index].signal[block_starts[:, None] + offsets] for index, block_starts in starts]
    return np.concatenate(pieces, axis=0)  # (n_windows, window), float64 until normalised


def _labels(recordings: list[Recording], starts: list[tuple[int, np.ndarray]], class_names: list[str]) -> np.ndarray:
    pieces = [np.full(block_starts.size, class_names.index(recordings[index].label)) for index, block_starts in starts]
    return np.concatenate(pieces).astype(np.int64)
