"""Evaluations beyond one split: split comparison, cross-load, noise robustness and the d_model sweep.

One experiment on one time split of one motor load says little. Practitioners trust a comparison that also
holds when

- the split changes: a random window split leaks (neighbouring windows of one recording are nearly the
  same), so its accuracy minus the time split's accuracy measures the leak;
- the load changes: models trained at one motor load are tested at others, on the classes recorded at
  every load involved (CWRU has no normal record at 1-3 HP here, so that is the nine fault classes);
- noise is added: white Gaussian noise at a signal-to-noise ratio SNR = 10·log10(P_signal / P_noise),
  set per test window, with noise drawn from the run's seed so every model meets the same noise;
- the width changes: the embedding models at several d_model.

This module prepares the data of each evaluation and condenses finished runs into the optional blocks of
the results JSON (layouts in core.results); `core.jobs.run_plan` does the training, so the Fault lab and
`python -m core.experiment` produce the same JSON. Pure numpy / pandas, no torch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from core.models import TRANSFORMER_VARIANTS
from core.results import mean_sd, paired_differences
from core.vibration.types import DataError, Recording

SPLIT_MODES = ("time", "random")
CELL_KEYS = ("mean", "sd", "n", "values")
EVALUATION_METRICS = ("accuracy", "f1")  # what the evaluation blocks record per cell


# --- shared ---------------------------------------------------------------------------------------


def cell(values: Sequence[float]) -> dict[str, Any]:
    """{"mean", "sd", "n", "values"}: the summary of one table cell over seeds, and the seeds' values."""
    return {**mean_sd(values), "values": [float(v) for v in values]}


def embedding_models(models: Sequence[str]) -> list[str]:
    """The models whose width is d_model (A and A+PE run at the patch width; the CNN has no d_model)."""
    return [model for model in models if model in TRANSFORMER_VARIANTS and TRANSFORMER_VARIANTS[model][0]]


def other_split_mode(mode: str) -> str:
    if mode not in SPLIT_MODES:
        raise ValueError(f"split mode must be one of {SPLIT_MODES}, got {mode!r}")
    return SPLIT_MODES[1 - SPLIT_MODES.index(mode)]


def _table(
    runs: Sequence[Mapping[str, Any]], models: Sequence[str], columns: Sequence[Any], score
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """table[metric][model] = [cell per column]; `score(run, column, metric)` reads one seed's value."""
    return {
        metric: {
            model: [cell([score(run, column, metric) for run in runs if run["model"] == model]) for column in columns]
            for model in models
        }
        for metric in EVALUATION_METRICS
    }


# --- noise robustness ---------------------------------------------------------------------------------


def add_white_noise(windows: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    """`windows` (n, window) plus white Gaussian noise at exactly `snr_db` in every window.

    P_signal is each window's mean square; the drawn noise is rescaled so that its own mean square is
    P_signal / 10^(snr_db / 10), so 10·log10(P_signal / P_noise) = snr_db holds per window, not on average.
    """
    noise = rng.standard_normal(windows.shape)  # (n, window)
    return windows + scale_noise(windows, noise, snr_db)


def scale_noise(windows: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    """`noise` rescaled row by row to sit `snr_db` below the matching window of `windows`."""
    windows = np.asarray(windows, dtype=np.float64)
    signal_power = np.mean(windows**2, axis=1, keepdims=True)  # (n, 1)
    noise_power = np.mean(noise**2, axis=1, keepdims=True)  # (n, 1)
    return noise * np.sqrt(signal_power / (noise_power * 10 ** (snr_db / 10)))


def noise_name(snr_db: float) -> str:
    return f"snr {snr_db:g} dB"


def noisy_test_sets(windows: Any, snr_db: Sequence[float], seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Noisy copies of the test windows of a WindowSet, one per SNR, keyed by `noise_name`.

    The SNR is set on the recorded signal (the windows are de-normalised first, then normalised again with
    the training statistics), so it means the same for every data set. One noise draw per seed serves
    every SNR (only its level changes) and every model (all models of a seed meet the same noise).
    """
    raw = windows.x_test.astype(np.float64) * windows.std + windows.mean  # (n_test, window)
    noise = np.random.default_rng(seed).standard_normal(raw.shape)
    sets = {}
    for snr in snr_db:
        noisy = raw + scale_noise(raw, noise, float(snr))
        sets[noise_name(snr)] = (((noisy - windows.mean) / windows.std).astype(np.float32), windows.y_test)
    return sets


def check_snr_list(snr_db: Sequence[float]) -> list[float]:
    values = [float(snr) for snr in snr_db]
    if not values or not all(np.isfinite(values)):
        raise ValueError(f"SNR values must be finite numbers in dB, e.g. -4,0,4,8; got {list(snr_db)!r}")
    if len(set(values)) != len(values):
        raise ValueError(f"SNR values must not repeat, got {values}")
    return values


def noise_block(runs: Sequence[Mapping[str, Any]], models: Sequence[str], snr_db: Sequence[float]) -> dict[str, Any]:
    """The `noise` block of the results JSON from runs that scored `noisy_test_sets` as extra tests."""
    table = _table(runs, models, snr_db, lambda run, snr, metric: run["extra_tests"][noise_name(snr)][metric])
    return {
        "snr_db": [float(snr) for snr in snr_db],
        "definition": "white Gaussian noise added to each test window at SNR = 10·log10(P_signal / P_noise) "
        "of that window; one noise draw per seed, shared by all models and SNRs",
        **table,
    }


# --- cross-load -----------------------------------------------------------------------------------------


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


def check_loads(train_loads: Sequence[int] | None, test_loads: Sequence[int] | None) -> tuple[list[int], list[int]] | None:
    """Both lists, or neither (None); loads must not repeat within a list."""
    if train_loads is None and test_loads is None:
        return None
    if not train_loads or not test_loads:
        raise ValueError("cross-load needs both train loads and test loads, e.g. train 0, test 1,2,3")
    train_loads, test_loads = [int(load) for load in train_loads], [int(load) for load in test_loads]
    if len(set(train_loads)) != len(train_loads) or len(set(test_loads)) != len(test_loads):
        raise ValueError(f"loads must not repeat; got train {train_loads}, test {test_loads}")
    return train_loads, test_loads


def recordings_at(recordings: Sequence[Recording], load: int, classes: Sequence[str]) -> list[Recording]:
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
    return f"load {load} HP"


def cross_load_test_sets(
    recordings: Sequence[Recording], windows: Any, train_load: int, test_loads: Sequence[int]
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


def cross_load_block(
    runs_by_train_load: Mapping[int, Sequence[Mapping[str, Any]]],
    models: Sequence[str],
    test_loads: Sequence[int],
    classes: Sequence[str],
    dropped: Sequence[str],
    test_windows: Mapping[int, int],
) -> dict[str, Any]:
    """The `cross_load` block: accuracy[model][row][column] for train load `row`, test load `column`."""
    train_loads = list(runs_by_train_load)
    tables = [
        _table(runs, models, test_loads, lambda run, load, metric: run["extra_tests"][load_name(load)][metric])
        for runs in runs_by_train_load.values()
    ]
    return {
        "train_loads": [int(load) for load in train_loads],
        "test_loads": [int(load) for load in test_loads],
        "classes": list(classes),
        "dropped_classes": list(dropped),
        "test_windows": [int(test_windows[load]) for load in test_loads],
        "method": "one model per train load, model and seed; a test load equal to the train load is scored on "
        "the held-out test block of its own split, any other load on all its windows, normalised with the "
        "training statistics",
        **{
            metric: {model: [table[metric][model] for table in tables] for model in models}
            for metric in EVALUATION_METRICS
        },
    }


# --- split comparison and d_model sweep -----------------------------------------------------------------


def split_comparison_block(
    runs_by_mode: Mapping[str, Sequence[Mapping[str, Any]]], models: Sequence[str]
) -> dict[str, Any]:
    """The `split_comparison` block: each model under both splits (the experiment's own split first), and
    the leak = random-split minus time-split accuracy, paired by seed (a seed starts both runs from the
    same weights)."""
    modes = list(runs_by_mode)
    leak = {}
    for model in models:
        # the two modes' runs as two "models", so the paired machinery of core.results applies
        pairs = [dict(run, model=mode) for mode in SPLIT_MODES for run in runs_by_mode[mode] if run["model"] == model]
        leak[model] = paired_differences(pairs, "accuracy", reference="time")["random"]
    return {
        "modes": modes,
        **{
            metric: {
                model: [cell([run[metric] for run in runs_by_mode[mode] if run["model"] == model]) for mode in modes]
                for model in models
            }
            for metric in EVALUATION_METRICS
        },
        "leak": leak,
    }


def d_model_sweep_block(
    runs_by_width: Mapping[int, Sequence[Mapping[str, Any]]], models: Sequence[str]
) -> dict[str, Any]:
    """The `d_model_sweep` block: each embedding model's scores and parameter count at each d_model."""
    widths = list(runs_by_width)
    return {
        "d_models": [int(width) for width in widths],
        "models": list(models),
        **{
            metric: {
                model: [cell([run[metric] for run in runs_by_width[w] if run["model"] == model]) for w in widths]
                for model in models
            }
            for metric in EVALUATION_METRICS
        },
        "n_parameters": {
            model: [next(int(run["n_parameters"]) for run in runs_by_width[w] if run["model"] == model) for w in widths]
            for model in models
        },
    }


def check_d_models(d_models: Sequence[int] | None, n_heads: int) -> list[int] | None:
    if d_models is None:
        return None
    widths = [int(width) for width in d_models]
    if not widths or len(set(widths)) != len(widths) or min(widths) < 1:
        raise ValueError(f"d_model values must be distinct positive integers, got {list(d_models)!r}")
    bad = [width for width in widths if width % n_heads]
    if bad:
        raise ValueError(f"n_heads={n_heads} must divide every d_model of the sweep; {bad} do not split into {n_heads} heads")
    return widths


# --- tables for the CLI and the page ---------------------------------------------------------------------


def _percent(cell_: Mapping[str, Any]) -> str:
    sd = "-" if cell_["sd"] is None else f"{100 * cell_['sd']:.1f}"
    return f"{100 * cell_['mean']:.1f} ± {sd}"


def noise_table(block: Mapping[str, Any], metric: str = "accuracy") -> pd.DataFrame:
    """Rows: models; columns: SNR in dB; cells: mean ± sd in %."""
    columns = [f"{snr:g} dB" for snr in block["snr_db"]]
    return pd.DataFrame(
        {model: [_percent(c) for c in cells] for model, cells in block[metric].items()}, index=columns
    ).T


def cross_load_table(block: Mapping[str, Any], model: str, metric: str = "accuracy") -> pd.DataFrame:
    """One model's train-load x test-load table; cells mean ± sd in %."""
    rows = [[_percent(c) for c in row] for row in block[metric][model]]
    return pd.DataFrame(
        rows,
        index=[f"train {load} HP" for load in block["train_loads"]],
        columns=[f"test {load} HP" for load in block["test_loads"]],
    )


def split_table(block: Mapping[str, Any]) -> pd.DataFrame:
    """Rows: models; columns: accuracy under each split and the leak in points (with its 95 % interval)."""
    rows = {}
    for model, cells in block["accuracy"].items():
        leak = block["leak"][model]
        interval = "" if leak["ci95"] is None else f" [{100 * leak['ci95'][0]:+.1f}, {100 * leak['ci95'][1]:+.1f}]"
        rows[model] = [_percent(c) for c in cells] + [f"{100 * leak['diff_mean']:+.1f}{interval}"]
    columns = [f"{mode} split" for mode in block["modes"]] + ["leak (random - time)"]
    return pd.DataFrame(rows, index=columns).T


def sweep_table(block: Mapping[str, Any], metric: str = "accuracy") -> pd.DataFrame:
    """Rows: embedding models; columns: d_model; cells: mean ± sd in % and the parameter count."""
    rows = {
        model: [f"{_percent(c)} ({n:,} p)" for c, n in zip(cells, block["n_parameters"][model])]
        for model, cells in block[metric].items()
    }
    return pd.DataFrame(rows, index=[f"d_model {width}" for width in block["d_models"]]).T
