"""Is a channel a signal at all? Flat (a dead sensor: its spread at the quantisation step, or a handful of
distinct values per window), clipped (a share of samples stuck at the extreme values), level jumps (a step in
the mean between neighbouring windows). Flat channels, and channels that are no measurement at all (too short,
non-finite, or past core.limits.MAX_SAMPLE_MAGNITUDE, where a spread would overflow), are refused for training;
the others are warned about."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.limits import MAX_SAMPLE_MAGNITUDE

FEW_VALUES = 5  # distinct values per window, median over windows, at or below which a channel is flat
CLIPPED_SHARE = 0.001  # of samples at the extreme values (at least CLIPPED_MIN of them)
CLIPPED_MIN = 10
JUMP = 6.0  # a step in window means larger than this many times the median within-window sd


@dataclass(frozen=True)
class Finding:
    """One thing wrong with a channel, the message a user reads, and whether it keeps the channel out of training."""

    kind: str  # "unusable", "flat", "clipped" or "jump"
    message: str
    refuses_training: bool


def check_signal(signal: np.ndarray, where: str, window: int = 1024) -> list[Finding]:
    """Findings about one channel; `where` names it in the messages ("healthy.csv, channel s1")."""
    x = np.asarray(signal, dtype=np.float64)
    unusable = _unusable(x, where)
    if unusable:
        return [unusable]
    window = max(2, min(window, x.size))
    n = x.size // window
    windows = x[: n * window].reshape(n, window)  # (n, window)
    spread = float(np.std(x))
    values = np.unique(x[: min(x.size, 200_000)])
    step = float(np.min(np.diff(values))) if values.size > 1 else 0.0
    distinct = float(np.median([np.unique(row).size for row in windows[:200]]))
    if spread == 0 or spread <= 2 * step or distinct <= FEW_VALUES:
        what = "constant" if spread == 0 else f"sd {spread:.3g} at a quantisation step of {step:.3g}"
        return [
            Finding(
                "flat",
                f"{where} is flat ({what}, about {distinct:.0f} distinct values per window): "
                "a dead or disconnected sensor; it is not trained on.",
                True,
            )
        ]
    findings = []
    low, high = float(x.min()), float(x.max())
    at_rails = int(np.sum(x == low) + np.sum(x == high))
    if at_rails >= CLIPPED_MIN and at_rails >= CLIPPED_SHARE * x.size:
        findings.append(
            Finding(
                "clipped",
                f"{where} is clipped: {100 * at_rails / x.size:.2f} % of its samples sit at its "
                f"extreme values {low:.4g} / {high:.4g} (the sensor or recorder saturated).",
                False,
            )
        )
    if n >= 3:
        means, sds = windows.mean(axis=1), windows.std(axis=1)
        steps = np.abs(np.diff(means))
        typical = float(np.median(sds)) or 1.0
        if steps.max() > JUMP * typical:
            at = int(np.argmax(steps) + 1) * window
            findings.append(
                Finding(
                    "jump",
                    f"{where} jumps in level near sample {at:,} (a step of {steps.max():.3g}, "
                    f"{steps.max() / typical:.0f} times the usual spread).",
                    False,
                )
            )
    return findings


def _unusable(x: np.ndarray, where: str) -> Finding | None:
    """A refusal when `x` is no measurement at all; checked first, so the spread below cannot overflow."""
    if x.size < 2:
        why = f"has {x.size} sample{'' if x.size == 1 else 's'}"
    elif not np.all(np.isfinite(x)):
        why = f"holds {int(np.sum(~np.isfinite(x))):,} non-finite values (NaN or inf)"
    elif float(np.max(np.abs(x))) > MAX_SAMPLE_MAGNITUDE:
        limit = f"{MAX_SAMPLE_MAGNITUDE:.0e}".replace("e+", "e")
        why = f"holds values of magnitude above {limit} (up to {float(np.max(np.abs(x))):.3g})"
    else:
        return None
    return Finding("unusable", f"{where} {why}: not a vibration measurement; it is not trained on.", True)
