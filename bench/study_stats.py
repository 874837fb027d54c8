"""The study's statistics on 2,000 simulated studies at the shipped design (5 folds x 6 seeds, about 225 test
windows a fold): coverage of the 95 % CI, type-I error at a true 0, power at a true +5 points and at the
reported mde80, and how often a true 0 reads "equivalent", each with its Monte-Carlo standard error.

    python bench/study_stats.py [--studies 2000]
    python bench/study_stats.py --smoke    # seconds: 20 studies a line (the numbers then mean nothing)

Targets (issue 14): coverage in [0.935, 0.965], type-I error at most 6 %. Near 100 % accuracy a true effect
squeezes the spread (a model cannot err less than never), so power at the mde80 runs above 80 % there.

Then (issue 22) repeated K-fold studies whose folds share training data and retest the same windows
(core.lab.stats.simulation.simulate_overlapping_folds): the 95 % coverage at a true 0 of the corrected resampled
t (core.lab.stats.resampled) and of the interval that takes fold means as independent, for a few repeats R,
beside the binomial band a true-95 % method meets with probability >= 99 %.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.lab.stats.intervals import paired_interval, verdict  # noqa: E402
from core.lab.stats.resampled import independent_interval, resampled_interval  # noqa: E402
from core.lab.stats.simulation import (  # noqa: E402
    Components,
    OverlapComponents,
    simulate_differences,
    simulate_overlapping_folds,
)

FOLDS, SEEDS, WINDOWS = 5, 6, 225
SCENARIOS = {
    "CWRU-sized (A near 98 %)": Components(),
    "room to improve (A at 90 %)": Components(accuracy=0.90, window_b=0.15, fold=0.05, run=0.1),
    "window part dominates": Components(window_b=1.5, run=0.1, fold=0.05),
    "large fold part": Components(fold=0.5),
}


def share(hits: np.ndarray) -> str:
    p = float(np.mean(hits))
    return f"{p:.3f} ± {math.sqrt(p * (1 - p) / hits.size):.3f}"


def evaluate(rng: np.random.Generator, studies: int, points: float, parts: Components) -> dict[str, np.ndarray]:
    out = {"covered": [], "low_above": [], "high_below": [], "equivalent": [], "mde80": []}
    for start in range(0, studies, 250):  # in chunks: a chunk of 250 studies holds about 100 MB of draws
        tables = simulate_differences(rng, min(250, studies - start), FOLDS, SEEDS, WINDOWS, points, parts)
        for table in tables:
            interval = paired_interval(table)
            low, high = interval.ci(0.95)
            out["covered"].append(low <= points <= high)
            out["low_above"].append(low > 0)
            out["high_below"].append(high < 0)
            out["equivalent"].append(verdict(interval, 2.0) == "equivalent")
            out["mde80"].append(interval.mde80)
    return {key: np.asarray(values) for key, values in out.items()}


OVERLAP_FOLDS, OVERLAP_SEEDS, OVERLAP_WINDOWS = 5, 3, 120
OVERLAP_SCENARIOS = {
    "defaults (shared parts dominate)": OverlapComponents(),
    "model-specific training part dominates": OverlapComponents(train_model=1.0, window_b=0.1, block_b=0.1, run=0.1),
}


def overlap_table(rng: np.random.Generator, studies: int) -> None:
    from scipy import stats

    band = [bound / studies for bound in stats.binom.interval(0.99, studies, 0.95)]
    ratio = 1 / (OVERLAP_FOLDS - 2)  # time-cv: a test and a validation block out of K, so n_test / n_train
    print(
        f"\noverlapping folds: {studies} studies per line, K = {OVERLAP_FOLDS} folds x {OVERLAP_SEEDS} seeds x "
        f"{OVERLAP_WINDOWS} windows a fold, n_test / n_train = {ratio:.3f}, true difference 0; "
        f"99 % band of a true-95 % method [{band[0]:.3f}, {band[1]:.3f}]"
    )
    for name, parts in OVERLAP_SCENARIOS.items():
        print(f"  {name}: {parts}")
        for repeats in (1, 3, 5, 10):
            sim = simulate_overlapping_folds(
                rng, studies, repeats, OVERLAP_FOLDS, OVERLAP_SEEDS, OVERLAP_WINDOWS, 0.0, parts
            )
            row = []
            for label, make in (
                ("corrected", lambda t: resampled_interval(t, ratio)),
                ("independent", independent_interval),
            ):
                cis = np.array([make(table).ci(0.95) for table in sim["diff"]])
                row.append(f"{label} {share((cis[:, 0] <= 0) & (0 <= cis[:, 1]))}")
            a, b = sim["a"].mean(axis=-1).reshape(studies, -1), sim["b"].mean(axis=-1).reshape(studies, -1)
            with np.errstate(invalid="ignore", divide="ignore"):
                corr = np.nanmean([np.corrcoef(x, y)[0, 1] for x, y in zip(a, b)])
            print(f"    R = {repeats:2d}: coverage {', '.join(row)}; corr(A, B fold means) {corr:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=2000)
    parser.add_argument("--overlap-only", action="store_true", help="only the overlapping-fold coverage table")
    parser.add_argument("--smoke", action="store_true", help="seconds: 20 studies a line")
    args = parser.parse_args()
    if args.smoke:
        args.studies = 20
    if args.overlap_only:
        overlap_table(np.random.default_rng(2026), args.studies)
        return 0
    rng = np.random.default_rng(2026)
    started = time.perf_counter()
    print(f"{args.studies} simulated studies per line, {FOLDS} folds x {SEEDS} seeds x {WINDOWS} windows a fold")
    for name, parts in SCENARIOS.items():
        null = evaluate(rng, args.studies, 0.0, parts)
        type_one = null["low_above"] | null["high_below"]
        mde = float(np.median(null["mde80"]))
        print(f"\n{name}: components {parts}")
        print(
            f"  true 0:   coverage {share(null['covered'])}, type-I {share(type_one)}, "
            f"'equivalent' {share(null['equivalent'])}, median mde80 {mde:.2f} points"
        )
        if parts.true_difference(10.0) < mde:  # B cannot be that much better than an A already near 100 %
            print(f"  true +{mde:.2f}: out of reach above an accuracy of {100 * parts.accuracy:g} %")
        else:
            at_mde = evaluate(rng, args.studies, mde, parts)
            power = share(at_mde["low_above"])
            print(f"  true +{mde:.2f} (the mde80): coverage {share(at_mde['covered'])}, power {power}")
        if parts.accuracy <= 0.95:
            five = evaluate(rng, args.studies, 5.0, parts)
            print(f"  true +5:  coverage {share(five['covered'])}, power {share(five['low_above'])}")
    overlap_table(rng, args.studies)
    print(f"\nwall {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
