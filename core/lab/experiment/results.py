"""The results JSON of a Fault-lab experiment: the contract, how it is built, and how it is checked.

One function writes it (`build_results`) and one checks it (`validate_results`); the CLI, the page's
downloads and the tests all go through them. An older file is read through core.lab.study.migration.migrate
first. An experiment is a study with one fold, and its JSON shares the study's schema_version. Layout:

    schema_version  core.lab.contract.SCHEMA_VERSION, the study JSON's too; bumped by every change of either
    kind          "results"
    config        every setting of the experiment (dict): models, seeds, metric, device, train (the
                  TrainConfig; train.model.heads and .layers), data (core.lab.data_spec.DataSpec.to_dict() plus
                  how the windows were cut: window, stride, windowing "time" or "random", shares, windowing_seed),
                  evaluations (every registered evaluation setting, its default when off)
    class_names   the labels, in the order of the confusion-matrix rows
    runs          one per model and seed: model, seed, accuracy, precision, recall, f1 (macro, fractions
                  in 0..1), per_class_f1, confusion_matrix (rows true, columns predicted), epochs,
                  train_seconds, windows_per_second, device, history (per epoch: epoch, train_loss,
                  val_loss, val_accuracy)
    summary       summary[model][metric] = {"mean", "sd", "n"} over seeds, sd with ddof = 1 (None if n < 2)
    comparisons   the comparisons a study of these runs would make (core.lab.study.comparisons.compare, on the
                  experiment as a study with one fold: B against B-noPE primary when both ran, each other pair
                  Bonferroni-adjusted, each model no pair names against A), each with its sentence; in points,
                  the interval over seeds (t on n - 1 degrees of freedom; only the seeds every model finished)
    verdict       one paragraph (core.lab.report.verdict): the comparisons' sentences, the primary first, and
                  what one test window is worth
    order_summary per model: runs, accuracy and the accuracy drops (points) with the tokens shuffled and
                  reversed (core.lab.probes.order), mean ± sd and a 95 % CI; each run holds its order_test

Optional top-level blocks, one per evaluation the experiment asked for (core.lab.evaluations: each module
documents and validates its own block). A "cell" is {"mean", "sd", "n", "values"}: a fraction summarised
over seeds as in `summary`, plus the per-seed values in the order of config["seeds"].
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core.lab import evaluations
from core.lab.contract import (
    METRICS,
    RUN_KEYS,
    SCHEMA_VERSION,
    check_count_matrix,
    check_fractions,
    check_history,
    check_keys,
    check_order_summary,
    check_order_test,
    is_int,
    is_number,
    require,
    to_plain,
)
from core.lab.probes.order import order_summary
from core.lab.report import verdict
from core.lab.stats.summary import DEFAULT_MARGIN, count_test_windows, mean_sd
from core.lab.stats.words import windows_words
from core.lab.study.checks import check_comparisons
from core.lab.study.comparisons import one_fold_comparisons
from core.lab.study.migration import MIGRATED, migrate

TOP_KEYS = (
    "schema_version",
    "kind",
    "config",
    "class_names",
    "runs",
    "summary",
    "comparisons",
    "verdict",
    "order_summary",
)
SUMMARY_KEYS = ("mean", "sd", "n")
__all__ = ["METRICS", "RUN_KEYS", "SCHEMA_VERSION", "TOP_KEYS", "build_results", "validate_results"]


def summarise(runs: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """summary[model][metric] = {"mean", "sd", "n"} over the seeds of each model, models in run order."""
    by_model: dict[str, list[Mapping[str, Any]]] = {}
    for run in runs:
        by_model.setdefault(run["model"], []).append(run)
    return {
        model: {metric: mean_sd([run[metric] for run in model_runs]) for metric in METRICS}
        for model, model_runs in by_model.items()
    }


def build_results(
    config: Mapping[str, Any],
    class_names: Sequence[str],
    runs: Sequence[Mapping[str, Any]],
    metric: str = "accuracy",
    evaluations: Mapping[str, Any] | None = None,
    margin: float = DEFAULT_MARGIN,
) -> dict[str, Any]:
    """The results JSON (see the module docstring) from finished runs, plus the optional blocks of the
    evaluations (keys among the registered evaluations); validated before it is returned."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    pairs = [(run["model"], int(run["seed"])) for run in runs]
    duplicates = sorted({p for p in pairs if pairs.count(p) > 1})
    if duplicates:
        raise ValueError(f"each model and seed may appear once in runs; repeated: {duplicates}")
    runs = [{key: to_plain(run[key]) for key in RUN_KEYS} for run in runs]
    n_test = count_test_windows(runs)
    comparisons = to_plain(one_fold_comparisons(runs, windows_words(n_test), metric, margin))
    results = {
        "schema_version": SCHEMA_VERSION,
        "kind": "results",
        "config": to_plain(dict(config)),
        "class_names": [str(name) for name in class_names],
        "runs": runs,
        "summary": summarise(runs),
        "comparisons": comparisons,
        "verdict": verdict(comparisons, n_test, [run["model"] for run in runs]),
        "order_summary": order_summary(runs),
    }
    unknown = sorted(set(evaluations or {}) - set(_block_keys()))
    if unknown:
        raise ValueError(f"unknown evaluation blocks {unknown}; known: {_block_keys()}")
    results.update({key: to_plain(block) for key, block in (evaluations or {}).items()})
    validate_results(results)
    return results


def _block_keys() -> tuple[str, ...]:
    return evaluations.block_keys()


# --- validation ------------------------------------------------------------------------------------


def check_schema_version(results: Any) -> None:
    """Refuse, by name, a results JSON written under another version of this contract."""
    require(isinstance(results, Mapping), f"top level must be an object, got {type(results).__name__}")
    version = results.get("schema_version")
    if version is None:
        raise ValueError(
            f"invalid results JSON: it has no schema_version (it predates versioned results, or is not a PE Lab "
            f"results file); this PE Lab reads schema_version {SCHEMA_VERSION}. Re-run the experiment to get one."
        )
    if version == SCHEMA_VERSION and results.get("kind") != "results":
        raise ValueError(f'invalid results JSON: its kind is {results.get("kind")!r}, not "results"')
    if version != SCHEMA_VERSION:
        older = ", ".join(map(str, MIGRATED["results"]))
        raise ValueError(
            f"invalid results JSON: schema_version {version!r}, but this PE Lab reads schema_version "
            f"{SCHEMA_VERSION} (and {older}, migrated) only. Re-run the experiment with the command "
            f"recorded in its config."
        )


def _check_run(where: str, run: Any, n_classes: int) -> None:
    check_keys(where, run, RUN_KEYS)
    require(isinstance(run["model"], str) and run["model"], f"{where}.model must be a model name")
    require(is_int(run["seed"]), f"{where}.seed must be an integer")
    for metric in METRICS:
        require(is_number(run[metric]) and 0 <= run[metric] <= 1, f"{where}.{metric} must be a fraction in 0..1")
    check_fractions(f"{where}.per_class_f1", run["per_class_f1"], n_classes)
    check_count_matrix(f"{where}.confusion_matrix", run["confusion_matrix"], n_classes)
    require(is_int(run["epochs"]) and run["epochs"] >= 0, f"{where}.epochs must be a non-negative integer")
    require(is_int(run["best_epoch"]) and 0 <= run["best_epoch"] <= run["epochs"], f"{where}.best_epoch out of range")
    require(isinstance(run["converged"], bool), f"{where}.converged must be true or false")
    for key in ("train_seconds", "windows_per_second"):
        require(is_number(run[key]) and run[key] >= 0, f"{where}.{key} must be a non-negative number")
    require(isinstance(run["device"], str), f"{where}.device must be a string")
    check_history(f"{where}.history", run["history"])
    check_order_test(f"{where}.order_test", run["order_test"])


def validate_results(results: Any) -> None:
    """Raise ValueError naming the first place where `results` breaks the contract."""
    check_schema_version(results)
    check_keys("top level", results, TOP_KEYS, _block_keys())
    require(isinstance(results["config"], Mapping), "config must be an object")
    names = results["class_names"]
    require(
        isinstance(names, list) and len(names) >= 2 and all(isinstance(n, str) for n in names),
        "class_names must be a list of at least two strings",
    )
    runs = results["runs"]
    require(isinstance(runs, list), "runs must be a list")
    for i, run in enumerate(runs):
        _check_run(f"runs[{i}]", run, len(names))

    summary = results["summary"]
    require(isinstance(summary, Mapping), "summary must be an object")
    run_models = {run["model"] for run in runs}
    require(set(summary) == run_models, f"summary models {sorted(summary)} differ from run models {sorted(run_models)}")
    for model, by_metric in summary.items():
        check_keys(f"summary[{model!r}]", by_metric, METRICS)
        for metric, cell in by_metric.items():
            where = f"summary[{model!r}][{metric!r}]"
            check_keys(where, cell, SUMMARY_KEYS)
            require(is_int(cell["n"]) and cell["n"] >= 1, f"{where}.n must be a positive integer")
            for key in ("mean", "sd"):  # fractions in 0..1 (a spread of fractions too); sd is null for one seed
                value = cell[key]
                require(
                    (value is None and key == "sd") or (is_number(value) and 0 <= value <= 1),
                    f"{where}.{key} must be a fraction in 0..1" + (" or null" if key == "sd" else ""),
                )

    check_comparisons(results["comparisons"])
    compared = {model for comparison in results["comparisons"] for model in (comparison["a"], comparison["b"])}
    require(compared <= run_models, f"comparisons name models that did not run: {sorted(compared - run_models)}")
    require(isinstance(results["verdict"], str) and results["verdict"], "verdict must be a non-empty string")
    check_order_summary("order_summary", results["order_summary"], run_models)
    evaluations.validate_blocks(results)


def save_results(results: Mapping[str, Any], path: str | Path) -> Path:
    """Validate, then write indented JSON (strict: NaN is refused, not written)."""
    validate_results(results)
    path = Path(path)
    path.write_text(json.dumps(results, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return path


def load_results(path: str | Path) -> dict[str, Any]:
    """A results JSON from a file, migrated from an earlier version when it is one, and checked."""
    results = migrate(json.loads(Path(path).read_text(encoding="utf-8")))
    validate_results(results)
    return results
