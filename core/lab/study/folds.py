"""The folds of a study: each says which windows a model trains on, validates on and is tested on.

    time-cv     each recording cut into K contiguous blocks; fold k tests block k, validates on block k+1
                (cyclic) and trains on the rest. Gaps of one window length separate roles and are taken from
                the training or validation side, never from the test block, so every window is tested
                exactly once per seed. With R repeats, repeat r shifts every block boundary of a recording by
                r/R of a block (round(r * length / (K R)) samples), wrapping: the last block of repeat r > 0
                is the recording's end joined to its first samples (two pieces, each keeping its own window
                grid and gaps). The shifts are fixed, so the folds of every repeat are deterministic.
    load-out    train at every motor load but one, test on all windows at the held-out load (the classes
                recorded at every load); validation is the last time block of each training recording. With
                train loads given (--train-loads), every fold trains at those loads alone and tests one of
                the others (--test-loads): a shift of load in one direction, one fold per test load.
    fault-size  a 4-class task by fault location (normal, inner race, ball, outer race): train on two fault
                sizes, test on the third, one fold per size; the normal recordings are split in time across
                the folds; validation as in load-out.
    one-fold    the experiment's one cut as a study's one fold: each recording's windows dealt to train,
                validation and test by `shares`, in time blocks or at random (`windowing`), exactly as
                core.lab.vibration.windows.make_windows deals them; so an experiment is a study with one fold.

Repeats of load-out and fault-size reuse the same folds: those folds are fixed by the data (a load, a fault
size), so `make_folds` returns them once whatever the repeats, and a study runs one repeat of them (another
repeat would retrain the same (fold, seed) cells to the same numbers; more seeds are the way to more runs).

Protocol 3 validates on slices spread over every training block instead (core.lab.study.validation); the test
windows are the same under both. Normalisation (one mean, one std) is fitted on each fold's training windows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.lab.names import DESIGNS, ONE_FOLD, ONE_FOLD_NAME
from core.lab.study.validation import VALIDATION_STYLES, clear_of, split_validation, spread_slices
from core.lab.vibration.loads import common_classes
from core.lab.vibration.order_control import on_grid, revolution_grid
from core.lab.vibration.types import DataError, Recording
from core.lab.vibration.windows import WindowSet, one_fold_starts, windows_from_starts

SPLITS = DESIGNS  # the old name of DESIGNS, still read
ROLES = ("train", "val", "test")
LOCATIONS = {"IR": "inner race", "B": "ball", "OR": "outer race"}
FAULT_LABEL = re.compile(r"^(IR|B|OR)(\d{3})$")


@dataclass
class Fold:
    """One fold: its windows, and where each test window comes from (recording index, first sample)."""

    index: int
    name: str
    windows: WindowSet
    test_recording: np.ndarray  # (n_test,) index into the study's recordings
    test_start: np.ndarray  # (n_test,) first sample of each test window
    starts: dict[str, list[tuple[int, np.ndarray]]]  # per role: (recording index, window starts)
    repeat: int = 0  # which repeat of the design's cutting (time-cv with --repeats); 0 otherwise


# --- building blocks ---------------------------------------------------------------------------------


def _starts(begin: int, end: int, window: int, stride: int, grid: int = 1) -> np.ndarray:
    """Window starts every `stride` from the first sample at or after `begin` on the `grid` (an order
    control's revolution; 1 elsewhere), whose windows end by `end`."""
    begin = on_grid(begin, grid)
    if end - begin < window:
        return np.empty(0, dtype=np.int64)
    return np.arange(begin, end - window + 1, stride, dtype=np.int64)


def _name(recording: Recording) -> str:
    return str(recording.meta.get("file") or recording.label)


def _fold_windows(
    recordings: Sequence[Recording],
    roles: dict[str, list[tuple[int, np.ndarray]]],
    labels: Sequence[int],
    class_names: list[str],
    window: int,
    stride: int,
    design: str,
) -> WindowSet:
    """A WindowSet from (recording index, starts) per role, normalised with the training windows' statistics, cut as
    the experiment cuts its own (core.lab.vibration.windows.windows_from_starts); `design` names the fold's."""
    _check_roles(roles, design)
    return windows_from_starts(recordings, roles, labels, class_names, window, stride, design)


def _check_roles(roles: dict[str, list[tuple[int, np.ndarray]]], design: str) -> None:
    for role in ROLES:
        if not any(s.size for _, s in roles[role]):
            raise DataError(f"A {design} fold has no {role} windows: the recordings are too short for these folds.")


def _training_count(index, name, recordings, roles, labels, class_names, window, stride, design, repeat=0) -> int:
    """A fold's training windows, from its window starts alone (the `build` of training_window_counts)."""
    _check_roles(roles, design)
    return sum(int(s.size) for _, s in roles["train"])


def _test_count(index, name, recordings, roles, labels, class_names, window, stride, design, repeat=0) -> int:
    """A fold's test windows, from its window starts alone (the `build` of windows_tested_per_fold)."""
    _check_roles(roles, design)
    return sum(int(s.size) for _, s in roles["test"])


def _fold(index: int, name: str, recordings, roles, labels, class_names, window, stride, design, repeat=0) -> Fold:
    windows = _fold_windows(recordings, roles, labels, class_names, window, stride, design)
    return _placed(index, name, windows, roles, repeat)


def fold_of(windows: WindowSet) -> Callable[..., Fold]:
    """A `build` for make_folds that places `windows`, already cut from the same starts (the experiment's own), in
    the fold instead of cutting them again: one copy of the windows in memory, not two."""

    def build(index, name, recordings, roles, labels, class_names, window, stride, design, repeat=0) -> Fold:
        return _placed(index, name, windows, roles, repeat)

    return build


def _placed(index: int, name: str, windows: WindowSet, roles, repeat: int) -> Fold:
    """A fold of `windows`, with where each test window comes from (recording index, first sample)."""
    tests = [(i, s) for i, s in roles["test"] if s.size]
    return Fold(
        index,
        name,
        windows,
        np.concatenate([np.full(s.size, i, dtype=np.int64) for i, s in tests]),
        np.concatenate([s for _, s in tests]),
        roles,
        repeat,
    )


def _check_rates(recordings: Sequence[Recording]) -> None:
    if not recordings:
        raise DataError("A study needs recordings; none were given.")
    rates = {float(r.sample_rate) for r in recordings}
    if len(rates) > 1:
        raise DataError(f"Every recording of a study must share one sample rate; got {sorted(rates)} Hz.")


def _ordered_labels(recordings: Sequence[Recording]) -> list[str]:
    return list(dict.fromkeys(r.label for r in recordings))


# --- the three designs --------------------------------------------------------------------------------


Segments = list[tuple[int, int]]  # one block: its (begin, end) sample ranges (two when it wraps)


def time_blocks(length: int, k: int, shift: int = 0) -> list[Segments]:
    """The K blocks of a recording of `length` samples, every boundary moved `shift` samples later (0 <= shift <
    a block), the last block wrapping from the end to the start: each block as its (begin, end) pieces."""
    blocks = []
    for j in range(k):
        begin, end = length * j // k + shift, length * (j + 1) // k + shift
        blocks.append([(begin, end)] if end <= length else [(begin, length), (0, end - length)])
    return blocks


def _grid(block: Segments, window: int, stride: int, grid: int = 1) -> np.ndarray:
    return np.concatenate([_starts(a, b, window, stride, grid) for a, b in block])


def time_cv_folds(
    recordings: Sequence[Recording],
    window: int,
    k: int,
    stride: int | None = None,
    repeats: int = 1,
    build: Callable[..., Any] = _fold,
    validation: str = "block",
) -> list[Fold]:
    """K folds of contiguous time blocks of every recording, for each of `repeats` repeats (see the module
    docstring): repeat r's folds follow repeat r - 1's, each Fold carrying its repeat. `validation`: the next
    block ("block", protocol 2) or slices of every training block ("slices", protocol 3)."""
    if k < 3:
        raise ValueError(f"time-cv needs at least 3 folds (test, validation and training blocks), got {k}")
    if repeats < 1:
        raise ValueError(f"a study needs at least one repeat, got {repeats}")
    if validation not in VALIDATION_STYLES:
        raise ValueError(f"validation must be one of {VALIDATION_STYLES}, got {validation!r}")
    stride = stride or window
    _check_rates(recordings)
    for recording in recordings:
        if len(recording.signal) // k < 3 * window:
            raise DataError(
                f"{_name(recording)} has {len(recording.signal)} samples: too short for {k} time blocks of at least "
                f"three {window}-sample windows each (a test window, and a gap on each side of the others). "
                f"Use fewer folds or a smaller window."
            )
    return [
        fold
        for repeat in range(repeats)
        for fold in _time_cv_repeat(recordings, window, k, stride, repeat, repeats, build, validation)
    ]


def _time_cv_roles(blocks: list[Segments], fold: int, window: int, stride: int, grid: int, validation: str):
    """(test, validation, training) starts of one recording's blocks in fold `fold`."""
    k = len(blocks)
    test = blocks[fold]
    test_starts = _grid(test, window, stride, grid)
    if validation == "slices":  # protocol 3: slices of every training block, 1 / (K - 1) of each
        training = [clear_of(_grid(b, window, stride, grid), window, test, window) for j, b in enumerate(blocks)]
        training = [starts for j, starts in enumerate(training) if j != fold]
        train, val = spread_slices(training, window, 1 / (k - 1), keep_clear=test)
        return test_starts, val, train
    val_block = blocks[(fold + 1) % k]
    val = clear_of(_grid(val_block, window, stride, grid), window, test, window)
    train = [_grid(b, window, stride, grid) for j, b in enumerate(blocks) if j not in (fold, (fold + 1) % k)]
    return test_starts, val, clear_of(np.concatenate(train), window, [*test, *val_block], window)


def _time_cv_repeat(
    recordings, window: int, k: int, stride: int, repeat: int, repeats: int, build=_fold, validation: str = "block"
) -> list:
    class_names = _ordered_labels(recordings)
    labels = [class_names.index(r.label) for r in recordings]
    grid = revolution_grid(recordings, stride)
    # per recording: each block's pieces, every boundary moved by repeat / repeats of a block
    blocks = [time_blocks(len(r.signal), k, round(repeat * len(r.signal) / (k * repeats))) for r in recordings]
    folds = []
    for fold in range(k):
        roles: dict[str, list[tuple[int, np.ndarray]]] = {role: [] for role in ROLES}
        for i, recording_blocks in enumerate(blocks):
            test, val, train = _time_cv_roles(recording_blocks, fold, window, stride, grid, validation)
            roles["test"].append((i, test))
            roles["val"].append((i, val))
            roles["train"].append((i, train))
        name = f"block {fold + 1} of {k}" + (f", repeat {repeat + 1}" if repeat else "")
        folds.append(build(fold, name, recordings, roles, labels, class_names, window, stride, "time-cv", repeat))
    return folds


def load_out_folds(
    recordings: Sequence[Recording],
    window: int,
    stride: int | None = None,
    build: Callable[..., Any] = _fold,
    validation: str = "block",
    train_loads: Sequence[int] | None = None,
    test_loads: Sequence[int] | None = None,
) -> list[Fold]:
    """One fold per motor load: train at the others, test on every window at that load. With `train_loads`
    (and `test_loads`, default: every other load of the data), one fold per test load, each trained at
    `train_loads` alone."""
    stride = stride or window
    _check_rates(recordings)
    loads = sorted({int(r.meta["load_hp"]) for r in recordings if r.meta.get("load_hp") is not None})
    train_set, tested = _load_roles(loads, train_loads, test_loads)
    class_names, _ = common_classes(recordings, train_set, tested)
    # indices stay those of `recordings` (the study JSON lists them all); a class not at every load takes no part
    labels = [class_names.index(r.label) if r.label in class_names else -1 for r in recordings]
    folds = []
    for index, held_out in enumerate(tested):
        roles: dict[str, list[tuple[int, np.ndarray]]] = {role: [] for role in ROLES}
        for i, recording in enumerate(recordings):
            load = int(recording.meta["load_hp"]) if labels[i] >= 0 else None
            starts = _starts(0, len(recording.signal), window, stride)
            if load == held_out:
                roles["test"].append((i, starts))
            elif load in train_set:
                train, val = split_validation(starts, window, validation)
                roles["train"].append((i, train))
                roles["val"].append((i, val))
        name = f"test at {held_out}{_load_unit(recordings)}"
        folds.append(build(index, name, recordings, roles, labels, class_names, window, stride, "load-out"))
    return folds


def _load_roles(
    loads: list[int], train_loads: Sequence[int] | None, test_loads: Sequence[int] | None
) -> tuple[list[int], list[int]]:
    """(the loads trained at, the loads tested, a fold each) of a load-out study; DataError in words."""
    if train_loads is None and test_loads is None:
        if len(loads) < 2:
            raise DataError(f"load-out needs recordings at two or more motor loads; the data holds {loads or 'none'}.")
        return loads, loads
    if train_loads is None:
        raise ValueError("load-out with --test-loads needs --train-loads too")
    train_set = sorted({int(load) for load in train_loads})
    tested = sorted({int(load) for load in test_loads} if test_loads is not None else set(loads) - set(train_set))
    absent = sorted(set(train_set + tested) - set(loads))
    if absent:
        raise DataError(f"No recordings at load(s) {absent}; the data holds loads {loads}. Add them to --loads.")
    if not train_set or not tested or set(train_set) & set(tested):
        raise ValueError(f"train loads {train_set} and test loads {tested} must be non-empty and disjoint")
    return train_set, tested


def _load_unit(recordings: Sequence[Recording]) -> str:
    """How a load reads in a fold's name: percent on the SpectraQuest rig (its load_hp holds percent), HP else."""
    return " %" if any("load_percent" in r.meta for r in recordings) else " HP"


def fault_location(label: str) -> tuple[str, str | None]:
    """("inner race", "007") for "IR007", ("normal", None) for "normal"; DataError for other labels."""
    if label == "normal":
        return "normal", None
    match = FAULT_LABEL.match(label)
    if match is None:
        raise DataError(
            f"fault-size needs CWRU-style labels (normal, IR007, B014, OR021, ...); {label!r} names no fault size."
        )
    return LOCATIONS[match.group(1)], match.group(2)


def fault_size_folds(
    recordings: Sequence[Recording],
    window: int,
    stride: int | None = None,
    build: Callable[..., Any] = _fold,
    validation: str = "block",
) -> list[Fold]:
    """One fold per fault size: a 4-class task by location, tested on a fault size never trained on."""
    stride = stride or window
    _check_rates(recordings)
    located = [fault_location(r.label) for r in recordings]
    sizes = sorted({size for _, size in located if size is not None})
    if len(sizes) < 2:
        raise DataError(f"fault-size needs faults of two or more sizes; the data holds {sizes or 'none'}.")
    class_names = [c for c in ("normal", *LOCATIONS.values()) if c in {loc for loc, _ in located}]
    labels = [class_names.index(location) for location, _ in located]
    folds = []
    for index, held_out in enumerate(sizes):
        roles: dict[str, list[tuple[int, np.ndarray]]] = {role: [] for role in ROLES}
        for i, (recording, (_, size)) in enumerate(zip(recordings, located)):
            starts = _starts(0, len(recording.signal), window, stride)
            if size is None:  # normal: its time block `index` of len(sizes) is tested, the rest trains
                bounds = [len(recording.signal) * j // len(sizes) for j in range(len(sizes) + 1)]
                test_block = (bounds[index], bounds[index + 1])
                roles["test"].append((i, _starts(*test_block, window, stride)))
                starts = clear_of(starts, window, [test_block], window)
            elif size == held_out:
                roles["test"].append((i, starts))
                continue
            train, val = split_validation(starts, window, validation)
            roles["train"].append((i, train))
            roles["val"].append((i, val))
        folds.append(
            build(index, f"test size {held_out}", recordings, roles, labels, class_names, window, stride, "fault-size")
        )
    return folds


def one_fold_cut(
    recordings: Sequence[Recording],
    window: int,
    stride: int | None,
    build: Callable[..., Any],
    loads: tuple[Sequence[int], Sequence[int]] | None = None,
    **cut: Any,
) -> list[Fold]:
    """The one-fold design's one fold (see the module docstring); with `loads` (its one train load, its test loads:
    core.lab.study.cross_load) cut from the recordings at the train load of the classes recorded at every chosen
    load alone, exactly as the experiment's cross-load evaluation cuts its own, the others taking no part."""
    chosen = list(range(len(recordings)))
    if loads is not None:
        classes, _ = common_classes(recordings, *loads)
        at_load = [i for i in chosen if recordings[i].meta.get("load_hp") == loads[0][0]]
        chosen = [i for i in at_load if recordings[i].label in classes]
    starts, class_names = one_fold_starts([recordings[i] for i in chosen], window, stride, **cut)
    starts = {role: [(chosen[j], s) for j, s in pieces] for role, pieces in starts.items()}  # the study's indices
    taking_part = set(chosen)
    labels = [class_names.index(r.label) if i in taking_part else -1 for i, r in enumerate(recordings)]
    return [build(0, ONE_FOLD_NAME, recordings, starts, labels, class_names, window, stride or window, ONE_FOLD)]


def make_folds(
    design: str,
    recordings: Sequence[Recording],
    window: int,
    k: int = 5,
    stride: int | None = None,
    repeats: int = 1,
    build: Callable[..., Any] = _fold,
    *,
    validation: str = "block",
    train_loads: Sequence[int] | None = None,
    test_loads: Sequence[int] | None = None,
    cut: Mapping[str, Any] | None = None,
) -> list[Fold]:
    """The folds of a study of this `design` (one of DESIGNS); `k` folds for time-cv, each of `repeats` repeats
    (load-out and fault-size: their one fixed set of folds, whatever the repeats; see the module docstring).
    `build` makes each fold from its window starts per role (the Fold with its windows by default);
    `validation` is "block" (protocol 2) or "slices" (protocol 3, core.lab.study.validation); `train_loads` and
    `test_loads` fix a load-out study's loads trained at and loads tested, a fold each, and a one-fold study's one
    train load and the loads its runs are also scored at (core.lab.study.cross_load); `cut` (one-fold only)
    holds make_windows' shares, windowing and windowing_seed (its defaults when None), and the one fold
    validates on its own validation share whatever `validation` says."""
    if (train_loads is not None or test_loads is not None) and design not in ("load-out", ONE_FOLD):
        raise ValueError(f"train and test loads belong to the load-out and one-fold designs, not {design}")
    if design == "time-cv":
        return time_cv_folds(recordings, window, k, stride, repeats, build, validation)
    if design == "load-out":
        return load_out_folds(recordings, window, stride, build, validation, train_loads, test_loads)
    if design == "fault-size":
        return fault_size_folds(recordings, window, stride, build, validation)
    if design == ONE_FOLD:
        loads = None if train_loads is None else (train_loads, test_loads or [])
        return one_fold_cut(recordings, window, stride, build, loads, **(cut or {}))
    raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")


def fold_options(config: Mapping[str, Any]) -> dict[str, Any]:
    """make_folds' keyword-only settings of a study JSON's config: protocol 3 validates on slices (a file without
    config.protocol_version ran under protocol 2), a load-out or one-fold study may name its train and test loads, a
    one-fold study holds its cutting."""
    validation = "slices" if config.get("protocol_version", 2) == 3 else "block"
    loads = {"train_loads": config.get("train_loads"), "test_loads": config.get("test_loads")}
    return {"validation": validation, **loads, "cut": config.get("cutting")}


def training_window_counts(
    design: str,
    recordings: Sequence[Recording],
    window: int,
    k: int = 5,
    stride: int | None = None,
    repeats: int = 1,
    **options: Any,
) -> list[int]:
    """The training windows of each fold `make_folds` would make (`options`: its keyword-only ones), counted from
    the window starts: no window is cut, so the page can tell a study's wait on data whose folds would take
    hundreds of MB."""
    return make_folds(design, recordings, window, k, stride, repeats, build=_training_count, **options)


def windows_tested_per_fold(
    design: str, recordings: Sequence[Recording], window: int, k: int = 5, stride: int | None = None, **options: Any
) -> list[int]:
    """The test windows of each fold of one cutting `make_folds` would make (their sum: every window a study
    tests, each once per repeat), counted from the window starts alone."""
    return make_folds(design, recordings, window, k, stride, 1, build=_test_count, **options)
