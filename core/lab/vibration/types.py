"""The one shape every vibration source produces, the one error type for bad data, and the class names.

Every loader (CWRU, SEU, synthetic, user CSV) returns `Recording`s; everything that can go wrong with a
user's data raises `DataError`, whose message says what is wrong, where, and what to do about it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

# The ten CWRU 12 kHz drive-end classes, in this order everywhere (loaders, synthetic set, JSON results,
# fault-frequency markers). IR inner race, B ball, OR outer race at 6:00; the number is the fault diameter
# in thousandths of an inch.
CLASS_NAMES: tuple[str, ...] = (
    "normal",
    "IR007",
    "IR014",
    "IR021",
    "B007",
    "B014",
    "B021",
    "OR007",
    "OR014",
    "OR021",
)


class DataError(ValueError):
    """Bad or missing vibration data, with a message a user can act on."""


@dataclass
class Recording:
    """One continuous 1-D vibration signal of one class."""

    signal: np.ndarray
    sample_rate: float
    label: str
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.signal = np.asarray(self.signal, dtype=np.float64).ravel()
        self.sample_rate = float(self.sample_rate)

    @property
    def duration_s(self) -> float:
        """The recording's length in seconds."""
        return len(self.signal) / self.sample_rate
