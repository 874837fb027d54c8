"""The SpectraQuest gearbox data (Gearbox Fault Diagnostics Simulator): healthy against one broken tooth.

Published by NREL on OpenEI ("Gearbox Fault Diagnosis", mirrored on Kaggle as brjapon/gearbox-fault-diagnosis;
licence CC-BY-SA as stated by the copy this lab was given: credit the source with any result). Not the SEU
gearbox set: another rig, another source. Twenty gzip-compressed CSV files, `h30hz<load>.csv.gz` (healthy)
and `b30hz<load>.csv.gz` (broken tooth) at loads 0, 10, ..., 90 %, each with the header `a1,a2,a3,a4` (four
accelerometers in four directions), no time column, 88 320 to 114 432 rows; `30hz` is the speed setting in
the publisher's naming.

The motor load goes into meta["load_hp"], the key the lab's load-out design and cross-load evaluation read:
for this rig it carries the load in percent (0-90), not horsepower, so a load-out study makes ten folds.

Channel a2 is the default: a1 separates the classes by level alone (a 3-feature logistic regression on RMS,
kurtosis and crest factor, leave-one-load-out, scores 0.99 on a1 and 0.68 on a2; shared/data/README.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from core.lab.vibration.rates import checked_sample_rate
from core.lab.vibration.types import DataError, Recording

SPECTRAQUEST_CLASSES = {"h": "healthy", "b": "broken_tooth"}
CHANNELS: tuple[str, ...] = ("a1", "a2", "a3", "a4")
DEFAULT_CHANNEL = "a2"
LOADS: tuple[int, ...] = tuple(range(0, 100, 10))  # percent
# No source found states the rate. 30 "hz" in the file names is the shaft speed setting, and 88 320 to
# 114 432 rows per file suggest a few seconds of recording at a few tens of kHz; 30 000 Hz (one thousand
# samples per shaft turn at 30 Hz) is a round assumption, not a published value. Windows are counted in
# samples, so it changes no accuracy, only the seconds and hertz shown; pass the true rate when known.
SAMPLE_RATE_ASSUMED = 30_000.0
SOURCE = "NREL Gearbox Fault Diagnosis data (OpenEI; Kaggle brjapon/gearbox-fault-diagnosis)"


def spectraquest_file(kind: str, load: int) -> str:
    """The file name of one class ("h" healthy, "b" broken tooth) at one load in percent."""
    return f"{kind}30hz{int(load)}.csv.gz"


def load_spectraquest(
    folder: str | Path,
    channel: str = DEFAULT_CHANNEL,
    loads: Sequence[int] = LOADS,
    sample_rate: float = SAMPLE_RATE_ASSUMED,
) -> list[Recording]:
    """One `Recording` per class and load ("healthy", "broken_tooth"), load by load, of one channel (a1-a4).

    meta: load_hp (the load in percent for this rig, see the module docstring), file, channel, source.
    Every file is read with pandas.read_csv (gzip), only the chosen column kept.
    """
    channel = str(channel).strip().lower()
    if channel not in CHANNELS:
        raise DataError(f"SpectraQuest channel must be one of {', '.join(CHANNELS)}, got {channel!r}.")
    unknown = sorted({int(load) for load in loads} - set(LOADS))
    if unknown or not loads:
        raise DataError(f"SpectraQuest loads are {', '.join(map(str, LOADS))} (percent); got {list(loads)}.")
    sample_rate = checked_sample_rate(sample_rate)
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(
            f"SpectraQuest folder {folder} does not exist. Give the folder that holds h30hz0.csv.gz, "
            f"b30hz0.csv.gz, ... ({SOURCE})."
        )
    wanted = [(kind, int(load)) for load in loads for kind in SPECTRAQUEST_CLASSES]
    missing = [
        spectraquest_file(kind, load) for kind, load in wanted if not (folder / spectraquest_file(kind, load)).is_file()
    ]
    if missing:
        raise DataError(f"SpectraQuest files missing from {folder}: {', '.join(missing)} ({SOURCE}).")
    return [_read(folder / spectraquest_file(kind, load), kind, load, channel, sample_rate) for kind, load in wanted]


def _read(path: Path, kind: str, load: int, channel: str, sample_rate: float) -> Recording:
    try:
        table = pd.read_csv(path, compression="gzip", usecols=[channel], dtype=np.float64, engine="c")
    except (ValueError, OSError, EOFError, pd.errors.ParserError) as error:  # a missing column is a ValueError
        raise DataError(f"{path.name} cannot be read as SpectraQuest a1,a2,a3,a4 columns: {error}") from None
    signal = table[channel].to_numpy()
    bad = np.flatnonzero(~np.isfinite(signal))
    if signal.size == 0 or bad.size:
        where = "no rows" if signal.size == 0 else f"{bad.size} non-finite values, first on line {bad[0] + 2}"
        raise DataError(f"{path.name} channel {channel}: {where}. Take the file again from the source.")
    meta = {
        "source": "SpectraQuest",
        "file": path.name,
        "channel": channel,
        "load_hp": load,
        "load_percent": load,
        "sample_rate_published": False,
    }
    return Recording(signal=signal, sample_rate=sample_rate, label=SPECTRAQUEST_CLASSES[kind], meta=meta)
