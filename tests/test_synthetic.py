"""The built-in synthetic set: bearing geometry, shape and seeding, levels of the real files, realism check."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from core.lab.vibration import CLASS_NAMES, DataError, fault_frequencies, synthetic_bearing_set
from core.lab.vibration.synthetic import (
    BALL_DIAMETER_IN,
    N_BALLS,
    PITCH_DIAMETER_IN,
    REAL_LEVELS_0HP,
    SHAFT_MULTIPLES,
    characteristic_frequency,
    statistics_baseline_accuracy,
    window_statistics,
)

CWRU_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cwru"


@pytest.fixture(scope="module")
def synthetic_0hp():
    return synthetic_bearing_set(seed=0)


def test_published_multiples_follow_from_the_6205_geometry():
    ratio = BALL_DIAMETER_IN / PITCH_DIAMETER_IN  # d/D, contact angle 0
    assert SHAFT_MULTIPLES["BPFI"] == pytest.approx(N_BALLS / 2 * (1 + ratio), abs=1e-3)
    assert SHAFT_MULTIPLES["BPFO"] == pytest.approx(N_BALLS / 2 * (1 - ratio), abs=1e-3)
    assert SHAFT_MULTIPLES["BSF"] == pytest.approx(
        PITCH_DIAMETER_IN / (2 * BALL_DIAMETER_IN) * (1 - ratio**2), abs=1e-3
    )
    assert SHAFT_MULTIPLES["FTF"] == pytest.approx(0.5 * (1 - ratio), abs=1e-3)
    assert SHAFT_MULTIPLES["BPFI"] + SHAFT_MULTIPLES["BPFO"] == pytest.approx(N_BALLS, abs=1e-3)


def test_fault_frequencies_at_1797_rpm_by_hand():
    rates = fault_frequencies(1797)
    assert rates["shaft"] == pytest.approx(29.95)
    assert rates["BPFI"] == pytest.approx(5.4152 * 29.95)  # 162.19 Hz
    assert rates["BPFO"] == pytest.approx(3.5848 * 29.95)  # 107.36 Hz
    assert rates["2xBSF"] == pytest.approx(4.7135 * 29.95)  # 141.17 Hz
    assert rates["BSF"] == pytest.approx(rates["2xBSF"] / 2)
    assert rates["FTF"] == pytest.approx(0.39828 * 29.95)  # 11.93 Hz
    assert characteristic_frequency("IR014", 1797) == rates["BPFI"]
    assert characteristic_frequency("B021", 1797) == rates["2xBSF"]
    assert characteristic_frequency("OR007", 1797) == rates["BPFO"]
    assert characteristic_frequency("normal", 1797) is None
    with pytest.raises(ValueError, match="rpm"):
        fault_frequencies(0)


def test_ten_classes_in_contract_order_at_12_khz(synthetic_0hp):
    assert [r.label for r in synthetic_0hp] == list(CLASS_NAMES)
    for recording in synthetic_0hp:
        assert recording.sample_rate == 12_000.0
        assert recording.signal.shape == (120_000,)
        assert np.all(np.isfinite(recording.signal))
        assert recording.meta["source"] == "synthetic" and recording.meta["load_hp"] == 0
        assert abs(recording.meta["rpm"] - 1797) <= 0.003 * 1797
    fault_meta = synthetic_0hp[1].meta
    assert 3000 <= fault_meta["resonance_hz"] <= 3500
    assert 0.05 <= fault_meta["damping"] <= 0.1
    assert 0.01 <= fault_meta["slip"] <= 0.02


def test_levels_follow_the_real_0hp_files(synthetic_0hp):
    for recording in synthetic_0hp:
        real_rms, real_kurtosis = REAL_LEVELS_0HP[recording.label]
        rms = np.sqrt(np.mean(recording.signal**2))
        kurtosis = scipy.stats.kurtosis(recording.signal, fisher=False)
        assert rms == pytest.approx(real_rms, rel=0.10 + 1e-9), recording.label
        # Each recording draws its excess kurtosis within ±15 % of the real one; the mix lands near it.
        assert abs(kurtosis - real_kurtosis) <= 0.25 * (real_kurtosis - 3) + 0.4, (recording.label, kurtosis)


def test_amplitude_is_not_monotonic_in_fault_size(synthetic_0hp):
    rms = {r.label: np.sqrt(np.mean(r.signal**2)) for r in synthetic_0hp}
    assert rms["IR014"] < rms["IR007"] < rms["IR021"]
    assert rms["OR014"] < rms["OR021"] < rms["OR007"]


def test_loads_use_their_speed_and_keep_the_other_recordings():
    short = dict(duration_s=0.5)
    both = synthetic_bearing_set(seed=3, loads=(0, 3), **short)
    only_zero = synthetic_bearing_set(seed=3, loads=(0,), **short)
    assert len(both) == 20
    for a, b in zip(both[:10], only_zero):
        np.testing.assert_array_equal(a.signal, b.signal)
    assert all(abs(r.meta["rpm"] - 1730) <= 0.003 * 1730 for r in both[10:])
    assert both[17].meta["fault_hz"] == pytest.approx(3.5848 * both[17].meta["rpm"] / 60)


def test_same_seed_same_data_other_seed_other_data():
    first = synthetic_bearing_set(seed=7, duration_s=0.5)
    again = synthetic_bearing_set(seed=7, duration_s=0.5)
    other = synthetic_bearing_set(seed=8, duration_s=0.5)
    for a, b, c in zip(first, again, other):
        np.testing.assert_array_equal(a.signal, b.signal)
        assert not np.allclose(a.signal, c.signal)


def test_bad_arguments_are_data_errors():
    with pytest.raises(DataError, match="loads"):
        synthetic_bearing_set(loads=(4,))
    with pytest.raises(DataError, match="classes"):
        synthetic_bearing_set(classes=("IR028",))
    with pytest.raises(DataError, match="duration"):
        synthetic_bearing_set(duration_s=0)


def test_window_statistics_by_hand():
    square = np.array([[1.0, -1.0, 1.0, -1.0], [0.0, 0.0, 0.0, 2.0]])
    # row 1: RMS 1, kurtosis 1, crest factor 1; row 2: RMS sqrt(4 / 4) = 1, crest factor 2 / 1
    stats = window_statistics(square)
    np.testing.assert_allclose(stats[0], [1.0, 1.0, 1.0])
    assert stats[1, 0] == pytest.approx(1.0)
    # deviations (-0.5, -0.5, -0.5, 1.5): m2 = 0.75, m4 = (3·0.0625 + 5.0625) / 4 = 1.3125, kurtosis = 1.3125 / 0.5625
    assert stats[1, 1] == pytest.approx(1.3125 / 0.5625)
    assert stats[1, 2] == pytest.approx(2.0)


def test_three_number_summary_does_not_separate_the_synthetic_set(synthetic_0hp):
    accuracy = statistics_baseline_accuracy(synthetic_0hp)
    # Measured 77 % (seed 0); a toy set would be near 100 %, a featureless one near 10 %.
    assert 0.55 <= accuracy <= 0.92


@pytest.mark.skipif(
    not (CWRU_DIR / "97.mat").is_file(),
    reason=f"real CWRU 0 HP files not found in {CWRU_DIR} (shared data folder beside the repository)",
)
def test_realism_synthetic_within_15_points_of_real_cwru(synthetic_0hp):
    from core.lab.vibration import load_cwru

    real = statistics_baseline_accuracy(load_cwru(CWRU_DIR, loads=(0,)))
    synthetic = statistics_baseline_accuracy(synthetic_0hp)
    assert 0.70 <= real <= 0.90  # measured 79.8 % (the issue quotes 74 % for its protocol)
    assert abs(synthetic - real) <= 0.15, (synthetic, real)
