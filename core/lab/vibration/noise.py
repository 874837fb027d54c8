"""White Gaussian noise at a set SNR on test windows: how the Fault lab asks whether a model still classifies a
noisier recording. The experiment's noise evaluation (core.lab.evaluations.noise) and a study's noise tests
(core.lab.study.noise) both score these copies, so an SNR means the same wherever it is asked.

SNR = 10·log10(P_signal / P_noise), set per test window, with noise drawn from the run's seed so every model
of a seed meets the same noise.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.lab.vibration.windows import WindowSet


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
    """The name of an SNR's test set, e.g. "snr -4 dB"."""
    return f"snr {snr_db:g} dB"


def noisy_test_sets(windows: WindowSet, snr_db: Sequence[float], seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
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
    """The SNRs as floats; ValueError unless they are finite and distinct."""
    values = [float(snr) for snr in snr_db]
    if not values or not all(np.isfinite(values)):
        raise ValueError(f"SNR values must be finite numbers in dB, e.g. -4,0,4,8; got {list(snr_db)!r}")
    if len(set(values)) != len(values):
        raise ValueError(f"SNR values must not repeat, got {values}")
    return values
