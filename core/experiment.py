"""The Fault-lab experiment from the command line: train, print a table and the verdict, write the results JSON.

    python -m core.experiment --dataset cwru --models A,B --seeds 0,1,2 --epochs 15 --out results.json

It runs `core.jobs.run_plan`, the loop the Fault lab's background job runs, so any number on the page can be
reproduced here with the same settings. Bad data or settings print one line saying what to change and exit
with status 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.jobs import Plan, run_plan
from core.models import MODEL_NAMES, TOKEN_KINDS, ModelConfig
from core.results import METRICS, save_results, summary_table
from core.training import TrainConfig
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
    data.add_argument("--data", type=Path, help="folder (cwru, seu) or file (csv); default ../shared/data/<dataset>")
    data.add_argument("--loads", type=_int_list, default=[0], help="motor loads in HP for cwru / synthetic (0,1,2,3)")
    data.add_argument("--channel", default="DE", help="CWRU channel: DE, FE or BA")
    data.add_argument("--seu-condition", default="20_0", help="SEU speed_load condition: 20_0 or 30_2")
    data.add_argument("--seu-channel", type=int, default=2, help="SEU channel 1-8 (2: planetary gearbox x)")
    data.add_argument("--sample-rate", type=float, help="sample rate in Hz: CSV (overrides a time column), SEU")
    data.add_argument("--duration", type=float, default=10.0, help="seconds per synthetic recording")
    data.add_argument("--data-seed", type=int, default=0, help="seed of the synthetic set and of the random split")
    data.add_argument("--window", type=int, default=1024, help="samples per window")
    data.add_argument("--stride", type=int, help="samples between window starts (default: the window, no overlap)")
    data.add_argument("--split", choices=MODES, default="time", help="time: blocks in time (honest); random: leaks")
    data.add_argument("--shares", type=_float_list, default=[0.7, 0.2, 0.1], help="train,val,test shares")

    model = parser.add_argument_group("models")
    model.add_argument("--models", type=_model_list, default=["A", "B"], help=f"comma-separated: {','.join(MODEL_NAMES)}")
    model.add_argument("--tokens", choices=TOKEN_KINDS, default="time")
    model.add_argument("--patch", type=int, default=ModelConfig.patch, help="samples (time) or rfft bins (fft) per token")
    model.add_argument("--d-model", type=int, help="width after B's embedding (default: the patch)")
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
    training.add_argument("--weight-decay", type=float, default=TrainConfig.weight_decay)
    training.add_argument("--patience", type=int, default=TrainConfig.patience)
    training.add_argument("--threads", type=int, default=TrainConfig.threads, help="torch CPU threads")
    training.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    training.add_argument("--metric", choices=METRICS, default="accuracy", help="metric of the paired comparison")

    parser.add_argument("--out", type=Path, default=Path("results.json"), help="where to write the results JSON")
    parser.add_argument("--quiet", action="store_true", help="print only the table and the verdict")
    return parser


def load_recordings(args: argparse.Namespace) -> list[Any]:
    """The recordings of the chosen data set; every loader raises DataError on bad or missing data."""
    import core.vibration as vibration  # loaders resolve lazily, so only the chosen one is imported

    if args.dataset == "synthetic":
        return vibration.synthetic_bearing_set(seed=args.data_seed, loads=tuple(args.loads), duration_s=args.duration)
    if args.dataset == "csv":
        if args.data is None:
            raise DataError("--dataset csv needs --data PATH naming the CSV file.")
        return vibration.read_vibration_csv(args.data, sample_rate=args.sample_rate)
    folder = args.data or DEFAULT_DATA_DIRS[args.dataset]
    if args.dataset == "cwru":
        return list(vibration.load_cwru(folder, loads=tuple(args.loads), channel=args.channel))
    rate = {} if args.sample_rate is None else {"sample_rate": args.sample_rate}
    return list(vibration.load_seu(folder, condition=args.seu_condition, channel=args.seu_channel, **rate))


def make_plan(args: argparse.Namespace) -> Plan:
    from core.vibration import make_windows

    model_config = ModelConfig(
        patch=args.patch,
        tokens=args.tokens,
        d_model=args.d_model,
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
    )
    windows = make_windows(
        load_recordings(args),
        window=args.window,
        stride=args.stride,
        split=tuple(args.shares),
        mode=args.split,
        seed=args.data_seed,
    )
    data_settings = {
        "dataset": args.dataset,
        "data": str(args.data) if args.data else None,
        "loads": list(args.loads) if args.dataset in ("cwru", "synthetic") else None,
        "channel": {"cwru": args.channel, "seu": args.seu_channel}.get(args.dataset),
        "seu_condition": args.seu_condition if args.dataset == "seu" else None,
        "sample_rate_override": args.sample_rate if args.dataset in ("csv", "seu") else None,
        "synthetic_duration_s": args.duration if args.dataset == "synthetic" else None,
        "data_seed": args.data_seed,
        "shares": list(args.shares),
    }
    return Plan(
        data=windows,
        models=args.models,
        seeds=args.seeds,
        config=config,
        device=None if args.device == "auto" else args.device,
        data_settings=data_settings,
        metric=args.metric,
        keep_weights=False,
    )


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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    say = (lambda *parts: None) if args.quiet else (lambda *parts: print(*parts, flush=True))
    try:
        plan = make_plan(args)
        windows = plan.data
        say(
            f"{args.dataset}: {len(windows.class_names)} classes, windows train/val/test "
            f"{len(windows.x_train)}/{len(windows.x_val)}/{len(windows.x_test)} of {windows.window} samples, "
            f"{windows.mode} split"
        )
        results = run_plan(
            plan,
            on_run_end=lambda run: say(
                f"  {run['model']:<10} seed {run['seed']}: accuracy {100 * run['accuracy']:.1f} %, "
                f"F1 {100 * run['f1']:.1f} %, {run['epochs']} epochs, {run['train_seconds']:.1f} s, "
                f"{run['n_parameters']} parameters, {run['device']}"
            ),
        )
    except (DataError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    wall_seconds = time.perf_counter() - started
    results["config"]["wall_seconds"] = round(wall_seconds, 2)
    save_results(results, args.out)
    print(format_table(results))
    print(results["verdict"])
    print(f"wall time {wall_seconds:.1f} s; results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
