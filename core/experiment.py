"""The Fault-lab experiment from the command line: train, print a table and the verdict, write the results JSON.

    python -m core.experiment --dataset cwru --models A,B --seeds 0,1,2 --out results.json

Evaluations beyond one split (core.evaluation), each adding a block to the JSON and a table to the output:

    --split time,random                     the same experiment under both splits; the leak as a number
    --train-loads 0 --test-loads 1,2,3      train at some motor loads, test at others
    --snr=-4,0,4,8                          accuracy on test windows with white noise at each SNR in dB
                                            (write the "=": argparse reads "-4,..." as an option otherwise)
    --d-model 16,32,64,128                  the embedding models at each width

It runs `core.jobs.run_plan`, the loop the Fault lab's background job runs, so any number on the page can be
reproduced here with the same settings; `command_line(results["config"])` writes the command that does so.
Runs train side by side, one per CPU core by default (`--workers`; one at a time on a GPU); each run's
result depends on its seed alone, so the worker count changes the wall time (and the seconds and windows/s
recorded per run), never a metric. Bad data or settings print one line saying what to change and exit with status 2.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core import evaluation
from core.jobs import DEFAULT_SHARES, MAIN_STAGE, Plan, run_plan
from core.models import MODEL_NAMES, TOKEN_KINDS, ModelConfig
from core.results import METRICS, save_results, summary_table
from core.training import LR_SCHEDULES, TrainConfig, pick_device, usable_cpus
from core.vibration import DataError
from core.vibration.windows import MODES

DATASETS = ("synthetic", "cwru", "seu", "csv")
# The shared data folder sits beside the repository: <repo>/../shared/data
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DEFAULT_DATA_DIRS = {"cwru": SHARED_DATA / "cwru", "seu": SHARED_DATA / "seu"}


def _int_list(text: str) -> list[int]:
    try:
        return [int(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers such as 0,1,2, got {text!r}") from None


def _float_list(text: str) -> list[float]:
    try:
        return [float(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers such as 0.7,0.2,0.1, got {text!r}") from None


def _split_list(text: str) -> list[str]:
    modes = [item.strip() for item in text.split(",") if item.strip()]
    if not modes or len(modes) > 2 or len(set(modes)) != len(modes) or any(mode not in MODES for mode in modes):
        raise argparse.ArgumentTypeError(f"expected time, random, time,random or random,time; got {text!r}")
    return modes


def _model_list(text: str) -> list[str]:
    models = [item.strip() for item in text.split(",") if item.strip()]
    unknown = [model for model in models if model not in MODEL_NAMES]
    if unknown or not models:
        raise argparse.ArgumentTypeError(f"unknown models {unknown or text!r}; choose from {','.join(MODEL_NAMES)}")
    return models


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m core.experiment",
        description="Train Fault-lab models on bearing-vibration data and compare each with model A.",
    )
    data = parser.add_argument_group("data")
    data.add_argument("--dataset", choices=DATASETS, default="synthetic")
    data.add_argument(
        "--data", type=Path, nargs="+", help="folder (cwru, seu) or CSV file(s); default ../shared/data/<dataset>"
    )
    data.add_argument("--loads", type=_int_list, default=[0], help="motor loads in HP for cwru / synthetic (0,1,2,3)")
    data.add_argument("--channel", default="DE", help="CWRU channel: DE, FE or BA")
    data.add_argument("--seu-condition", default="20_0", help="SEU speed_load condition: 20_0 or 30_2")
    data.add_argument("--seu-channel", type=int, default=2, help="SEU channel 1-8 (2: planetary gearbox x)")
    data.add_argument("--sample-rate", type=float, help="sample rate in Hz: CSV (overrides a time column), SEU")
    data.add_argument("--duration", type=float, default=10.0, help="seconds per synthetic recording")
    data.add_argument("--data-seed", type=int, default=0, help="seed of the synthetic set (and of the random split)")
    data.add_argument("--split-seed", type=int, help="seed of the random split (default: --data-seed)")
    data.add_argument("--window", type=int, default=1024, help="samples per window")
    data.add_argument("--stride", type=int, help="samples between window starts (default: the window, no overlap)")
    data.add_argument(
        "--split", type=_split_list, default=["time"],
        help="time: blocks in time (honest); random: leaks; time,random: both, side by side (the first is the experiment)",
    )
    data.add_argument("--shares", type=_float_list, default=list(DEFAULT_SHARES), help="train,val,test shares")

    model = parser.add_argument_group("models")
    model.add_argument("--models", type=_model_list, default=["A", "B"], help=f"comma-separated: {','.join(MODEL_NAMES)}")
    model.add_argument("--tokens", choices=TOKEN_KINDS, default="time")
    model.add_argument("--patch", type=int, default=ModelConfig.patch, help="samples (time) or rfft bins (fft) per token")
    model.add_argument(
        "--d-model", type=_int_list,
        help="width after B's embedding (default: the patch); several, e.g. 16,32,64,128, sweep the embedding models",
    )
    model.add_argument("--heads", type=int, default=ModelConfig.n_heads)
    model.add_argument("--layers", type=int, default=ModelConfig.n_layers)
    model.add_argument("--ff-dim", type=int, help="encoder feed-forward width (default 4 x d_model)")
    model.add_argument("--dropout", type=float, default=ModelConfig.dropout)
    model.add_argument("--pe-base", type=float, default=ModelConfig.pe_base)
    model.add_argument("--pe-scale", type=float, default=ModelConfig.pe_scale, help="factor on the positional encoding")
    model.add_argument("--embed-scale", action="store_true", help="multiply the embedding by sqrt(d_model)")

    training = parser.add_argument_group("training")
    training.add_argument("--seeds", type=_int_list, default=[0, 1, 2])
    training.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    training.add_argument("--batch-size", type=int, default=TrainConfig.batch_size)
    training.add_argument("--lr", type=float, default=TrainConfig.learning_rate)
    training.add_argument("--lr-schedule", choices=LR_SCHEDULES, default=TrainConfig.lr_schedule)
    training.add_argument("--weight-decay", type=float, default=TrainConfig.weight_decay)
    training.add_argument("--patience", type=int, default=TrainConfig.patience)
    training.add_argument("--threads", type=int, default=TrainConfig.threads, help="torch CPU threads per run")
    training.add_argument(
        "--workers",
        type=int,
        help="runs trained side by side (default: CPU cores / threads); results do not depend on it",
    )
    training.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    training.add_argument("--metric", choices=METRICS, default="accuracy", help="metric of the paired comparison")

    evaluations = parser.add_argument_group("evaluations")
    evaluations.add_argument("--train-loads", type=_int_list, help="cross-load: train at these motor loads (with --test-loads)")
    evaluations.add_argument("--test-loads", type=_int_list, help="cross-load: test at these motor loads")
    evaluations.add_argument(
        "--snr", type=_float_list, help="noise robustness: SNRs in dB; write --snr=-4,0,4,8 (with '=')"
    )

    parser.add_argument("--out", type=Path, default=Path("results.json"), help="where to write the results JSON")
    parser.add_argument("--quiet", action="store_true", help="print only the tables and the verdict")
    return parser


def data_loads(args: argparse.Namespace) -> list[int]:
    """The motor loads to read: --loads, or with cross-load the train and test loads."""
    if args.train_loads is not None or args.test_loads is not None:
        return sorted({*(args.train_loads or []), *(args.test_loads or [])})
    return list(args.loads)


def _one_folder(args: argparse.Namespace) -> Path:
    if args.data is None:
        return DEFAULT_DATA_DIRS[args.dataset]
    if len(args.data) != 1:
        raise DataError(f"--dataset {args.dataset} reads one folder; got {len(args.data)} paths after --data.")
    return args.data[0]


def load_recordings(args: argparse.Namespace) -> list[Any]:
    """The recordings of the chosen data set; every loader raises DataError on bad or missing data.

    CWRU files missing from the folder are left out (the normal records at 1-3 HP are not in the shared
    copy); which ones is printed and recorded, and the classes used are in the JSON.
    """
    import core.vibration as vibration  # loaders resolve lazily, so only the chosen one is imported

    loads = tuple(data_loads(args))
    if args.dataset == "synthetic":
        return vibration.synthetic_bearing_set(seed=args.data_seed, loads=loads, duration_s=args.duration)
    if args.dataset == "csv":
        if args.data is None:
            raise DataError("--dataset csv needs --data PATH naming the CSV file(s).")
        return [r for path in args.data for r in vibration.read_vibration_csv(path, sample_rate=args.sample_rate)]
    folder = _one_folder(args)
    if args.dataset == "cwru":
        return vibration.load_cwru(folder, loads=loads, channel=args.channel, allow_missing=True)
    rate = {} if args.sample_rate is None else {"sample_rate": args.sample_rate}
    return list(vibration.load_seu(folder, condition=args.seu_condition, channel=args.seu_channel, **rate))


def make_plan(args: argparse.Namespace) -> Plan:
    model_config = ModelConfig(
        patch=args.patch,
        tokens=args.tokens,
        d_model=args.d_model[0] if args.d_model else None,
        n_heads=args.heads,
        n_layers=args.layers,
        ff_dim=args.ff_dim,
        dropout=args.dropout,
        pe_base=args.pe_base,
        pe_scale=args.pe_scale,
        embed_scale=args.embed_scale,
    )
    config = TrainConfig(
        model=model_config,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.lr,
        weight_decay=args.weight_decay,
        patience=args.patience,
        threads=args.threads,
        lr_schedule=args.lr_schedule,
    )
    recordings = load_recordings(args)
    data_settings = {
        "dataset": args.dataset,
        "data": _data_paths(args),
        "loads": data_loads(args) if args.dataset in ("cwru", "synthetic") else None,
        "missing_files": list(getattr(recordings, "missing", [])),
        "channel": {"cwru": args.channel, "seu": args.seu_channel}.get(args.dataset),
        "seu_condition": args.seu_condition if args.dataset == "seu" else None,
        "sample_rate_override": args.sample_rate if args.dataset in ("csv", "seu") else None,
        "synthetic_duration_s": args.duration if args.dataset == "synthetic" else None,
        "data_seed": args.data_seed,
    }
    windowing = {
        "window": args.window,
        "stride": args.stride,
        "split": tuple(args.shares),
        "mode": args.split[0],
        "seed": args.data_seed if args.split_seed is None else args.split_seed,
    }
    return Plan(
        data=list(recordings),
        models=args.models,
        seeds=args.seeds,
        config=config,
        device=None if args.device == "auto" else args.device,
        data_settings=data_settings,
        metric=args.metric,
        keep_weights=False,
        windowing=windowing,
        train_loads=args.train_loads,
        test_loads=args.test_loads,
        snr_db=args.snr,
        compare_splits=len(args.split) == 2,
        d_models=args.d_model if args.d_model and len(args.d_model) > 1 else None,
        workers=args.workers if args.workers is not None else default_workers(args.threads, args.device),
    )


def default_workers(threads: int, device: str = "cpu") -> int:
    """Runs side by side that fill the usable CPUs, each with `threads` torch threads; one at a time on a
    GPU, which a single run of these small models already shares poorly with itself."""
    if pick_device(None if device == "auto" else device).type == "cuda":
        return 1
    return max(1, usable_cpus() // max(1, threads))


def _data_paths(args: argparse.Namespace) -> str | list[str] | None:
    if args.data is None:
        return None
    if args.dataset == "csv":
        return [str(path) for path in args.data]
    return str(args.data[0])


def _number(value: float) -> str:
    """Shortest text that reads back as the same float: 10000 for 10000.0, 0.003 for 3e-3."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _numbers(values: Sequence[float]) -> str:
    return ",".join(_number(v) for v in values)


def command_line(results_config: Mapping[str, Any]) -> str:
    """The `python -m core.experiment ...` command that reproduces a results JSON's config.

    Works for configs written by the CLI and by the Fault lab (whose data settings name the synthetic seed
    "seed" and the SEU condition "condition"). A data path the config does not record (a folder typed into
    the page, uploaded files) is left out, so the CLI's default folder is used.
    """
    data = results_config.get("data", {})
    train = results_config.get("train", {})
    model = train.get("model", {})
    evaluations = results_config.get("evaluations") or {}
    dataset = data.get("dataset", "synthetic")
    words = ["python", "-m", "core.experiment", "--dataset", dataset]

    paths = data.get("data") or (data.get("files") if dataset == "csv" else None)
    if paths:
        words += ["--data", *([paths] if isinstance(paths, str) else paths)]
    if dataset in ("cwru", "synthetic") and data.get("loads") and not evaluations.get("train_loads"):
        words += ["--loads", _numbers(data["loads"])]
    if dataset == "cwru" and data.get("channel"):
        words += ["--channel", str(data["channel"])]
    if dataset == "seu":
        words += ["--seu-condition", str(data.get("seu_condition") or data.get("condition") or "20_0")]
        words += ["--seu-channel", str(data.get("channel", 2))]
    if dataset in ("csv", "seu"):
        rate = data.get("sample_rate_override") or data.get("sample_rate")
        if rate:
            words += ["--sample-rate", _number(rate)]
    data_seed = data.get("data_seed", data.get("seed", 0))
    if dataset == "synthetic" and data.get("synthetic_duration_s") is not None:
        words += ["--duration", _number(data["synthetic_duration_s"])]
    words += ["--data-seed", str(int(data_seed))]
    if "split_seed" in data and data["split_seed"] != data_seed:
        words += ["--split-seed", str(int(data["split_seed"]))]

    window = int(data.get("window", 1024))
    words += ["--window", str(window)]
    if data.get("stride") is not None and int(data["stride"]) != window:
        words += ["--stride", str(int(data["stride"]))]
    mode = data.get("split_mode", "time")
    modes = [mode, evaluation.other_split_mode(mode)] if evaluations.get("compare_splits") else [mode]
    words += ["--split", ",".join(modes), "--shares", _numbers(data.get("shares", DEFAULT_SHARES))]

    defaults = ModelConfig()
    words += ["--models", ",".join(results_config.get("models", ["A", "B"]))]
    words += ["--tokens", str(model.get("tokens", defaults.tokens)), "--patch", str(model.get("patch", defaults.patch))]
    d_models = evaluations.get("d_models") or ([model["d_model"]] if model.get("d_model") is not None else None)
    if d_models:
        words += ["--d-model", _numbers(d_models)]
    words += ["--heads", str(model.get("n_heads", defaults.n_heads)), "--layers", str(model.get("n_layers", defaults.n_layers))]
    if model.get("ff_dim") is not None:
        words += ["--ff-dim", str(model["ff_dim"])]
    words += ["--dropout", _number(model.get("dropout", defaults.dropout))]
    words += ["--pe-base", _number(model.get("pe_base", defaults.pe_base))]
    words += ["--pe-scale", _number(model.get("pe_scale", defaults.pe_scale))]
    if model.get("embed_scale"):
        words.append("--embed-scale")

    settings = TrainConfig()
    words += ["--seeds", _numbers(results_config.get("seeds", [0, 1, 2]))]
    words += ["--epochs", str(train.get("epochs", settings.epochs))]
    words += ["--batch-size", str(train.get("batch_size", settings.batch_size))]
    words += ["--lr", _number(train.get("learning_rate", settings.learning_rate))]
    # a config from before schedules existed trained at a constant rate
    words += ["--lr-schedule", str(train.get("lr_schedule", "constant"))]
    words += ["--weight-decay", _number(train.get("weight_decay", settings.weight_decay))]
    words += ["--patience", str(train.get("patience", settings.patience))]
    words += ["--threads", str(train.get("threads", settings.threads))]
    if results_config.get("device"):
        words += ["--device", str(results_config["device"]).split(":")[0]]
    words += ["--metric", str(results_config.get("metric", "accuracy"))]

    if evaluations.get("train_loads"):
        words += ["--train-loads", _numbers(evaluations["train_loads"]), "--test-loads", _numbers(evaluations["test_loads"])]
    if evaluations.get("snr_db"):
        words.append(f"--snr={_numbers(evaluations['snr_db'])}")  # "=": a leading minus would read as an option
    return shlex.join(words)


def _format_mean_sd(cell_mean: float, cell_sd: float | None) -> str:
    sd = "-" if cell_sd is None else f"{100 * cell_sd:.1f}"
    return f"{100 * cell_mean:5.1f} ± {sd}"


def format_table(results: dict[str, Any]) -> str:
    """Per model: accuracy and macro F1 in %, mean ± sd over seeds, and the word against A."""
    table = summary_table(results)
    lines = [f"{'model':<10} {'seeds':>5}  {'accuracy %':>12}  {'F1 %':>12}  vs A"]
    for row in table.itertuples():
        lines.append(
            f"{row.model:<10} {row.seeds:>5}  {_format_mean_sd(row.accuracy_mean, row.accuracy_sd):>12}  "
            f"{_format_mean_sd(row.f1_mean, row.f1_sd):>12}  {row.vs_A if isinstance(row.vs_A, str) else '-'}"
        )
    return "\n".join(lines)


def format_evaluations(results: Mapping[str, Any]) -> str:
    """The tables of the evaluation blocks present in `results`, one after another."""
    parts = []
    if "split_comparison" in results:
        parts.append("Split comparison, accuracy % (mean ± sd; leak in points, 95 % CI):\n"
                     + evaluation.split_table(results["split_comparison"]).to_string())
    if "cross_load" in results:
        block = results["cross_load"]
        dropped = block["dropped_classes"]
        left_out = f" (left out, not recorded at every load: {', '.join(dropped)})" if dropped else ""
        parts.append(f"Cross-load accuracy % on {len(block['classes'])} classes{left_out}:")
        for model in block["accuracy"]:
            parts.append(f"{model}\n" + evaluation.cross_load_table(block, model).to_string())
    if "noise" in results:
        parts.append("Accuracy % with white noise at each SNR:\n" + evaluation.noise_table(results["noise"]).to_string())
    if "d_model_sweep" in results:
        parts.append("d_model sweep, accuracy % (parameters):\n" + evaluation.sweep_table(results["d_model_sweep"]).to_string())
    return "\n\n".join(parts)


def describe_windows(stage: str, windows: Any) -> str:
    return (
        f"{stage}: {len(windows.class_names)} classes, windows train/val/test "
        f"{len(windows.x_train)}/{len(windows.x_val)}/{len(windows.x_test)} of {windows.window} samples, "
        f"{windows.mode} split"
    )


def describe_run(run: Mapping[str, Any]) -> str:
    stage = "" if run.get("stage", MAIN_STAGE) == MAIN_STAGE else f" [{run['stage']}]"
    return (
        f"  {run['model']:<10} seed {run['seed']}{stage}: accuracy {100 * run['accuracy']:.1f} %, "
        f"F1 {100 * run['f1']:.1f} %, {run['epochs']} epochs, {run['train_seconds']:.1f} s, "
        f"{run['n_parameters']} parameters, {run['device']}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    say = (lambda *parts: None) if args.quiet else (lambda *parts: print(*parts, flush=True))
    try:
        plan = make_plan(args)
        missing = plan.data_settings.get("missing_files")
        if missing:
            say(f"{args.dataset}: files not found, left out: {', '.join(missing)}")
        results = run_plan(
            plan,
            on_stage=lambda stage, windows: say(describe_windows(f"{args.dataset} {stage}", windows)),
            on_run_end=lambda run: say(describe_run(run)),
        )
    except (DataError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    wall_seconds = time.perf_counter() - started
    results["config"]["wall_seconds"] = round(wall_seconds, 2)
    save_results(results, args.out)
    print(format_table(results))
    print(results["verdict"])
    extra = format_evaluations(results)
    if extra:
        print(extra)
    print(f"wall time {wall_seconds:.1f} s; results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
