"""core.lab.explorer: spectra with known amplitudes, and the fault markers of each class."""

import numpy as np
import pytest

from core.lab.explorer import amplitude_spectrum, fault_markers, signal_views
from core.lab.vibration import Recording, synthetic_bearing_set


def test_amplitude_spectrum_reads_a_sine_amplitude_at_its_frequency():
    rate = 1000.0
    t = np.arange(4000) / rate
    frequencies, amplitudes = amplitude_spectrum(0.7 * np.sin(2 * np.pi * 50 * t) + 3.0, rate)
    peak = np.argmax(amplitudes)
    assert frequencies[peak] == pytest.approx(50.0)
    assert amplitudes[peak] == pytest.approx(0.7, rel=1e-6)  # the DC offset of 3 is removed
    assert amplitudes[0] < 1e-9


def test_fault_markers_per_class():
    # 1797 rpm = 29.95 Hz; BPFI = 5.4152 x, BPFO = 3.5848 x, ball = 2 x BSF = 4.7135 x shaft speed.
    shaft = 1797 / 60
    ir = fault_markers("IR014", 1797)
    assert ir["shaft"] == pytest.approx(shaft) and ir["BPFI"] == pytest.approx(5.4152 * shaft)
    assert ir["2×BPFI"] == pytest.approx(2 * 5.4152 * shaft)
    assert fault_markers("OR021", 1797)["BPFO"] == pytest.approx(3.5848 * shaft)
    assert fault_markers("B007", 1797)["2xBSF"] == pytest.approx(4.7135 * shaft)
    assert fault_markers("normal", 1797) == {"shaft": pytest.approx(shaft)}
    assert fault_markers("IR007", None) == {}


def test_signal_views_find_the_outer_race_rate_on_the_synthetic_set():
    recording = next(r for r in synthetic_bearing_set(seed=3) if r.label == "OR007")
    views = signal_views(recording, excerpt_s=0.1)
    assert views.excerpt.size == 1200 and views.time_s[-1] == pytest.approx(1199 / 12000)
    bpfo = views.markers["BPFO"]
    window = (views.envelope_frequencies > 0.8 * bpfo) & (views.envelope_frequencies < 1.2 * bpfo)
    found = views.envelope_frequencies[window][np.argmax(views.envelope_amplitudes[window])]
    assert found == pytest.approx(bpfo, rel=0.02)


def test_low_rate_and_too_short_signals_get_a_note_not_an_error():
    slow = Recording(np.random.default_rng(0).normal(size=4000), 2000.0, "mine")
    views = signal_views(slow)
    assert views.band == (250.0, 900.0) and "below the usual resonance band" in views.note
    tiny = Recording(np.ones(10), 12000.0, "tiny")
    views = signal_views(tiny)
    assert views.band is None and views.envelope_frequencies.size == 0 and "at least" in views.note
