"""The `python -m core.study` command of a study's settings: what the page prints beside "Run a study" and
stores in the study JSON, so a study started on the page can be run again headless, setting for setting.

Every model and training setting is written (not only those the page shows), so the command reproduces the
same TrainConfig whatever the CLI's defaults become; tests/test_lab_decisions.py parses it back with the study
CLI's own parser.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from core.lab.cli_args import MODEL_FLAGS, TRAIN_FLAGS
from core.lab.data_spec import DataSpec
from core.lab.report import format_list, format_number
from core.lab.training import TrainConfig

# (flag, ModelConfig field) of the settings written as a value; d_model and ff_dim only when set
STUDY_MODEL_FLAGS = (("--d-model", "d_model"), *MODEL_FLAGS)


def study_command(
    spec: DataSpec,
    design: str,
    folds: int,
    seeds: Sequence[int],
    models: Sequence[str],
    window: int,
    config: TrainConfig,
    *,
    stride: int | None = None,
    margin: float | None = None,
    metric: str | None = None,
    tune_lr: bool = False,
    repeats: int = 1,
    snr_db: Sequence[float] = (),
    out: str | Path = "study.json",
) -> str:
    """The exact `python -m core.study ...` line of these settings; a margin or metric left None is the CLI's,
    `--repeats` written when more than one, `--snr` when the runs are also scored with noise."""
    words = ["python", "-m", "core.study", *spec.argv(), "--window", str(window)]
    words += [] if stride is None else ["--stride", str(stride)]
    words += ["--design", design, "--folds", str(folds)]
    words += ["--repeats", str(repeats)] if repeats > 1 else []
    words += [] if margin is None else ["--margin", format_number(margin)]
    words += [] if metric is None else ["--metric", metric]
    words += ["--tune-lr"] if tune_lr else []
    words += ["--models", ",".join(models), *_model_words(config), "--seeds", format_list(seeds)]
    words += [word for flag, field in TRAIN_FLAGS for word in (flag, _text(getattr(config, field)))]
    words += ["--min-delta", _text(config.min_delta)] if config.min_delta else []
    words += [f"--snr={format_list(snr_db)}"] if snr_db else []  # with "=": an SNR may be negative
    return shlex.join([*words, "--out", str(out)])


def _model_words(config: TrainConfig) -> list[str]:
    model = config.model
    words = [
        word
        for flag, field in STUDY_MODEL_FLAGS
        if getattr(model, field) is not None
        for word in (flag, _text(getattr(model, field)))
    ]
    words += ["--embed-scale"] if model.embed_scale else []
    return [*words, "--input-dropout-for-all" if model.input_dropout_for_all else "--no-input-dropout-for-all"]


def _text(value: object) -> str:
    return format_number(value) if isinstance(value, float) else str(value)
