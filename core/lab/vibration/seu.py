"""The SEU gearbox data (Southeast University, bearing set), read from the published CSV files.

The set was recorded on a Drivetrain Dynamics Simulator (S. Shao, S. McAleer, R. Yan, P. Baldi, "Highly
Accurate Machine Fault Diagnosis Using Deep Transfer Learning", IEEE TII 15(4), 2019). Its bearing set
has five classes at two speed-load conditions, one file each: `<class>_<condition>.csv`. As documented
by the publishers (not yet checked against the files here, which are too large for this workspace):

- 16 header lines of Chinese text (GB18030), then about 1 048 560 rows of 8 channels:
  1 motor vibration, 2-4 planetary gearbox x/y/z, 5 motor torque, 6-8 parallel gearbox x/y/z;
- tab-separated, except `ball_20_0.csv`, which is comma-separated; every row ends with a separator;
- the sampling rate is not published.

A file is about 80 MB, so only the requested channel is kept, and the app loads SEU from a folder path
rather than an upload.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from core.lab.vibration.rates import checked_sample_rate
from core.lab.vibration.types import DataError, Recording

SEU_CLASS_NAMES: tuple[str, ...] = ("health", "ball", "inner", "outer", "comb")  # comb: inner + outer race
CONDITIONS: dict[str, tuple[int, int]] = {"20_0": (20, 0), "30_2": (30, 2)}  # shaft speed in Hz, load in V
CHANNELS: dict[int, str] = {
    1: "motor vibration",
    2: "planetary gearbox x",
    3: "planetary gearbox y",
    4: "planetary gearbox z",
    5: "motor torque",
    6: "parallel gearbox x",
    7: "parallel gearbox y",
    8: "parallel gearbox z",
}
HEADER_LINES = 16
# Not published. 5120 Hz is an assumption, not a measured or documented value: it sets the time and
# frequency axes only (the classifier sees samples), so pass the true rate when it is known.
DEFAULT_SAMPLE_RATE = 5_120.0
SOURCE_URL = "https://github.com/cathysiyu/Mechanical-datasets (folder gearbox/bearingset)"


def load_seu(
    data_dir: str | Path,
    condition: str = "20_0",
    channel: int = 2,
    sample_rate: float = DEFAULT_SAMPLE_RATE,
) -> list[Recording]:
    """One `Recording` per SEU bearing class (SEU_CLASS_NAMES order) at one condition, one channel.

    `data_dir` is the `bearingset` folder or a folder above it (`bearingset/` or `gearbox/bearingset/`).
    `channel` is 1-8 as documented (default 2, planetary gearbox x, the one most published work uses).
    """
    if condition not in CONDITIONS:
        raise DataError(f"SEU condition must be one of {', '.join(CONDITIONS)} (speed Hz _ load V), got {condition!r}.")
    if isinstance(channel, bool) or channel not in CHANNELS:
        raise DataError(f"SEU channel must be 1-8 ({_channel_list()}), got {channel!r}.")
    sample_rate = checked_sample_rate(sample_rate)
    folder = _bearing_folder(Path(data_dir), condition)

    paths = [folder / f"{label}_{condition}.csv" for label in SEU_CLASS_NAMES]
    missing = [path.name for path in paths if not path.is_file()]
    if missing:
        raise DataError(
            f"SEU files missing from {folder}: {', '.join(missing)}. Download the bearing set from "
            f"{SOURCE_URL} and put its CSV files in that folder."
        )
    return [
        _read_recording(path, label, condition, channel, sample_rate) for path, label in zip(paths, SEU_CLASS_NAMES)
    ]


def _channel_list() -> str:
    return ", ".join(f"{number} {name}" for number, name in CHANNELS.items())


def _bearing_folder(data_dir: Path, condition: str) -> Path:
    if not data_dir.is_dir():
        raise DataError(
            f"SEU folder {data_dir} does not exist. Download the bearing set from {SOURCE_URL} and give the "
            f"folder that holds health_{condition}.csv, ball_{condition}.csv, ..."
        )
    for folder in (data_dir, data_dir / "bearingset", data_dir / "gearbox" / "bearingset"):
        if any((folder / f"{label}_{condition}.csv").is_file() for label in SEU_CLASS_NAMES):
            return folder
    return data_dir


def _read_recording(path: Path, label: str, condition: str, channel: int, sample_rate: float) -> Recording:
    # Binary mode: the header is skipped by line without decoding it. GB18030 never uses the byte 0x0A
    # inside a character, so splitting on b"\n" is safe; the numbers below it are ASCII.
    with open(path, "rb") as handle:
        for line_number in range(1, HEADER_LINES + 1):
            if not handle.readline():
                raise DataError(
                    f"{path.name} ends after {line_number - 1} lines; an SEU file has {HEADER_LINES} header "
                    f"lines before its data. Download it again."
                )
        data_start = handle.tell()
        separator, n_channels = _sniff_row(handle.readline(), path)
        if n_channels < channel:
            raise DataError(
                f"{path.name} has {n_channels} channels per row; channel {channel} was asked for. "
                f"SEU files have 8 ({_channel_list()})."
            )
        handle.seek(data_start)
        signal = _read_column(handle, path, separator, channel)

    if signal.size == 0:
        raise DataError(f"{path.name} has no data rows after its {HEADER_LINES} header lines.")
    bad = np.flatnonzero(~np.isfinite(signal))
    if bad.size:
        raise DataError(
            f"{path.name} channel {channel} has {bad.size:,} missing or non-finite values, first on line "
            f"{HEADER_LINES + 1 + bad[0]}. Download the file again."
        )
    speed_hz, load_v = CONDITIONS[condition]
    meta = {
        "source": "SEU",
        "file": path.name,
        "condition": condition,
        "speed_hz": speed_hz,
        "load_v": load_v,
        "channel": channel,
        "channel_name": CHANNELS[channel],
        "separator": "comma" if separator == "," else "tab",
        "sample_rate_published": False,
    }
    return Recording(signal=signal, sample_rate=sample_rate, label=label, meta=meta)


def _sniff_row(row: bytes, path: Path) -> tuple[str, int]:
    """Separator and channel count of the first data row. Sniffed, not taken from the file name, so
    a corrected re-release of ball_20_0.csv reads as well."""
    text = row.decode("ascii", errors="replace").strip()
    if not text:
        raise DataError(f"{path.name} has no data after its {HEADER_LINES} header lines.")
    separator = "\t" if "\t" in text else "," if "," in text else None
    if separator is None:
        raise DataError(f"{path.name} line {HEADER_LINES + 1} is not tab- or comma-separated channels: {text[:60]!r}.")
    fields = text.split(separator)
    while fields and not fields[-1].strip():  # the trailing separator
        fields.pop()
    return separator, len(fields)


def _read_column(handle, path: Path, separator: str, channel: int) -> np.ndarray:
    try:
        column = pd.read_csv(
            handle,
            sep=separator,
            header=None,
            usecols=[channel - 1],
            dtype=np.float64,
            engine="c",
        )
    except (ValueError, pd.errors.ParserError) as error:
        raise DataError(
            f"{path.name} channel {channel} cannot be read as numbers ({error}). Check the file or download it again."
        ) from error
    return column[channel - 1].to_numpy()
