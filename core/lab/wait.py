"""How long an experiment or a study will take, before it starts: the one wait estimate of the lab.

One rule for every estimate, on the page, in the CLIs and in the job queue: the training runs go in rounds of
`workers` side by side, each run its training windows x the epoch cap, at a rate of seconds per (window x
epoch), windows counted in 1024-sample units (shorter windows go proportionally faster):

    seconds = fixed + ceil(runs / workers) x windows x epochs x (window / 1024) x rate

The training windows are counted from the real cut (the plan's window starts, the study's folds), not guessed
from a share of the recordings, so a window, a stride or a design that leaves samples unused is counted as it
will train. Early stopping usually ends runs sooner: the estimate is an upper bound of the training.

The rate is either the nominal one (`estimate(work)`: what a press may start, the study's wait and the CLIs'
line, so that a budget does not depend on how busy a server was) or this server's measured one
(`estimate(work, speed)` with a `SpeedModel`: the wait the page tells before a press). A speed model starts from
a short timed training of model B when the server starts (`calibrate`), scaled by RAW_TO_EFFECTIVE, then
follows the presses the server finished: each gives the rate that would have told its wait exactly, and the
median of the last OBSERVED of them is the rate told next. Its fixed part is the page's own cost (PAGE_SECONDS).
"""

from __future__ import annotations

import math
import statistics
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.lab.report import plural
from core.lab.study.folds import training_window_counts
from core.lab.vibration.types import Recording
from core.lab.vibration.windows import count_training_windows
from core.limits import MAX_PAGE_RUNS, MAX_PAGE_SECONDS

REFERENCE_WINDOW = 1024  # samples: rates are per window of this length
# training windows per second of one run on one CPU thread, validation passes included, for 1024-sample
# windows (the shipped CWRU 0 HP time-cv study, two runs side by side: median 4,960 for A, 4,740 for B)
WINDOWS_PER_SECOND_1024 = 4_800
# a default press's effective seconds per (window x epoch of the cap) over the calibration's raw seconds per
# (window x epoch), measured with bench/one_button.py on a 2-core machine: above 1 with two runs side by side
# (they slow each other more over a whole press than in the short calibration), below 1 on one core (early
# stopping); one factor between the two keeps both waits well inside ±25 %
RAW_TO_EFFECTIVE = 1.1
PAGE_SECONDS = 1.5  # the page's 1 s poll (0.5 s on average) and drawing the results, measured in Chromium
OBSERVED = 20  # finished presses the told rate follows
CALIBRATION_WINDOWS, CALIBRATION_EPOCHS = 512, 2
CALIBRATION_ROUNDS = 3  # timed rounds after an untimed one; the fastest counts (the least disturbed by others)
NOMINAL_BASIS = "early stopping often ends runs sooner"


@dataclass(frozen=True)
class Workload:
    """What a wait is estimated for: `runs` runs, each over `windows` training windows (a study's mean over its
    folds) of `window` samples for at most `epochs` epochs, `workers` of them side by side."""

    runs: int
    windows: float
    epochs: int
    workers: int = 1
    window: int = REFERENCE_WINDOW

    @property
    def units(self) -> float:
        """Rounds x windows x epochs, in windows of REFERENCE_WINDOW samples: what a rate multiplies."""
        return training_rounds(self.runs, self.workers) * self.windows * self.epochs * self.window / REFERENCE_WINDOW


def training_rounds(runs: int, workers: int) -> int:
    """Rounds of runs side by side: 6 runs on 2 workers are 3 rounds, 1 run on 2 workers is 1."""
    return math.ceil(max(0, runs) / max(1, workers))


def windows_per_second(window: int) -> float:
    """Training windows one run gets through per second at the nominal speed at this window length (shorter is
    proportionally faster)."""
    return WINDOWS_PER_SECOND_1024 * REFERENCE_WINDOW / window


def estimate(work: Workload, speed: SpeedModel | None = None) -> float:
    """The one wait estimate, in seconds from the start to the last run's end: at the nominal speed (None), or
    at this server's measured one with the page's fixed cost (a SpeedModel)."""
    if speed is None:
        return work.units / WINDOWS_PER_SECOND_1024
    return PAGE_SECONDS + work.units * speed.rate


def told_wait(work: Workload, where: str, speed: SpeedModel | None = None) -> str:
    """The wait in one line, as the page and the CLIs tell it: "6 training runs: about 40 s on this server (early
    stopping often ends runs sooner)."; with a SpeedModel, what its rate was measured from."""
    basis = NOMINAL_BASIS if speed is None else speed.basis()
    return f"{plural(work.runs, 'training run')}: {describe_wait(estimate(work, speed))} on {where} ({basis})."


# --- the training windows a run trains on -------------------------------------------------------------------


def plan_training_windows(recordings: Sequence[Recording], cutting: Mapping[str, Any]) -> int:
    """The training windows of one run of a plan: the recordings cut as the plan cuts them (`cutting`: the
    plan's make_windows keyword arguments, Plan.cutting)."""
    return count_training_windows(list(recordings), **cutting)


def fold_training_windows(
    recordings: Sequence[Recording],
    design: str,
    window: int,
    folds: int = 5,
    stride: int | None = None,
    **options: Any,
) -> list[int]:
    """The training windows of each fold of a study (its design, window, fold count, stride and make_folds'
    keyword-only `options`), cut as the study will cut them."""
    return training_window_counts(design, recordings, window, folds, stride, **options)


def plan_workload(plan: Any) -> Workload:
    """What the wait of a plan a CLI is about to run is estimated from: a study's plan (its runs over the mean of
    its folds' training windows) or an experiment's (its runs over the training windows of its cut)."""
    if hasattr(plan, "design"):  # a study: StudyPlan
        recordings = plan.recordings() if callable(plan.recordings) else plan.recordings
        per_fold = fold_training_windows(
            list(recordings), plan.design, plan.window, plan.folds, plan.stride, **plan.fold_options()
        )
        windows, window = sum(per_fold) / max(1, len(per_fold)), plan.window
        return Workload(plan.trained_count(), windows, plan.config.epochs, plan.workers, window)
    if hasattr(plan.data, "x_train"):  # an experiment on windows already cut
        windows, window = len(plan.data.x_train), plan.data.window
    else:  # an experiment on recordings, cut with its `cutting`
        windows, window = plan_training_windows(plan.data, plan.cutting), plan.cutting.get("window", REFERENCE_WINDOW)
    return Workload(plan.run_count(), windows, plan.config.epochs, plan.workers, window)


def plan_wait_line(plan: Any) -> str:
    """The line a CLI prints before it trains `plan` (see plan_workload), at the nominal speed."""
    return told_wait(plan_workload(plan), "the cluster" if plan.backend == "ray" else "this machine")


# --- this server's measured speed ----------------------------------------------------------------------------


def calibrate(window: int = REFERENCE_WINDOW, threads: int = 1, workers: int = 1) -> float:
    """Raw seconds per (training window of REFERENCE_WINDOW samples x epoch) of one round of `workers` runs of
    model B trained side by side on this machine now, each with `threads` torch threads: short trainings on
    random windows, validation and test included, as the page's runs train. Side by side, runs share the memory
    bus and caches, so a round of two is slower than one run alone even on two cores: the calibration measures
    it rather than assume it."""
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
    work = Workload(max(1, workers), CALIBRATION_WINDOWS, CALIBRATION_EPOCHS, max(1, workers), window)
    return min(rounds[1:]) / work.units


class SpeedModel:
    """This server's measured speed, which the page's told wait follows; safe to share between sessions."""

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

    def basis(self) -> str:
        """What the rate comes from, in words."""
        presses = self.presses
        if presses:
            return f"from the last {plural(presses, 'press', 'presses')} this server finished"
        return "from this server's speed, measured when it started"

    def observe(self, work: Workload, job_seconds: float) -> None:
        """A press of `work` that ran to its end: its job took `job_seconds` (training, from start to the last
        run); a press of no work or of no finite positive time teaches nothing."""
        if work.units <= 0 or not job_seconds > 0 or not math.isfinite(job_seconds):
            return
        with self._lock:
            self._observed.append(job_seconds / work.units)


# --- the default press ---------------------------------------------------------------------------------------

# The default press asks the short answer's question, B against B-noPE (the encoding alone), and trains A beside
# them when the press with A is told at most DEFAULT_PRESS_SECONDS: about the wait the two-model press (A and B)
# was told on a busy 2-core server (66-75 s, issue 33), so that A never makes the default press much longer than it
# was; a quiet 2-core server trains all three in about 45 s.
QUESTION_MODELS = ("B-noPE", "B")
BESIDE_MODEL = "A"
DEFAULT_PRESS_SECONDS = 90.0


def press_models(seconds_with_beside: float | None) -> tuple[str, ...]:
    """The default press's models: A, B-noPE and B when the press with A is told at most DEFAULT_PRESS_SECONDS
    (`seconds_with_beside`), else B-noPE and B (also when its wait is unknown: None)."""
    if seconds_with_beside is not None and seconds_with_beside <= DEFAULT_PRESS_SECONDS:
        return (BESIDE_MODEL, *QUESTION_MODELS)
    return QUESTION_MODELS


# --- the wait and the page's budget in words -----------------------------------------------------------------

SECONDS_UNDER = 180  # a wait shorter than this is told in seconds: whole minutes were off by up to 50 % there


def describe_wait(seconds: float) -> str:
    """A wait in words: "about 40 s" under a minute, "about 75 s" (to 5 s) under three minutes, "about 4 min"
    from three minutes on. Whole minutes below three told a 66 s press "about 1 min" and a 75 s one "about 2 min"
    (issue 31)."""
    whole = max(1, round(seconds))
    if whole < 60:
        return f"about {whole} s"
    if 5 * round(seconds / 5) < SECONDS_UNDER:
        return f"about {5 * round(seconds / 5)} s"
    return f"about {round(seconds / 60)} min"


def page_refusal(runs: int, seconds: float) -> str | None:
    """Why one press of a shared page may not start `runs` runs of about `seconds` in all, in one line; None
    when they fit its budget (core.limits). A page with a cluster to send runs to does not ask."""
    if runs <= MAX_PAGE_RUNS and seconds <= MAX_PAGE_SECONDS:
        return None
    return (
        f"Too large for a shared page ({plural(runs, 'training run')}, {describe_wait(seconds)}; one press starts at "
        f"most {plural(MAX_PAGE_RUNS, 'run')} or {describe_limit(MAX_PAGE_SECONDS)}), and this server has no "
        "cluster to send it to. Run it where you have the cores:"
    )


def describe_limit(seconds: float) -> str:
    """A time limit in words: "10 minutes", "1 minute", and in seconds under a minute or off the minute ("40 s",
    "90 s")."""
    if seconds >= 60 and seconds % 60 == 0:
        return plural(int(seconds // 60), "minute")
    return f"{seconds:g} s"
