"""A study from the command line: train every model on every (fold, seed), print the comparisons and verdicts,
write the study JSON.

    python -m core.study --dataset cwru --loads 0 --models A,B,B-noPE --design time-cv --folds 5 \\
        --seeds 0,1,2,3,4,5 --margin 2 --out study.json

Designs (--design; --split is its old name): time-cv (each recording cut into K blocks in time; K >= 3), load-out
(one fold per held-out motor load; with --train-loads, train at those loads alone and test each of --test-loads, a
fold each), fault-size (train on two fault sizes, test on the third; a 4-class task by fault location), one-fold (the
experiment's one cut, --shares and --windowing as `python -m core.experiment` reads them: the experiment as a study
with one fold). --protocol 3 runs results/study_protocol.md's version 3 (epochs and one learning rate per model
chosen by validation accuracy on validation slices spread over every training block; 5 seeds unless --seeds says
otherwise); without it, version 2, as every stored version-2 command ran. --models may name spectrum-LR, the
order-blind baseline. --repeats R cuts time-cv's blocks R times at other boundaries; --checkpoint FILE keeps every
finished run, so the same command resumes a stopped study. Every model and training flag of `python -m
core.experiment` applies. Bad data or settings: one line, exit 2; too few test windows for a clear answer too
(core.lab.stats.power), unless --accept-wide runs it anyway.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from core.lab import report
from core.lab.cli_args import (
    add_accept_wide,
    add_model_arguments,
    add_training_arguments,
    parse_list,
    plan_settings,
    refuse_wide,
)
from core.lab.data_spec import DataSpec
from core.lab.models import STUDY_MODEL_NAMES
from core.lab.names import DESIGNS, ONE_FOLD, STUDY_FLAG_ALIASES, WINDOWINGS, flag_names
from core.lab.runs import Event, RunFinished
from core.lab.stats import words
from core.lab.stats.power import STUDY_ADVICE, too_few_windows
from core.lab.study.comparisons import STUDY_METRICS, comparisons_table
from core.lab.study.contract import load_study, save_study
from core.lab.study.cross_load import cross_load_effects, cross_load_frame
from core.lab.study.folds import windows_tested_per_fold
from core.lab.study.leak import leak_frame, study_leak
from core.lab.study.noise import noise_effects, noise_frame
from core.lab.study.runner import PROTOCOLS, StudyPlan, reanalyse, run_study
from core.lab.study.sweep import sweep_effects
from core.lab.study.tables import model_table, order_gap_line
from core.lab.vibration import DataError
from core.lab.vibration.windows import DEFAULT_SHARES
from core.lab.wait import plan_wait_line


def build_parser() -> argparse.ArgumentParser:
    """The study CLI's parser: the data flags of DataSpec, the design, and the model and training flags."""
    parser = argparse.ArgumentParser(
        prog="python -m core.study",
        description="A study: every model on every (fold, seed); B against A with an equivalence margin.",
    )
    ints = parse_list("ints")
    data = DataSpec.add_arguments(parser, ints)
    data.add_argument("--window", type=int, default=1024, help="samples per window")
    data.add_argument("--stride", type=int, help="samples between window starts (default: the window)")
    design = parser.add_argument_group("design")
    design.add_argument(
        *flag_names("--design", STUDY_FLAG_ALIASES),
        dest="design",
        choices=DESIGNS,
        default="time-cv",
        help="how the folds are cut; --split is its old name",
    )
    design.add_argument("--folds", type=int, default=5, help="time blocks per recording for time-cv (at least 3)")
    design.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="time-cv: cut the recordings R times, repeat r's block boundaries moved r/R of a block (R >= 3 for "
        "the v2 studies); load-out and fault-size folds are fixed by the data, so they run one repeat",
    )
    design.add_argument("--margin", type=float, default=2.0, help="equivalence margin in points")
    design.add_argument("--metric", choices=STUDY_METRICS, default="accuracy", help="metric of the comparisons")
    design.add_argument(
        "--tune-lr",
        action="store_true",
        help="choose each (repeat, fold) and model's learning rate among 0.001, 0.003, 0.01 on the fold's "
        "validation block, with the first seed; every run stores its rate",
    )
    design.add_argument(
        "--checkpoint",
        type=Path,
        help="a JSON-lines file each finished run is appended to; the same command started again resumes from it",
    )
    _add_study_options(design, ints)
    add_model_arguments(parser, ints, sweep=False, names=STUDY_MODEL_NAMES)
    add_training_arguments(parser, ints, seeds=range(6))
    parser.set_defaults(seeds=None)  # 0-5 under protocol 2, 0-4 under protocol 3 (make_study_plan)
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("study.json"),
        help="where to write the study JSON (gzip-compressed when the name ends in .gz)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the comparisons")
    _add_saved_study_options(parser)
    add_accept_wide(parser)
    return parser


def _add_saved_study_options(parser: argparse.ArgumentParser) -> None:
    """--reanalyse and --leak: what the CLI does with studies saved before, training nothing."""
    parser.add_argument(
        "--reanalyse", type=Path, help="compare a saved study again (its stored runs; --metric / --margin) into --out"
    )
    parser.add_argument(
        "--leak",
        nargs=2,
        type=Path,
        metavar=("TIME", "RANDOM"),
        help="print the windowing comparison of two saved one-fold studies, cut in time and dealt at random: each "
        "model's random - time accuracy over seeds",
    )


def _add_study_options(design: argparse._ArgumentGroup, ints: Callable[[str], list[int]]) -> None:
    """--tune-epochs, the sweeps, --protocol, load-out's --train-loads and --test-loads, one-fold's cutting and
    --snr."""
    design.add_argument(
        "--tune-epochs",
        type=int,
        help="the learning-rate trials' epoch cap (default: --epochs), e.g. a study that raised its cap after its "
        "rates were chosen",
    )
    design.add_argument(
        "--pe-scale-sweep",
        type=parse_list("floats"),
        default=[],
        help="train A+PE and B again at these encoding factors (e.g. 0.1,0.3) on the same cells, each compared with "
        "A / B-noPE; 0 is the partner itself and the study's --pe-scale comes from its main runs",
    )
    design.add_argument(
        "--d-model-sweep",
        type=ints,
        default=[],
        help="train B and B-noPE again at these widths (e.g. 16,64) on the same cells, B compared with B-noPE at "
        "each; the study's --d-model (default: the patch) comes from its main runs. One sweep per study",
    )
    design.add_argument(
        "--protocol",
        type=int,
        choices=PROTOCOLS,
        default=2,
        help="results/study_protocol.md's version: 3 chooses each run's epoch and each model's one learning rate "
        "by validation accuracy, on validation slices spread over every training block",
    )
    design.add_argument(
        "--train-loads", type=ints, help="load-out: train at these loads alone, e.g. 0,10,20; one-fold: at this one"
    )
    design.add_argument(
        "--test-loads",
        type=ints,
        help="load-out with --train-loads: a fold per load (default: the rest); one-fold: also score every run at "
        "these loads (cross-load)",
    )
    shares = report.format_list(DEFAULT_SHARES)
    design.add_argument("--shares", type=parse_list("floats"), help=f"one-fold: train,val,test shares ({shares})")
    design.add_argument("--windowing", choices=WINDOWINGS, help="one-fold: time blocks (default) or random (leaks)")
    design.add_argument("--windowing-seed", type=int, help="one-fold: seed of the random windowing (--data-seed)")
    design.add_argument(
        "--snr",
        dest="snr_db",
        type=parse_list("floats"),
        default=[],
        help="also score every run on its test windows with white noise at these SNRs in dB; write --snr=-4,0,8 "
        "(with '='), as the experiment's flag",
    )


def make_study_plan(args: argparse.Namespace, command: str) -> StudyPlan:
    """The study plan of parsed arguments, its data loaded (DataError when it cannot be)."""
    if args.d_model and len(args.d_model) > 1:
        raise ValueError("a study trains one d_model; give one width after --d-model (a sweep is --d-model-sweep)")
    if args.pe_scale_sweep and args.d_model_sweep:
        raise ValueError("a study sweeps one field: give --pe-scale-sweep or --d-model-sweep, not both")
    return StudyPlan(
        design=args.design,
        seeds=args.seeds if args.seeds is not None else range(5 if args.protocol == 3 else 6),
        folds=args.folds,
        window=args.window,
        stride=args.stride,
        margin=args.margin,
        metric=args.metric,
        command=command,
        tune_lr=args.tune_lr,
        repeats=args.repeats,
        checkpoint=args.checkpoint,
        sweep_field="d_model" if args.d_model_sweep else "pe_scale",
        sweep_values=args.d_model_sweep or args.pe_scale_sweep,
        protocol=args.protocol,
        train_loads=args.train_loads,
        test_loads=args.test_loads,
        tune_epochs=args.tune_epochs,
        cutting=_one_fold_cutting(args),
        snr_db=args.snr_db,
        **plan_settings(args),
    )


def _one_fold_cutting(args: argparse.Namespace) -> dict | None:
    """A one-fold study's cutting from --shares, --windowing and --windowing-seed, as the experiment's CLI reads them
    (the seed defaults to --data-seed); None for another design without them (with them, the plan refuses)."""
    given = {
        key: value
        for key, value in (
            ("shares", args.shares),
            ("windowing", args.windowing),
            ("windowing_seed", args.windowing_seed),
        )
        if value is not None
    }
    if args.design != ONE_FOLD and not given:
        return None
    return {"windowing_seed": args.data_seed, **given} if args.design == ONE_FOLD else given


def describe_finished(run: dict) -> str:
    """One progress line's words for a finished run, or for a learning-rate trial (which keeps only its validation
    scores: it is scored on the fold's validation windows, never its test windows)."""
    converged = "" if run["converged"] else ", not converged"
    epochs = f"best epoch {run['best_epoch']} of {run['epochs']}{converged}"
    if run["epochs"] == 0:  # a baseline (spectrum-LR): one fit, no epochs
        epochs = f"fitted, C {run['C']:g}" if "C" in run else "fitted"
    if "accuracy" not in run:
        accuracy = f"validation accuracy {words.percent(run['val_accuracy'])} %, " if "val_accuracy" in run else ""
        return f"{run['model']} seed {run['seed']}: {accuracy}validation loss {run['val_loss']:.4f}, {epochs}"
    return (
        f"{run['model']} seed {run['seed']}: accuracy {words.percent(run['accuracy'])} %, balanced "
        f"{words.percent(run['balanced_accuracy'])} %, {epochs}, {run['train_seconds']:.1f} s"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run (or reanalyse) the study the arguments describe: 0 when its JSON is written, 2 for bad data or
    settings."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    done = [0]

    def say(event: Event) -> None:
        if isinstance(event, RunFinished):
            done[0] += 1
            print(f"  [{done[0]}/{total}] {event.stage.label}, {describe_finished(event.run)}", flush=True)

    if args.leak is not None:
        return _print_leak(*args.leak)
    if args.reanalyse is not None:
        try:
            study = reanalyse(load_study(args.reanalyse), args.metric, args.margin)
        except (OSError, ValueError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        return _report(study, args.out, started)
    try:
        plan = make_study_plan(args, shlex.join(["python", "-m", "core.study", *argv]))
        tested = windows_tested_per_fold(
            plan.design, plan.recordings, plan.window, plan.folds, plan.stride, **plan.fold_options()
        )
        wide = too_few_windows(sum(tested), "this study", STUDY_ADVICE)
        if wide and not args.accept_wide:
            return refuse_wide(wide)
        total = plan.run_count()
        if not args.quiet:
            print(_runs_line(plan, len(tested), total))
            print(plan_wait_line(plan), flush=True)
        study = run_study(plan, progress=None if args.quiet else say)
    except (DataError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return _report(study, args.out, started)


def _print_leak(time_path: Path, random_path: Path) -> int:
    """The leak of two saved one-fold studies (core.lab.study.leak), its table and each model's sentence."""
    try:
        leak = study_leak(load_study(time_path), load_study(random_path))
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(report.as_text(leak_frame(leak)))
    for comparison in leak.values():
        print(comparison["sentence"])
    return 0


def _runs_line(plan: StudyPlan, folds: int, total: int) -> str:
    """What the study trains: "one-fold study: 6 runs (2 models x 3 seeds x 1 fold x 1 repeat)", and where
    learning-rate trials or a sweep add runs, that they do."""
    counts = [(len(plan.models), "model"), (len(plan.seeds), "seed"), (folds, "fold"), (plan.repeat_count(), "repeat")]
    grid = " x ".join(report.plural(count, noun) for count, noun in counts)
    extra = (("learning-rate trials", plan.tune_lr), ("sweep runs", plan.sweep_values))
    also = [words for words, given in extra if given]
    more = f", with its {' and '.join(also)}" if also else ""
    return f"{plan.design} study: {report.plural(total, 'run')} ({grid}{more})"


def _report(study: dict, out: Path, started: float) -> int:
    save_study(study, out)
    print(report.as_text(model_table(study)))
    if (gap := order_gap_line(study)) is not None:
        print(gap)
    print(report.as_text(comparisons_table(study["comparisons"])))
    for comparison in study["comparisons"]:
        print(comparison["sentence"])
    if effects := noise_effects(study, study["config"]["metric"]):
        print(report.as_text(noise_frame(effects)))
    if effects := cross_load_effects(study, study["config"]["metric"]):
        print(report.as_text(cross_load_frame(effects)))
    for row in sweep_effects(study, study["config"]["metric"]):
        ci = "" if row["ci95"] is None else f" ({words.ci_words(95, row['ci95'])})"
        difference = f"{row['model']} - {row['partner']} {words.points(row['diff'], 2)} points"
        print(f"{row['field']} {row['value']:g}: {difference}{ci}")
    print(f"wall time {time.perf_counter() - started:.0f} s; study written to {out}")
    return 0
