"""Recordings at different sample rates are never trained mixed: all are brought to the lowest rate."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import scipy.signal

from core.vibration.types import Recording


def to_lowest_rate(recordings: list[Recording]) -> tuple[list[Recording], list[str]]:
    """The recordings at the lowest rate among them (scipy.signal.resample_poly, with its anti-alias FIR), and a
    note per resampled recording."""
    rates = {float(r.sample_rate) for r in recordings}
    if len(rates) < 2:
        return recordings, []
    target = min(rates)
    out, notes = [], []
    for recording in recordings:
        if recording.sample_rate == target:
            out.append(recording)
            continue
        ratio = Fraction(target / recording.sample_rate).limit_denominator(10_000)
        signal = scipy.signal.resample_poly(recording.signal, ratio.numerator, ratio.denominator)
        where = recording.meta.get("file") or recording.label
        how = f"resample_poly {ratio.numerator}/{ratio.denominator}"
        note = f"{where}: {recording.sample_rate:g} Hz resampled to {target:g} Hz ({how})"
        meta = {**recording.meta, "resampled_from": recording.sample_rate}
        out.append(replace(recording, signal=signal, sample_rate=target, meta=meta))
        notes.append(note)
    return out, notes
