"""The Fault lab's signal explorer: what one recording looks like in time, in frequency, and in its envelope.

Pure computation for the page: an excerpt of the waveform, the amplitude spectrum, the envelope spectrum,
and the characteristic fault frequencies to mark on it when the recording's class and speed are known.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.signal

from core.lab.vibration import Recording
from core.lab.vibration.spectra import DEFAULT_BAND, envelope_spectrum
from core.lab.vibration.synthetic import FAULT_RATE_OF_LOCATION, fault_frequencies, fault_location

# How the explorer speaks of each source's signal: the y axis of its waveform and what its envelope spectrum shows.
# Only the bearing sets (the synthetic one models CWRU's) speak of balls passing a fault; a visitor's own file
# ("csv", whatever its format) is "your signal", in the units it came in.
BEARING_WORDS = (
    "A local fault strikes once per passing ball, and each strike rings a resonance of a few kHz: the fault rate "
    "shows in the **envelope** of that ringing, marked where the class and speed are known."
)
GEARBOX_WORDS = (
    "A broken tooth strikes once per turn of its gear, and each strike rings a resonance: the rate of the strikes "
    "shows in the **envelope** of that ringing."
)
ANY_SIGNAL_WORDS = (
    "The **envelope** spectrum shows how often bursts of ringing repeat in {whose} signal: whatever strikes at a "
    "steady rate shows as a peak at that rate and its multiples."
)
SIGNAL_WORDS = {  # dataset -> (the waveform's y axis, the words under the envelope spectrum)
    "synthetic": ("acceleration", BEARING_WORDS),
    "cwru": ("acceleration", BEARING_WORDS),
    "spectraquest": ("acceleration", GEARBOX_WORDS),
    "seu": ("signal", BEARING_WORDS),  # its bearing set; a channel may be the torque, so no unit is named
    "order_control": ("signal", ANY_SIGNAL_WORDS.format(whose="the")),
    "csv": ("your signal (as in your file)", ANY_SIGNAL_WORDS.format(whose="your")),
}
MAX_SPECTRUM_SECONDS = 10.0  # longer recordings are cut: finer resolution than 0.1 Hz is not needed here


@dataclass
class SignalViews:
    """What the explorer draws of one recording: an excerpt, its amplitude and envelope spectra, fault markers."""

    time_s: np.ndarray  # (n_excerpt,)
    excerpt: np.ndarray  # (n_excerpt,)
    frequencies: np.ndarray  # (n_bins,) Hz
    amplitudes: np.ndarray  # (n_bins,) amplitude spectrum, Hann window, sinusoid of amplitude A -> A
    envelope_frequencies: np.ndarray
    envelope_amplitudes: np.ndarray
    markers: dict[str, float] = field(default_factory=dict)  # name -> Hz, for the envelope spectrum
    band: tuple[float, float] | None = None  # None when the rate is too low for the resonance band
    note: str = ""


def signal_words(dataset: str) -> tuple[str, str]:
    """(the waveform's y-axis title, the caption of the envelope spectrum) for data of `dataset`; a source not
    listed is spoken of as a signal, never as bearings."""
    return SIGNAL_WORDS.get(dataset, ("signal", ANY_SIGNAL_WORDS.format(whose="the")))


def amplitude_spectrum(signal: np.ndarray, sample_rate: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided amplitude spectrum with a Hann window, mean removed: a sine of amplitude A shows as A."""
    signal = np.asarray(signal, dtype=np.float64)
    taper = scipy.signal.windows.hann(signal.size, sym=False)
    amplitudes = 2 * np.abs(np.fft.rfft((signal - signal.mean()) * taper)) / taper.sum()
    return np.fft.rfftfreq(signal.size, d=1 / sample_rate), amplitudes


def fault_markers(label: str, rpm: float | None) -> dict[str, float]:
    """Shaft speed and the class's fault rate with its second harmonic, when the class and rpm are known."""
    if rpm is None or not np.isfinite(rpm) or rpm <= 0:
        return {}
    rates = fault_frequencies(rpm)
    markers = {"shaft": rates["shaft"]}
    location = fault_location(label)
    if location is not None:
        name = FAULT_RATE_OF_LOCATION[location]
        markers[name] = rates[name]
        markers[f"2×{name}"] = 2 * rates[name]
    return markers


def signal_views(recording: Recording, excerpt_s: float = 0.25) -> SignalViews:
    """The explorer's views of `recording`: its first `excerpt_s` seconds and the spectra of up to
    MAX_SPECTRUM_SECONDS; `note` says why the envelope band moved or the envelope is missing."""
    rate = recording.sample_rate
    signal = recording.signal[: int(MAX_SPECTRUM_SECONDS * rate)]
    n_excerpt = max(1, min(signal.size, int(excerpt_s * rate)))
    frequencies, amplitudes = amplitude_spectrum(signal, rate)
    band, note = DEFAULT_BAND, ""
    if band[1] >= rate / 2:  # a user's low-rate CSV: envelope the upper half of its band instead
        band = (rate / 8, rate * 0.45)
        note = (
            f"Sample rate {rate:g} Hz is below the usual resonance band; "
            f"envelope band set to {band[0]:g}-{band[1]:g} Hz."
        )
    try:
        envelope = envelope_spectrum(signal, rate, band)
        env_f, env_a = envelope.frequencies, envelope.amplitudes
    except ValueError as error:  # DataError is a ValueError: too short to filter
        env_f, env_a, band, note = np.zeros(0), np.zeros(0), None, str(error)
    rpm = recording.meta.get("rpm")
    return SignalViews(
        time_s=np.arange(n_excerpt) / rate,
        excerpt=signal[:n_excerpt],
        frequencies=frequencies,
        amplitudes=amplitudes,
        envelope_frequencies=env_f,
        envelope_amplitudes=env_a,
        markers=fault_markers(recording.label, None if rpm is None else float(rpm)),
        band=band,
        note=note,
    )
