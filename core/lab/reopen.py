"""Opening a saved results or study file again: `open_saved` reads the bytes within the budgets of core.limits,
says which kind of file they hold, validates it against its contract and checks that the page can draw it, so
a file that opens can be drawn and any other is refused with one line.

The work is ordered cheapest first: the size, a gzip stream's expansion, the nesting depth and the longest string
(core.lab.contract.read_json, before the parser runs); the kind; the counts the page draws (classes, runs, epochs of
history) before any cell is checked; the contract (core.lab.experiment.results, core.lab.study.contract); the text
and the size of every matrix that is drawn; and last the tables the page builds from the file, computed once here.
Every refusal is a ValueError (BudgetExceeded for a budget) of one line; no other exception escapes, whatever
the bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from core.lab import evaluations, report
from core.lab.contract import is_int, is_text, read_json, require
from core.lab.data_spec import DataSpec
from core.lab.experiment.results import validate_results
from core.lab.models import MODEL_NAMES, STUDY_MODEL_NAMES
from core.lab.probes.report import order_table
from core.lab.study.contract import validate_study
from core.lab.study.migration import migrate
from core.lab.training import TrainConfig
from core.limits import (
    MAX_CLASSES,
    MAX_HISTORY_EPOCHS,
    MAX_MATRIX_CELLS,
    MAX_REOPENED_TEXT_CHARS,
    MAX_RUNS,
    MAX_SNRS,
    MAX_SWEEP_VALUES,
    MAX_TEST_LOADS,
    MAX_TEXT_CHARS,
    BudgetExceeded,
    check_budget,
)
from core.safe_text import markdown_text, shown

NOT_OURS = "not a PE Lab results or study file"
KINDS = ("results", "study")
_NAMES = f"class_names must be names of 1 to {MAX_TEXT_CHARS} characters"
_TRAIN = "config.train.model must be an object"
# What markdown can act on in a line: links, images, HTML, code, emphasis, LaTeX, directives (:name[ or
# :material/...:), entities, autolinks (www., scheme://, e-mail) and a block marker at the start.


def open_saved(raw: bytes) -> tuple[str, dict[str, Any]]:
    """(kind, content) of a saved file's bytes, plain or gzip-compressed: kind "results"
    (core.lab.experiment.results) or "study" (core.lab.study.contract). ValueError of one line (BudgetExceeded
    past a budget) when it is refused."""
    try:
        content = read_json(raw)
        kind = saved_kind(content)
        content = migrate(content)
        (check_study if kind == "study" else check_results)(content)
    except ValueError as error:
        raise _one_line(error) from None
    except Exception as error:  # a wrong type no check caught: the file is refused, never the page
        raise ValueError(f"the file cannot be drawn: {type(error).__name__} {shown(error)}") from None
    return kind, content


def saved_kind(content: Any) -> str:
    """ "study" or "results" for an object of that kind; "results" for an object with a schema_version and no
    kind (a results file before version 5)."""
    if isinstance(content, dict):
        if content.get("kind") == "study":
            return "study"
        if content.get("kind") == "results" or ("kind" not in content and "schema_version" in content):
            return "results"  # results files had no kind before version 5
    raise ValueError(f"{NOT_OURS} (such a file has the kind 'results' or 'study', or an older schema_version)")


def check_results(results: dict[str, Any]) -> None:
    """A results JSON the Fault lab's Results part can draw: the contract, the budgets, the fields it shows."""
    _check_counts(results)
    validate_results(results)
    runs = results["runs"]
    require(bool(runs), "runs must hold at least one run")
    models = _check_models(run["model"] for run in runs)
    require(all(is_text(n, MAX_TEXT_CHARS) for n in results["class_names"]), _NAMES)
    require(all(is_text(run["device"], MAX_TEXT_CHARS) for run in runs), "runs[].device must be a device name")
    _check_cells(len(models) * len(results["class_names"]) ** 2, "the confusion matrices")
    config = results["config"]
    data = config.get("data")
    require(isinstance(data, dict), "config.data must be an object")
    for key in ("dataset", "windowing"):
        require(is_text(data.get(key), MAX_TEXT_CHARS), f"config.data.{key} must be a name")
    for key in ("window", "stride"):
        require(is_int(data.get(key)) and data[key] >= 1, f"config.data.{key} must be a positive integer")
    seeds = config.get("seeds")
    require(isinstance(seeds, list) and seeds and all(is_int(s) for s in seeds), "config.seeds must list integers")
    check_budget(len(seeds), MAX_RUNS, "The number of seeds")
    _check_model_list(config.get("models"))
    _check_train(config.get("train"))
    require(is_text(config.get("metric"), MAX_TEXT_CHARS), "config.metric must be a metric's name")
    _drawable(lambda: _results_tables(results))


def check_study(study: dict[str, Any]) -> None:
    """A study JSON the Fault lab's Study part can draw: the contract, the budgets, the fields it shows."""
    try:
        _check_study(study)
    except BudgetExceeded:
        raise
    except ValueError as error:  # the shared checks (core.lab.contract) speak of a results JSON
        raise ValueError(str(error).replace("invalid results JSON", "invalid study JSON", 1)) from None


def _check_study(study: dict[str, Any]) -> None:
    _check_counts(study)
    _check_rows(study)
    validate_study(study)
    models = _check_models((run["model"] for run in study["runs"]), STUDY_MODEL_NAMES)
    check_budget(len(study["config"]["seeds"]), MAX_RUNS, "The number of seeds")
    _check_model_list(study["config"]["models"], STUDY_MODEL_NAMES)
    for i, comparison in enumerate(study["comparisons"]):
        require({comparison["a"], comparison["b"]} <= models, f"comparisons[{i}] must compare models that were run")
    _check_cells(len(models) * len(study["class_names"]) ** 2, "the confusion matrices")
    _check_cells(len(models) * len(study["folds"]), "the table of folds and models")
    profiles = study["profiles"].values()
    _check_cells(sum(np.size(p["attention_by_offset"]) for p in profiles), "the attention profiles")
    _check_train(study["config"]["train"])
    model = study["config"]["train"]["model"]
    width = model.get("d_model") or model.get("patch") or 1
    for profile in profiles:
        learned = profile["learned_similarity_by_offset"] or ()
        _check_cells(len(learned) * max(width, len(learned)), "a learned position table")
    _drawable(lambda: _study_tables(study))


def _check_rows(study: Mapping[str, Any]) -> None:
    """The SNRs, test loads and swept values a study's tables give a row each (for every compared pair), before any
    is made."""
    config = study.get("config")
    snr = config.get("snr_db") if isinstance(config, Mapping) else None
    check_budget(len(snr) if isinstance(snr, list) else 0, MAX_SNRS, "The number of SNRs")
    loads = config.get("test_loads") if isinstance(config, Mapping) else None
    check_budget(len(loads) if isinstance(loads, list) else 0, MAX_TEST_LOADS, "The number of test loads")
    sweep = config.get("sweep") if isinstance(config, Mapping) else None
    field = sweep.get("field") if isinstance(sweep, Mapping) else "pe_scale"
    runs = study.get("sweep_runs")
    values = {str(run.get(field)) for run in runs if isinstance(run, Mapping)} if isinstance(runs, list) else set()
    check_budget(len(values), MAX_SWEEP_VALUES, "The number of swept values")


def sentence_markdown(text: object) -> str:
    """A sentence of a saved file (a verdict, a comparison) or a refusal naming its content, for st.markdown /
    st.info / st.error: as written when markdown has nothing in it to act on, so this lab's own sentences read
    the same wherever they come from, and otherwise escaped whole (core.safe_text.markdown_literal)."""
    return markdown_text(text, MAX_REOPENED_TEXT_CHARS)


def _check_counts(content: Mapping[str, Any]) -> None:
    """The counts that size what the page draws, before the contract checks every cell."""
    names, runs = content.get("class_names"), content.get("runs")
    if isinstance(names, list):
        check_budget(len(names), MAX_CLASSES, "The number of classes", advice="This lab draws at most that many.")
    if isinstance(runs, list):
        check_budget(len(runs), MAX_RUNS, "The number of runs")
        for i, run in enumerate(runs):
            history = run.get("history") if isinstance(run, dict) else None
            if isinstance(history, list):
                check_budget(len(history), MAX_HISTORY_EPOCHS, f"The history of runs[{i}]", "epochs")


def _check_models(models: Any, known: Sequence[str] = MODEL_NAMES) -> set[str]:
    """The models of the runs, each one this lab trains (so a figure has at most one panel per known model)."""
    found = set(models)
    unknown = sorted(found - set(known))
    require(not unknown, f"runs name models this lab does not have: {unknown[:3]}; it has {', '.join(known)}")
    return found


def _check_model_list(names: Any, known: Sequence[str] = MODEL_NAMES) -> None:
    """config.models, shown in a caption and a command: each a model of this lab, once."""
    require(
        isinstance(names, list) and all(isinstance(m, str) for m in names) and len(set(names)) == len(names),
        "config.models must list distinct model names",
    )
    _check_models(names, known)


def _check_train(train: Any) -> None:
    """config.train must be a training config the CLIs could run: the page quotes it as the command that
    reproduces the file, so a value no run could have had (epochs "abc", a negative rate, an unknown setting)
    is refused here rather than shown as a command that fails."""
    require(isinstance(train, dict) and isinstance(train.get("model"), dict), _TRAIN)
    try:
        TrainConfig.from_dict(train)
    except (TypeError, ValueError) as error:
        raise ValueError(f"config.train is not a training configuration: {error}") from None


def _check_cells(cells: int, what: str) -> None:
    check_budget(cells, MAX_MATRIX_CELLS, f"The size of {what}", "cells")


def _drawable(build: Callable[[], Any]) -> None:
    """Build the page's tables once: a file whose numbers cannot make them is refused here, not on the page."""
    try:
        build()
    except BudgetExceeded:
        raise
    except Exception as error:
        raise ValueError(f"the file cannot be drawn: {type(error).__name__} {shown(error)}") from None


def _results_tables(results: Mapping[str, Any]) -> None:
    from core.lab.experiment.cli import command_line  # the command's flags come with the CLI's registry

    report.results_table(results)
    report.summary_table(results)
    order_table(results["order_summary"])
    spec = DataSpec.from_dict(results["config"]["data"])
    spec.files_spec()
    command_line(results["config"])
    for evaluation in evaluations.registered():
        if evaluation.key in results:
            for _, table in evaluation.tables(results[evaluation.key]):
                _check_cells(table.size, f"the {evaluation.key} table")
                # a table is shown through Arrow, which refuses repeated column names (e.g. an SNR given twice)
                require(table.columns.is_unique, f"{evaluation.key} names a column of its table twice")


def _study_tables(study: Mapping[str, Any]) -> None:
    from core.explain.encodings import sinusoidal
    from core.lab.probes.position import similarity_by_offset
    from core.lab.study.comparisons import comparisons_table, primary_comparison
    from core.lab.study.cross_load import cross_load_effects
    from core.lab.study.noise import noise_effects
    from core.lab.study.sweep import sweep_effects
    from core.lab.study.tables import fold_scores, half_widths, model_table, paired_frame, per_class, primary_by_metric

    config, comparisons = study["config"], study["comparisons"]
    model_table(study)
    comparisons_table(comparisons)
    if primary_comparison(study) is not None:
        primary_by_metric(study)
    per_class(study)
    fold_scores(study, config["metric"])
    if comparisons:
        a, b = comparisons[0]["a"], comparisons[0]["b"]
        paired_frame(study, a, b, config["metric"])
        half_widths(study, a, b, config["metric"])
    order_table(study["order_summary"])
    noise_effects(study, config["metric"])
    cross_load_effects(study, config["metric"])
    sweep_effects(study, config["metric"])
    model = config["train"]["model"]
    width = model["d_model"] or model["patch"]
    learned = [
        p["learned_similarity_by_offset"] for p in study["profiles"].values() if p["learned_similarity_by_offset"]
    ]
    if learned and width:
        similarity_by_offset(sinusoidal(len(learned[0]), width))


def _one_line(error: ValueError) -> ValueError:
    text = str(error)
    if "\n" not in text and "\r" not in text and len(text) <= MAX_REOPENED_TEXT_CHARS:
        return error
    return (BudgetExceeded if isinstance(error, BudgetExceeded) else ValueError)(shown(text, MAX_REOPENED_TEXT_CHARS))
