"""The checks of a comparison (a study's and an experiment's alike) and of what version 4 of the study JSON added
(core.lab.study.contract calls them): the learning rates, the --tune-lr trials and the decomposition; and
protocol 3's fields (its version, the load roles, a baseline's runs). Each raises ValueError naming the first
place that breaks the contract. `recount_mismatches` lists the stored scores that do not recount from the
per-window predictions (the shipped files' tests require none)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from core.lab.contract import check_interval, check_keys, check_optional_number, is_int, is_number, is_text, require
from core.lab.models import BASELINE_MODELS
from core.lab.names import ONE_FOLD
from core.lab.stats.words import VERDICTS
from core.lab.study.comparisons import COMPARED_METRICS, COMPARISON_KEYS, OPTIONAL_COMPARISON_KEYS

TUNING_KEYS = ("model", "seed", "repeat", "fold", "learning_rate", "val_loss", "best_epoch", "epochs", "converged")
OPTIONAL_CONFIG_KEYS = ("sweep", "protocol_version", "train_loads", "test_loads", "tune_epochs", "cutting", "snr_db")
CUTTING_KEYS = ("shares", "windowing", "windowing_seed")  # a one-fold study's cut: make_windows' keywords
LEAVE_ONE_OUT_KEYS = ("repeat", "fold", "diff", "ci95")
BY_FOLD_KEYS = ("repeat", "fold", "name", "diff", "sd")
PART_KEYS = ("a", "b", "diff", "ci95")
DECOMPOSITION_KEYS = ("metric", "embedding", "encoding", "total")


def check_rate(where: str, rate: Any) -> None:
    """A learning rate: a positive number."""
    require(is_number(rate) and rate > 0, f"{where} must be a positive number")


def check_tuned_rates(tuned: Any) -> None:
    """config.tuned_learning_rates: {repeat: {fold: {model: rate}}}, repeats and folds as decimal strings."""
    require(isinstance(tuned, dict), "config.tuned_learning_rates must be an object")
    for repeat, folds in tuned.items():
        require(
            repeat.isdigit() and isinstance(folds, dict), "config.tuned_learning_rates must be {repeat: {fold: ...}}"
        )
        for fold, rates in folds.items():
            where = f"config.tuned_learning_rates[{repeat}][{fold}]"
            require(fold.isdigit() and isinstance(rates, dict), f"{where} must be {{model: rate}}")
            for model, rate in rates.items():
                check_rate(f"{where}[{model!r}]", rate)


def check_tuning_runs(runs: Any, folds: Mapping[tuple[int, int], int]) -> None:
    """tuning_runs: per trial its model, seed, (repeat, fold) of the study, rate, best validation loss, epochs."""
    require(isinstance(runs, list), "tuning_runs must be a list")
    for i, run in enumerate(runs):
        where = f"tuning_runs[{i}]"
        check_keys(where, run, TUNING_KEYS, optional=("val_accuracy",))
        require(is_text(run["model"]), f"{where}.model must be a model name")
        require(all(is_int(run[key]) for key in ("seed", "repeat", "fold")), f"{where}.seed, .repeat, .fold: integers")
        require((run["repeat"], run["fold"]) in folds, f"{where}.repeat and .fold must name a fold")
        check_rate(f"{where}.learning_rate", run["learning_rate"])
        require(is_number(run["val_loss"]) and run["val_loss"] >= 0, f"{where}.val_loss must be a number >= 0")
        require(is_int(run["epochs"]) and run["epochs"] >= 0, f"{where}.epochs must be a non-negative integer")
        require(
            is_int(run["best_epoch"]) and 0 <= run["best_epoch"] <= run["epochs"], f"{where}.best_epoch out of range"
        )
        require(isinstance(run["converged"], bool), f"{where}.converged must be true or false")
        accuracy = run.get("val_accuracy", 0)
        require(is_number(accuracy) and 0 <= accuracy <= 1, f"{where}.val_accuracy must be a fraction in 0..1")


def check_protocol_config(config: Mapping[str, Any]) -> None:
    """config.protocol_version (2 or 3; absent: 2), a load-out or one-fold study's train_loads / test_loads, and a
    one-fold study's cutting (config.cutting, there and only there)."""
    require(config.get("protocol_version", 2) in (2, 3), "config.protocol_version must be 2 or 3")
    for key in ("train_loads", "test_loads"):
        loads = config.get(key)
        require(
            loads is None or (isinstance(loads, list) and loads and all(is_int(load) for load in loads)),
            f"config.{key} must be null or a non-empty list of loads",
        )
    require(("cutting" in config) == (config.get("design") == ONE_FOLD), "config.cutting belongs to a one-fold study")
    if "cutting" in config:
        cut = config["cutting"]
        check_keys("config.cutting", cut, CUTTING_KEYS)
        shares = cut["shares"]
        require(
            isinstance(shares, list) and len(shares) == 3 and all(is_number(x) and x > 0 for x in shares),
            "config.cutting.shares must be three positive numbers",
        )
        require(cut["windowing"] in ("time", "random"), "config.cutting.windowing must be time or random")
        require(is_int(cut["windowing_seed"]), "config.cutting.windowing_seed must be an integer")


def check_run_rate(where: str, run: Mapping[str, Any]) -> None:
    """A run's learning rate; a baseline's run (spectrum-LR) has none and no epochs, and its C is positive."""
    if run["model"] not in BASELINE_MODELS:
        check_rate(f"{where}.learning_rate", run["learning_rate"])
        require("C" not in run, f"{where}.C belongs to a baseline's run only")
        return
    require(run["learning_rate"] is None, f"{where}.learning_rate must be null: {run['model']} has none")
    require(run["epochs"] == 0 and run["best_epoch"] == 0, f"{where}: {run['model']} trains no epochs")
    require(is_number(run.get("C", 1)) and run.get("C", 1) > 0, f"{where}.C must be a positive number")


def _check_diff_and_interval(where: str, row: Any) -> None:
    require(is_number(row["diff"]), f"{where}.diff must be a number")
    check_interval(f"{where}.ci95", row["ci95"])
    ci = row["ci95"]
    require(ci is None or ci[0] <= row["diff"] <= ci[1], f"{where}.ci95 must be [low, high] around diff")


def check_comparisons(comparisons: Any) -> None:
    """The comparisons of a study or an experiment (core.lab.study.comparisons.compare): each checked, and
    exactly one primary when there is any."""
    require(isinstance(comparisons, list), "comparisons must be a list")
    for i, comparison in enumerate(comparisons):
        check_comparison(f"comparisons[{i}]", comparison)
    primaries = sum(comparison["primary"] for comparison in comparisons)
    require(not comparisons or primaries == 1, f"exactly one comparison must be primary, got {primaries}")


def check_comparison(where: str, comparison: Any) -> None:
    """One comparison: its keys, models, metric, verdict, numbers and sentence; then what version 4 added."""
    check_keys(where, comparison, COMPARISON_KEYS, OPTIONAL_COMPARISON_KEYS)
    require(is_text(comparison["a"]) and is_text(comparison["b"]), f"{where}.a and .b must be model names")
    require(comparison["metric"] in COMPARED_METRICS, f"{where}.metric must be one of {COMPARED_METRICS}")
    require(comparison["verdict"] in VERDICTS, f"{where}.verdict must be one of {VERDICTS}")
    require(is_number(comparison["diff"]), f"{where}.diff must be a number")
    require(is_number(comparison["margin"]) and comparison["margin"] > 0, f"{where}.margin must be positive")
    for key in ("mde80", "p", "p_holm"):
        check_optional_number(f"{where}.{key}", comparison[key])
    for key in ("ci95", "ci90"):
        ci = comparison[key]
        check_interval(f"{where}.{key}", ci)
        require(ci is None or ci[0] <= comparison["diff"] <= ci[1], f"{where}.{key} must be [low, high] around diff")
    require(is_text(comparison["sentence"]), f"{where}.sentence is empty")
    _check_comparison_v4(where, comparison)


def _check_comparison_v4(where: str, comparison: Mapping[str, Any]) -> None:
    require(isinstance(comparison["primary"], bool), f"{where}.primary must be true or false")
    require(comparison["adjusted"] in (None, "bonferroni"), f"{where}.adjusted must be null or 'bonferroni'")
    require(not (comparison["primary"] and comparison["adjusted"]), f"{where}: the primary is never adjusted")
    ci = comparison["ci95_independent"]
    check_interval(f"{where}.ci95_independent", ci)
    require(ci is None or ci[0] <= comparison["diff"] <= ci[1], f"{where}.ci95_independent must lie around diff")
    check_interval(f"{where}.ci95_resampled", comparison.get("ci95_resampled"))  # protocol 3's optional key
    check_optional_number(f"{where}.error_rate_ratio", comparison["error_rate_ratio"])
    ratio = comparison["error_rate_ratio"]
    require(ratio is None or ratio >= 0, f"{where}.error_rate_ratio must be >= 0")
    table = comparison["leave_one_fold_out"]
    require(table is None or isinstance(table, list), f"{where}.leave_one_fold_out must be null or a list")
    for i, row in enumerate(table or []):
        check_keys(f"{where}.leave_one_fold_out[{i}]", row, LEAVE_ONE_OUT_KEYS)
        require(is_int(row["repeat"]) and is_int(row["fold"]), f"{where}.leave_one_fold_out[{i}]: integer keys")
        if row["diff"] is not None:
            _check_diff_and_interval(f"{where}.leave_one_fold_out[{i}]", row)
    rows = comparison["by_fold"]
    require(rows is None or isinstance(rows, list), f"{where}.by_fold must be null or a list")
    for i, row in enumerate(rows or []):
        at = f"{where}.by_fold[{i}]"
        check_keys(at, row, BY_FOLD_KEYS)
        require(is_int(row["repeat"]) and is_int(row["fold"]) and is_text(row["name"]), f"{at}: repeat, fold, name")
        require(is_number(row["diff"]), f"{at}.diff must be a number")
        check_optional_number(f"{at}.sd", row["sd"])


def check_decomposition(decomposition: Any) -> None:
    """null, or {metric, embedding, encoding, total}, each part {a, b, diff, ci95}."""
    if decomposition is None:
        return
    check_keys("decomposition", decomposition, DECOMPOSITION_KEYS)
    require(is_text(decomposition["metric"]), "decomposition.metric must be a metric name")
    for part in DECOMPOSITION_KEYS[1:]:
        where = f"decomposition.{part}"
        check_keys(where, decomposition[part], PART_KEYS)
        require(is_text(decomposition[part]["a"]) and is_text(decomposition[part]["b"]), f"{where}: model names")
        _check_diff_and_interval(where, decomposition[part])


def recount_mismatches(study: Mapping[str, Any]) -> list[str]:
    """The runs (and sweep runs) whose stored accuracy, balanced accuracy or confusion matrix do not recount
    exactly from their per-window predictions, as "runs[i] (B seed 0, repeat 0, fold 1): accuracy"; empty when
    every number recounts. The same arithmetic the scores were made with (core.lab.scores), so equality is exact."""
    problems = []
    for part in ("runs", "sweep_runs"):
        for i, run in enumerate(study.get(part, [])):
            true, predicted = (np.asarray(run["predictions"][key]) for key in ("true", "predicted"))
            n_classes = len(run["confusion_matrix"])
            counts = np.zeros((n_classes, n_classes), dtype=int)
            np.add.at(counts, (true, predicted), 1)
            recalls = [float(np.mean(predicted[true == label] == label)) for label in np.unique(true)]
            recounted = {
                "accuracy": float(np.mean(true == predicted)),
                "balanced_accuracy": float(np.mean(recalls)),
                "confusion_matrix": counts.tolist(),
            }
            where = f"{part}[{i}] ({run['model']} seed {run['seed']}, repeat {run['repeat']}, fold {run['fold']})"
            problems += [f"{where}: {key}" for key, value in recounted.items() if run[key] != value]
    return problems
