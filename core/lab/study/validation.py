"""Which of a fold's non-test windows validate (early stopping, the learning rate, spectrum-LR's C) and which
train, under each protocol (`VALIDATION_STYLES`):

    block   protocol 2: one contiguous stretch per training recording: the next time block (time-cv), or the
            last VALIDATION_SHARE of each training recording (load-out, fault-size)
    slices  protocol 3: runs of about VALIDATION_RUN consecutive windows spread evenly over every training
            block (time-cv: each block but the test block; load-out, fault-size: each training recording),
            `share` of each block's windows in all and at least one run per block

Either way a training window keeps at least one window length (in samples) away from every validation and
test window: the training windows nearer are dropped, never the test windows. Where a validation run lies
depends on the block's length only (its windows' index, not their content), so it is fixed before any data are
seen.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

VALIDATION_STYLES = ("block", "slices")
VALIDATION_SHARE = 0.2  # of each training recording's windows (load-out, fault-size)
VALIDATION_RUN = 6  # windows in one validation slice (protocol 3), about: a block's share is split evenly


def clear_of(starts: np.ndarray, window: int, regions: Sequence[tuple[int, int]], gap: int) -> np.ndarray:
    """The starts whose windows keep at least `gap` samples away from every region [a, b)."""
    keep = np.ones(starts.size, dtype=bool)
    for a, b in regions:
        keep &= (starts + window + gap <= a) | (starts >= b + gap)
    return starts[keep]


def last_share(starts: np.ndarray, window: int, share: float = VALIDATION_SHARE) -> tuple[np.ndarray, np.ndarray]:
    """Protocol 2: the last `share` of these windows (in time) for validation, the rest for training, with a gap
    of one window taken from the training side."""
    n_val = max(1, round(share * starts.size))
    val = starts[-n_val:]
    train = clear_of(starts[:-n_val], window, [(int(val[0]), int(val[-1]) + window)], window)
    return train, val


def slice_positions(n: int, share: float, run: int = VALIDATION_RUN) -> list[np.ndarray]:
    """Protocol 3: the indices, among a block's `n` windows in time order, of each validation run: round(share
    n) windows (at least one) in max(1, round(that / run)) runs of near-equal length, run j centred at
    (j + 1/2) n / runs."""
    if n == 0:
        return []
    n_val = min(n, max(1, round(share * n)))
    runs = max(1, round(n_val / run))
    lengths = np.diff(np.linspace(0, n_val, runs + 1).round().astype(int))
    positions = []
    for j, length in enumerate(lengths):
        first = min(max(round((j + 0.5) * n / runs - length / 2), 0), n - length)
        positions.append(np.arange(first, first + length))
    return positions


def spread_slices(
    blocks: Sequence[np.ndarray], window: int, share: float, keep_clear: Sequence[tuple[int, int]] = ()
) -> tuple[np.ndarray, np.ndarray]:
    """Protocol 3: (training, validation) starts of one recording whose training blocks hold these window
    starts (each in time order, already clear of the test windows): slice_positions of every block go to
    validation; the training windows within one window of a validation run or of `keep_clear` are dropped."""
    picked = [np.concatenate(slice_positions(block.size, share) or [np.empty(0, np.int64)]) for block in blocks]
    val = np.concatenate([block[index] for block, index in zip(blocks, picked)] or [np.empty(0, np.int64)])
    rest = np.concatenate([np.delete(block, index) for block, index in zip(blocks, picked)] or [np.empty(0, np.int64)])
    # one region per validation window: a run may straddle the seam of a block that wraps around the recording
    regions = [(int(s), int(s) + window) for s in val]
    train = clear_of(rest, window, [*regions, *keep_clear], window)
    return train, val.astype(np.int64)


def split_validation(
    starts: np.ndarray, window: int, style: str, share: float = VALIDATION_SHARE
) -> tuple[np.ndarray, np.ndarray]:
    """(training, validation) starts of one training recording (load-out, fault-size) in this `style`."""
    if style not in VALIDATION_STYLES:
        raise ValueError(f"validation must be one of {VALIDATION_STYLES}, got {style!r}")
    return last_share(starts, window, share) if style == "block" else spread_slices([starts], window, share)
