"""envelope_spectrum: a closed-form AM case, the fault rates of the synthetic set, BPFI / BPFO on real CWRU files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.lab.vibration import DataError, envelope_spectrum, fault_frequencies, synthetic_bearing_set
from core.lab.vibration.synthetic import characteristic_frequency

CWRU_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cwru"
needs_cwru = pytest.mark.skipif(
    not (CWRU_DIR / "105.mat").is_file(),
    reason=f"real CWRU files not found in {CWRU_DIR} (shared data folder beside the repository)",
)
TOLERANCE = 0.02  # the bar: the peak within 2 % of the characteristic frequency


def test_am_carrier_gives_a_line_of_the_modulation_depth():
    # (1 + 0.5 cos 2π·100 t) · sin 2π·3000 t: the envelope is 1 + 0.5 cos 2π·100 t, a line of height 0.5 at 100 Hz.
    sample_rate = 12_000.0
    time_s = np.arange(120_000) / sample_rate
    signal = (1 + 0.5 * np.cos(2 * np.pi * 100 * time_s)) * np.sin(2 * np.pi * 3000 * time_s)
    spectrum = envelope_spectrum(signal, sample_rate)
    assert spectrum.frequencies[1] == pytest.approx(0.1)  # 10 s of signal: 0.1 Hz bins
    assert spectrum.peak(10, 1000) == pytest.approx(100.0)
    assert spectrum.amplitudes.max() == pytest.approx(0.5, rel=1e-3)
    assert abs(spectrum.amplitudes[0]) < 1e-3  # mean removed
    assert spectrum.band == (2000.0, 4500.0)


def test_carrier_outside_the_band_is_filtered_out():
    sample_rate = 12_000.0
    time_s = np.arange(60_000) / sample_rate
    signal = (1 + 0.5 * np.cos(2 * np.pi * 100 * time_s)) * np.sin(2 * np.pi * 500 * time_s)
    assert envelope_spectrum(signal, sample_rate).amplitudes.max() < 0.01
    assert envelope_spectrum(signal, sample_rate, band=(200, 800)).amplitudes.max() == pytest.approx(0.5, rel=1e-2)


@pytest.fixture(scope="module")
def synthetic_all_loads():
    return synthetic_bearing_set(seed=0, loads=(0, 1, 2, 3))


def test_synthetic_race_faults_peak_at_their_characteristic_frequency(synthetic_all_loads):
    checked = 0
    for recording in synthetic_all_loads:
        if recording.label[:2] not in ("IR", "OR"):
            continue
        expected = characteristic_frequency(recording.label, recording.meta["rpm"])
        spectrum = envelope_spectrum(recording.signal, recording.sample_rate)
        # The strongest envelope line from 10 to 500 Hz (shaft lines included) must be the fault rate.
        found = spectrum.peak(10, 500)
        assert abs(found - expected) / expected < TOLERANCE, (recording.label, recording.meta["load_hp"], found)
        checked += 1
    assert checked == 24  # 6 race classes x 4 loads


def line_prominence(recording) -> float:
    """Strongest envelope line from 10 to 500 Hz over the median bin there: ~3 for noise, tens for a fault."""
    spectrum = envelope_spectrum(recording.signal, recording.sample_rate)
    inside = (spectrum.frequencies >= 10) & (spectrum.frequencies <= 500)
    return float(spectrum.amplitudes[inside].max() / np.median(spectrum.amplitudes[inside]))


def test_synthetic_normal_has_no_fault_line(synthetic_all_loads):
    prominence = {(r.label, r.meta["load_hp"]): line_prominence(r) for r in synthetic_all_loads}
    for load in range(4):
        assert prominence[("normal", load)] < 5
        for label in ("IR007", "IR014", "IR021", "OR007", "OR014", "OR021"):
            assert prominence[(label, load)] > 12, (label, load)


@pytest.fixture(scope="module")
def real_0hp():
    from core.lab.vibration import load_cwru

    return {recording.meta["file"]: recording for recording in load_cwru(CWRU_DIR, loads=(0,))}


@needs_cwru
@pytest.mark.parametrize(("filename", "rate"), [("105.mat", "BPFI"), ("130.mat", "BPFO")])
def test_real_cwru_fault_rate_is_the_strongest_envelope_line(real_0hp, filename, rate):
    recording = real_0hp[filename]
    expected = fault_frequencies(recording.meta["rpm_measured"])[rate]  # 1797 rpm (105), 1796 rpm (130)
    found = envelope_spectrum(recording.signal, recording.sample_rate).peak(10, 500)
    # Measured: 161.7 Hz vs BPFI 162.2 Hz (-0.3 %), 107.6 Hz vs BPFO 107.3 Hz (+0.3 %).
    assert abs(found - expected) / expected < TOLERANCE


def test_bad_band_and_bad_signal_are_refused():
    signal = np.random.default_rng(0).standard_normal(10_000)
    with pytest.raises(ValueError, match="half the sample rate"):
        envelope_spectrum(signal, 8_000.0)  # default band reaches 4.5 kHz, above 4 kHz Nyquist
    with pytest.raises(ValueError, match="band"):
        envelope_spectrum(signal, 12_000.0, band=(3000, 2000))
    with pytest.raises(DataError, match="at least"):
        envelope_spectrum(signal[:20], 12_000.0)
    signal[5] = np.nan
    with pytest.raises(DataError, match="NaN"):
        envelope_spectrum(signal, 12_000.0)
