"""Does the page's default training budget (epoch cap, patience) buy accuracy the visitor waits for?

    python bench/default_budget.py [--caps 40,35,30] [--seeds 0,1,2,3,4]
    python bench/default_budget.py --smoke    # seconds: caps 2,1, one seed, a short synthetic set, no CWRU

The page's defaults were chosen on the CWRU 0 HP 70/20/10 split's validation block. A run at a constant rate
with a given seed follows the same path whatever its cap, so one run at the largest cap gives, for every
smaller cap, the best validation loss the run would have stopped with and the epochs it would have trained
(patience as set). For each cap this prints, per model, the mean ± sd of that best validation loss and of
the epochs trained, on the CWRU validation block (when ../shared/data/cwru is present) and on the synthetic
set the page opens with; then it retrains the page's default press (the synthetic set, A and B) at each cap
and prints the test accuracy, mean ± sd over the seeds, beside the README's figures for the cap of 40.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.lab.training import TrainConfig, train  # noqa: E402
from core.lab.vibration import load_cwru, make_windows, synthetic_bearing_set  # noqa: E402

CWRU_DIR = ROOT.parent / "shared" / "data" / "cwru"
MODELS = ("A", "B")
SMOKE_SECONDS = 1.5  # per class of the synthetic set --smoke trains on


def stopped_at(history: list[dict], cap: int, patience: int) -> tuple[float, int]:
    """(best validation loss, epochs trained) of the same run had its cap been `cap`."""
    best, best_epoch = float("inf"), 0
    for row in history[:cap]:
        if row["val_loss"] < best:
            best, best_epoch = row["val_loss"], row["epoch"]
        elif row["epoch"] - best_epoch >= patience:
            return best, row["epoch"]
    return best, min(cap, len(history))


def spread(values: list[float], digits: int = 3) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.{digits}f} ± {sd:.{digits}f}"


def by_cap(name: str, windows, caps: list[int], seeds: list[int], config: TrainConfig) -> None:
    histories = {
        model: [train(windows, model, replace(config, epochs=max(caps)), seed)["history"] for seed in seeds]
        for model in MODELS
    }
    print(f"\n{name}: best validation loss and epochs trained, mean ± sd over seeds {seeds}")
    for cap in caps:
        cells = []
        for model in MODELS:
            stops = [stopped_at(history, cap, config.patience) for history in histories[model]]
            losses, epochs = [loss for loss, _ in stops], [float(n) for _, n in stops]
            cells.append(f"{model}: loss {spread(losses)}, epochs {spread(epochs, 1)}")
        print(f"  cap {cap:>3}  " + "   ".join(cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--caps", default="40,35,30")
    parser.add_argument("--seeds", default="0,1,2,3,4")
    parser.add_argument("--smoke", action="store_true", help="seconds: caps 2,1, seed 0, a short synthetic set")
    args = parser.parse_args(argv)
    if args.smoke:
        args.caps, args.seeds = "2,1", "0"
    caps = sorted({int(cap) for cap in args.caps.split(",")}, reverse=True)
    seeds = [int(seed) for seed in args.seeds.split(",")]
    config = TrainConfig()
    if args.smoke:
        print("smoke: the CWRU table is left out and the synthetic set is short; numbers mean nothing")
    elif CWRU_DIR.is_dir():
        by_cap(
            "CWRU 0 HP, 70/20/10 split", make_windows(load_cwru(CWRU_DIR, loads=(0,)), window=1024), caps, seeds, config
        )
    else:
        print(f"no CWRU data at {CWRU_DIR}: the validation-block table is skipped")
    duration = SMOKE_SECONDS if args.smoke else 10.0
    synthetic = make_windows(synthetic_bearing_set(seed=0, duration_s=duration), window=1024)
    by_cap("Synthetic (the page's default)", synthetic, caps, seeds, config)
    print(f"\nThe default press retrained at each cap: test accuracy %, mean ± sd over seeds {seeds}")
    for cap in caps:
        runs = {
            model: [train(synthetic, model, replace(config, epochs=cap), seed) for seed in seeds] for model in MODELS
        }
        cells = [f"{model} {spread([100 * run['accuracy'] for run in runs[model]], 1)}" for model in MODELS]
        epochs = sum(run["epochs"] for model in MODELS for run in runs[model])
        print(f"  cap {cap:>3}  " + "   ".join(cells) + f"   ({epochs} epochs in all)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
