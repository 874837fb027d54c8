"""Any MATLAB .mat file as a vibration recording: its numeric vectors listed (struct fields included, as
"bearing.gs"), a rate-like scalar (sr, fs, *_rate, ...) proposed as the sample rate, the user's variable read.

An official CWRU file name (105.mat) proposes its drive-end variable (X105_DE_time), its class and its rate
from the catalogue. MATLAB v7.3 files are HDF5, which scipy.io cannot read: they are refused by name.

Every read passes `core.lab.vibration.mat_budget.check_mat_budget` before scipy.io sees a byte, and a rate, stored or
given, is used only inside core.limits' sample-rate range: a stored one outside it is ignored (the inspection
says so), a given one is refused.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.io

from core import limits
from core.lab.vibration.mat_budget import MatBudgetExceeded, check_mat_budget
from core.lab.vibration.names import class_from_name
from core.lab.vibration.types import DataError, Recording
from core.limits import MAX_SAMPLE_MAGNITUDE, MAX_SAMPLE_RATE_HZ, MIN_SAMPLE_RATE_HZ, finite_or_none
from core.safe_text import shown

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
    ignored_rates: dict[str, float] = field(default_factory=dict)  # rate-like scalars outside the rate range

    def describe(self) -> str:
        """The file in one line: its vectors and lengths, its rate, any rate ignored, and the proposal."""
        listed = ", ".join(f"{shown(name)} ({length:,})" for name, length in self.vectors.items())
        rate = f"; rate {self.sample_rate:g} Hz" if self.sample_rate else "; no rate stored"
        ignored = "".join(f"; {shown(key)} = {value:g} ignored" for key, value in self.ignored_rates.items())
        why = f" ({RATE_RANGE})" if ignored else ""
        proposed = f"proposed: {shown(self.variable)}, class {self.label}"
        return f"MATLAB file with vectors {listed}{rate}{ignored}{why}; {proposed}."


RATE_RANGE = f"a sample rate is between {MIN_SAMPLE_RATE_HZ:g} and {MAX_SAMPLE_RATE_HZ:g} Hz"


def plausible_rate(value: object) -> float | None:
    """`value` as a sample rate in Hz when it is a finite number inside core.limits' range, else None."""
    rate = None if isinstance(value, bool) else finite_or_none(value)
    return rate if rate is not None and MIN_SAMPLE_RATE_HZ <= rate <= MAX_SAMPLE_RATE_HZ else None


def _load(raw: bytes, name: str) -> dict:
    if raw[512 : 512 + len(HDF5_SIGNATURE)] == HDF5_SIGNATURE or raw.startswith(HDF5_SIGNATURE):
        raise DataError(
            f"{shown(name)} is a MATLAB v7.3 (HDF5) file, which this app does not read. Save it in MATLAB with "
            f"save(name, ..., '-v7'), or export the signal to CSV."
        )
    check_mat_budget(raw, name)  # before any scipy call: scipy inflates and allocates whatever a file declares
    try:
        return scipy.io.loadmat(io.BytesIO(raw), squeeze_me=True, struct_as_record=False)
    except NotImplementedError:  # scipy's word for v7.3 without the signature where it looked
        raise DataError(
            f"{shown(name)} is a MATLAB v7.3 (HDF5) file, which this app does not read; save it with '-v7'."
        ) from None
    except Exception as error:  # scipy raises ValueError, TypeError, ... on a damaged or foreign file
        why = shown(f"{type(error).__name__}: {error}")
        raise DataError(f"{shown(name)} is not a MATLAB file this app can read ({why}).") from None


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
    from core.lab.vibration.cwru import catalogue_files

    number = int(match.group(1))
    return next((entry for entry in catalogue_files((0, 1, 2, 3)) if entry.number == number), None)


def _stored_rates(scalars: dict[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    """The rate-like scalars (fs, sr, *_rate, ...): those inside the rate range, and those ignored."""
    named = {key: value for key, value in scalars.items() if RATE_NAME.fullmatch(key.split(".")[-1])}
    rates = {key: value for key, value in named.items() if plausible_rate(value) is not None}
    return rates, {key: value for key, value in named.items() if key not in rates}


def inspect_mat(raw: bytes, name: str) -> MatInspection:
    """What the .mat file `name` holds, and the proposed variable, rate and class (DataError if unreadable,
    MatBudgetExceeded past the budget). A stored rate outside the rate range is listed as ignored, not proposed."""
    vectors, scalars = _contents(raw, name)
    if not vectors:
        raise DataError(f"{shown(name)} holds no numeric vector of at least {MIN_SAMPLES} samples.")
    rates, ignored = _stored_rates(scalars)
    entry = _cwru_entry(name)
    if entry is not None and f"X{entry.number:03d}_DE_time" in vectors:
        variable, rate, label = f"X{entry.number:03d}_DE_time", entry.sample_rate, entry.label
    else:
        variable = max(vectors, key=lambda key: vectors[key].size)
        rate, label = next(iter(rates.values()), None), class_from_name(name)
    lengths = {key: int(array.size) for key, array in vectors.items()}
    return MatInspection(name, lengths, rates, variable, rate, label, ignored)


def read_mat_variable(raw: bytes, name: str, variable: str, sample_rate: float | None, label: str) -> Recording:
    """The vector `variable` of the .mat file `name` as a Recording of class `label` at `sample_rate` Hz.
    DataError (one line) for a missing vector, a rate outside the rate range or values that are no
    measurement; MatBudgetExceeded when the file, or the vector as 64-bit floats, is past the budget."""
    vectors, scalars = _contents(raw, name)
    where, what = shown(name), shown(variable)
    if variable not in vectors:
        listed = shown(", ".join(vectors) or "none")
        raise DataError(f"{where} has no numeric vector {shown(repr(variable))}; it has {listed}.")
    if sample_rate is None or (sample_rate == 0 and not isinstance(sample_rate, bool)):
        ignored = ", ".join(f"{shown(key)} = {value:g}" for key, value in _stored_rates(scalars)[1].items())
        stored = f"the file's {ignored} is not one ({RATE_RANGE})" if ignored else "the file stores none"
        raise DataError(f"{where}: give the sample rate of {what}; {stored}.")
    rate = plausible_rate(sample_rate)
    if rate is None:
        raise DataError(
            f"{where}: the sample rate of {what} must be between {MIN_SAMPLE_RATE_HZ:g} and "
            f"{MAX_SAMPLE_RATE_HZ:g} Hz, got {shown(repr(sample_rate))}."
        )
    size = int(vectors[variable].size)
    if size * 8 > limits.MAX_MAT_DECOMPRESSED_BYTES:  # stored as small integers, it grows eightfold here
        raise MatBudgetExceeded(
            f"{where}: {what} holds {size:,} samples, {size * 8 / 1e6:,.1f} MB as 64-bit floats, over the limit of "
            f"{limits.MAX_MAT_DECOMPRESSED_BYTES / 1e6:,.1f} MB for one MATLAB file; save a shorter excerpt."
        )
    signal = np.asarray(vectors[variable], dtype=np.float64)
    if not np.all(np.isfinite(signal)):
        raise DataError(f"{where}: {what} holds NaN or infinite values.")
    if np.max(np.abs(signal)) > MAX_SAMPLE_MAGNITUDE:
        limit = f"{MAX_SAMPLE_MAGNITUDE:.0e}".replace("e+", "e")
        raise DataError(f"{where}: {what} holds values of magnitude above {limit}: not a vibration measurement.")
    meta = {"source": "mat", "file": name, "column": variable, "sample_rate_source": "chosen"}
    return Recording(signal, rate, label, meta)
