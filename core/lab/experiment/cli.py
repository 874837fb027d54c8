"""The Fault-lab experiment from the command line: train, print a table and the verdict, write the results JSON.

    python -m core.experiment --dataset cwru --models A,B --seeds 0,1,2 --out results.json

Evaluations beyond one experiment (core.lab.evaluations), each adding a block to the JSON and a table to the output:

    --windowing time,random                 the same experiment under both windowings; the leak as a number
    --train-loads 0 --test-loads 1,2,3      train at some motor loads, test at others
    --snr=-4,0,4,8                          accuracy on test windows with white noise at each SNR in dB
                                            (write the "=": argparse reads "-4,..." as an option otherwise)
    --d-model-sweep 16,32,64,128            the embedding models at each width
    --pe-scale-sweep 0,0.1,0.3,1            the models with a position signal at each scale of it

Old flags still work (core.lab.names): --split for --windowing, and a list after --d-model or --pe-scale for
the sweeps.

`--study-out study.json` also writes the experiment's own runs as a study with one fold (core.lab.study, design
one-fold; `one_fold_study`): the same runs with their per-window predictions, compared as a study compares; with
`--windowing time,random` the other windowing's runs too, as a second one-fold study beside it (`study_random.json`),
whose leak `python -m core.study --leak` prints.

It runs `train_plan` and `plan_results` (core.lab.experiment.plan's `run_plan`), which the Fault lab's background
job runs, so any number on the page can be reproduced here with the same settings; `command_line(results["config"])`
writes the command that does so. Runs train side by side, one per CPU core by default (`--workers`; one at a time on
a GPU); each run's result depends on its seed alone, so the worker count changes the wall time (and the seconds and
windows/s recorded per run), never a metric. Bad data or settings print one line saying what to change and exit with
status 2; so do too few test windows for a clear answer (core.lab.stats.power), unless --accept-wide runs it anyway.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core.lab import evaluations, report
from core.lab.cli_args import (
    MODEL_FLAGS,
    TRAIN_FLAGS,
    add_accept_wide,
    add_model_arguments,
    add_training_arguments,
    parse_list,
    plan_settings,
    refuse_wide,
)
from core.lab.contract import METRICS
from core.lab.data_spec import DataSpec
from core.lab.experiment.plan import (
    Plan,
    TrainedPlan,
    check_study_metric,
    experiment_studies,
    main_test_windows,
    plan_results,
    train_plan,
)
from core.lab.experiment.results import save_results
from core.lab.names import EXPERIMENT_FLAG_ALIASES, WINDOWINGS, flag_names
from core.lab.report import format_list, format_number, plural
from core.lab.runs import Event, RunFinished, StageStarted
from core.lab.stats.power import EXPERIMENT_ADVICE, too_few_windows
from core.lab.stats.words import percent
from core.lab.study.contract import save_study
from core.lab.vibration import DataError
from core.lab.vibration.windows import DEFAULT_SHARES, WindowSet
from core.lab.wait import plan_wait_line


def _windowing_list(text: str) -> list[str]:
    windowings = [item.strip() for item in text.split(",") if item.strip()]
    if (
        not windowings
        or len(windowings) > 2
        or len(set(windowings)) != len(windowings)
        or any(windowing not in WINDOWINGS for windowing in windowings)
    ):
        raise argparse.ArgumentTypeError(f"expected time, random, time,random or random,time; got {text!r}")
    return windowings


def build_parser() -> argparse.ArgumentParser:
    """The CLI's parser; its data flags come from DataSpec and its evaluation flags from the registry."""
    parser = argparse.ArgumentParser(
        prog="python -m core.experiment",
        description="Train Fault-lab models on bearing-vibration data and compare each with model A.",
    )
    ints, floats = parse_list("ints"), parse_list("floats")
    data = DataSpec.add_arguments(parser, ints)
    data.add_argument(
        *flag_names("--windowing-seed", EXPERIMENT_FLAG_ALIASES),
        dest="windowing_seed",
        type=int,
        help="seed of the random windowing (default: --data-seed; --split-seed is its old name)",
    )
    data.add_argument("--window", type=int, default=1024, help="samples per window")
    data.add_argument("--stride", type=int, help="samples between window starts (default: the window, no overlap)")
    data.add_argument(
        *flag_names("--windowing", EXPERIMENT_FLAG_ALIASES),
        dest="windowing",
        type=_windowing_list,
        default=["time"],
        help="time: blocks in time (honest); random: leaks; time,random: both (the first is the experiment); "
        "--split is its old name",
    )
    data.add_argument("--shares", type=floats, default=list(DEFAULT_SHARES), help="train,val,test shares")

    add_model_arguments(parser, ints, sweep=True)
    add_training_arguments(parser, ints, seeds=[0, 1, 2])
    parser.add_argument("--metric", choices=METRICS, default="accuracy", help="metric of the paired comparison")

    evaluations.add_arguments(parser)
    parser.add_argument("--out", type=Path, default=Path("results.json"), help="where to write the results JSON")
    parser.add_argument(
        "--study-out",
        type=Path,
        help="also write the experiment's own runs as a study with one fold (design one-fold: per-window predictions, "
        "the study's comparisons; `python -m core.study --reanalyse` and the page's Study part read it)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the tables and the verdict")
    add_accept_wide(parser)
    return parser


def make_plan(args: argparse.Namespace) -> Plan:
    """The plan of parsed arguments, its data loaded (DataError when it cannot be)."""
    evaluation_values = evaluations.from_args(args)
    settings = plan_settings(args, loads=evaluations.data_loads(evaluation_values))
    return Plan(
        data=settings.pop("recordings"),
        seeds=args.seeds,
        metric=args.metric,
        keep_weights=False,
        cutting={
            "window": args.window,
            "stride": args.stride,
            "shares": tuple(args.shares),
            "windowing": args.windowing[0],
            "windowing_seed": args.data_seed if args.windowing_seed is None else args.windowing_seed,
        },
        evaluations=evaluation_values,
        **settings,
    )


def command_line(config: Mapping[str, Any]) -> str:
    """The `python -m core.experiment ...` command that reproduces a results JSON's config."""
    data, train = config["data"], config["train"]
    words = [*DataSpec.from_dict(data).argv(), *_windowing_argv(data), "--models", ",".join(config["models"])]
    for flag, key in MODEL_FLAGS:
        words += [] if train["model"][key] is None else [flag, _text(train["model"][key])]
    if train["model"]["d_model"] is not None:
        words += ["--d-model", str(train["model"]["d_model"])]
    if train["model"]["embed_scale"]:
        words.append("--embed-scale")
    words.append("--input-dropout-for-all" if train["model"]["input_dropout_for_all"] else "--no-input-dropout-for-all")
    words += ["--seeds", format_list(config["seeds"])]
    for flag, key in TRAIN_FLAGS:
        words += [flag, _text(train[key])]
    if train.get("min_delta"):  # written only when set, so the commands of files made before it stay the same
        words += ["--min-delta", _text(train["min_delta"])]
    if config.get("device"):
        words += ["--device", str(config["device"]).split(":")[0]]
    words += ["--metric", config["metric"], *evaluations.argv(config)]
    return shlex.join(["python", "-m", "core.experiment", *merge_flags(words)])


def _text(value: Any) -> str:
    return format_number(value) if isinstance(value, float) else str(value)


def _windowing_argv(data: Mapping[str, Any]) -> list[str]:
    words = []
    if "windowing_seed" in data and data["windowing_seed"] != data.get("data_seed", 0):
        words += ["--windowing-seed", str(data["windowing_seed"])]
    words += ["--window", str(data["window"])]
    if data["stride"] != data["window"]:
        words += ["--stride", str(data["stride"])]
    return [*words, "--windowing", data["windowing"], "--shares", format_list(data.get("shares", DEFAULT_SHARES))]


def merge_flags(words: Sequence[str]) -> list[str]:
    """CLI words in which a later flag replaces the values of the same flag earlier, in its place: an
    evaluation widens a core flag that way (--windowing time -> --windowing time,random)."""
    groups: dict[str, list[str]] = {}
    for word in words:
        if word.startswith("--"):
            flag = word.split("=", 1)[0]
            groups[flag] = [word]
            current = groups[flag]
        else:
            current.append(word)
    return [word for group in groups.values() for word in group]


def describe_windows(stage: str, windows: WindowSet) -> str:
    """One progress line: a stage's classes, window counts per role, window length and windowing."""
    return (
        f"{stage}: {plural(len(windows.class_names), 'class', 'classes')}, windows train/val/test "
        f"{len(windows.x_train)}/{len(windows.x_val)}/{len(windows.x_test)} of {windows.window} samples, "
        f"{windows.windowing} windowing"
    )


def describe_run(run: Mapping[str, Any]) -> str:
    """One progress line: a finished run's model, seed, stage, scores, epochs, seconds and device."""
    stage = "" if run.get("stage", "main") == "main" else f" [{run['stage']}]"
    return (
        f"  {run['model']:<10} seed {run['seed']}{stage}: accuracy {percent(run['accuracy'])} %, "
        f"F1 {percent(run['f1'])} %, {plural(run['epochs'], 'epoch')}, {run['train_seconds']:.1f} s, "
        f"{run['n_parameters']} parameters, {run['device']}"
    )


def report_text(results: Mapping[str, Any]) -> str:
    """The results table, the verdict and every evaluation's tables, as the CLI prints them."""
    parts = [report.as_text(report.results_table(results)), results["verdict"]]
    parts += [f"{heading}:\n{report.as_text(table, index=True)}" for heading, table in evaluations.tables(results)]
    return "\n\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the experiment the arguments describe: 0 when its JSON is written, 2 for bad data or settings."""
    args = build_parser().parse_args(argv)
    started = time.perf_counter()

    def say(event: Event) -> None:
        if isinstance(event, StageStarted):
            print(describe_windows(f"{args.dataset} {event.stage.label}", event.windows), flush=True)
        elif isinstance(event, RunFinished):
            print(describe_run(event.run), flush=True)

    try:
        plan = make_plan(args)
        missing = plan.data_settings.get("missing_files")
        if missing and not args.quiet:
            print(f"{args.dataset}: files not found, left out: {', '.join(missing)}")
        wide = too_few_windows(main_test_windows(plan, plan.data), "this experiment", EXPERIMENT_ADVICE)
        if wide and not args.accept_wide:
            return refuse_wide(wide)
        if args.study_out is not None:
            check_study_metric(plan.metric)  # before the training, not after it
        if not args.quiet:
            print(plan_wait_line(plan), flush=True)
        trained = train_plan(plan, progress=None if args.quiet else say)
        results = plan_results(plan, trained)
        studies = [] if args.study_out is None else one_fold_studies(plan, trained, results, args.study_out)
    except (DataError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    wall_seconds = time.perf_counter() - started
    results["config"]["wall_seconds"] = round(wall_seconds, 2)
    save_results(results, args.out)
    print(report_text(results))
    _save_studies(studies)
    print(f"wall time {wall_seconds:.1f} s; results written to {args.out}")
    return 0


def _save_studies(studies: Sequence[tuple[Path, dict[str, Any]]]) -> None:
    written = {}
    for path, study in studies:
        save_study(study, path)
        windowing, loads = study["config"]["cutting"]["windowing"], study["config"].get("train_loads")
        trained_at = "" if loads is None else f", trained at load {loads[0]}"
        if path.name.partition(".")[0].endswith("_sweep"):  # a further sweep's: the experiment's own runs again
            trained_at = f", with the {study['config']['sweep']['field']} sweep"
        print(f"the runs under the {windowing} windowing{trained_at} as a one-fold study: {path}")
        written.setdefault(windowing, path)  # the experiment's own study comes first
    if {"time", "random"} <= set(written):  # a windowing comparison: the leak is the comparison of its two studies
        print(f"their leak: python -m core.study --leak {written['time']} {written['random']}")


def one_fold_studies(
    plan: Plan, trained: TrainedPlan, results: dict[str, Any], path: Path
) -> list[tuple[Path, dict[str, Any]]]:
    """(where, study) of each of the experiment's one-fold studies (core.lab.experiment.plan.experiment_studies):
    its own at `path`, and beside it, with a windowing comparison, the other windowing's (`study.json` ->
    `study_random.json`), with cross-load each further train load's (`study_load1.json`), and with a second sweep
    its own (`study_pe_scale_sweep.json`)."""
    studies = experiment_studies(plan, trained, command_line(results["config"]))
    base, dot, extension = path.name.partition(".")
    return [
        (path if name == plan.main_windowing else path.with_name(f"{base}_{name}{dot}{extension}"), study)
        for name, study in studies.items()
    ]


if __name__ == "__main__":
    sys.exit(main())
