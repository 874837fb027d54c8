"""The study JSON (a contract, versioned on its own): how it is built from finished runs and how it is checked.

    schema_version  core.lab.contract.SCHEMA_VERSION (the results JSON's too); an older file is read through
                    core.lab.study.migration.migrate
    kind            "study"
    config          design, folds (K, per repeat), repeats (R), seeds, models, margin, metric, window, stride,
                    population, command (the exact CLI command), git_commit, torch, cpu, device, train
                    (TrainConfig; train.model.heads and .layers), data (DataSpec);
                    with --tune-lr also tuned_learning_rates {repeat: {fold: {model: rate}}}; fingerprint (the
                    machine's, core.fingerprint: whether a run can be recomputed bit for bit here; absent in
                    older files); protocol_version (3; absent: 2); train_loads, test_loads (load-out with
                    --train-loads; one-fold: its one train load and the loads of its cross-load tests,
                    core.lab.study.cross_load, from version 8); tune_epochs (the learning-rate trials' cap, when
                    not train.epochs); snr_db (the SNRs every run is also scored at, core.lab.study.noise)
    class_names     the labels, in the order of the class indices below
    recordings      per recording: label, file, load_hp
    folds           per (repeat, fold): repeat, fold, name, recording and start of each test window (indices
                    into recordings, first sample), n_train, n_val, n_test, normalisation {mean, std}
    runs            per (repeat, fold, seed, model) of the listed models at their main settings: model, seed,
                    fold, repeat, learning_rate (the tuned one with --tune-lr), accuracy, balanced_accuracy,
                    precision, recall, f1, log_loss, per_class_f1, confusion_matrix, epochs, best_epoch,
                    converged, train_seconds, predictions {true, predicted, p_true} in the order of the fold's
                    test windows (class indices; p_true, the probability of the true class, to 4 decimals);
                    history (per epoch: epoch, train_loss, val_loss, val_accuracy; from version 7);
                    with config.snr_db (core.lab.study.noise), also noise {accuracy, f1}: its score on its fold's
                    test windows with white noise at each SNR of config.snr_db, in that order; in a one-fold
                    study with config.test_loads, also cross_load {accuracy, f1}: its score at each test load;
                    a baseline's (spectrum-LR): learning_rate null, epochs 0, and its C
    tuning_runs     the --tune-lr trials (the first of the study's seeds, per (repeat, fold, model, rate)): model,
                    seed, repeat, fold, learning_rate, val_loss (its best), best_epoch, epochs, converged;
                    under protocol 3, val_loss and val_accuracy of the epoch it restores
    sweep_runs      the sweep's runs (core.lab.study.sweep), as runs plus the value of the swept field under its
                    name; empty without one, whose field and values are then config.sweep {field, values}
    comparisons     per comparison (core.lab.study.comparisons): a, b, metric, diff, ci95, ci90, margin, mde80, p,
                    p_holm, verdict, sentence, primary (true on exactly one), adjusted ("bonferroni" or null),
                    ci95_independent, error_rate_ratio, leave_one_fold_out (the primary's {repeat, fold, diff,
                    ci95}, else null), by_fold ({repeat, fold, name, diff, sd}); protocol 3 also variance_components
                    and ci95_resampled (version 2's interval, the conservative reading); points throughout
    decomposition   null, or B - A split: metric, embedding (B-noPE - A), encoding (B - B-noPE), total (B - A),
                    each {a, b, diff, ci95}
    order_summary   per model: the accuracy drops (points) with tokens shuffled / reversed (core.lab.probes.order);
                    every run also holds its order_test {accuracy, shuffled, reversed}
    order_gap       where the study ran spectrum-LR (core.lab.study.order_gap): the best accuracy of a model
                    that sees order minus spectrum-LR's, in points, and every model's mean accuracy
    profiles        per Transformer model, of its first seed on the first fold: attention_by_offset
                    (layer x offset key - query, -(T-1)..T-1), energy_ratio (position / token energy, or null),
                    learned_similarity_by_offset (B-learned's table, or null)

Written compact (no indent): a study of hundreds of runs stays a few hundred kB.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core.lab.contract import (
    SCHEMA_VERSION,
    check_count_matrix,
    check_fractions,
    check_history,
    check_keys,
    check_number_list,
    check_number_matrix,
    check_optional_number,
    check_order_summary,
    check_order_test,
    is_int,
    is_number,
    is_text,
    read_json,
    require,
    to_plain,
)
from core.lab.study.checks import (
    OPTIONAL_CONFIG_KEYS,
    check_comparisons,
    check_decomposition,
    check_protocol_config,
    check_run_rate,
    check_tuned_rates,
    check_tuning_runs,
)
from core.lab.study.comparisons import STUDY_METRICS
from core.lab.study.cross_load import check_cross_load
from core.lab.study.migration import MIGRATED, migrate
from core.lab.study.noise import check_noise
from core.lab.study.order_gap import check_order_gap
from core.limits import MAX_REOPENED_BYTES, MAX_TEXT_CHARS

# 2: order_test per run, order_summary, profiles; 3: config.design (was split), train.model.heads / layers;
# 4: repeats, learning_rate per run, tuning_runs, sweep_runs, the primary B vs B-noPE, decomposition;
# 5: the results JSON's version too (core.lab.contract.SCHEMA_VERSION), config.sweep (was pe_scale_sweep)
# 6: no change to a study (the results JSON's config.data.split_seed became windowing_seed)
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
    "tuning_runs",
    "sweep_runs",
    "decomposition",
)
CONFIG_KEYS = (
    "design",
    "folds",
    "repeats",
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
FOLD_KEYS = ("repeat", "fold", "name", "recording", "start", "n_train", "n_val", "n_test", "normalisation")
RUN_KEYS = (
    "model",
    "seed",
    "fold",
    "repeat",
    "learning_rate",
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
RECORDING_KEYS = ("label", "file", "load_hp")
MAX_STUDY_BYTES = MAX_REOPENED_BYTES  # the CLI reads a study within the same size as the page


PLACED = ("fold", "repeat", "learning_rate")  # what the study knows of a run that training does not
# a baseline's C; a trained run's history, its training curves (runs of studies written before version 7 have none)
KEPT_WHEN_GIVEN = ("C", "history")


def study_run(run: Mapping[str, Any], fold: int, repeat: int = 0, learning_rate: float | None = None) -> dict[str, Any]:
    """The study's record of one finished training run (core.lab.training.train's dict) of this (repeat, fold),
    trained at `learning_rate`."""
    kept = {key: run[key] for key in (*RUN_KEYS, *KEPT_WHEN_GIVEN) if key not in PLACED and key in run}
    return to_plain({**kept, "fold": fold, "repeat": repeat, "learning_rate": learning_rate})


def tuning_run(
    run: Mapping[str, Any], fold: int, repeat: int, learning_rate: float, select_by: str = "loss"
) -> dict[str, Any]:
    """The study's record of one learning-rate trial: its settings and the lowest validation loss it reached;
    under select_by "accuracy" (protocol 3), the validation accuracy and loss of the epoch it restores."""
    kept = {key: run[key] for key in ("model", "seed", "best_epoch", "epochs", "converged")}
    if select_by == "accuracy":
        restored = run["history"][run["best_epoch"] - 1]
        scores = {"val_loss": restored["val_loss"], "val_accuracy": restored["val_accuracy"]}
    else:
        scores = {"val_loss": min(row["val_loss"] for row in run["history"])}
    return to_plain({**kept, "repeat": repeat, "fold": fold, "learning_rate": learning_rate, **scores})


def check_study_version(study: Any) -> None:
    """Refuse, by its kind or its version, a file that is not a study of this contract's version."""
    require(isinstance(study, Mapping), f"top level must be an object, got {type(study).__name__}")
    version, kind = study.get("schema_version"), study.get("kind")
    if kind != "study":
        raise ValueError("invalid study JSON: it is not a PE Lab study (its 'kind' is not 'study')")
    if version != SCHEMA_VERSION:
        raise ValueError(
            f"invalid study JSON: schema_version {version!r}, but this PE Lab reads study schema_version "
            f"{SCHEMA_VERSION} (and {', '.join(map(str, MIGRATED['study']))}, migrated) only. Re-run the "
            f"study with the command in its config."
        )


def validate_study(study: Any) -> None:
    """Raise ValueError naming the first place where `study` breaks the contract."""
    try:
        _validate(study)
    except ValueError as error:  # the shared checks (core.lab.contract) speak of a results JSON
        raise ValueError(str(error).replace("invalid results JSON", "invalid study JSON", 1)) from None


def _validate(study: Any) -> None:
    check_study_version(study)
    check_keys("study", study, TOP_KEYS, optional=("order_gap",))
    _check_config(study["config"])
    names = study["class_names"]
    require(
        isinstance(names, list) and len(names) >= 2 and all(is_text(n, MAX_TEXT_CHARS) for n in names),
        f"class_names must be a list of at least two names of 1 to {MAX_TEXT_CHARS} characters",
    )
    recordings = study["recordings"]
    require(isinstance(recordings, list) and recordings, "recordings must be a non-empty list")
    for i, recording in enumerate(recordings):
        where = f"recordings[{i}]"
        check_keys(where, recording, RECORDING_KEYS)
        require(is_text(recording["label"], MAX_TEXT_CHARS), f"{where}.label must be a class name")
        require(recording["file"] is None or is_text(recording["file"], MAX_TEXT_CHARS), f"{where}.file must be a name")
        check_optional_number(f"{where}.load_hp", recording["load_hp"])
    require(isinstance(study["folds"], list) and study["folds"], "folds must be a non-empty list")
    folds: dict[tuple[int, int], int] = {}
    for i, fold in enumerate(study["folds"]):
        _check_fold(f"folds[{i}]", fold, len(recordings))
        key = (fold["repeat"], fold["fold"])
        require(key not in folds, f"folds[{i}] repeats fold {fold['fold']} of repeat {fold['repeat']}")
        folds[key] = fold["n_test"]
    require(isinstance(study["runs"], list) and study["runs"], "runs must be a non-empty list")
    for i, run in enumerate(study["runs"]):
        _check_run(f"runs[{i}]", run, len(names), folds, optional=("noise", "cross_load"))
    check_noise(study)
    check_cross_load(study)
    require(isinstance(study["sweep_runs"], list), "sweep_runs must be a list")
    field = study["config"].get("sweep", {}).get("field", "pe_scale")
    for i, run in enumerate(study["sweep_runs"]):
        _check_run(f"sweep_runs[{i}]", run, len(names), folds, optional=(field,))
        require(is_number(run.get(field)) and run[field] > 0, f"sweep_runs[{i}].{field} must be above 0")
    check_tuning_runs(study["tuning_runs"], folds)
    models = {run["model"] for run in study["runs"]}
    check_comparisons(study["comparisons"])
    check_decomposition(study["decomposition"])
    check_order_summary("order_summary", study["order_summary"], models)
    if "order_gap" in study:
        check_order_gap(study["order_gap"])
    require(isinstance(study["profiles"], dict) and set(study["profiles"]) <= models, "profiles must name models run")
    for model, profile in study["profiles"].items():
        where = f"profiles[{model!r}]"
        check_keys(where, profile, PROFILE_KEYS)
        require(is_int(profile["fold"]) and is_int(profile["seed"]), f"{where}.fold and .seed must be integers")
        check_number_matrix(f"{where}.attention_by_offset", profile["attention_by_offset"])
        check_optional_number(f"{where}.energy_ratio", profile["energy_ratio"])
        if profile["learned_similarity_by_offset"] is not None:
            check_number_list(f"{where}.learned_similarity_by_offset", profile["learned_similarity_by_offset"])


def _check_config(config: Any) -> None:
    check_keys("config", config, CONFIG_KEYS, optional=("tuned_learning_rates", "fingerprint", *OPTIONAL_CONFIG_KEYS))
    check_protocol_config(config)
    sweep = config.get("sweep", {"field": "pe_scale", "values": []})
    require(
        isinstance(sweep, dict) and set(sweep) == {"field", "values"} and is_text(sweep["field"], MAX_TEXT_CHARS),
        "config.sweep must be {field, values}",
    )
    require(
        isinstance(sweep["values"], list) and all(is_number(value) for value in sweep["values"]),
        "config.sweep.values must be a list of numbers",
    )
    fingerprint = config.get("fingerprint", {})
    require(
        isinstance(fingerprint, dict) and all(isinstance(v, str) for v in fingerprint.values()),
        "config.fingerprint must be an object of strings",
    )
    require(is_text(config["design"], MAX_TEXT_CHARS), "config.design must be the name of a design")
    for key in ("population", "command", "git_commit"):
        require(isinstance(config[key], str), f"config.{key} must be a string")
    for key in ("folds", "repeats"):
        require(is_int(config[key]) and config[key] >= 1, f"config.{key} must be a positive integer")
    check_tuned_rates(config.get("tuned_learning_rates", {}))
    for key in ("window", "stride"):
        require(is_int(config[key]) and config[key] >= 1, f"config.{key} must be a positive integer")
    require(
        isinstance(config["seeds"], list) and config["seeds"] and all(is_int(s) for s in config["seeds"]),
        "config.seeds must be a non-empty list of integers",
    )
    require(
        isinstance(config["models"], list) and config["models"] and all(is_text(m) for m in config["models"]),
        "config.models must be a non-empty list of model names",
    )
    require(is_number(config["margin"]) and config["margin"] > 0, "config.margin must be a positive number")
    require(config["metric"] in STUDY_METRICS, f"config.metric must be one of {STUDY_METRICS}")
    require(isinstance(config["data"], dict), "config.data must be an object")
    train = config["train"]
    require(isinstance(train, dict) and isinstance(train.get("model"), dict), "config.train.model must be an object")
    for key in ("d_model", "patch"):
        width = train["model"].get(key, 0)
        require(width is None or (is_int(width) and width >= 1), f"config.train.model.{key} must be null or >= 1")


def _check_fold(where: str, fold: Any, n_recordings: int) -> None:
    check_keys(where, fold, FOLD_KEYS)
    require(is_int(fold["fold"]), f"{where}.fold must be an integer")
    require(is_int(fold["repeat"]) and fold["repeat"] >= 0, f"{where}.repeat must be a non-negative integer")
    require(is_text(fold["name"], MAX_TEXT_CHARS), f"{where}.name must be a name")
    n = fold["n_test"]
    require(
        is_int(n)
        and n > 0
        and isinstance(fold["recording"], list)
        and isinstance(fold["start"], list)
        and len(fold["recording"]) == n
        and len(fold["start"]) == n,
        f"{where} must list recording and start of each of its n_test windows",
    )
    require(
        all(is_int(r) and 0 <= r < n_recordings for r in fold["recording"]),
        f"{where}.recording must index the recordings",
    )
    require(all(is_int(s) and s >= 0 for s in fold["start"]), f"{where}.start must be non-negative integers")
    for key in ("n_train", "n_val"):
        require(is_int(fold[key]) and fold[key] >= 0, f"{where}.{key} must be a non-negative integer")
    check_keys(f"{where}.normalisation", fold["normalisation"], ("mean", "std"))
    require(all(is_number(v) for v in fold["normalisation"].values()), f"{where}.normalisation must hold numbers")


def _check_run(
    where: str, run: Any, n_classes: int, folds: Mapping[tuple[int, int], int], optional: Sequence[str] = ()
) -> None:
    check_keys(where, run, RUN_KEYS, (*optional, *KEPT_WHEN_GIVEN))
    if "history" in run:
        check_history(f"{where}.history", run["history"])
    require(is_text(run["model"], MAX_TEXT_CHARS), f"{where}.model must be a model name")
    check_run_rate(where, run)
    require(is_int(run["seed"]), f"{where}.seed must be an integer")
    require(is_int(run["repeat"]), f"{where}.repeat must be an integer")
    require(is_int(run["fold"]) and (run["repeat"], run["fold"]) in folds, f"{where}.fold must name a fold")
    for key in ("accuracy", "balanced_accuracy", "precision", "recall", "f1"):
        require(is_number(run[key]) and 0 <= run[key] <= 1, f"{where}.{key} must be a fraction in 0..1")
    require(is_number(run["log_loss"]) and run["log_loss"] >= 0, f"{where}.log_loss must be a non-negative number")
    check_fractions(f"{where}.per_class_f1", run["per_class_f1"], n_classes)
    check_count_matrix(f"{where}.confusion_matrix", run["confusion_matrix"], n_classes)
    require(is_int(run["epochs"]) and run["epochs"] >= 0, f"{where}.epochs must be a non-negative integer")
    require(isinstance(run["converged"], bool), f"{where}.converged must be true or false")
    require(is_int(run["best_epoch"]) and 0 <= run["best_epoch"] <= run["epochs"], f"{where}.best_epoch out of range")
    require(
        is_number(run["train_seconds"]) and run["train_seconds"] >= 0, f"{where}.train_seconds must be >= 0 seconds"
    )
    check_order_test(f"{where}.order_test", run["order_test"])
    predictions = run["predictions"]
    check_keys(f"{where}.predictions", predictions, PREDICTION_KEYS)
    n = folds[(run["repeat"], run["fold"])]
    for key in PREDICTION_KEYS:
        require(
            isinstance(predictions[key], list) and len(predictions[key]) == n,
            f"{where}.predictions.{key} must hold one value per test window ({n})",
        )
    require(
        all(is_int(c) and 0 <= c < n_classes for key in ("true", "predicted") for c in predictions[key]),
        f"{where}.predictions must be class indices",
    )
    require(
        all(is_number(p) and 0 <= p <= 1 for p in predictions["p_true"]),
        f"{where}.predictions.p_true must be fractions",
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
    foreign or oversized file (compressed, the limit applies to what it expands to; core.lab.contract.read_json)."""
    study = migrate(read_json(text.encode("utf-8") if isinstance(text, str) else text, MAX_STUDY_BYTES))
    validate_study(study)
    return study


def load_study(path: str | Path) -> dict[str, Any]:
    """A study JSON from a file (plain or .gz), migrated from the previous version when it is one, and checked."""
    return read_study(Path(path).read_bytes())
