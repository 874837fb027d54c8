"""spectrum-LR, the order-blind baseline of every protocol-3 study: the 32-band log power spectrum of each window,
standardised, then a logistic regression (sklearn).

A window's one-sided power spectrum (scipy.signal.periodogram, boxcar, no detrending, "spectrum" scaling, so
its bins sum to the window's mean square) is kept from DC up to just below Nyquist (window / 2 bins, the
bins the models' FFT tokens use) and cut into BANDS equal-width bands (as near equal as the bin count allows
when it is not a multiple of BANDS); each band's power is summed and its log taken. The features are
standardised on the fold's training windows, the regression is fitted on them alone, its C is chosen among
C_GRID by validation accuracy (ties: the lower validation log loss, then the smaller C), and it scores the
fold's test windows.

It cannot see order: the power spectrum of a window reversed in time, or rotated circularly (whole patches
moved from its end to its start), is the same; shuffling its patches changes the spectrum only through the
seams between them. The order test of core.lab.probes.order is run on it all the same, as on every model.

A run is the dict core.lab.training.train returns, so a study stores it like any other: no epochs (`epochs`
and `best_epoch` 0, an empty history: one fit, nothing to restore), `converged` is the solver's own (lbfgs
stopped before its iteration cap), `n_parameters` the coefficients and intercepts, `C` the chosen C. It is
deterministic: lbfgs draws no random numbers, so every seed gives the same run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy import signal
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.preprocessing import StandardScaler

from core.lab.probes.order import permutations
from core.lab.scores import classification_metrics, per_window_scores
from core.lab.vibration.types import DataError
from core.lab.vibration.windows import WindowSet

SPECTRUM_LR = "spectrum-LR"
BANDS = 32
C_GRID = (0.1, 1.0, 10.0)
MAX_ITERATIONS = 2_000
LOG_FLOOR = 1e-12  # added to every band's power before the log: a band of exact zeros stays finite


def band_powers(x: np.ndarray, bands: int = BANDS) -> np.ndarray:
    """(n, window) -> (n, bands): the power of each equal-width band of the one-sided power spectrum, bins DC
    .. window/2 - 1 (a tone of amplitude a at bin k, 0 < k < window/2, puts a^2 / 2 in the band holding k)."""
    x = np.asarray(x, dtype=np.float64)
    bins = x.shape[-1] // 2
    if bins < bands:
        raise DataError(f"A {x.shape[-1]}-sample window has {bins} spectrum bins: too few for {bands} bands.")
    _, power = signal.periodogram(x, window="boxcar", detrend=False, scaling="spectrum", axis=-1)
    edges = np.linspace(0, bins, bands + 1).round().astype(int)
    return np.add.reduceat(power[..., :bins], edges[:-1], axis=-1)  # (n, bands)


def spectrum_features(x: np.ndarray, bands: int = BANDS) -> np.ndarray:
    """(n, window) -> (n, bands): the log of each band's power."""
    return np.log(band_powers(x, bands) + LOG_FLOOR)


def reorder_patch_array(x: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Each window of `x` (n, window) cut into order.shape[1] patches, put back in that window's `order`."""
    n, window = x.shape
    tokens = order.shape[1]
    patches = x.reshape(n, tokens, window // tokens)  # (n, tokens, patch)
    return np.take_along_axis(patches, order[:, :, None], axis=1).reshape(n, window)


def _fit(features: np.ndarray, y: np.ndarray, c: float) -> LogisticRegression:
    return LogisticRegression(C=c, max_iter=MAX_ITERATIONS).fit(features, y)


def _choose_c(train: np.ndarray, y_train: np.ndarray, val: np.ndarray, y_val: np.ndarray, n_classes: int):
    """The regression of C_GRID with the best validation accuracy (ties: lower log loss, then smaller C)."""
    best, best_key = None, None
    for c in C_GRID:
        model = _fit(train, y_train, c)
        probabilities = model.predict_proba(val)
        accuracy = float(np.mean(model.classes_[probabilities.argmax(axis=1)] == y_val))
        loss = log_loss(y_val, probabilities, labels=model.classes_) if len(model.classes_) == n_classes else np.inf
        key = (-accuracy, loss)
        if best_key is None or key < best_key:
            best, best_key = model, key
    return best


def _probabilities(model: LogisticRegression, features: np.ndarray, n_classes: int) -> np.ndarray:
    """(n, n_classes) class probabilities; a class absent from training gets 0."""
    full = np.zeros((len(features), n_classes))
    full[:, model.classes_] = model.predict_proba(features)
    return full


def _order_test(predict: Callable[[np.ndarray], np.ndarray], x: np.ndarray, y: np.ndarray, patch: int) -> dict:
    """The order test of core.lab.probes.order on raw windows: the same shuffles, the patches reversed."""
    tokens = x.shape[1] // patch
    reversed_order = np.tile(np.arange(tokens - 1, -1, -1), (len(x), 1))
    scores = {"accuracy": float(np.mean(predict(x) == y))}
    for key, order in (("shuffled", permutations(len(x), tokens)), ("reversed", reversed_order)):
        scores[key] = float(np.mean(predict(reorder_patch_array(x, order)) == y))
    return scores


def train_spectrum_lr(
    windows: WindowSet,
    model_name: str,
    config: Any,
    seed: int,
    device: Any = None,
    progress: Callable[[int, dict[str, float]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    keep_weights: bool = False,
    extra_test_sets: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> dict[str, Any]:
    """spectrum-LR fitted on `windows` (core.lab.training.train's signature and run dict; see the module
    docstring). `config.model.patch` sets the order test's patches; device, progress and weights do not apply."""
    started = time.perf_counter()
    n_classes = len(windows.class_names)
    scaler = StandardScaler().fit(spectrum_features(windows.x_train))

    def features(x: np.ndarray) -> np.ndarray:
        return scaler.transform(spectrum_features(x))

    model = _choose_c(features(windows.x_train), windows.y_train, features(windows.x_val), windows.y_val, n_classes)
    probabilities = _probabilities(model, features(windows.x_test), n_classes)  # (n_test, n_classes)

    def predict(x: np.ndarray) -> np.ndarray:
        return _probabilities(model, features(x), n_classes).argmax(axis=1)

    seconds = time.perf_counter() - started
    run = {
        "model": model_name,
        "seed": int(seed),
        **classification_metrics(windows.y_test, probabilities.argmax(axis=1), n_classes),
        "epochs": 0,
        "train_seconds": seconds,
        "windows_per_second": len(windows.x_train) / max(seconds, 1e-9),
        "device": "cpu",
        "history": [],
        "n_parameters": int(model.coef_.size + model.intercept_.size),
        "best_epoch": 0,
        "converged": bool(np.all(model.n_iter_ < MAX_ITERATIONS)),
        **per_window_scores(windows.y_test, probabilities),
        "order_test": _order_test(predict, windows.x_test, windows.y_test, config.model.patch),
        "C": float(model.C),
    }
    if extra_test_sets is not None:
        run["extra_tests"] = {
            name: classification_metrics(y, predict(x), n_classes) for name, (x, y) in extra_test_sets.items()
        }
    return run
