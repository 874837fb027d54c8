"""Recordings by motor load: which loads the data holds, which classes were recorded at every load asked for,
and the test sets of a model trained at one load and tested at others (the experiment's cross-load evaluation,
the study's cross-load tests and its load-out design all train at some loads and test at others)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.lab.vibration.types import DataError, Recording
from core.lab.vibration.windows import WindowSet


def loads_of(recordings: Sequence[Recording]) -> dict[int, list[Recording]]:
    """Recordings by motor load (meta["load_hp"]); a recording without a load is a DataError."""
    by_load: dict[int, list[Recording]] = {}
    for recording in recordings:
        load = recording.meta.get("load_hp")
        if load is None:
            where = recording.meta.get("file") or recording.label
            raise DataError(
                f"Cross-load needs the motor load of every recording, and {where} has none (meta 'load_hp'). "
                f"Use CWRU or the synthetic set, or run without train and test loads."
            )
        by_load.setdefault(int(load), []).append(recording)
    return by_load


def common_classes(
    recordings: Sequence[Recording], train_loads: Sequence[int], test_loads: Sequence[int]
) -> tuple[list[str], list[str]]:
    """(classes recorded at every train and test load, in recording order; classes left out)."""
    by_load = loads_of(recordings)
    wanted = list(dict.fromkeys([*train_loads, *test_loads]))
    absent = [load for load in wanted if load not in by_load]
    if absent:
        raise DataError(
            f"No recordings at load(s) {absent} HP; the data holds loads {sorted(by_load)}. Load those loads "
            f"too, or choose train and test loads among them."
        )
    all_labels = list(dict.fromkeys(recording.label for recording in recordings))
    at_every_load = set.intersection(*({r.label for r in by_load[load]} for load in wanted))
    kept = [label for label in all_labels if label in at_every_load]
    dropped = [label for label in all_labels if label not in at_every_load]
    if len(kept) < 2:
        raise DataError(
            f"Only {len(kept)} class(es) ({', '.join(kept) or 'none'}) are recorded at every load of "
            f"{wanted} HP; a classifier needs two. Choose loads that share more classes."
        )
    return kept, dropped


def recordings_at(recordings: Sequence[Recording], load: int, classes: Sequence[str]) -> list[Recording]:
    """The recordings at motor load `load` of the classes `classes`."""
    return [r for r in loads_of(recordings)[load] if r.label in classes]


def all_windows(
    recordings: Sequence[Recording], class_names: Sequence[str], window: int, stride: int, mean: float, std: float
) -> tuple[np.ndarray, np.ndarray]:
    """Every window of every recording (none was trained on), normalised with the training statistics.

    Used for a load the model never saw: all of it is test data. Keeping the training mean and std, rather
    than normalising each load by its own, is what a deployed model would do.
    """
    pieces, labels = [], []
    for recording in recordings:
        if len(recording.signal) < window:
            continue
        cut = np.lib.stride_tricks.sliding_window_view(recording.signal, window)[::stride]  # (n, window)
        pieces.append(cut)
        labels.append(np.full(len(cut), list(class_names).index(recording.label), dtype=np.int64))
    if not pieces:
        raise DataError(f"No recording at this load is as long as one window ({window} samples).")
    x = (np.concatenate(pieces) - mean) / std
    return x.astype(np.float32), np.concatenate(labels)


def load_name(load: int) -> str:
    """The name of a load's test set, e.g. "load 1 HP"."""
    return f"load {load} HP"


def cross_load_test_sets(
    recordings: Sequence[Recording], windows: WindowSet, train_load: int, test_loads: Sequence[int]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Test sets for a model trained on `windows` (cut from `train_load`), keyed by `load_name`.

    The train load itself is scored on the held-out test block of its own split; any other load on all
    its windows of the classes in `windows.class_names`, normalised with the training statistics.
    """
    sets = {}
    for load in test_loads:
        if load == train_load:
            sets[load_name(load)] = (windows.x_test, windows.y_test)
        else:
            at_load = recordings_at(recordings, load, windows.class_names)
            sets[load_name(load)] = all_windows(
                at_load, windows.class_names, windows.window, windows.stride, windows.mean, windows.std
            )
    return sets
