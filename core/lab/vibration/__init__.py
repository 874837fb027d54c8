"""Vibration data for the Fault lab: one `Recording` shape for every source, honest windows and splits.

The names below are the package's public surface, imported plainly (go-to-definition reaches them).
"""

from __future__ import annotations

from core.lab.vibration.csv_reader import example_csv, read_vibration_csv
from core.lab.vibration.cwru import CWRU_CATALOGUE, load_cwru
from core.lab.vibration.download import download_cwru
from core.lab.vibration.order_control import load_order_control
from core.lab.vibration.order_curve import load_order_curve
from core.lab.vibration.seu import load_seu
from core.lab.vibration.spectra import envelope_spectrum
from core.lab.vibration.spectraquest import load_spectraquest
from core.lab.vibration.synthetic import fault_frequencies, synthetic_bearing_set
from core.lab.vibration.types import CLASS_NAMES, DataError, Recording
from core.lab.vibration.windows import WindowSet, make_windows

__all__ = [
    "CLASS_NAMES",
    "CWRU_CATALOGUE",
    "DataError",
    "Recording",
    "WindowSet",
    "download_cwru",
    "envelope_spectrum",
    "example_csv",
    "fault_frequencies",
    "load_cwru",
    "load_order_control",
    "load_order_curve",
    "load_seu",
    "load_spectraquest",
    "make_windows",
    "read_vibration_csv",
    "synthetic_bearing_set",
]
