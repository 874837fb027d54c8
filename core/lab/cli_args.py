"""The model and training flags that `python -m core.experiment` and `python -m core.study` share, and the
TrainConfig they give."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from core.lab.backends import BACKENDS, INSTALL, backend
from core.lab.data_spec import DataSpec
from core.lab.models import MODEL_NAMES, TOKEN_KINDS, ModelConfig
from core.lab.names import SHARED_FLAG_ALIASES, flag_names
from core.lab.training import LR_SCHEDULES, TrainConfig


def model_list(names: Sequence[str] = MODEL_NAMES) -> Callable[[str], list[str]]:
    """An argparse type for a comma-separated list of model names among `names`."""

    def parse(text: str) -> list[str]:
        models = [item.strip() for item in text.split(",") if item.strip()]
        unknown = [model for model in models if model not in names]
        if unknown or not models:
            raise argparse.ArgumentTypeError(f"unknown models {unknown or text!r}; choose from {','.join(names)}")
        return models

    return parse


def add_model_arguments(
    parser: argparse.ArgumentParser, ints: Callable[[str], list[int]], sweep: bool, names: Sequence[str] = MODEL_NAMES
) -> None:
    """The models (among `names`) and their architecture. With `sweep`, a list after --d-model or --pe-scale is
    read as the sweep (the old spelling of --d-model-sweep and --pe-scale-sweep, which the evaluations add)."""
    model = parser.add_argument_group("models")
    model.add_argument(
        "--models", type=model_list(names), default=["A", "B"], help=f"comma-separated: {','.join(names)}"
    )
    model.add_argument("--tokens", choices=TOKEN_KINDS, default="time")
    model.add_argument(
        "--patch", type=int, default=ModelConfig.patch, help="samples (time) or rfft bins (fft) per token"
    )
    model.add_argument(
        "--d-model",
        type=ints,
        help="width after B's embedding (default: the patch)"
        + ("; a list, e.g. 16,32,64,128, is the sweep (--d-model-sweep)" if sweep else ""),
    )
    model.add_argument("--heads", type=int, default=ModelConfig.heads, help="attention heads per encoder layer")
    model.add_argument("--layers", type=int, default=ModelConfig.layers, help="encoder layers")
    model.add_argument("--ff-dim", type=int, help="encoder feed-forward width (default 4 x d_model)")
    model.add_argument("--dropout", type=float, default=ModelConfig.dropout)
    model.add_argument("--pe-base", type=float, default=ModelConfig.pe_base)
    model.add_argument(
        "--pe-scale",
        type=parse_list("floats"),
        default=[ModelConfig.pe_scale],
        help="factor on the positional encoding"
        + ("; a list, e.g. 0,0.1,0.3,1, is the sweep (--pe-scale-sweep)" if sweep else ""),
    )
    model.add_argument("--embed-scale", action="store_true", help="multiply the embedding by sqrt(d_model)")
    model.add_argument(
        "--input-dropout-for-all",
        action=argparse.BooleanOptionalAction,
        default=ModelConfig.input_dropout_for_all,
        help="input dropout for every Transformer (A included), or only for those with an embedding or a PE",
    )


def add_training_arguments(
    parser: argparse.ArgumentParser, ints: Callable[[str], list[int]], seeds: Sequence[int]
) -> None:
    """Where runs execute, the seeds, and every training setting (defaults from TrainConfig)."""
    cluster = parser.add_argument_group("where runs execute")
    cluster.add_argument(
        "--backend", choices=BACKENDS, default="local", help=f"local threads, or a Ray cluster ({INSTALL})"
    )
    cluster.add_argument(
        "--ray-address", default="auto", help="Ray cluster address; auto joins a running one (ray start --head)"
    )
    training = parser.add_argument_group("training")
    chosen = training.add_mutually_exclusive_group()
    chosen.add_argument("--seeds", type=ints, default=list(seeds), help="the seeds of the runs, e.g. 0,1,2")
    chosen.add_argument(
        "--n-seeds", dest="seeds", type=seed_count, default=argparse.SUPPRESS, help="N: the seeds 0 to N-1"
    )
    training.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    training.add_argument("--batch-size", type=int, default=TrainConfig.batch_size)
    training.add_argument(
        *flag_names("--learning-rate", SHARED_FLAG_ALIASES),
        dest="learning_rate",
        type=float,
        default=TrainConfig.learning_rate,
        help="AdamW's learning rate (--lr is its old name)",
    )
    training.add_argument("--lr-schedule", choices=LR_SCHEDULES, default=TrainConfig.lr_schedule)
    training.add_argument("--weight-decay", type=float, default=TrainConfig.weight_decay)
    training.add_argument("--patience", type=int, default=TrainConfig.patience)
    training.add_argument(
        "--min-delta",
        type=float,
        default=TrainConfig.min_delta,
        help="a new best validation loss must undercut the old by more than this (0: any drop)",
    )
    training.add_argument(
        "--warmup-epochs", type=int, default=TrainConfig.warmup_epochs, help="linear learning-rate warm-up (epochs)"
    )
    training.add_argument("--threads", type=int, default=TrainConfig.threads, help="torch CPU threads per run")
    training.add_argument(
        "--workers",
        type=int,
        help="runs trained side by side (default: CPU cores / threads); results do not depend on it",
    )
    training.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")


def train_config(args: argparse.Namespace) -> TrainConfig:
    """The TrainConfig of parsed arguments; the first value of a --d-model or --pe-scale list (a sweep's first
    is the experiment's own)."""
    model = ModelConfig(
        patch=args.patch,
        tokens=args.tokens,
        d_model=args.d_model[0] if args.d_model else None,
        heads=args.heads,
        layers=args.layers,
        ff_dim=args.ff_dim,
        dropout=args.dropout,
        pe_base=args.pe_base,
        pe_scale=args.pe_scale[0],
        embed_scale=args.embed_scale,
        input_dropout_for_all=args.input_dropout_for_all,
    )
    return TrainConfig(
        model=model,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        weight_decay=args.weight_decay,
        patience=args.patience,
        min_delta=args.min_delta,
        threads=args.threads,
        lr_schedule=args.lr_schedule,
        warmup_epochs=args.warmup_epochs,
    )


ACCEPT_WIDE_HINT = "Add --accept-wide to run it anyway."


def add_accept_wide(parser: argparse.ArgumentParser) -> None:
    """--accept-wide: run even when too few test windows could show a difference of 20 points."""
    parser.add_argument(
        "--accept-wide",
        action="store_true",
        help="run even when the test windows are too few to detect a 20-point difference (the answer will be wide)",
    )


def refuse_wide(line: str) -> int:
    """Print why a run on too few test windows does not start, and how to start it anyway: exit status 2."""
    print(line, file=sys.stderr)
    print(ACCEPT_WIDE_HINT, file=sys.stderr)
    return 2


def runs_at_once(args: argparse.Namespace, device: str | None) -> tuple[int, str, str]:
    """(workers, backend, address): --workers, or what the backend takes at once (one per GPU on a GPU)."""
    from core.lab.training import default_workers

    runner = backend(args.backend, args.ray_address)
    if args.workers is not None:
        return args.workers, args.backend, args.ray_address
    workers = runner.workers(args.threads) if runner is not None else default_workers(args.threads, device)
    return workers, args.backend, args.ray_address


def plan_settings(args: argparse.Namespace, loads: Sequence[int] | None = None) -> dict[str, Any]:
    """What both CLIs' plans take alike from parsed arguments, as keyword arguments: the recordings, loaded (a
    DataError when they cannot be; `loads` replaces --loads) with where they came from, the models and the
    training config, the device and the runs at once."""
    spec = DataSpec.from_args(args, loads=loads)
    recordings = spec.load()
    device = None if args.device == "auto" else args.device
    workers, backend_name, address = runs_at_once(args, device)
    return {
        "recordings": list(recordings),
        "data_settings": {**spec.to_dict(), "missing_files": list(getattr(recordings, "missing", []))},
        "models": args.models,
        "config": train_config(args),
        "device": device,
        "workers": workers,
        "backend": backend_name,
        "ray_address": address,
    }


def seed_count(text: str) -> list[int]:
    """An argparse type for a number of seeds N, read as the seeds 0 to N-1 (the page's Seeds slider)."""
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"expected a number of seeds of at least 1, got {text!r}")
    return list(range(count))


def parse_list(kind: str):
    """An argparse type for a comma-separated list of ints or floats."""
    cast, example = (int, "0,1,2") if kind == "ints" else (float, "-4,0,4")

    def parse(text: str) -> list:
        try:
            return [cast(item) for item in text.split(",") if item.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated numbers such as {example}, got {text!r}"
            ) from None

    return parse


# (flag, ModelConfig / TrainConfig field): what a command line writes back so it rebuilds the same config;
# d_model is written by each CLI itself (a single width, or the experiment's sweep)
MODEL_FLAGS = (
    ("--tokens", "tokens"),
    ("--patch", "patch"),
    ("--heads", "heads"),
    ("--layers", "layers"),
    ("--ff-dim", "ff_dim"),
    ("--dropout", "dropout"),
    ("--pe-base", "pe_base"),
    ("--pe-scale", "pe_scale"),
)
TRAIN_FLAGS = (
    ("--epochs", "epochs"),
    ("--batch-size", "batch_size"),
    ("--learning-rate", "learning_rate"),
    ("--lr-schedule", "lr_schedule"),
    ("--weight-decay", "weight_decay"),
    ("--patience", "patience"),
    ("--warmup-epochs", "warmup_epochs"),
    ("--threads", "threads"),
)
