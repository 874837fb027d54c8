"""How long one press of the Fault lab takes on this server, from measurements of this server.

The page tells a wait before the click: a fixed cost of the page (its poll, drawing the results) plus the
training, in rounds of `workers` runs side by side, each run its training windows x the epoch cap at an
effective rate of seconds per (window x epoch of the cap):

    seconds = PAGE_SECONDS + ceil(runs / workers) x windows x epochs x rate

The effective rate folds in what one run does besides its training steps (validation passes, the test and the
order test) and that early stopping ends most runs before the cap. It starts from a short timed training of
model B on this machine when the server starts (`calibrate`), scaled by RAW_TO_EFFECTIVE, and then follows
the presses this server has finished: every finished press gives the rate that would have told its wait
exactly, and the median of the last OBSERVED of them is the rate told next.
"""

from __future__ import annotations

import math
import statistics
import threading
from collections import deque

import numpy as np

# a default press's effective seconds per (window x epoch of the cap) over the calibration's raw seconds per
# (window x epoch), measured with bench/one_button.py on a 2-core machine: above 1 with two runs side by side
# (they slow each other more over a whole press than in the short calibration), below 1 on one core (early
# stopping); one factor between the two keeps both waits well inside ±25 %
RAW_TO_EFFECTIVE = 1.1
PAGE_SECONDS = 1.5  # the page's 1 s poll (0.5 s on average) and drawing the results, measured in Chromium
OBSERVED = 20  # finished presses the told rate follows
CALIBRATION_WINDOWS, CALIBRATION_EPOCHS = 512, 2
CALIBRATION_ROUNDS = 3  # timed rounds after an untimed one; the fastest counts (the least disturbed by others)


def training_rounds(runs: int, workers: int) -> int:
    """Rounds of runs side by side: 6 runs on 2 workers are 3 rounds, 1 run on 2 workers is 1."""
    return math.ceil(max(0, runs) / max(1, workers))


def calibrate(window: int = 1024, threads: int = 1, workers: int = 1) -> float:
    """Raw seconds per (training window x epoch) of one round of `workers` runs of model B trained side by side
    on this machine now, each with `threads` torch threads: short trainings on random windows, validation and
    test included, as the page's runs train. Side by side, runs share the memory bus and caches, so a round of
    two is slower than one run alone even on two cores: the calibration measures it rather than assume it."""
    from concurrent.futures import ThreadPoolExecutor

    from core.lab.training import TrainConfig, train
    from core.lab.vibration.windows import WindowSet

    rng = np.random.default_rng(0)

    def windows(n: int) -> np.ndarray:
        return rng.standard_normal((n, window)).astype(np.float32)

    labels = np.arange(CALIBRATION_WINDOWS) % 2
    data = WindowSet(
        windows(CALIBRATION_WINDOWS), labels, windows(64), labels[:64], windows(32), labels[:32],
        ["one", "two"], 12_000.0, window, window, "time", 0.0, 1.0,
    )  # fmt: skip
    config = TrainConfig(epochs=CALIBRATION_EPOCHS, patience=CALIBRATION_EPOCHS, threads=threads)
    rounds = []
    with ThreadPoolExecutor(max(1, workers)) as pool:
        for _ in range(1 + CALIBRATION_ROUNDS):  # the first round pays one-time costs (imports, allocations)
            runs = pool.map(lambda seed: train(data, "B", config, seed=seed, device="cpu"), range(max(1, workers)))
            rounds.append(max(run["train_seconds"] for run in runs))
    return min(rounds[1:]) / (CALIBRATION_WINDOWS * CALIBRATION_EPOCHS)


class SpeedModel:
    """The wait a press is told, from this server's measured speed; safe to share between sessions."""

    def __init__(self, raw_seconds_per_window_epoch: float) -> None:
        if not raw_seconds_per_window_epoch > 0:
            raise ValueError(f"a calibration gives a positive rate, got {raw_seconds_per_window_epoch!r}")
        self._prior = raw_seconds_per_window_epoch * RAW_TO_EFFECTIVE
        self._observed: deque[float] = deque(maxlen=OBSERVED)
        self._lock = threading.Lock()

    @property
    def rate(self) -> float:
        """Effective seconds per (window x epoch of the cap): the median of the presses observed, else the prior."""
        with self._lock:
            return statistics.median(self._observed) if self._observed else self._prior

    @property
    def presses(self) -> int:
        """How many finished presses the rate follows."""
        with self._lock:
            return len(self._observed)

    def seconds(self, windows: int, runs: int, epochs: int, workers: int) -> float:
        """The wait to tell, from the click to the verdict."""
        return PAGE_SECONDS + training_rounds(runs, workers) * windows * epochs * self.rate

    def observe(self, windows: int, runs: int, epochs: int, workers: int, job_seconds: float) -> None:
        """A press that ran to its end: its job took `job_seconds` (training, from start to the last run)."""
        units = training_rounds(runs, workers) * windows * epochs
        if units <= 0 or not job_seconds > 0 or not math.isfinite(job_seconds):
            return
        with self._lock:
            self._observed.append(job_seconds / units)
