"""Any MATLAB .mat file as a vibration recording: its numeric vectors listed (struct fields included, as
"bearing.gs"), a rate-like scalar (sr, fs, *_rate, ...) proposed as the sample rate, the user's variable read.

An official CWRU file name (105.mat) proposes its drive-end variable (X105_DE_time), its class and its rate
from the catalogue. MATLAB v7.3 files are HDF5, which scipy.io cannot read: they are refused by name.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.io

from core.vibration.names import class_from_name
from core.vibration.types import DataError, Recording

RATE_NAME = re.compile(r"(?:sr|fs|fsamp|rate|\w*_rate|sample_?rate|sampling_?(?:rate|frequency)|\w*_fs)", re.I)
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
MIN_SAMPLES = 16


@dataclass(frozen=True)
class MatInspection:
    """The vectors of a .mat file (name -> length), rate-like scalars (name -> value) and the proposal."""

    name: str
    vectors: dict[str, int] = field(default_factory=dict)
    rates: dict[str, float] = field(default_factory=dict)
    variable: str | None = None  # proposed: the CWRU drive-end variable, else the longest vector
    sample_rate: float | None = None  # proposed: from the catalogue or a rate-like scalar
    label: str | None = None  # proposed class: the CWRU catalogue's, else the file name's

    def describe(self) -> str:
        listed = ", ".join(f"{name} ({length:,})" for name, length in self.vectors.items())
        rate = f"; rate {self.sample_rate:g} Hz" if self.sample_rate else "; no rate stored"
        return f"MATLAB file with vectors {listed}{rate}; proposed: {self.variable}, class {self.label}."


def _load(raw: bytes, name: str) -> dict:
    if raw[512 : 512 + len(HDF5_SIGNATURE)] == HDF5_SIGNATURE or raw.startswith(HDF5_SIGNATURE):
        raise DataError(
            f"{name} is a MATLAB v7.3 (HDF5) file, which this app does not read. Save it in MATLAB with "
            f"save(name, ..., '-v7'), or export the signal to CSV."
        )
    try:
        return scipy.io.loadmat(io.BytesIO(raw), squeeze_me=True, struct_as_record=False)
    except NotImplementedError:  # scipy's word for v7.3 without the signature where it looked
        raise DataError(
            f"{name} is a MATLAB v7.3 (HDF5) file, which this app does not read; save it with '-v7'."
        ) from None
    except Exception as error:  # scipy raises ValueError, TypeError, ... on a damaged or foreign file
        raise DataError(f"{name} is not a MATLAB file this app can read ({type(error).__name__}: {error}).") from None


def _walk(prefix: str, value, vectors: dict[str, np.ndarray], scalars: dict[str, float], depth: int = 0) -> None:
    if depth > 4:
        return
    if isinstance(value, scipy.io.matlab.mat_struct):
        for field_name in value._fieldnames:
            _walk(f"{prefix}.{field_name}", getattr(value, field_name), vectors, scalars, depth + 1)
        return
    array = np.asarray(value)
    if array.dtype.kind not in "iuf":
        return
    if array.size == 1:
        scalars[prefix] = float(array.reshape(-1)[0])
    elif array.ndim == 1 or (array.ndim == 2 and 1 in array.shape):
        if array.size >= MIN_SAMPLES:
            vectors[prefix] = array.reshape(-1)


def _contents(raw: bytes, name: str) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    vectors: dict[str, np.ndarray] = {}
    scalars: dict[str, float] = {}
    for key, value in _load(raw, name).items():
        if not key.startswith("__"):
            _walk(key, value, vectors, scalars)
    return vectors, scalars


def _cwru_entry(name: str):
    match = re.fullmatch(r"(\d+)\.mat", Path(name).name, re.I)
    if not match:
        return None
    from core.vibration.cwru import catalogue_files

    number = int(match.group(1))
    return next((entry for entry in catalogue_files((0, 1, 2, 3)) if entry.number == number), None)


def inspect_mat(raw: bytes, name: str) -> MatInspection:
    """What the .mat file `name` holds, and the proposed variable, rate and class (DataError if unreadable)."""
    vectors, scalars = _contents(raw, name)
    if not vectors:
        raise DataError(f"{name} holds no numeric vector of at least {MIN_SAMPLES} samples.")
    rates = {key: value for key, value in scalars.items() if RATE_NAME.fullmatch(key.split(".")[-1]) and value > 0}
    entry = _cwru_entry(name)
    if entry is not None and f"X{entry.number:03d}_DE_time" in vectors:
        variable, rate, label = f"X{entry.number:03d}_DE_time", entry.sample_rate, entry.label
    else:
        variable = max(vectors, key=lambda key: vectors[key].size)
        rate, label = next(iter(rates.values()), None), class_from_name(name)
    lengths = {key: int(array.size) for key, array in vectors.items()}
    return MatInspection(name, lengths, rates, variable, rate, label)


def read_mat_variable(raw: bytes, name: str, variable: str, sample_rate: float, label: str) -> Recording:
    """The vector `variable` of the .mat file `name` as a Recording of class `label` at `sample_rate` Hz."""
    vectors, _ = _contents(raw, name)
    if variable not in vectors:
        raise DataError(f"{name} has no numeric vector {variable!r}; it has {', '.join(vectors) or 'none'}.")
    signal = np.asarray(vectors[variable], dtype=np.float64)
    if not np.all(np.isfinite(signal)):
        raise DataError(f"{name}: {variable} holds NaN or infinite values.")
    if not sample_rate or not sample_rate > 0:
        raise DataError(f"{name}: give the sample rate of {variable}; the file stores none.")
    meta = {"source": "mat", "file": name, "column": variable, "sample_rate_source": "chosen"}
    return Recording(signal, float(sample_rate), label, meta)
