"""Wall time of a CWRU 0 HP time-cv study of A and B, 5 folds x 6 seeds, on this machine's cores (target: within
15 minutes on 2 cores), and its verdict.

    python bench/study.py [--out /tmp/bench_study.json]
    python bench/study.py --smoke    # seconds: the same runner on a tiny synthetic study (3 folds, 1 seed, 1 epoch)

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
# --smoke: a tiny synthetic study through the same CLI (its wall time says nothing about the real one)
SMOKE_ARGS = (
    "--dataset synthetic --duration 1 --window 256 --patch 16 --heads 2 --layers 1 --folds 3 --seeds 0 --epochs 1"
)


def study_argv(smoke: bool, out: Path) -> list[str]:
    """The study's command line: CWRU 0 HP, 5 folds x 6 seeds (or --smoke's tiny synthetic one)."""
    cwru = ["--dataset", "cwru", "--data", str(CWRU_DIR), "--loads", "0", "--folds", "5", "--seeds", "0,1,2,3,4,5"]
    data = SMOKE_ARGS.split() if smoke else cwru
    return [*data, "--models", "A,B", "--split", "time-cv", "--quiet", "--out", str(out)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="the study JSON (default: pe_lab_bench_study.json in the temp folder)")
    parser.add_argument("--smoke", action="store_true", help="seconds: a tiny synthetic study, not the CWRU one")
    args = parser.parse_args()
    if args.out is None:  # a smoke run leaves a real run's study alone
        args.out = Path(tempfile.gettempdir()) / f"pe_lab_bench_study{'_smoke' if args.smoke else ''}.json"
    if not args.smoke and not CWRU_DIR.is_dir():
        print(f"SKIPPED: CWRU data not found at {CWRU_DIR} (see shared/data/README.md)")
        return 0
    started = time.perf_counter()
    code = study_main(study_argv(args.smoke, args.out))
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
