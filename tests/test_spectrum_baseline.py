"""spectrum-LR, the order-blind baseline (core.lab.spectrum_baseline): its features against hand-computed spectra,
what it cannot see (a window reversed or rotated by whole patches has the same features), and its run as a
study stores it."""

import numpy as np
import pytest

from core.lab.spectrum_baseline import (
    BANDS,
    C_GRID,
    band_powers,
    reorder_patch_array,
    spectrum_features,
    train_spectrum_lr,
)
from core.lab.training import TrainConfig
from core.lab.vibration import DataError
from core.lab.vibration.windows import WindowSet

WINDOW = 1024


def tone(amplitude: float, k: int, n: int = WINDOW, phase: float = 0.3) -> np.ndarray:
    """A cosine completing k cycles in n samples: all its power in rfft bin k."""
    return amplitude * np.cos(2 * np.pi * k * np.arange(n) / n + phase)


def test_a_pure_tone_puts_half_its_squared_amplitude_in_the_band_that_holds_its_bin():
    # 512 bins (DC .. 511) in 32 bands: 16 bins each, so bin 100 lies in band 6 (bins 96-111)
    powers = band_powers(tone(3.0, 100)[None, :])[0]
    assert powers.shape == (BANDS,)
    assert powers[6] == pytest.approx(3.0**2 / 2, rel=1e-12)
    assert np.delete(powers, 6).max() < 1e-20
    # a DC offset lands in band 0 whole (the one-sided spectrum does not double DC)
    assert band_powers(np.full((1, WINDOW), 2.0))[0][0] == pytest.approx(4.0, rel=1e-12)


def test_band_powers_sum_to_the_mean_square_and_match_numpys_fft_band_by_band():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, WINDOW))
    x -= np.fft.irfft(np.fft.rfft(x) * (np.arange(WINDOW // 2 + 1) == WINDOW // 2), n=WINDOW)  # no Nyquist bin
    powers = band_powers(x)
    np.testing.assert_allclose(powers.sum(axis=1), np.mean(x**2, axis=1), rtol=1e-10)  # Parseval
    spectrum = np.abs(np.fft.rfft(x)) ** 2 / WINDOW**2
    spectrum[:, 1:] *= 2  # one-sided
    by_hand = spectrum[:, : WINDOW // 2].reshape(3, BANDS, -1).sum(axis=2)
    np.testing.assert_allclose(powers, by_hand, rtol=1e-10)


def test_a_window_reversed_in_time_or_rotated_by_whole_patches_has_the_same_features_a_shuffled_one_not():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, WINDOW)) * np.linspace(0.5, 2.0, WINDOW)  # not stationary: order matters here
    features = spectrum_features(x)
    np.testing.assert_allclose(spectrum_features(x[:, ::-1]), features, atol=1e-9)
    rotation = np.tile(np.roll(np.arange(32), 5), (4, 1))  # the last 5 patches moved to the front: a circular shift
    np.testing.assert_allclose(spectrum_features(reorder_patch_array(x, rotation)), features, atol=1e-9)
    shuffled = reorder_patch_array(x, np.array([rng.permutation(32) for _ in range(4)]))
    assert not np.allclose(spectrum_features(shuffled), features, atol=1e-3)  # the seams change it, a little


def test_a_window_too_short_for_32_bands_is_refused_in_words():
    with pytest.raises(DataError, match="too few for 32 bands"):
        band_powers(np.zeros((1, 32)))


def _windows(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Two classes of noisy tones, told apart by their frequency alone."""
    y = np.arange(n) % 2
    x = np.stack([tone(1.0, 40 if label else 200, phase=rng.uniform(0, 6)) for label in y])
    return (x + rng.standard_normal(x.shape)).astype(np.float32), y.astype(np.int64)


def test_spectrum_lr_separates_two_tones_and_returns_a_run_a_study_can_store():
    rng = np.random.default_rng(2)
    (x_train, y_train), (x_val, y_val), (x_test, y_test) = (_windows(rng, n) for n in (40, 20, 30))
    windows = WindowSet(
        x_train, y_train, x_val, y_val, x_test, y_test, ["low", "high"], 1.0, WINDOW, WINDOW, "time", 0.0, 1.0
    )
    run = train_spectrum_lr(windows, "spectrum-LR", TrainConfig(), seed=3)
    assert run["accuracy"] == 1.0 and run["predictions"]["true"] == y_test.tolist()
    assert (run["epochs"], run["best_epoch"], run["history"]) == (0, 0, [])
    assert run["C"] in C_GRID and run["converged"]
    assert run["n_parameters"] == 32 + 1  # two classes: one coefficient per band and an intercept
    # the order test runs on it as on every model; reordering the patches of a tone whose patches do not hold
    # whole cycles moves its power (the seams), so spectrum-LR's drop there is real, not zero by construction
    assert set(run["order_test"]) == {"accuracy", "shuffled", "reversed"} and run["order_test"]["accuracy"] == 1.0
    again = train_spectrum_lr(windows, "spectrum-LR", TrainConfig(), seed=4)
    assert again["predictions"] == run["predictions"]  # deterministic: the seed changes nothing
