"""Does the faster training loop learn as well as the previous one? A and B on CWRU 0 HP, time-cv, 5 folds x 5
seeds, trained once with core.lab.training (new) and once with the previous loop (where issue 15 started: bench/
train.py's OLDER_LOOP_COMMIT, checked out with `git worktree add` and removed again), then compared run by run
with core.lab.study.compare at the study's margin: each model should read `equivalent`. --smoke trains the new
loop in place of the previous one (checking the older commit out needs git history), so it only shows that the
bench runs.

    python bench/loop_accuracy.py [--seeds 0,1,2,3,4] [--folds 5] [--out /tmp/pe_lab_loop_accuracy.json]
    python bench/loop_accuracy.py --smoke    # seconds: both loops on a tiny synthetic study (3 folds, 1 epoch)

Both studies go through core.study's runner (same folds, seeds, data, settings and side-by-side workers); only
the function that trains a run differs. The merged study (models renamed "A new", "A previous", ...) is written
to --out, so the comparison can be re-analysed. Reads ../shared/data/cwru; without it, it says so and stops.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import core.lab.study.runner as study_runner  # noqa: E402
from bench.train import SKIPPED_IN_SMOKE, load_older_loop, older_trainer  # noqa: E402
from core.lab.study.cli import main as study_main  # noqa: E402
from core.lab.study.comparisons import compare  # noqa: E402
from core.lab.study.contract import load_study  # noqa: E402

CWRU_DIR = ROOT.parent / "shared" / "data" / "cwru"
MODELS = ("A", "B")
# --smoke: a tiny synthetic study in place of CWRU (the verdicts then say nothing about the loops)
SMOKE_DATA = "--dataset synthetic --duration 1 --window 256 --patch 16 --heads 2 --layers 1 --epochs 1"


def run_study(seeds: str, folds: int, out: Path, trainer: Any = None, smoke: bool = False) -> dict[str, Any]:
    data = SMOKE_DATA.split() if smoke else ["--dataset", "cwru", "--data", str(CWRU_DIR), "--loads", "0"]
    argv = [*data, "--models", ",".join(MODELS)]
    argv += ["--design", "time-cv", "--folds", str(folds), "--seeds", seeds, "--quiet", "--out", str(out)]
    if trainer is None:
        code = study_main(argv)
    else:
        original = study_runner.backend
        study_runner.backend = lambda name, address: SimpleNamespace(train=trainer)
        try:
            code = study_main(argv)
        finally:
            study_runner.backend = original
    if code != 0:
        raise SystemExit(f"the study exited with {code}")
    return load_study(out)


def merged(new: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
    """One study holding both loops' runs, each model renamed after its loop."""
    runs = [{**run, "model": f"{run['model']} new"} for run in new["runs"]]
    runs += [{**run, "model": f"{run['model']} previous"} for run in previous["runs"]]
    return {**new, "runs": runs, "comparisons": []}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2,3,4")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="the merged study (default: in the temp folder)")
    parser.add_argument("--smoke", action="store_true", help="seconds: a tiny synthetic study, 3 folds x 1 seed")
    args = parser.parse_args(argv)
    if args.smoke:
        args.seeds, args.folds = "0", 3
    if args.out is None:  # a smoke run leaves a real run's study alone
        args.out = Path(tempfile.gettempdir()) / f"pe_lab_loop_accuracy{'_smoke' if args.smoke else ''}.json"
    if not args.smoke and not CWRU_DIR.is_dir():
        print(f"SKIPPED: CWRU data not found at {CWRU_DIR} (see shared/data/README.md)")
        return 0
    studies, walls = {}, {}
    if args.smoke:
        print(f"{SKIPPED_IN_SMOKE}; the new loop stands in for it")
    previous = None if args.smoke else older_trainer(load_older_loop().training)
    with tempfile.TemporaryDirectory() as scratch:
        for loop, trainer in (("new", None), ("previous", previous)):
            started = time.perf_counter()
            studies[loop] = run_study(args.seeds, args.folds, Path(scratch) / f"{loop}.json", trainer, args.smoke)
            walls[loop] = time.perf_counter() - started
            print(f"{loop} loop: {len(studies[loop]['runs'])} runs in {walls[loop]:.0f} s", flush=True)
    both = merged(studies["new"], studies["previous"])
    margin = float(both["config"]["margin"])
    both["comparisons"] = [compare(both, f"{m} previous", f"{m} new", margin=margin) for m in MODELS]
    args.out.write_text(json.dumps(both), encoding="utf-8")
    data = "a tiny synthetic set (smoke)" if args.smoke else "CWRU 0 HP"
    design = f"{data} time-cv, {args.folds} folds x seeds {args.seeds}, margin {margin:g}"
    print(f"\nNew loop against previous, {design}:")
    for comparison in both["comparisons"]:
        print(f"  {comparison['verdict']:>12}: {comparison['sentence']}")
    all_equivalent = all(c["verdict"] == "equivalent" for c in both["comparisons"])
    print(f"target (both read equivalent): {'met' if all_equivalent else 'NOT met'}; merged study in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
