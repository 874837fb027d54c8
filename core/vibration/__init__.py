"""Vibration data for the Fault lab: one `Recording` shape for every source, honest windows and splits.

Names are resolved lazily from their submodules so that importing one loader does not pay for all of
them (scipy.io, the HTTP downloader, ...).
"""

from __future__ import annotations

import importlib
from typing import Any

from core.vibration.types import CLASS_NAMES, DataError, Recording

_LAZY = {
    "load_cwru": "core.vibration.cwru",
    "CWRU_CATALOGUE": "core.vibration.cwru",
    "synthetic_bearing_set": "core.vibration.synthetic",
    "fault_frequencies": "core.vibration.synthetic",
    "envelope_spectrum": "core.vibration.spectra",
    "make_windows": "core.vibration.windows",
    "WindowSet": "core.vibration.windows",
    "read_vibration_csv": "core.vibration.csv_reader",
    "example_csv": "core.vibration.csv_reader",
    "load_seu": "core.vibration.seu",
    "download_cwru": "core.vibration.download",
}

__all__ = ["CLASS_NAMES", "DataError", "Recording", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'core.vibration' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
