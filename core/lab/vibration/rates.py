"""Recordings at different sample rates are never trained mixed: all are brought to the lowest rate."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from typing import Any

import scipy.signal

from core.lab.vibration.types import DataError, Recording
from core.limits import MAX_SAMPLE_RATE_HZ, MIN_SAMPLE_RATE_HZ

# resample_poly filters at up/down times the rate: a larger denominator costs memory and time, and real
# rates (12, 25.6, 48, 51.2 kHz ...) relate by small ratios
MAX_RESAMPLING_DENOMINATOR = 10_000


def checked_sample_rate(sample_rate: Any) -> float:
    """`sample_rate` as a float in the plausible range (core.limits: 1 Hz to 10 MHz); DataError otherwise, for
    every reader that is given a rate (CSV, SEU) alike."""
    try:
        if isinstance(sample_rate, bool):
            raise TypeError
        rate = float(sample_rate)
    except (TypeError, ValueError):
        raise DataError(f"sample_rate must be a number of samples per second, got {sample_rate!r}.") from None
    if not math.isfinite(rate) or not MIN_SAMPLE_RATE_HZ <= rate <= MAX_SAMPLE_RATE_HZ:
        raise DataError(
            f"sample_rate must be between {MIN_SAMPLE_RATE_HZ:g} and {MAX_SAMPLE_RATE_HZ:g} Hz, got {sample_rate!r}."
        )
    return rate


def to_lowest_rate(recordings: list[Recording]) -> tuple[list[Recording], list[str]]:
    """The recordings at the lowest rate among them (scipy.signal.resample_poly, with its anti-alias FIR), and a
    note per resampled recording; DataError when a rate is not a small-whole-number ratio of the lowest."""
    rates = {float(r.sample_rate) for r in recordings}
    if len(rates) < 2:
        return recordings, []
    target = min(rates)
    out, notes = [], []
    for recording in recordings:
        if recording.sample_rate == target:
            out.append(recording)
            continue
        exact = target / recording.sample_rate
        ratio = Fraction(exact).limit_denominator(MAX_RESAMPLING_DENOMINATOR)
        if abs(float(ratio) - exact) > 1e-9 * exact:  # a nearby ratio would label the wrong rate as the target
            raise DataError(
                f"{recording.meta.get('file') or recording.label} at {recording.sample_rate:g} Hz cannot be brought "
                f"to {target:g} Hz, the lowest rate among the files, by a ratio of small whole numbers; resample "
                f"it first, or load files of rates closer together."
            )
        signal = scipy.signal.resample_poly(recording.signal, ratio.numerator, ratio.denominator)
        where = recording.meta.get("file") or recording.label
        how = f"resample_poly {ratio.numerator}/{ratio.denominator}"
        note = f"{where}: {recording.sample_rate:g} Hz resampled to {target:g} Hz ({how})"
        meta = {**recording.meta, "resampled_from": recording.sample_rate}
        out.append(replace(recording, signal=signal, sample_rate=target, meta=meta))
        notes.append(note)
    return out, notes
