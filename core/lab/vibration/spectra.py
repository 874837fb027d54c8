"""Envelope spectrum: the classic bearing-fault diagnosis, and the check that a signal carries its fault.

A local fault makes an impact each time a rolling element passes it; each impact rings a structural
resonance of a few kHz. The fault rate (BPFI, BPFO, ...) is not in the raw spectrum but in how often the
ringing repeats. So: band-pass around the resonance, take the Hilbert envelope (the ringing's outline),
and look at the envelope's spectrum, where the fault rate and its harmonics stand out as lines.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.signal

from core.lab.vibration.types import DataError

# The drive-end resonances of the CWRU rig, and of the synthetic set, lie in this band at 12 kHz sampling.
DEFAULT_BAND = (2000.0, 4500.0)
FILTER_ORDER = 4


@dataclass
class EnvelopeSpectrum:
    """One-sided amplitude spectrum of the envelope: `amplitudes[i]` (signal units) at `frequencies[i]` (Hz)."""

    frequencies: np.ndarray  # (n_bins,)
    amplitudes: np.ndarray  # (n_bins,)
    band: tuple[float, float]

    def peak(self, low: float, high: float) -> float:
        """Frequency (Hz) of the strongest line between `low` and `high` Hz."""
        inside = (self.frequencies >= low) & (self.frequencies <= high)
        if not inside.any():
            raise ValueError(f"No spectrum bin between {low} and {high} Hz (resolution {self.frequencies[1]:.3g} Hz).")
        return float(self.frequencies[inside][np.argmax(self.amplitudes[inside])])


def envelope_spectrum(
    signal: np.ndarray, sample_rate: float, band: tuple[float, float] = DEFAULT_BAND
) -> EnvelopeSpectrum:
    """Band-pass `signal` to `band` (Hz), take its Hilbert envelope, return the envelope's amplitude spectrum.

    The spectrum uses a Hann window and is scaled so that a sinusoidal envelope component of amplitude A
    shows as a line of height A. The envelope's mean is removed, so the DC bin is ~0.
    """
    signal = np.asarray(signal, dtype=np.float64).ravel()
    sample_rate = float(sample_rate)
    low, high = (float(edge) for edge in band)
    nyquist = sample_rate / 2
    if not 0 < low < high < nyquist:
        raise ValueError(
            f"band must satisfy 0 < low < high < {nyquist:g} Hz (half the sample rate), got ({low:g}, {high:g}). "
            f"Choose a band around the structural resonance below {nyquist:g} Hz."
        )
    sos = scipy.signal.butter(FILTER_ORDER, (low, high), btype="bandpass", fs=sample_rate, output="sos")
    # sosfiltfilt pads the signal by a few filter lengths; anything shorter cannot be filtered honestly.
    shortest = 3 * (2 * len(sos) + 1) + 1
    if signal.size < max(shortest, 64) or not np.all(np.isfinite(signal)):
        raise DataError(
            f"The envelope spectrum needs a finite signal of at least {max(shortest, 64)} samples, got "
            f"{signal.size} samples"
            f"{' with NaN or inf values' if signal.size and not np.all(np.isfinite(signal)) else ''}."
        )

    # Zero phase, so the ringing is not smeared in time before the envelope is taken.
    band_passed = scipy.signal.sosfiltfilt(sos, signal)
    envelope = np.abs(scipy.signal.hilbert(band_passed))
    envelope -= envelope.mean()

    taper = scipy.signal.windows.hann(envelope.size, sym=False)
    amplitudes = 2 * np.abs(np.fft.rfft(envelope * taper)) / taper.sum()
    frequencies = np.fft.rfftfreq(envelope.size, d=1 / sample_rate)
    return EnvelopeSpectrum(frequencies=frequencies, amplitudes=amplitudes, band=(low, high))
