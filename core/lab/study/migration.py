"""Every results or study file this lab has written, read as the current schema: `migrate(document)`, the one
migration, which the page's Open (core.lab.reopen), both loaders and the study CLI's --reanalyse go through.

    results  3 -> 4   keys renamed (core.lab.names.RESULTS_KEY_RENAMES); paired differences from fractions to points
             4 -> 5   kind "results"; `paired` (each model against A) gives way to `comparisons`, made from the runs
                      by compare() as a study's are (the experiment is a study with one fold:
                      core.lab.study.comparisons.one_fold_comparisons), the verdict paragraph with them; the
                      windowing comparison's leak is such a comparison too, made from its per-seed accuracies
             5 -> 6   config.data.split_seed becomes config.data.windowing_seed
             6 -> 7   nothing (a study's noise tests; the two kinds share one schema_version)
             7 -> 8   nothing (a one-fold study's cross-load tests)
    study    2 -> 3   keys renamed (core.lab.names.STUDY_KEY_RENAMES)
             3 -> 4   one repeat, each run's learning rate, the first comparison primary, the fields version 3 did not
                      compute null, no tuning or sweep runs, no decomposition
             4 -> 5   config.pe_scale_sweep becomes config.sweep {field "pe_scale", values}
             5 -> 6   nothing (the results JSON's rename; the two kinds share one schema_version)
             6 -> 7   nothing: a study may now record config.snr_db, each run's noise (core.lab.study.noise) and history
             7 -> 8   nothing: a one-fold study may now record config.train_loads and test_loads, and each run's
                      cross_load (core.lab.study.cross_load)

Every number a file stores is kept (a results file's comparisons are computed again from its runs, as a fresh
experiment computes them). Anything else comes back as it is, for the validators to accept (the current
version) or refuse by its version.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from core.lab.contract import is_number, to_plain
from core.lab.names import RESULTS_KEY_RENAMES, STUDY_KEY_RENAMES, rename_keys
from core.lab.report import verdict
from core.lab.stats.summary import DEFAULT_MARGIN, count_test_windows
from core.lab.stats.words import windows_words
from core.lab.study.comparisons import one_fold_comparisons
from core.lab.study.leak import leak_comparisons

POINTS_KEYS = ("diff_mean", "diff_sd", "ci95", "ci90", "margin", "mde80")  # of a version-3 paired difference
Step = Callable[[Mapping[str, Any]], dict[str, Any]]


def migrate(document: Any) -> Any:
    """`document` (a parsed results or study JSON) as the current schema, one version step at a time."""
    if not isinstance(document, Mapping):
        return document
    kind = document.get("kind", "results")  # results files had no kind before version 5
    # compared, not looked up: a foreign file's kind may be any JSON value, a list among them
    steps = STUDY_STEPS if kind == "study" else RESULTS_STEPS if kind == "results" else {}
    while document.get("schema_version") in steps:
        document = steps[document["schema_version"]](document)
    return document


# --- results ---------------------------------------------------------------------------------------------


def _results_3_to_4(old: Mapping[str, Any]) -> dict[str, Any]:
    """Keys renamed, the paired differences (and the windowing leak) from fractions to points."""
    new = rename_keys(old, RESULTS_KEY_RENAMES)
    new["schema_version"] = 4
    for pair in _pairs(new.get("paired")):
        _to_points(pair)
    comparison = new.get("windowing_comparison")
    for pair in _pairs(comparison.get("leak") if isinstance(comparison, Mapping) else None):
        _to_points(pair)
    return new


def _pairs(by_model: Any) -> list[dict[str, Any]]:
    return [pair for pair in by_model.values() if isinstance(pair, dict)] if isinstance(by_model, Mapping) else []


def _to_points(pair: dict[str, Any]) -> None:
    for key in POINTS_KEYS:
        if key in pair:
            pair[key] = _times_100(pair[key])


def _times_100(value: Any) -> Any:
    if is_number(value):
        return 100 * value
    return [_times_100(item) for item in value] if isinstance(value, list) else value


def _results_4_to_5(old: Mapping[str, Any]) -> dict[str, Any]:
    """kind "results", the comparisons (and the verdict, and the windowing leak) made from the stored runs."""
    try:
        comparisons, paragraph, leak = _compared_again(old)
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        # damaged runs cannot be compared: the validator then names what is wrong with them
        comparisons, paragraph, leak = [], old.get("verdict"), None
    new = {"schema_version": 5, "kind": "results"}
    for key, value in old.items():
        if key == "paired":
            new["comparisons"] = comparisons
        elif key == "verdict":
            new[key] = paragraph
        elif key != "schema_version":
            new[key] = value
    if leak is not None:
        new["windowing_comparison"] = {**old["windowing_comparison"], "leak": leak}
    return to_plain(new)  # as build_results stores it: no numpy scalar left in an interval


def _compared_again(old: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str, dict[str, Any] | None]:
    """The comparisons of a version-4 file's runs (by the metric and margin its paired differences used), its
    verdict paragraph, and its windowing comparison's leak (None without one)."""
    runs, config = old.get("runs") or [], old.get("config") or {}
    first = next(iter(_pairs(old.get("paired"))), {})
    metric = first.get("metric") or config.get("metric") or "accuracy"
    n_test = count_test_windows(runs)
    comparisons = one_fold_comparisons(runs, windows_words(n_test), metric, first.get("margin", DEFAULT_MARGIN))
    paragraph = verdict(comparisons, n_test, [run["model"] for run in runs])
    block = old.get("windowing_comparison")
    leak = leak_comparisons(block, config.get("seeds") or []) if isinstance(block, Mapping) else None
    return comparisons, paragraph, leak


def _results_5_to_6(old: Mapping[str, Any]) -> dict[str, Any]:
    """config.data.split_seed as config.data.windowing_seed, in its place (one word per concept: the seed that
    deals the random windowing's windows)."""
    config = old.get("config")
    data = config.get("data") if isinstance(config, Mapping) else None
    if isinstance(data, Mapping) and "split_seed" in data:
        data = {("windowing_seed" if key == "split_seed" else key): value for key, value in data.items()}
        config = {**config, "data": data}
    return {**old, "schema_version": 6, "config": config}


def _only_version(version: int) -> Step:
    """A step that changes nothing but the version: the version let the other kind, or a study, record more."""

    def step(old: Mapping[str, Any]) -> dict[str, Any]:
        return {**old, "schema_version": version}

    return step


RESULTS_STEPS: dict[int, Step] = {
    3: _results_3_to_4,
    4: _results_4_to_5,
    5: _results_5_to_6,
    6: _only_version(7),
    7: _only_version(8),
}


# --- studies ----------------------------------------------------------------------------------------------


def _study_2_to_3(old: Mapping[str, Any]) -> dict[str, Any]:
    """Keys renamed (its differences were in points already)."""
    return {**rename_keys(old, STUDY_KEY_RENAMES), "schema_version": 3}


def _study_3_to_4(old: Mapping[str, Any]) -> dict[str, Any]:
    """Repeat 0 on every run and fold, each run's learning_rate (its tuned rate if the study tuned, else
    config.train's), primary marked on the first comparison (B vs A then, unadjusted), the fields version 3 did
    not compute null, no tuning or sweep runs kept, no decomposition."""
    config = {**old["config"], "repeats": 1}
    tuned = config.get("tuned_learning_rates")
    if isinstance(tuned, Mapping):
        config["tuned_learning_rates"] = {"0": tuned}
    default_rate = (config.get("train") or {}).get("learning_rate")

    def rate(run: Mapping[str, Any]) -> Any:
        if isinstance(tuned, Mapping):
            return (tuned.get(str(run.get("fold"))) or {}).get(run.get("model"), default_rate)
        return default_rate

    unset = ("adjusted", "ci95_independent", "error_rate_ratio", "leave_one_fold_out", "by_fold")
    comparisons = [
        {**comparison, "primary": i == 0, **dict.fromkeys(unset)}
        for i, comparison in enumerate(old.get("comparisons", []))
    ]
    return {
        **old,
        "schema_version": 4,
        "config": config,
        "folds": [{"repeat": 0, **fold} for fold in old.get("folds", [])],
        "runs": [{**run, "repeat": 0, "learning_rate": rate(run)} for run in old.get("runs", [])],
        "comparisons": comparisons,
        "tuning_runs": [],
        "sweep_runs": [],
        "decomposition": None,
    }


def _study_4_to_5(old: Mapping[str, Any]) -> dict[str, Any]:
    """config.pe_scale_sweep as config.sweep {field, values}, in its place."""
    config = old.get("config")
    if isinstance(config, Mapping) and "pe_scale_sweep" in config:
        sweep = {"field": "pe_scale", "values": config["pe_scale_sweep"]}
        config = {("sweep" if key == "pe_scale_sweep" else key): value for key, value in config.items()}
        config["sweep"] = sweep
    return {**old, "schema_version": 5, "config": config}


STUDY_STEPS: dict[int, Step] = {
    2: _study_2_to_3,
    3: _study_3_to_4,
    4: _study_4_to_5,
    5: _only_version(6),
    6: _only_version(7),
    7: _only_version(8),
}
MIGRATED = {"results": tuple(RESULTS_STEPS), "study": tuple(STUDY_STEPS)}  # the versions read through `migrate`
