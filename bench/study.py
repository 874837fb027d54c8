"""Wall time of a CWRU 0 HP time-cv study of A and B, 5 folds x 6 seeds, on this machine's cores (target: within
15 minutes on 2 cores), and its verdict.

    python bench/study.py [--out /tmp/bench_study.json]

Reads the CWRU files from ../shared/data/cwru beside the repository; without them it says so and stops.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.lab.study.cli import main as study_main  # noqa: E402
from core.lab.study.contract import load_study  # noqa: E402

CWRU_DIR = ROOT.parent / "shared" / "data" / "cwru"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "pe_lab_bench_study.json")
    args = parser.parse_args()
    if not CWRU_DIR.is_dir():
        print(f"SKIPPED: CWRU data not found at {CWRU_DIR} (see shared/data/README.md)")
        return 0
    argv = [
        "--dataset",
        "cwru",
        "--data",
        str(CWRU_DIR),
        "--loads",
        "0",
        "--models",
        "A,B",
        "--split",
        "time-cv",
        "--folds",
        "5",
        "--seeds",
        "0,1,2,3,4,5",
        "--quiet",
        "--out",
        str(args.out),
    ]
    started = time.perf_counter()
    code = study_main(argv)
    wall = time.perf_counter() - started
    study = load_study(args.out)
    runs = study["runs"]
    print(
        f"\n{len(runs)} runs on {os.cpu_count()} CPUs in {wall:.0f} s ({wall / 60:.1f} min; target <= 15 min): "
        f"{'met' if wall <= 900 else 'NOT met'}"
    )
    print(
        f"mean run {sum(r['train_seconds'] for r in runs) / len(runs):.1f} s of training; "
        f"{sum(not r['converged'] for r in runs)} of {len(runs)} runs not converged at the epoch cap"
    )
    return code


if __name__ == "__main__":
    sys.exit(main())
