"""The study JSON (a contract, versioned on its own): how it is built from finished runs and how it is checked.

    schema_version  STUDY_SCHEMA_VERSION; a file of another version is refused by name
    kind            "study"
    config          split, folds, seeds, models, margin, metric, window, stride, population, command (the
                    exact CLI command), git_commit, torch, cpu, device, train (TrainConfig), data (DataSpec);
                    with --tune-lr also tuned_learning_rates {fold: {model: rate}}; fingerprint (the machine's,
                    core.fingerprint: whether a run can be recomputed bit for bit here; absent in older files)
    class_names     the labels, in the order of the class indices below
    recordings      per recording: label, file, load_hp
    folds           per fold: fold, name, recording and start of each test window (indices into recordings,
                    first sample), n_train, n_val, n_test, normalisation {mean, std}
    runs            per (fold, seed, model): model, seed, fold, accuracy, balanced_accuracy, precision, recall,
                    f1, log_loss, per_class_f1, confusion_matrix, epochs, best_epoch, converged, train_seconds,
                    predictions {true, predicted, p_true} in the order of the fold's test windows (class indices;
                    p_true, the probability of the true class, to 4 decimals)
    comparisons     per comparison (core.study.comparisons): a, b, metric, diff, ci95, ci90, margin, mde80, p,
                    p_holm, verdict, sentence; points throughout
    order_summary   per model: the accuracy drops (points) with tokens shuffled / reversed (core.probes.order);
                    every run also holds its order_test {accuracy, shuffled, reversed}
    profiles        per Transformer model, of its first seed on the first fold: attention_by_offset
                    (layer x offset key - query, -(T-1)..T-1), energy_ratio (position / token energy, or null),
                    learned_similarity_by_offset (B-learned's table, or null)

Written compact (no indent): a study of hundreds of runs stays a few hundred kB.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.contract import (
    VERDICTS,
    check_keys,
    check_order_summary,
    check_order_test,
    is_int,
    is_number,
    require,
    to_plain,
)
from core.study.comparisons import COMPARISON_KEYS

STUDY_SCHEMA_VERSION = 2  # 2: order_test per run, order_summary, profiles
TOP_KEYS = (
    "schema_version",
    "kind",
    "config",
    "class_names",
    "recordings",
    "folds",
    "runs",
    "comparisons",
    "order_summary",
    "profiles",
)
CONFIG_KEYS = (
    "split",
    "folds",
    "seeds",
    "models",
    "margin",
    "metric",
    "window",
    "stride",
    "population",
    "command",
    "git_commit",
    "torch",
    "cpu",
    "device",
    "train",
    "data",
)
FOLD_KEYS = ("fold", "name", "recording", "start", "n_train", "n_val", "n_test", "normalisation")
RUN_KEYS = (
    "model",
    "seed",
    "fold",
    "accuracy",
    "balanced_accuracy",
    "precision",
    "recall",
    "f1",
    "log_loss",
    "per_class_f1",
    "confusion_matrix",
    "epochs",
    "best_epoch",
    "converged",
    "train_seconds",
    "predictions",
    "order_test",
)
PREDICTION_KEYS = ("true", "predicted", "p_true")
PROFILE_KEYS = ("fold", "seed", "attention_by_offset", "energy_ratio", "learned_similarity_by_offset")
MAX_STUDY_BYTES = 20_000_000
GZIP_MAGIC = b"\x1f\x8b"


def study_run(run: Mapping[str, Any], fold: int) -> dict[str, Any]:
    """The study's record of one finished training run (core.training.train's dict)."""
    return to_plain({**{key: run[key] for key in RUN_KEYS if key != "fold"}, "fold": fold})


def check_study_version(study: Any) -> None:
    require(isinstance(study, Mapping), f"top level must be an object, got {type(study).__name__}")
    version, kind = study.get("schema_version"), study.get("kind")
    if kind != "study":
        raise ValueError("invalid study JSON: it is not a PE Lab study (its 'kind' is not 'study')")
    if version != STUDY_SCHEMA_VERSION:
        raise ValueError(
            f"invalid study JSON: schema_version {version!r}, but this PE Lab reads study schema_version "
            f"{STUDY_SCHEMA_VERSION} only. Re-run the study with the command in its config."
        )


def validate_study(study: Any) -> None:
    """Raise ValueError naming the first place where `study` breaks the contract."""
    check_study_version(study)
    check_keys("study", study, TOP_KEYS)
    config = study["config"]
    check_keys("config", config, CONFIG_KEYS, optional=("tuned_learning_rates", "fingerprint"))
    fingerprint = config.get("fingerprint", {})
    require(
        isinstance(fingerprint, dict) and all(isinstance(v, str) for v in fingerprint.values()),
        "config.fingerprint must be an object of strings",
    )
    names = study["class_names"]
    require(
        isinstance(names, list) and len(names) >= 2 and all(isinstance(n, str) for n in names),
        "class_names must be a list of at least two strings",
    )
    n_recordings = len(study["recordings"])
    folds = {}
    for i, fold in enumerate(study["folds"]):
        where = f"folds[{i}]"
        check_keys(where, fold, FOLD_KEYS)
        n = fold["n_test"]
        require(
            is_int(n) and n > 0 and len(fold["recording"]) == n and len(fold["start"]) == n,
            f"{where} must list recording and start of each of its n_test windows",
        )
        require(
            all(is_int(r) and 0 <= r < n_recordings for r in fold["recording"]),
            f"{where}.recording must index the recordings",
        )
        folds[fold["fold"]] = n
    for i, run in enumerate(study["runs"]):
        _check_run(f"runs[{i}]", run, len(names), folds)
    require(isinstance(study["comparisons"], list), "comparisons must be a list")
    for i, comparison in enumerate(study["comparisons"]):
        where = f"comparisons[{i}]"
        check_keys(where, comparison, COMPARISON_KEYS)
        require(comparison["verdict"] in VERDICTS, f"{where}.verdict must be one of {VERDICTS}")
        require(is_number(comparison["diff"]), f"{where}.diff must be a number")
        for key in ("ci95", "ci90"):
            ci = comparison[key]
            require(
                ci is None or (len(ci) == 2 and ci[0] <= comparison["diff"] <= ci[1]),
                f"{where}.{key} must be null or [low, high] around diff",
            )
        require(isinstance(comparison["sentence"], str) and comparison["sentence"], f"{where}.sentence is empty")
    models = {run["model"] for run in study["runs"]}
    check_order_summary("order_summary", study["order_summary"], models)
    require(isinstance(study["profiles"], dict) and set(study["profiles"]) <= models, "profiles must name models run")
    for model, profile in study["profiles"].items():
        check_keys(f"profiles[{model!r}]", profile, PROFILE_KEYS)


def _check_run(where: str, run: Any, n_classes: int, folds: Mapping[int, int]) -> None:
    check_keys(where, run, RUN_KEYS)
    require(run["fold"] in folds, f"{where}.fold must name a fold")
    for key in ("accuracy", "balanced_accuracy", "precision", "recall", "f1"):
        require(is_number(run[key]) and 0 <= run[key] <= 1, f"{where}.{key} must be a fraction in 0..1")
    require(is_number(run["log_loss"]) and run["log_loss"] >= 0, f"{where}.log_loss must be a non-negative number")
    require(isinstance(run["converged"], bool), f"{where}.converged must be true or false")
    require(is_int(run["best_epoch"]) and 0 <= run["best_epoch"] <= run["epochs"], f"{where}.best_epoch out of range")
    check_order_test(f"{where}.order_test", run["order_test"])
    predictions = run["predictions"]
    check_keys(f"{where}.predictions", predictions, PREDICTION_KEYS)
    n = folds[run["fold"]]
    for key in PREDICTION_KEYS:
        require(len(predictions[key]) == n, f"{where}.predictions.{key} must hold one value per test window ({n})")
    require(
        all(is_int(c) and 0 <= c < n_classes for key in ("true", "predicted") for c in predictions[key]),
        f"{where}.predictions must be class indices",
    )


def save_study(study: Mapping[str, Any], path: str | Path) -> Path:
    """Write the checked study as compact JSON; gzip-compressed when the name ends in .gz (a study's per-window
    predictions compress about eightfold, which keeps a large shipped study small in the repository)."""
    validate_study(study)
    path = Path(path)
    text = json.dumps(study, separators=(",", ":"), allow_nan=False).encode("utf-8")
    # mtime=0: the same study gives the same bytes, so re-running it changes the file only if a number moved
    path.write_bytes(gzip.compress(text, compresslevel=9, mtime=0) if path.suffix == ".gz" else text)
    return path


def read_study(text: str | bytes) -> dict[str, Any]:
    """A study JSON from its text or its gzip-compressed bytes, checked; ValueError (in words) for a damaged,
    foreign or oversized file (compressed, the limit applies to what it expands to)."""
    if isinstance(text, bytes) and text[:2] == GZIP_MAGIC:
        text = _gunzip(text)
    if len(text) > MAX_STUDY_BYTES:
        raise ValueError(
            f"the file is {len(text) / 1e6:.1f} MB, over the {MAX_STUDY_BYTES / 1e6:.0f} MB limit of a study"
        )
    try:
        study = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"the file is not valid JSON ({error})") from None
    validate_study(study)
    return study


def load_study(path: str | Path) -> dict[str, Any]:
    return read_study(Path(path).read_bytes())


def _gunzip(data: bytes) -> bytes:
    """At most one byte past the size limit is expanded, so a small file cannot unpack into gigabytes."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            return stream.read(MAX_STUDY_BYTES + 1)
    except (OSError, EOFError) as error:
        raise ValueError(f"the file is not valid gzip ({error})") from None
