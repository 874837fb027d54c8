"""The order-dose curve (results/study_order_curve.json.gz): one study per level of `--dataset order_curve`,
each a plain `python -m core.study` command stored in its JSON, then the curve of them with a one-patch RMS
check per level (core.lab.study.curve), the accuracies per level and the wall time.

    python bench/order_curve.py --protocol 3                 # the curve: 4 levels x 5 folds x 5 seeds
    python bench/order_curve.py --smoke                      # every level tiny, into a temporary folder
    python bench/order_curve.py --combine-only               # the curve again from the level studies in --work
    python bench/order_curve.py --estimate                   # how long the curve would take, from one timed epoch
    python bench/order_curve.py --protocol 3 --epochs 300 --tune-epochs 100 --work checkpoints/order_curve_cap300 \
        --carry-from checkpoints/order_curve                 # protocol 3's amendment: the runs' cap raised to 300

--carry-from starts each level's checkpoint from an earlier run of the curve at a lower cap
(core.lab.study.checkpoint.carry_to_cap): the rate trials and the runs that stopped before that cap are the same
runs under the new one and are kept; the runs that reached it, and one stopped run per level as a check that
training repeats exactly on this machine, are trained again. It changes how long the curve takes, not its numbers.

Each level resumes from its checkpoint in --work (checkpoints/order_curve by default), so the script can be
stopped and started again; words after `--` are added to every study command (e.g. `-- --workers 2`).
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.lab.study.contract import load_study  # noqa: E402
from core.lab.study.curve import build_curve, failed_checks, one_patch_check, save_curve  # noqa: E402
from core.lab.vibration.order_curve import curve_levels  # noqa: E402

# The curve's settings, the same for every level. 60 s per class: 1,400 test windows per level, so chance +- 5
# points is 3.7 standard errors. In the pilot B left chance after 5-25 epochs and at the second level was still
# improving at a cap of 60, so the cap is 100; patience 20 stops a run that has not left chance by then.
FULL = {
    "duration": 60,
    "folds": 5,
    "seeds": "0,1,2,3,4",
    "models": "B-noPE,B,spectrum-LR",
    "epochs": 100,
    "patience": 20,
}
SMOKE = {"duration": 8, "folds": 3, "seeds": "0", "models": "B-noPE,B", "epochs": 2, "patience": 2}
RATES = 3  # the learning-rate grid of --tune-lr: each Transformer's trials on the first seed, per fold


def study_command(level: int, settings: dict, work: Path, protocol: int | None, extra: list[str]) -> list[str]:
    """The `python -m core.study` command of one level, writing its JSON and checkpoint into `work`."""
    words = [sys.executable, "-m", "core.study", "--dataset", "order_curve", "--level", str(level)]
    words += ["--duration", str(settings["duration"]), "--data-seed", "0", "--design", "time-cv"]
    words += ["--folds", str(settings["folds"]), "--seeds", settings["seeds"], "--models", settings["models"]]
    words += ["--epochs", str(settings["epochs"]), "--patience", str(settings["patience"]), "--min-delta", "0.001"]
    words += ["--tune-lr", "--margin", "2", "--quiet"]
    if settings.get("tune_epochs") is not None:
        words += ["--tune-epochs", str(settings["tune_epochs"])]
    words += ["--checkpoint", str(work / f"level_{level}.jsonl"), "--out", str(level_path(work, level))]
    if protocol is not None:
        words += ["--protocol", str(protocol)]
    return words + extra


def carry_level(old_work: Path, command: list[str]) -> dict | None:
    """Start one level's checkpoint (the command's --checkpoint) from the same level's checkpoint in `old_work`
    when it has none yet: core.lab.study.checkpoint.carry_to_cap's counts, or None when nothing was carried."""
    from core.lab.study.checkpoint import carry_to_cap
    from core.lab.study.cli import build_parser, make_study_plan

    args = build_parser().parse_args(command[3:])
    if args.checkpoint.exists():
        return None
    identity = make_study_plan(args, "").identity()
    return carry_to_cap(old_work / args.checkpoint.name, args.checkpoint, identity)


def check_carry(old_work: Path, command: list[str], carried: dict) -> str:
    """Whether each check run, trained again at the new cap, is the run the earlier checkpoint holds."""
    from core.lab.study.checkpoint import same_runs

    new = Path(command[command.index("--checkpoint") + 1])
    entries = {}
    for path in (old_work / new.name, new):
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            entry = json.loads(line)
            if entry["kind"] == "run" and entry["key"] in carried["check"]:
                entries.setdefault(tuple(entry["key"]), []).append(entry["record"])
    words = []
    for key, (old, again) in entries.items():
        same = (
            "the same run"
            if same_runs(old, again)
            else f"DIFFERS (accuracy {old['accuracy']} then {again['accuracy']})"
        )
        words.append(f"{key[3]} repeat {key[0]} fold {key[1]} seed {key[2]} trained again: {same}")
    return "; ".join(words) or "no run stopped before the old cap, none trained again as a check"


def level_path(work: Path, level: int) -> Path:
    """Where one level's study JSON is written."""
    return work / f"study_order_curve_level_{level}.json.gz"


def study_folds(study: dict) -> list | None:
    """The study's own folds when this checkout can rebuild them from a config (protocol 3's validation slices),
    else None: the curve's one-patch check then rebuilds the design's folds itself."""
    try:
        from core.lab.study.folds import fold_options, make_folds  # present once protocol 3 is in
    except ImportError:
        return None
    from core.lab.data_spec import DataSpec

    config = study["config"]
    recordings = DataSpec.from_dict(config["data"]).load()
    window, stride = config["window"], config["stride"]
    return make_folds(config["design"], recordings, window, config["folds"], stride, 1, **fold_options(config))


def run_count(settings: dict, levels: int) -> int:
    """Transformer runs of the whole curve: every (level, fold, seed) of B and B-noPE plus their rate trials."""
    transformers = [m for m in settings["models"].split(",") if m in ("B", "B-noPE")]
    seeds = len(settings["seeds"].split(","))
    return levels * settings["folds"] * len(transformers) * (seeds + RATES)


def estimate(settings: dict, levels: int) -> str:
    """The curve's time on two cores, from B and B-noPE timed at 3 and 12 epochs on a fold of the easiest level
    after a warm-up run (the difference gives an epoch, the rest a run's fixed cost), every run taken to the
    epoch cap (early stopping only shortens it)."""
    from core.lab.study.folds import make_folds
    from core.lab.training import TrainConfig, train
    from core.lab.vibration import load_order_curve

    recordings = load_order_curve(0, 0, settings["duration"])
    windows = make_folds("time-cv", recordings, 1024, settings["folds"])[0].windows
    train(windows, "B", TrainConfig(epochs=1), seed=0)  # the first run of a process pays torch's warm-up
    epoch, fixed = {}, {}
    for model in ("B", "B-noPE"):
        seconds = []
        for epochs in (3, 12):
            started = time.process_time()
            train(windows, model, TrainConfig(epochs=epochs, patience=epochs), seed=0)
            seconds.append(time.process_time() - started)
        epoch[model] = (seconds[1] - seconds[0]) / 9
        fixed[model] = max(seconds[0] - 3 * epoch[model], 0.0)
    per_run = sum(fixed.values()) / 2 + settings["epochs"] * sum(epoch.values()) / 2
    total = run_count(settings, levels) * per_run / 2  # two cores, one run on each
    return (
        f"one epoch of {len(windows.x_train)} training windows: B {epoch['B']:.2f} s, B-noPE "
        f"{epoch['B-noPE']:.2f} s of CPU (and {fixed['B']:.1f} / {fixed['B-noPE']:.1f} s a run); "
        f"{run_count(settings, levels)} Transformer runs to a cap of {settings['epochs']} epochs: at most "
        f"{total / 60:.0f} minutes on two cores"
    )


def combine(work: Path, levels: list[int], out: Path, command: str, models: list[str]) -> dict:
    """The curve of the level studies in `work`, with the one-patch check per level, written to `out`."""
    studies = [load_study(level_path(work, level)) for level in levels]
    checks = [one_patch_check(study, study_folds(study)) for study in studies]
    curve = build_curve(studies, command, checks)
    save_curve(curve, out, models)  # every level must have run every model
    return curve


def report(curve: dict) -> None:
    """One line per level: its contrast, each model's accuracy, the one-patch check and the primary."""
    for level in curve["levels"]:
        accuracy = "  ".join(f"{m} {100 * a:5.1f}" for m, a in sorted(level["accuracy"].items()))
        primary = level["primary"]
        interval = "" if primary is None else f"  B - B-noPE {primary['diff']:+.1f} ({primary['verdict']})"
        print(
            f"level {level['level']} (contrast {level['parameters']['contrast_samples']:2d} samples): {accuracy}  "
            f"one-patch RMS {100 * level['one_patch_rms']['accuracy']:5.1f}{interval}"
        )
    failed = failed_checks(curve)
    print("order-blind checks: " + ("all within 5 points of chance" if not failed else "FAILED " + "; ".join(failed)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="every level tiny, in a temporary folder")
    parser.add_argument("--levels", default=",".join(str(level.index) for level in curve_levels()))
    parser.add_argument("--protocol", type=int, help="passed to every study (3 for the v3 curve)")
    parser.add_argument("--work", type=Path, default=ROOT / "checkpoints" / "order_curve")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "study_order_curve.json.gz")
    parser.add_argument("--combine-only", action="store_true", help="assemble the curve from finished levels")
    parser.add_argument("--estimate", action="store_true", help="time one epoch and print the curve's estimate")
    parser.add_argument("--epochs", type=int, help="the runs' epoch cap (default 100)")
    parser.add_argument("--tune-epochs", type=int, help="the rate trials' epoch cap (default: --epochs)")
    parser.add_argument("--carry-from", type=Path, help="an earlier run's --work at a lower cap to start from")
    args, extra = parser.parse_known_args(argv)
    extra = [word for word in extra if word != "--"]
    settings = dict(SMOKE if args.smoke else FULL)
    settings.update({k: v for k, v in (("epochs", args.epochs), ("tune_epochs", args.tune_epochs)) if v is not None})
    levels = [int(level) for level in args.levels.split(",")]
    if args.estimate:
        print(estimate(settings, len(levels)))
        return 0
    work, out = args.work, args.out
    if args.smoke:
        work = Path(tempfile.mkdtemp(prefix="pe-lab-order-curve-"))
        out = work / "study_order_curve.json.gz"
    work.mkdir(parents=True, exist_ok=True)
    started = time.time()
    for level in levels if not args.combine_only else []:
        command = study_command(level, settings, work, args.protocol, extra)
        print(f"level {level}: {shlex.join(command[1:])}", flush=True)
        carried = None if args.carry_from is None else carry_level(args.carry_from, command)
        if carried is not None:
            print(f"  carried {carried['carried']} finished runs and trials; {carried['retrain']} to train", flush=True)
        subprocess.run(command, cwd=ROOT, check=True)
        if carried is not None and carried["check"]:
            print("  " + check_carry(args.carry_from, command, carried), flush=True)
    command = shlex.join(["python", "bench/order_curve.py", *(argv if argv is not None else sys.argv[1:])])
    curve = combine(work, levels, out, command, settings["models"].split(","))
    report(curve)
    if args.smoke:  # the amendment's path too: level 0 again at a higher cap, started from this run's checkpoint
        raised = {**settings, "epochs": settings["epochs"] + 1, "tune_epochs": settings["epochs"]}
        command = study_command(0, raised, work / "raised", args.protocol, extra)
        (work / "raised").mkdir()
        carried = carry_level(work, command)
        subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        check = check_carry(work, command, carried)
        print(f"raised cap: carried {carried['carried']}, trained {carried['retrain']}; {check}")
    print(f"wrote {out} ({out.stat().st_size:,} bytes) in {(time.time() - started) / 60:.1f} minutes")
    return 1 if failed_checks(curve) and not args.smoke else 0  # a smoke's few windows leave chance by noise


if __name__ == "__main__":
    sys.exit(main())
