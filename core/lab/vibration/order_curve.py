"""The order-dose curve: a graded control whose class lives only in which of two pulse trains leads the other.

Two trains of flat-topped pulses run through every recording, alternating: a positive pulse, a silence, a
negative pulse, a silence, a positive pulse, ... Each pulse lasts 64-95 samples (2-3 patches); each silence
is `base + U` samples with U uniform on 0 .. PATCH - 1, and the two silences of a cycle have different bases:
in class "positive_leads" the silence after a positive pulse is the short one, in "negative_leads" the silence
after a negative pulse is. So the class is which train leads the other by the short gap, and the level sets
how different the two gaps are (their contrast, in samples). At the easiest level the short silence is 48-79
samples (1.5-2.5 patches) and the long one 96-127 (3-4), as the periods of real bearing defects at 12 kHz span
2-4 patches (BPFI 74 and BPFO 112 samples); each level brings them closer, and at a contrast of 0 the classes
would be one process.

Why only the order tells the classes apart, at every level:

- **Time reversal maps one class onto the other.** Read backwards, a positive_leads stream is a negative_leads
  stream (the short silence then follows the negative pulse). The pulses are symmetric in time, the noise floor
  is white and the lengths and silences are independent draws, so a negative_leads window has exactly the
  distribution of a positive_leads window reversed. Reversal keeps the magnitude of the DFT, the mean, RMS and
  kurtosis and the multiset of patch energies, and sends patch j to patch 31 - j of a process whose every patch
  has the same law: the power spectrum, every order-free summary and any one patch are distributed alike in both
  classes. (Two different events swapped in order change the spectrum through their cross term, unless each
  is symmetric about its centre or their phases are random: hence symmetric pulses.) Flipping every sign maps
  the classes onto each other too, which keeps the spectrum and every even statistic on its own.
- **The patches are the same bag.** Every length and silence holds a term uniform over one patch, so where a
  pulse starts and ends inside its patch is uniform and independent of every other pulse; silences of at least
  48 samples keep two pulses out of one patch. A window's patches are then pieces of positive pulses, pieces of
  negative pulses and noise, with independent details, in counts that reversal keeps: the same bag in both
  classes, up to how the pulses cut by the window's two edges are split. A model that mean-pools its tokens with
  no position signal (A, B-noPE) sees only the bag, so it sits at chance; one that knows which token follows
  which can read which pulse the short silence follows.

Why pulses with a mean and not ringing bursts: a window starts at a random phase of the trains, so an event
falls anywhere inside its patch, and the patch mean is the only linear feature of a patch that does not depend
on where. Model B embeds each patch linearly before it can relate two patches; with zero-mean ringing bursts
(two carriers, random phases) it stayed at chance within the study's budget, with these pulses it learns the
easiest level. tests/test_order_curve.py checks the order-blind side with logistic regressions on many windows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from core.lab.vibration.rates import checked_sample_rate
from core.lab.vibration.types import DataError, Recording

SAMPLE_RATE = 12_000.0  # nominal, the CWRU rate; the task is counted in samples, so it sets only the time axis
PATCH = 32  # = ModelConfig.patch: lengths and silences are jittered over one patch, so offsets in a patch are uniform
PULSE_SAMPLES = (64, 95)  # a pulse's length, both ends included: 2-3 patches
EDGE_SAMPLES = 8  # each pulse rises and falls over this many samples (a raised cosine), so it is symmetric
GAP_BASES_SUM = 144  # short base + long base: a cycle of two pulses and two silences averages 334 samples
SHORT_GAP_BASES = (48, 60, 62, 64)  # per level, easiest first: contrasts 48, 24, 20, 16 samples
NOISE_RMS = 0.1  # white noise floor under pulses of height about 1
AMPLITUDE_SPREAD = 0.2  # log-normal sigma of each pulse's height
CLASS_NAMES = ("positive_leads", "negative_leads")
MAX_DURATION_S = 600.0  # per class
_START_CYCLES = 16  # a stream starts up to this many cycles before sample 0, so sample 0 falls at a random phase


@dataclass(frozen=True)
class CurveLevel:
    """One difficulty level: the short and the long silence, in samples (both ends included)."""

    index: int
    short_gap: tuple[int, int]
    long_gap: tuple[int, int]

    @property
    def contrast(self) -> int:
        """The long silence's mean minus the short one's, in samples: 0 would make the classes one process."""
        return self.long_gap[0] - self.short_gap[0]

    def to_dict(self) -> dict[str, Any]:
        """The level's parameters as a results JSON stores them."""
        return {
            "level": self.index,
            "contrast_samples": self.contrast,
            "short_gap_samples": list(self.short_gap),
            "long_gap_samples": list(self.long_gap),
            "pulse_samples": list(PULSE_SAMPLES),
            "edge_samples": EDGE_SAMPLES,
            "noise_rms": NOISE_RMS,
            "amplitude_spread": AMPLITUDE_SPREAD,
            "patch": PATCH,
        }


def curve_level(index: Any) -> CurveLevel:
    """Level `index` of the curve (0 is the easiest); DataError for a level that does not exist."""
    if isinstance(index, bool) or not isinstance(index, int | np.integer) or not 0 <= index < len(SHORT_GAP_BASES):
        raise DataError(f"The order curve has levels 0 to {len(SHORT_GAP_BASES) - 1}, got {index!r}.")
    short = SHORT_GAP_BASES[int(index)]
    long = GAP_BASES_SUM - short
    return CurveLevel(int(index), (short, short + PATCH - 1), (long, long + PATCH - 1))


def curve_levels() -> list[CurveLevel]:
    """Every level of the curve, easiest first."""
    return [curve_level(index) for index in range(len(SHORT_GAP_BASES))]


def load_order_curve(
    seed: int = 0, level: int = 0, duration_s: float = 10.0, sample_rate: float = SAMPLE_RATE
) -> list[Recording]:
    """Two `Recording`s, "positive_leads" and "negative_leads", each about `duration_s` long at `level`,
    deterministic in `seed` (each class draws from its own stream)."""
    chosen = curve_level(level)
    sample_rate = checked_sample_rate(sample_rate)
    duration = float(duration_s) if isinstance(duration_s, int | float) and not isinstance(duration_s, bool) else -1.0
    if not np.isfinite(duration) or not 0 < duration <= MAX_DURATION_S:
        raise DataError(f"The order curve's duration must be above 0 and at most {MAX_DURATION_S:g} s per class.")
    length = int(round(duration * sample_rate))
    recordings = []
    for index, label in enumerate(CLASS_NAMES):
        rng = np.random.default_rng([int(seed), chosen.index, index])
        signal = pulse_trains(length, chosen, positive_leads=index == 0, rng=rng)
        meta = {"source": "order_curve", **chosen.to_dict(), "data_seed": int(seed)}
        recordings.append(Recording(signal=signal, sample_rate=sample_rate, label=label, meta=meta))
    return recordings


def pulse_shape(length: int) -> np.ndarray:
    """A flat-topped pulse of height 1, `length` samples, rising and falling over EDGE_SAMPLES: symmetric in time."""
    shape = np.ones(length)
    rise = 0.5 - 0.5 * np.cos(np.pi * (np.arange(EDGE_SAMPLES) + 0.5) / EDGE_SAMPLES)
    shape[:EDGE_SAMPLES], shape[-EDGE_SAMPLES:] = rise, rise[::-1]
    return shape


def pulse_plan(length: int, level: CurveLevel, positive_leads: bool, rng: np.random.Generator) -> np.ndarray:
    """(pulses, 3) integer rows (start, length, sign) of the pulses that reach [0, length), in time order.

    Pulses alternate in sign, the first of each cycle leading by the short silence: positive in positive_leads."""
    cycle = 2 * PULSE_SAMPLES[1] + level.short_gap[1] + level.long_gap[1]
    start = -int(rng.integers(0, _START_CYCLES * cycle))
    cycles = (length - start) // (2 * PULSE_SAMPLES[0] + level.short_gap[0] + level.long_gap[0]) + 1
    lengths = rng.integers(PULSE_SAMPLES[0], PULSE_SAMPLES[1] + 1, size=2 * cycles)
    gaps = np.empty(2 * cycles, dtype=np.int64)
    gaps[0::2] = rng.integers(level.short_gap[0], level.short_gap[1] + 1, size=cycles)  # after the leader
    gaps[1::2] = rng.integers(level.long_gap[0], level.long_gap[1] + 1, size=cycles)  # after the follower
    starts = start + np.concatenate([[0], np.cumsum(lengths + gaps)[:-1]])
    leader = 1 if positive_leads else -1
    signs = np.tile([leader, -leader], cycles)
    reach = (starts + lengths > 0) & (starts < length)
    return np.stack([starts, lengths, signs], axis=1)[reach]


def pulse_trains(length: int, level: CurveLevel, positive_leads: bool, rng: np.random.Generator) -> np.ndarray:
    """The signal: the two pulse trains, each pulse at its own log-normal height, on the white noise floor."""
    plan = pulse_plan(length, level, positive_leads, rng)
    heights = rng.lognormal(0.0, AMPLITUDE_SPREAD, size=len(plan))
    signal = NOISE_RMS * rng.standard_normal(length)
    shapes = {n: pulse_shape(n) for n in range(PULSE_SAMPLES[0], PULSE_SAMPLES[1] + 1)}
    for (start, n, sign), height in zip(plan, heights):
        begin, end = max(start, 0), min(start + n, length)
        signal[begin:end] += sign * height * shapes[n][begin - start : end - start]
    return signal
