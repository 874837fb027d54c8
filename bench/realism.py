"""How close the built-in synthetic set is to the real CWRU 0 HP drive-end files.

Prints, per class, drive-end RMS (g) and kurtosis of the synthetic set beside the real files; the test
accuracy of a logistic regression on per-window RMS, kurtosis and crest factor (1024-sample windows,
time split) on both; the envelope-spectrum fault lines of 105.mat and 130.mat; and how long the
synthetic set takes to generate.

    python bench/realism.py [--seeds 5]
    python bench/realism.py --smoke    # seconds: one synthetic seed, one timing each (the real files still read)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import scipy.stats  # noqa: E402

from core.lab.vibration import envelope_spectrum, fault_frequencies, load_cwru, synthetic_bearing_set  # noqa: E402
from core.lab.vibration.synthetic import statistics_baseline_accuracy  # noqa: E402

CWRU_DIR = ROOT.parent / "shared" / "data" / "cwru"


def levels(recordings) -> pd.DataFrame:
    rows = {
        r.label: {
            "rms": float(np.sqrt(np.mean(r.signal**2))),
            "kurtosis": float(scipy.stats.kurtosis(r.signal, fisher=False)),
        }
        for r in recordings
    }
    return pd.DataFrame.from_dict(rows, orient="index")


def generation_seconds(loads: tuple[int, ...], repeats: int = 5) -> float:
    """Median seconds of making the synthetic set at `loads`, over `repeats` seeds."""
    synthetic_bearing_set(seed=0, loads=loads)  # imports and caches warmed
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        synthetic_bearing_set(seed=seed, loads=loads)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="synthetic seeds for the accuracy spread")
    parser.add_argument("--smoke", action="store_true", help="seconds: one seed, one timing of one load")
    args = parser.parse_args()
    if args.smoke:
        args.seeds = 1
        print(f"synthetic_bearing_set, once: {generation_seconds((0,), repeats=1):.2f} s for one load")
    else:
        print(
            f"synthetic_bearing_set, median of 5: {generation_seconds((0,)):.2f} s for one load, "
            f"{generation_seconds((0, 1, 2, 3)):.2f} s for four loads"
        )

    synthetic = synthetic_bearing_set(seed=0)
    synthetic_accuracies = [statistics_baseline_accuracy(synthetic_bearing_set(seed=s)) for s in range(args.seeds)]
    if not (CWRU_DIR / "97.mat").is_file():
        print(f"Real CWRU files not found in {CWRU_DIR}: synthetic figures only.")
        print(levels(synthetic).round(3).to_string())
        print(f"logistic regression, synthetic seeds 0-{args.seeds - 1}: {np.round(synthetic_accuracies, 3)}")
        return

    real = load_cwru(CWRU_DIR, loads=(0,))
    table = levels(synthetic).add_suffix("_synthetic").join(levels(real).add_suffix("_real"))
    table = table[["rms_synthetic", "rms_real", "kurtosis_synthetic", "kurtosis_real"]]
    print("\nDrive-end level per class, synthetic seed 0 vs real 0 HP (97.mat resampled to 12 kHz):")
    print(table.round(3).to_string())

    real_accuracy = statistics_baseline_accuracy(real)
    print("\nLogistic regression on per-window RMS, kurtosis, crest factor (1024 samples, time split, test split):")
    print(f"  real CWRU 0 HP:     {real_accuracy:.3f}")
    print(f"  synthetic seed 0:   {synthetic_accuracies[0]:.3f}")
    print(
        f"  synthetic seeds 0-{args.seeds - 1}: mean {np.mean(synthetic_accuracies):.3f}, "
        f"range {min(synthetic_accuracies):.3f}-{max(synthetic_accuracies):.3f}"
    )
    print(f"  largest gap to real: {100 * max(abs(a - real_accuracy) for a in synthetic_accuracies):.1f} points")

    print("\nEnvelope spectrum, strongest line 10-500 Hz, real files:")
    by_file = {r.meta["file"]: r for r in real}
    for filename, rate in (("105.mat", "BPFI"), ("130.mat", "BPFO")):
        recording = by_file[filename]
        expected = fault_frequencies(recording.meta["rpm_measured"])[rate]
        found = envelope_spectrum(recording.signal, recording.sample_rate).peak(10, 500)
        print(
            f"  {filename}: {found:.1f} Hz vs {rate} {expected:.1f} Hz ({100 * (found - expected) / expected:+.2f} %)"
        )


if __name__ == "__main__":
    main()
