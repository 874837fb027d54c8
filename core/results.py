"""The results JSON of a Fault-lab experiment (a contract) and the verdict drawn from it.

One function writes the JSON (`build_results`) and one checks it (`validate_results`); the CLI, the page's
downloads and the tests all go through them. Layout:

    config        every setting of the experiment (dict)
    class_names   the labels, in the order of the confusion-matrix rows
    runs          one per model and seed: model, seed, accuracy, precision, recall, f1 (macro, fractions
                  in 0..1), per_class_f1, confusion_matrix (rows true, columns predicted), epochs,
                  train_seconds, windows_per_second, device, history (per epoch: epoch, train_loss,
                  val_loss, val_accuracy)
    summary       summary[model][metric] = {"mean", "sd", "n"} over seeds, sd with ddof = 1 (None if n < 2)
    paired        paired[model] = {"metric", "diff_mean", "diff_sd", "n", "ci95"}: model minus the reference
                  model A on the same seeds, with a t-interval on n - 1 degrees of freedom (None if n < 2)
    verdict       one paragraph: each model against A, "better", "worse" or "within the spread" only as
                  the interval allows, and what one test window is worth

Optional top-level blocks, present when the experiment asked for the evaluation (core.evaluation), checked
when present. A "cell" is {"mean", "sd", "n", "values"}: a fraction summarised over seeds as in `summary`,
plus the per-seed values in the order of config["seeds"]. Lists run along the named axis of their block.

    cross_load        train_loads [int] (rows), test_loads [int] (columns), classes [str] (the classes
                      recorded at every train and test load; equal to class_names), dropped_classes [str],
                      test_windows [int] per test load, method (text), and accuracy / f1:
                      {model: [[cell per test load] per train load]}
    noise             snr_db [number] (dB), definition (text), accuracy / f1: {model: [cell per SNR]}
    split_comparison  modes ["time", "random"] in either order, the experiment's own split first;
                      accuracy / f1: {model: [cell per mode]}; leak: {model: paired} as in `paired`,
                      random-split minus time-split accuracy on the same seeds
    d_model_sweep     d_models [int], models [str] (the embedding models), accuracy / f1:
                      {model: [cell per d_model]}, n_parameters: {model: [int per d_model]}; the
                      experiment itself (runs, summary) is the first d_model

Seeds share the data split, so the differences are paired: the seed-to-seed spread that every model shares
cancels, and the interval is about the model, not about the luck of the initialisation.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

METRICS = ("accuracy", "precision", "recall", "f1")
REFERENCE_MODEL = "A"
TOP_KEYS = ("config", "class_names", "runs", "summary", "paired", "verdict")
OPTIONAL_KEYS = ("cross_load", "noise", "split_comparison", "d_model_sweep")
CELL_KEYS = ("mean", "sd", "n", "values")
BLOCK_METRICS = ("accuracy", "f1")  # the metrics the optional blocks record
RUN_KEYS = (
    "model",
    "seed",
    "accuracy",
    "precision",
    "recall",
    "f1",
    "per_class_f1",
    "confusion_matrix",
    "epochs",
    "train_seconds",
    "windows_per_second",
    "device",
    "history",
)
HISTORY_KEYS = ("epoch", "train_loss", "val_loss", "val_accuracy")
SUMMARY_KEYS = ("mean", "sd", "n")
PAIRED_KEYS = ("metric", "diff_mean", "diff_sd", "n", "ci95")


def _plain(value: Any) -> Any:
    """numpy scalars and arrays -> JSON-ready Python values."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def mean_sd(values: Sequence[float]) -> dict[str, Any]:
    """{"mean", "sd", "n"}; sd uses ddof = 1 and is None for a single value (no spread to measure)."""
    values = np.asarray(values, dtype=np.float64)
    n = int(values.size)
    return {
        "mean": float(values.mean()) if n else None,
        "sd": float(values.std(ddof=1)) if n >= 2 else None,
        "n": n,
    }


def summarise(runs: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """summary[model][metric] = {"mean", "sd", "n"} over the seeds of each model, models in run order."""
    by_model: dict[str, list[Mapping[str, Any]]] = {}
    for run in runs:
        by_model.setdefault(run["model"], []).append(run)
    return {
        model: {metric: mean_sd([run[metric] for run in model_runs]) for metric in METRICS}
        for model, model_runs in by_model.items()
    }


def t_interval(differences: Sequence[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """The t-interval for the mean of paired differences, on n - 1 degrees of freedom (None for n < 2)."""
    differences = np.asarray(differences, dtype=np.float64)
    n = differences.size
    if n < 2:
        return None
    mean = differences.mean()
    half_width = stats.t.ppf(0.5 + confidence / 2, n - 1) * differences.std(ddof=1) / math.sqrt(n)
    return float(mean - half_width), float(mean + half_width)


def paired_differences(
    runs: Sequence[Mapping[str, Any]], metric: str = "accuracy", reference: str = REFERENCE_MODEL
) -> dict[str, dict[str, Any]]:
    """paired[model]: `metric` of model minus that of `reference` on each seed both ran."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    scores: dict[str, dict[int, float]] = {}
    for run in runs:
        scores.setdefault(run["model"], {})[int(run["seed"])] = float(run[metric])
    if reference not in scores:
        return {}
    paired = {}
    for model, by_seed in scores.items():
        if model == reference:
            continue
        seeds = sorted(set(by_seed) & set(scores[reference]))
        differences = [by_seed[s] - scores[reference][s] for s in seeds]
        spread = mean_sd(differences)
        interval = t_interval(differences)
        paired[model] = {
            "metric": metric,
            "diff_mean": spread["mean"],
            "diff_sd": spread["sd"],
            "n": spread["n"],
            "ci95": list(interval) if interval is not None else None,
        }
    return paired


def comparison_word(ci95: Sequence[float] | None) -> str | None:
    """"better", "worse" or "within the spread", as far as the interval reaches; None without an interval."""
    if ci95 is None:
        return None
    low, high = ci95
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    return "within the spread"


def _points(fraction: float) -> str:
    return f"{100 * fraction:+.1f}"


def count_test_windows(runs: Sequence[Mapping[str, Any]]) -> int | None:
    """Test windows per run, read from the confusion matrices (they agree when runs share a split)."""
    sizes = {int(np.sum(run["confusion_matrix"])) for run in runs}
    return max(sizes) if sizes else None


def verdict(
    paired: Mapping[str, Mapping[str, Any]],
    n_test: int | None,
    models: Sequence[str] = (),
    reference: str = REFERENCE_MODEL,
) -> str:
    """The sentence a reader takes away: each model against the reference, no stronger than its interval."""
    sentences = []
    if not paired:
        missing = reference not in models
        sentences.append(
            f"No comparison: model {reference} was not run." if missing else "No other model to compare with A."
        )
    for model, pair in paired.items():
        metric = pair["metric"]
        word = comparison_word(pair["ci95"])
        if pair["n"] == 0:
            sentences.append(f"{model} shares no seed with {reference}, so they cannot be paired.")
        elif word is None:
            sentences.append(
                f"{model} vs {reference}: {metric} {_points(pair['diff_mean'])} points on a single seed; "
                f"no interval from one seed, run at least two to judge."
            )
        else:
            low, high = pair["ci95"]
            relation = f"within the spread of {reference}" if word == "within the spread" else f"{word} than {reference}"
            sentences.append(
                f"{model} is {relation}: {metric} {_points(pair['diff_mean'])} points "
                f"(95 % CI {_points(low)} to {_points(high)}, {pair['n']} paired seeds)."
            )
    if n_test:
        sentences.append(
            f"The test set has {n_test} windows, so one window is {100 / n_test:.2f} points of accuracy."
        )
    return " ".join(sentences)


def build_results(
    config: Mapping[str, Any],
    class_names: Sequence[str],
    runs: Sequence[Mapping[str, Any]],
    metric: str = "accuracy",
    evaluations: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The results JSON (see the module docstring) from finished runs, plus the optional `evaluations`
    blocks (keys among OPTIONAL_KEYS); validated before it is returned."""
    pairs = [(run["model"], int(run["seed"])) for run in runs]
    duplicates = sorted({p for p in pairs if pairs.count(p) > 1})
    if duplicates:
        raise ValueError(f"each model and seed may appear once in runs; repeated: {duplicates}")
    runs = [{key: _plain(run[key]) for key in RUN_KEYS} for run in runs]
    paired = paired_differences(runs, metric)
    results = {
        "config": _plain(dict(config)),
        "class_names": [str(name) for name in class_names],
        "runs": runs,
        "summary": summarise(runs),
        "paired": paired,
        "verdict": verdict(paired, count_test_windows(runs), [run["model"] for run in runs]),
    }
    unknown = sorted(set(evaluations or {}) - set(OPTIONAL_KEYS))
    if unknown:
        raise ValueError(f"unknown evaluation blocks {unknown}; known: {OPTIONAL_KEYS}")
    results.update({key: _plain(block) for key, block in (evaluations or {}).items()})
    validate_results(results)
    return results


# --- validation ------------------------------------------------------------------------------------


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(f"invalid results JSON: {message}")


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _check_keys(where: str, mapping: Any, keys: Sequence[str], optional: Sequence[str] = ()) -> None:
    _require(isinstance(mapping, Mapping), f"{where} must be an object, got {type(mapping).__name__}")
    missing, extra = set(keys) - set(mapping), set(mapping) - set(keys) - set(optional)
    _require(not missing and not extra, f"{where} keys: missing {sorted(missing)}, unexpected {sorted(extra)}")


def _check_run(where: str, run: Any, n_classes: int) -> None:
    _check_keys(where, run, RUN_KEYS)
    _require(isinstance(run["model"], str) and run["model"], f"{where}.model must be a model name")
    _require(_is_int(run["seed"]), f"{where}.seed must be an integer")
    for metric in METRICS:
        _require(_is_number(run[metric]) and 0 <= run[metric] <= 1, f"{where}.{metric} must be a fraction in 0..1")
    f1s = run["per_class_f1"]
    _require(
        isinstance(f1s, list) and len(f1s) == n_classes and all(_is_number(v) and 0 <= v <= 1 for v in f1s),
        f"{where}.per_class_f1 must be {n_classes} fractions, one per class",
    )
    matrix = run["confusion_matrix"]
    _require(
        isinstance(matrix, list)
        and len(matrix) == n_classes
        and all(isinstance(row, list) and len(row) == n_classes for row in matrix)
        and all(_is_int(v) and v >= 0 for row in matrix for v in row),
        f"{where}.confusion_matrix must be {n_classes} x {n_classes} non-negative integers",
    )
    _require(_is_int(run["epochs"]) and run["epochs"] >= 0, f"{where}.epochs must be a non-negative integer")
    for key in ("train_seconds", "windows_per_second"):
        _require(_is_number(run[key]) and run[key] >= 0, f"{where}.{key} must be a non-negative number")
    _require(isinstance(run["device"], str), f"{where}.device must be a string")
    _require(isinstance(run["history"], list), f"{where}.history must be a list")
    for i, epoch in enumerate(run["history"]):
        _check_keys(f"{where}.history[{i}]", epoch, HISTORY_KEYS)
        _require(_is_int(epoch["epoch"]), f"{where}.history[{i}].epoch must be an integer")
        for key in HISTORY_KEYS[1:]:
            _require(_is_number(epoch[key]), f"{where}.history[{i}].{key} must be a finite number")


def _check_optional_number(where: str, value: Any) -> None:
    _require(value is None or _is_number(value), f"{where} must be a finite number or null")


def validate_results(results: Any) -> None:
    """Raise ValueError naming the first place where `results` breaks the contract."""
    _check_keys("top level", results, TOP_KEYS, OPTIONAL_KEYS)
    _require(isinstance(results["config"], Mapping), "config must be an object")
    names = results["class_names"]
    _require(
        isinstance(names, list) and len(names) >= 2 and all(isinstance(n, str) for n in names),
        "class_names must be a list of at least two strings",
    )
    runs = results["runs"]
    _require(isinstance(runs, list), "runs must be a list")
    for i, run in enumerate(runs):
        _check_run(f"runs[{i}]", run, len(names))

    summary = results["summary"]
    _require(isinstance(summary, Mapping), "summary must be an object")
    run_models = {run["model"] for run in runs}
    _require(set(summary) == run_models, f"summary models {sorted(summary)} differ from run models {sorted(run_models)}")
    for model, by_metric in summary.items():
        _check_keys(f"summary[{model!r}]", by_metric, METRICS)
        for metric, cell in by_metric.items():
            where = f"summary[{model!r}][{metric!r}]"
            _check_keys(where, cell, SUMMARY_KEYS)
            _require(_is_int(cell["n"]) and cell["n"] >= 1, f"{where}.n must be a positive integer")
            _check_optional_number(f"{where}.mean", cell["mean"])
            _check_optional_number(f"{where}.sd", cell["sd"])

    paired = results["paired"]
    _require(isinstance(paired, Mapping), "paired must be an object")
    for model, pair in paired.items():
        where = f"paired[{model!r}]"
        _check_pair(where, pair)
        _require(model in run_models and model != REFERENCE_MODEL, f"{where} must name a run model other than A")
    _require(isinstance(results["verdict"], str) and results["verdict"], "verdict must be a non-empty string")

    checks = {
        "cross_load": _check_cross_load,
        "noise": _check_noise,
        "split_comparison": _check_split_comparison,
        "d_model_sweep": _check_d_model_sweep,
    }
    for key, check in checks.items():
        if key in results:
            check(results[key], results)


def _check_pair(where: str, pair: Any) -> None:
    _check_keys(where, pair, PAIRED_KEYS)
    _require(pair["metric"] in METRICS, f"{where}.metric must be one of {METRICS}")
    _require(_is_int(pair["n"]) and pair["n"] >= 0, f"{where}.n must be a non-negative integer")
    _check_optional_number(f"{where}.diff_mean", pair["diff_mean"])
    _check_optional_number(f"{where}.diff_sd", pair["diff_sd"])
    ci = pair["ci95"]
    _require(
        ci is None or (isinstance(ci, list) and len(ci) == 2 and all(_is_number(v) for v in ci) and ci[0] <= ci[1]),
        f"{where}.ci95 must be null or [low, high]",
    )


def _check_cell(where: str, cell: Any) -> None:
    _check_keys(where, cell, CELL_KEYS)
    values = cell["values"]
    _require(
        isinstance(values, list) and all(_is_number(v) and 0 <= v <= 1 for v in values),
        f"{where}.values must be a list of fractions in 0..1",
    )
    _require(_is_int(cell["n"]) and cell["n"] == len(values), f"{where}.n must count the values")
    _check_optional_number(f"{where}.mean", cell["mean"])
    _check_optional_number(f"{where}.sd", cell["sd"])


def _check_int_list(where: str, values: Any, minimum: int = 0) -> None:
    _require(
        isinstance(values, list) and values and all(_is_int(v) and v >= minimum for v in values),
        f"{where} must be a non-empty list of integers >= {minimum}",
    )


def _check_cells_by_model(where: str, block: Mapping[str, Any], models: set[str], shape: tuple[int, ...]) -> None:
    """block[metric][model] is a list (of lists) of cells of `shape`, for exactly `models`."""
    for metric in BLOCK_METRICS:
        table = block[metric]
        _require(isinstance(table, Mapping), f"{where}.{metric} must be an object")
        _require(set(table) == models, f"{where}.{metric} models {sorted(table)} differ from {sorted(models)}")
        for model, cells in table.items():
            _check_nested_cells(f"{where}.{metric}[{model!r}]", cells, shape)


def _check_nested_cells(where: str, cells: Any, shape: tuple[int, ...]) -> None:
    _require(isinstance(cells, list) and len(cells) == shape[0], f"{where} must be a list of {shape[0]}")
    for i, inner in enumerate(cells):
        if len(shape) > 1:
            _check_nested_cells(f"{where}[{i}]", inner, shape[1:])
        else:
            _check_cell(f"{where}[{i}]", inner)


def _run_models(results: Mapping[str, Any]) -> set[str]:
    return {run["model"] for run in results["runs"]}


def _check_cross_load(block: Any, results: Mapping[str, Any]) -> None:
    keys = ("train_loads", "test_loads", "classes", "dropped_classes", "test_windows", "method", *BLOCK_METRICS)
    _check_keys("cross_load", block, keys)
    _check_int_list("cross_load.train_loads", block["train_loads"])
    _check_int_list("cross_load.test_loads", block["test_loads"])
    _require(block["classes"] == results["class_names"], "cross_load.classes must equal class_names")
    dropped = block["dropped_classes"]
    _require(
        isinstance(dropped, list) and all(isinstance(c, str) and c not in block["classes"] for c in dropped),
        "cross_load.dropped_classes must be a list of class names not used",
    )
    windows = block["test_windows"]
    _require(
        isinstance(windows, list) and len(windows) == len(block["test_loads"]) and all(_is_int(n) and n > 0 for n in windows),
        "cross_load.test_windows must give a positive count per test load",
    )
    _require(isinstance(block["method"], str), "cross_load.method must be text")
    shape = (len(block["train_loads"]), len(block["test_loads"]))
    _check_cells_by_model("cross_load", block, _run_models(results), shape)


def _check_noise(block: Any, results: Mapping[str, Any]) -> None:
    _check_keys("noise", block, ("snr_db", "definition", *BLOCK_METRICS))
    snr = block["snr_db"]
    _require(isinstance(snr, list) and snr and all(_is_number(v) for v in snr), "noise.snr_db must be a list of numbers")
    _require(isinstance(block["definition"], str), "noise.definition must be text")
    _check_cells_by_model("noise", block, _run_models(results), (len(snr),))


def _check_split_comparison(block: Any, results: Mapping[str, Any]) -> None:
    _check_keys("split_comparison", block, ("modes", *BLOCK_METRICS, "leak"))
    modes = block["modes"]
    _require(isinstance(modes, list) and sorted(modes) == ["random", "time"], "split_comparison.modes must be time and random")
    models = _run_models(results)
    _check_cells_by_model("split_comparison", block, models, (2,))
    _require(isinstance(block["leak"], Mapping) and set(block["leak"]) == models,
             "split_comparison.leak must hold one paired difference per model")
    for model, pair in block["leak"].items():
        _check_pair(f"split_comparison.leak[{model!r}]", pair)


def _check_d_model_sweep(block: Any, results: Mapping[str, Any]) -> None:
    _check_keys("d_model_sweep", block, ("d_models", "models", *BLOCK_METRICS, "n_parameters"))
    _check_int_list("d_model_sweep.d_models", block["d_models"], minimum=1)
    models = block["models"]
    _require(
        isinstance(models, list) and models and set(models) <= _run_models(results),
        "d_model_sweep.models must name models that were run",
    )
    _check_cells_by_model("d_model_sweep", block, set(models), (len(block["d_models"]),))
    counts = block["n_parameters"]
    _require(isinstance(counts, Mapping) and set(counts) == set(models), "d_model_sweep.n_parameters must cover its models")
    for model, values in counts.items():
        _check_int_list(f"d_model_sweep.n_parameters[{model!r}]", values, minimum=1)
        _require(len(values) == len(block["d_models"]), f"d_model_sweep.n_parameters[{model!r}] needs one per d_model")


def save_results(results: Mapping[str, Any], path: str | Path) -> Path:
    """Validate, then write indented JSON (strict: NaN is refused, not written)."""
    validate_results(results)
    path = Path(path)
    path.write_text(json.dumps(results, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return path


def load_results(path: str | Path) -> dict[str, Any]:
    results = json.loads(Path(path).read_text(encoding="utf-8"))
    validate_results(results)
    return results


def summary_table(results: Mapping[str, Any]) -> pd.DataFrame:
    """One row per model: mean and sd of each metric (as fractions), seeds, and the paired difference to A."""
    rows = []
    for model, by_metric in results["summary"].items():
        row: dict[str, Any] = {"model": model, "seeds": by_metric["accuracy"]["n"]}
        for metric in METRICS:
            row[f"{metric}_mean"] = by_metric[metric]["mean"]
            row[f"{metric}_sd"] = by_metric[metric]["sd"]
        pair = results["paired"].get(model)
        row["vs_A"] = comparison_word(pair["ci95"]) if pair else None
        rows.append(row)
    return pd.DataFrame(rows)
