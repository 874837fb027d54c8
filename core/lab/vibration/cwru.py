"""The CWRU bearing data (Case Western Reserve University, 12 kHz drive-end set), read from the original .mat files.

`CWRU_CATALOGUE` maps each official file number to its class, fault diameter, motor load, nominal rpm, the
rate it was recorded at and its official MD5. `load_cwru` reads the requested loads into `Recording`s at
12 kHz. Three traps of this data set are handled here, not left to the caller:

- the normal baseline (97-100.mat) was recorded at 48 kHz, the fault files at 12 kHz; read as 12 kHz the
  normal class has another time scale and any model learns the sample rate instead of the fault, so the
  normal records are resampled to 12 kHz with an anti-alias filter;
- variables are found by the name built from the file number (`X097_DE_time`), never by pattern: the
  official 99.mat also carries file 98's variables;
- 97.mat has no BA (base accelerometer) channel.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from math import gcd
from pathlib import Path

import numpy as np
import scipy.io
import scipy.signal

from core.lab.vibration.mat_budget import check_mat_budget
from core.lab.vibration.types import CLASS_NAMES, DataError, Recording
from core.safe_text import shown

TARGET_SAMPLE_RATE = 12_000.0
CHANNELS = ("DE", "FE", "BA")  # drive end, fan end, base accelerometer
NOMINAL_RPM = {0: 1797, 1: 1772, 2: 1750, 3: 1730}  # by motor load in HP
OFFICIAL_URL = "https://engineering.case.edu/sites/default/files/"


@dataclass(frozen=True)
class CwruFile:
    """One official CWRU file: what it holds and how to check it."""

    number: int
    label: str  # one of CLASS_NAMES
    diameter_in: float  # fault diameter in inches, 0.0 for normal
    load_hp: int
    rpm: int  # nominal rpm at this load
    sample_rate: float  # rate the file was recorded at
    md5: str  # official checksum of the download

    @property
    def filename(self) -> str:
        """The file's name in the CWRU download: its number with .mat."""
        return f"{self.number}.mat"


def _file(number: int, label: str, load_hp: int, md5: str) -> CwruFile:
    diameter_in = 0.0 if label == "normal" else int(label[-3:]) / 1000
    sample_rate = 48_000.0 if label == "normal" else 12_000.0
    return CwruFile(number, label, diameter_in, load_hp, NOMINAL_RPM[load_hp], sample_rate, md5)


# File numbers at loads 0, 1, 2, 3 HP for each class, with the official MD5s (cwru/MD5SUMS in the shared
# data; 98-100 from the published checksum list, those files are not in the shared copy).
_FILES_BY_CLASS: dict[str, list[tuple[int, str]]] = {
    "normal": [
        (97, "ee410e7243aefcd8b7120876556464e7"),
        (98, "3983dcddead0d4b910ee1e8d3da164b9"),
        (99, "edc080a0b4fbc0c2ec8b7f1403372b73"),
        (100, "cc57a511b95785c805055d99281ea2bb"),
    ],
    "IR007": [
        (105, "f14821b40412f33018279198da7f9cdc"),
        (106, "4abe03d02739813eebc879b20b591968"),
        (107, "2bf7a32b6b59aa379d5a4a3c345418f5"),
        (108, "ccec995fde6f8865632972804dadfc55"),
    ],
    "IR014": [
        (169, "09e41b26825d87e03908add7f01d21aa"),
        (170, "3b6eb7ba1276995006d2754a821cbe54"),
        (171, "22a48a1c32a58fe320cef89119b8b0d9"),
        (172, "5acfb2d067d71a084272b832246c3ae9"),
    ],
    "IR021": [
        (209, "a6c8deded8d592ded19818d001687abc"),
        (210, "fd00ce7a23af6324b1f8aa7784eda37a"),
        (211, "49e63eb2b41faf93ff8452d4fffe8773"),
        (212, "bf7c1d5702c18f85f54934bbcbb468c0"),
    ],
    "B007": [
        (118, "ff0f20588edc64140ae33888fcf1114a"),
        (119, "ba784233ebbe424e31bb35c5523413cd"),
        (120, "89fbf0d771512d848972fd574d3923e8"),
        (121, "7715250229a6d47910d12be7e1970e70"),
    ],
    "B014": [
        (185, "e9121cec5988ffd8b33b855371e03ba5"),
        (186, "29d343340eba96cc3ce4777a3952a30b"),
        (187, "4f290b5d8f16d466c96f665ccdb08b08"),
        (188, "04728be1ecfd77e106e0371dedc460bb"),
    ],
    "B021": [
        (222, "9e572db7bcdd0690fed770fcd29d07ca"),
        (223, "df865596a366f545a4b6f5869bdd1531"),
        (224, "b710aabecd66dc21b4f28db4ac968a0a"),
        (225, "523ac0bfb09515c73001d3fbb97a4ffd"),
    ],
    "OR007": [
        (130, "e45f73f65cc3de4482d28d758503f2c1"),
        (131, "8053f13c15bb8891dd7586466e72fb34"),
        (132, "cf1a7ab3e14564be490c7c27bfafed78"),
        (133, "796a8db507869acf5e0b880d0925f693"),
    ],
    "OR014": [
        (197, "9109c26832e82a904fd8545eebe4c05c"),
        (198, "376e134d452b25fcd95c2cf4f5c5b93d"),
        (199, "bfe060099052eeb4f3081c80194cc40e"),
        (200, "e57c5e90335671a2302ebb8f3c626509"),
    ],
    "OR021": [
        (234, "e95df8c8a6fc455d9cea5c2ca36fdc38"),
        (235, "6d19ac8a0a37e74a19ed6c6dbd150f79"),
        (236, "92947302ba4198102894daf7613e5fff"),
        (237, "cafb20bc696fc025ef42cf12eaf986e3"),
    ],
}

CWRU_CATALOGUE: dict[int, CwruFile] = {
    number: _file(number, label, load_hp, md5)
    for label in CLASS_NAMES
    for load_hp, (number, md5) in enumerate(_FILES_BY_CLASS[label])
}


class CwruRecordings(list):
    """The recordings `load_cwru` found (a plain list of `Recording`), plus the file names it did not find."""

    def __init__(self, recordings: list[Recording], missing: list[str]) -> None:
        super().__init__(recordings)
        self.missing = missing


def catalogue_files(loads: tuple[int, ...] = (0,)) -> list[CwruFile]:
    """Catalogue entries at these loads, in CLASS_NAMES order, then by load."""
    loads = _check_loads(loads)
    entries = [entry for entry in CWRU_CATALOGUE.values() if entry.load_hp in loads]
    return sorted(entries, key=lambda entry: (CLASS_NAMES.index(entry.label), entry.load_hp))


def file_md5(path: Path) -> str:
    """The MD5 hex digest of the file at `path`, read in 1 MiB blocks, to compare with the catalogue's."""
    digest = hashlib.md5()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_cwru(
    data_dir: str | Path,
    loads: tuple[int, ...] = (0,),
    channel: str = "DE",
    allow_missing: bool = False,
) -> CwruRecordings:
    """Read the ten CWRU classes at the given motor loads (0-3 HP) as 12 kHz `Recording`s.

    Each file is checked against its official MD5 first. Missing files raise one DataError naming all of
    them, unless `allow_missing`, in which case the result holds what exists and `.missing` lists the rest
    (the normal files 98-100 at 1-3 HP are often absent). Normal records are resampled 48 kHz -> 12 kHz.
    """
    data_dir = Path(data_dir)
    if channel not in CHANNELS:
        raise DataError(f"CWRU channel must be one of {CHANNELS} (drive end, fan end, base), got {channel!r}.")
    if not data_dir.is_dir():
        raise DataError(
            f"CWRU folder {data_dir} does not exist. Put the official .mat files (97.mat, 105.mat, ...) "
            f"there, downloaded from {OFFICIAL_URL}<number>.mat."
        )

    entries = catalogue_files(loads)
    present = [entry for entry in entries if (data_dir / entry.filename).is_file()]
    missing = [entry.filename for entry in entries if entry not in present]
    if missing and not allow_missing:
        raise DataError(
            f"CWRU files missing from {data_dir}: {', '.join(missing)}. Download them from "
            f"{OFFICIAL_URL}<number>.mat, or pass allow_missing=True to use the files that are there."
        )
    if not present:
        raise DataError(f"None of the CWRU files for loads {tuple(loads)} are in {data_dir}: {', '.join(missing)}.")

    recordings = [_read_recording(data_dir / entry.filename, entry, channel) for entry in present]
    return CwruRecordings(recordings, missing)


def _check_loads(loads: tuple[int, ...]) -> tuple[int, ...]:
    if isinstance(loads, int):
        loads = (loads,)
    loads = tuple(loads)
    if not loads or any(load not in NOMINAL_RPM for load in loads):
        raise DataError(f"CWRU loads must be motor loads in HP among 0, 1, 2, 3, got {loads!r}.")
    return loads


def _read_recording(path: Path, entry: CwruFile, channel: str) -> Recording:
    actual_md5 = file_md5(path)
    if actual_md5 != entry.md5:
        raise DataError(
            f"{path} does not match the official CWRU file {entry.filename} (MD5 {actual_md5}, expected "
            f"{entry.md5}): it is corrupt or a different file. Download it again from {OFFICIAL_URL}{entry.filename}."
        )
    raw = path.read_bytes()
    check_mat_budget(raw, entry.filename)  # the MD5 vouches for the file, but scipy is never handed one unchecked
    try:
        variables = scipy.io.loadmat(io.BytesIO(raw))
    except Exception as error:  # scipy raises several unrelated types for a damaged .mat
        raise DataError(f"{path} cannot be read as a MATLAB file ({shown(str(error))}). Download it again.") from error
    del raw

    prefix = f"X{entry.number:03d}"
    key = f"{prefix}_{channel}_time"
    if key not in variables:
        available = sorted(k.split("_")[1] for k in variables if k.startswith(prefix + "_") and k.endswith("_time"))
        raise DataError(
            f"{entry.filename} has no {channel} channel (variable {key}); it holds {', '.join(available) or 'none'}. "
            f"Choose one of those channels."
        )
    signal = np.asarray(variables[key], dtype=np.float64).ravel()
    if signal.size == 0 or not np.all(np.isfinite(signal)):
        raise DataError(f"{entry.filename} variable {key} is empty or holds non-finite values. Download it again.")

    rpm_key = f"{prefix}RPM"
    rpm_measured = float(np.asarray(variables[rpm_key]).ravel()[0]) if rpm_key in variables else None
    signal, resampling = _to_target_rate(signal, entry.sample_rate)
    meta = {
        "source": "CWRU",
        "file": entry.filename,
        "file_number": entry.number,
        "variable": key,
        "channel": channel,
        "load_hp": entry.load_hp,
        "rpm": entry.rpm,
        "rpm_measured": rpm_measured,
        "diameter_in": entry.diameter_in,
        "original_sample_rate": entry.sample_rate,
        "resampling": resampling,
    }
    return Recording(signal=signal, sample_rate=TARGET_SAMPLE_RATE, label=entry.label, meta=meta)


def _to_target_rate(signal: np.ndarray, sample_rate: float) -> tuple[np.ndarray, str | None]:
    if sample_rate == TARGET_SAMPLE_RATE:
        return signal, None
    # resample_poly low-passes with a Kaiser-windowed FIR below the new Nyquist before it decimates,
    # and has zero phase delay, so the impacts keep their timing.
    divisor = gcd(int(sample_rate), int(TARGET_SAMPLE_RATE))
    up, down = int(TARGET_SAMPLE_RATE) // divisor, int(sample_rate) // divisor
    resampled = scipy.signal.resample_poly(signal, up, down)
    note = (
        f"{sample_rate / 1000:g} kHz -> {TARGET_SAMPLE_RATE / 1000:g} kHz, "
        f"scipy.signal.resample_poly(up={up}, down={down}) with its anti-alias FIR"
    )
    return resampled, note
