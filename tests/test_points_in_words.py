"""Every sentence, caption, table cell and printed line that states a margin, an interval, a detectable difference
or a difference between two models states the number its JSON stores, in points. Issue 31: the quick
comparison's caption read "within ±200 points" for the 2-point margin the results JSON stores (a margin already
in points was multiplied by 100 again).

Each writer renders from a real results JSON (a pipeline fixture, tests/data) and the real shipped study JSONs
(results/): the sentence writer, core.lab.stats.words (`verdict_sentence`, `one_split_sentence`), the short answer
(core.lab.answer), the report's paragraph and tables (core.lab.report), the comparisons and decomposition tables,
both CLIs' printed lines, and the Fault lab's own captions and tables (ui/lab/results.py, ui/lab/study.py,
ui/lab/answer.py) read from the page. A number in the text must be one the JSON holds (to the digits printed),
or one of the design's counts (seeds, folds, repeats, windows, the levels 80 / 90 / 95 %); every number the
JSON says the text states must be there.
"""

from __future__ import annotations

import io
import math
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from contextlib import redirect_stdout
from typing import Any

import pytest

from core.lab import answer, report
from core.lab.experiment.cli import report_text
from core.lab.shipped import ANSWER_TOPICS, CURRENT_STUDIES, PAGE_STUDIES, read_shipped_studies
from core.lab.stats import words
from core.lab.stats.summary import count_test_windows
from core.lab.study import cli as study_cli
from core.lab.study.comparisons import (
    compare_all,
    comparisons_table,
    one_fold_comparisons,
    primary_comparison,
)
from core.lab.study.leak import LEAK_POPULATION
from core.lab.study.sweep import sweep_effects
from core.lab.study.tables import decomposition_table
from tests.apptest_utils import as_read, open_lab
from tests.test_reopen import fixture_results
from ui.lab import keys
from ui.lab.answer import study_anchor

RESULTS_FILES = ("pipeline_every_evaluation.json", "pipeline_random_split_cosine.json", "pipeline_every_model_fft.json")
LEVELS = (0.0, 80.0, 90.0, 95.0)  # zero ("the 95 % CI excludes 0") and the confidence and power levels
# a number as printed: signed or not, thousands grouped, decimals; not a digit inside a word (f1, x2, B-noPE)
NUMBER = re.compile(r"(?<![\w.])[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w.]*\d)")


def printed_numbers(text: str) -> list[tuple[float, float]]:
    """(value, half a unit of its last printed digit) of every number in `text`."""
    found = []
    for match in NUMBER.finditer(text):
        word = match.group().replace("−", "-").replace(",", "")
        decimals = len(word.split(".")[1]) if "." in word else 0
        found.append((float(word), 0.5 * 10.0**-decimals + 1e-9))
    return found


def check_points(
    text: str, required: Iterable[float | None], allowed: Iterable[float | None] = (), quoted: Sequence[str] = ()
) -> None:
    """Every `required` value is printed in `text` (to the digits printed), and every number printed is a
    required or `allowed` value; `quoted` strings (the JSON's own words: a population, fold names) are read
    over, their numbers being words of the JSON, not values."""
    for said in quoted:
        text = text.replace(said, " ")
    required = [float(v) for v in required if v is not None]
    values = [*required, *(float(v) for v in allowed if v is not None), *LEVELS]
    printed = printed_numbers(text)
    missing = [v for v in required if not any(abs(x - v) <= half for x, half in printed)]
    unexplained = [x for x, half in printed if not any(abs(x - v) <= half for v in values)]
    assert (missing, unexplained) == ([], []), text


# --- the results JSON -------------------------------------------------------------------------------------


def _one_split_counts(results: Mapping[str, Any]) -> list[float]:
    return [len(results["config"]["seeds"]), count_test_windows(results["runs"])]


@pytest.mark.parametrize("name", RESULTS_FILES)
def test_the_one_split_sentences_and_the_report_state_the_results_json_in_points(name):
    results = fixture_results(name)
    metric = results["config"]["metric"]
    population = f"{count_test_windows(results['runs']):,} test windows"
    written = one_fold_comparisons(results["runs"], population, metric)  # by today's code, from the stored runs
    assert written == results["comparisons"]
    counts = [*_one_split_counts(results), len(written) - 1]
    for comparison in results["comparisons"]:
        allowed = [comparison["margin"], comparison["error_rate_ratio"], 0.05, *counts]
        check_points(comparison["sentence"], _comparison_values(comparison), allowed)
    n_test = count_test_windows(results["runs"])
    paragraph = report.verdict(written, n_test, [run["model"] for run in results["runs"]])
    assert paragraph == results["verdict"]
    table = report.results_table(results).set_index("model")
    for comparison in results["comparisons"]:
        cell = table.loc[comparison["b"], f"vs {comparison['a']} (95 % CI, points)"]
        check_points(cell, [comparison["diff"], *(comparison["ci95"] or [])])


def test_the_windowing_leak_is_stated_in_the_points_its_block_stores():
    from core.lab.evaluations.windowing_comparison import WindowingComparison

    results = fixture_results("pipeline_every_evaluation.json")
    block = results["windowing_comparison"]
    (_, table), *_ = WindowingComparison.tables(block)
    column = next(c for c in table.columns if c.startswith("leak"))
    for model, comparison in block["leak"].items():
        check_points(table.loc[model, column], [comparison["diff"], *comparison["ci95"]])
        allowed = [comparison["margin"], comparison["error_rate_ratio"], *_one_split_counts(results)]
        check_points(comparison["sentence"], _comparison_values(comparison), allowed, [LEAK_POPULATION])


def test_the_experiment_cli_prints_the_verdict_and_table_it_was_checked_on():
    results = fixture_results("pipeline_every_evaluation.json")
    printed = report_text(results)
    assert results["verdict"] in printed
    assert report.as_text(report.results_table(results)) in printed


# --- the study JSONs ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def studies() -> dict[str, dict]:
    return read_shipped_studies(files=PAGE_STUDIES)


def _design_counts(study: Mapping[str, Any], comparisons: Sequence[Mapping[str, Any]]) -> list[float]:
    config = study["config"]
    repeats = len({fold["repeat"] for fold in study["folds"]})
    folds = len({fold["fold"] for fold in study["folds"]})
    return [len(config["seeds"]), folds, repeats, len(comparisons) - 1, len(config["seeds"]) - 1]  # seeds - 1: df


def _comparison_values(comparison: Mapping[str, Any]) -> list[float | None]:
    """What a study sentence states, by its verdict (a fault-size study: each size's effect and spread)."""
    if comparison["ci95"] is None:  # one run of each: the difference alone
        return [comparison["diff"]]
    if comparison["verdict"] == "equivalent":
        return [comparison["margin"], comparison["diff"], *comparison["ci90"]]
    if comparison["verdict"] in ("better", "worse"):
        return [comparison["margin"], comparison["diff"], *comparison["ci95"]]
    return [comparison["diff"], *comparison["ci95"], comparison["mde80"]]


def _fault_size_values(comparison: Mapping[str, Any]) -> list[float]:
    rows = comparison["by_fold"]
    spread = max(row["diff"] for row in rows) - min(row["diff"] for row in rows)
    return [comparison["diff"], spread, *(row["diff"] for row in rows), *(row["sd"] for row in rows)]


def _quoted(study: Mapping[str, Any]) -> list[str]:
    return [study["config"]["population"], *sorted({fold["name"] for fold in study["folds"]}, key=len, reverse=True)]


def test_every_study_sentence_states_its_comparison_in_points(studies):
    for study in studies.values():
        config = study["config"]
        written = compare_all(study, config["metric"], config["margin"])  # by today's code, from the stored runs
        assert [(c["a"], c["b"]) for c in written] == [(c["a"], c["b"]) for c in study["comparisons"]]
        counts = _design_counts(study, written)
        for comparison, fresh in zip(study["comparisons"], written):
            allowed = [*counts, comparison["error_rate_ratio"], 0.05, len(study["folds"]), *_order_gap_values(study)]
            values = _fault_size_values if config["design"] == "fault-size" else _comparison_values
            for sentence in (comparison["sentence"], fresh["sentence"]):  # as shipped, and as written today
                check_points(sentence, values(comparison), allowed, _quoted(study))


def _order_gap_values(study: dict) -> list[float]:
    """The numbers a version-3 sentence's "room order has" clause states: the gap in points, two accuracies in %."""
    gap = study.get("order_gap")
    return [] if gap is None else [gap["gap"], 100 * gap["best_accuracy"], 100 * gap["baseline_accuracy"]]


def test_the_short_answer_states_the_primary_comparison_in_points(studies):
    for study in studies.values():
        primary = primary_comparison(study)
        line = answer.answer_line("topic", study)
        if line is None:  # fault-size: no pooled verdict
            assert study["config"]["design"] == "fault-size"
            continue
        # the plain lead states at most the margin and the ceiling; the numbers are the stored sentence's, checked
        # above, which follows it byte for byte
        lead, sentence = line.words.split(". ", 1)
        assert sentence == primary["sentence"]
        ceiling = min(answer.mean_accuracy(study, model) for model in (primary["a"], primary["b"]))
        check_points(lead, [], allowed=[primary["margin"], math.floor(10 * ceiling) / 10])


def test_the_short_answer_legend_and_glossary_name_the_margin_the_studies_use(studies):
    margins = {study["config"]["margin"] for study in studies.values()}
    assert len(margins) == 1
    check_points(words.VERDICT_MEANINGS["equivalent"], margins)
    check_points(answer.GLOSSARY["equivalence margin"], margins)
    check_points(answer.GLOSSARY["points"], [], allowed=[95, 93, 2])  # the worked example: 95 % - 93 % = 2 points


def test_the_comparisons_and_decomposition_tables_state_the_study_json(studies):
    for study in studies.values():
        table = comparisons_table(study["comparisons"])
        for (_, row), comparison in zip(table.iterrows(), study["comparisons"]):
            check_points(row["diff (points)"], [comparison["diff"]])
            check_points(row["95 % CI"], comparison["ci95"] or [])
            check_points(row["90 % CI"], comparison["ci90"] or [])
            check_points(row["margin"], [comparison["margin"]])
            check_points(row["detectable (80 %)"], [comparison["mde80"]])
    parts = decomposition_table(studies).set_index("study")
    for title, study in studies.items():
        if title not in parts.index:
            continue
        for column, name in zip(parts.columns, ("embedding", "encoding", "total")):
            stored = study["decomposition"][name]
            check_points(parts.loc[title, column], [stored["diff"], *stored["ci95"]])


def test_the_study_cli_prints_each_comparison_and_sweep_in_points(studies, tmp_path):
    for study in studies.values():
        printed = io.StringIO()
        with redirect_stdout(printed):
            assert study_cli._report(study, tmp_path / "study.json", time.perf_counter()) == 0
        lines = printed.getvalue().splitlines()
        for comparison in study["comparisons"]:
            assert comparison["sentence"] in lines
        assert report.as_text(comparisons_table(study["comparisons"])) in printed.getvalue()
        sweep = [line for line in lines if line.startswith("pe_scale ")]
        effects = sweep_effects(study, study["config"]["metric"])
        assert len(sweep) == len(effects)
        for line, row in zip(sweep, effects):
            check_points(line.split(": ", 1)[1], [row["diff"], *row["ci95"]])


# --- what the Fault lab shows ------------------------------------------------------------------------------


def _shown(at) -> list[str]:
    kinds = (at.markdown, at.caption, at.info, at.warning)
    return [as_read(element.value) for elements in kinds for element in elements]


@pytest.fixture(scope="module")
def lab_with_results():
    at = open_lab()
    at.session_state[keys.RESULTS_KEY] = fixture_results("pipeline_every_evaluation.json")
    at.run()
    return at


def test_the_quick_comparison_caption_states_the_margin_the_results_store(lab_with_results):
    results = fixture_results("pipeline_every_evaluation.json")
    (caption,) = [text for text in _shown(lab_with_results) if text.startswith("Each model against A, by the study")]
    check_points(caption, [comparison["margin"] for comparison in results["comparisons"]])
    assert results["verdict"] in _shown(lab_with_results)


def test_the_study_section_states_each_shipped_study_in_points(lab_with_results, studies):
    at = lab_with_results
    answered = {PAGE_STUDIES[name]: (where, study_anchor(name)) for name, where in ANSWER_TOPICS.items()}
    for title, study in studies.items():
        at.selectbox(key="study_pick").set_value(title).run()
        assert not at.exception, [e.message for e in at.exception]
        shown = _shown(at)
        (caption,) = [text for text in shown if text.startswith(study["config"]["design"] + " · ")]
        counts = [study["config"]["folds"], len(study["config"]["seeds"]), study["config"].get("repeats", 1)]
        repeats = study["config"].get("repeats", 1)
        assert (f" × {repeats} repeats × " in caption) == (repeats > 1)  # time-cv cut more than once says so
        check_points(caption.split(" · commit ")[0], [study["config"]["margin"]], allowed=counts)
        for comparison in study["comparisons"]:
            assert any(text.endswith(comparison["sentence"]) for text in shown), comparison["sentence"]
        if title in answered:  # the short answer, at the top of the page, linked to the sentence above
            where, anchor = answered[title]
            line = f"{answer.answer_line(where, study).words} [details](#{anchor})"
            assert any(text.endswith(line) for text in shown), line
    intro = next(text for text in _shown(at) if text.startswith("One experiment and three seeds"))
    check_points(intro, [next(iter(studies.values()))["config"]["margin"]], allowed=[95, 2])


def _table(at, column: str):
    (table,) = [frame.value for frame in at.dataframe if column in frame.value.columns]
    return table


def test_the_study_section_tables_shown_on_request_state_the_study_json(lab_with_results, studies):
    at = lab_with_results
    at.toggle(key="study_more").set_value(True).run()
    for title, study in studies.items():
        at.selectbox(key="study_pick").set_value(title).run()
        assert not at.exception, [e.message for e in at.exception]
        primary = primary_comparison(study)
        left_out = _table(at, "difference (95 % CI)")["difference (95 % CI)"]
        for cell, row in zip(left_out, primary["leave_one_fold_out"], strict=True):
            check_points(cell, [row["diff"], *(row["ci95"] or [])])
        effects = sweep_effects(study, study["config"]["metric"])
        if effects:
            sweep = _table(at, "pe_scale")
            for (_, shown), row in zip(sweep.iterrows(), effects, strict=True):
                check_points(f"{shown['difference']} {shown['95 % CI']}", [row["diff"], *row["ci95"]])
    parts = _table(at, "the encoding (B − B-noPE)").set_index("study")  # the page's first table
    current = [study for title, study in studies.items() if title in CURRENT_STUDIES.values()]
    assert len(parts) == len(current) == len(CURRENT_STUDIES)  # the current studies', version 2's folded below
    for title, row in parts.iterrows():
        for cell, name in zip(row.iloc[:3], ("embedding", "encoding", "total"), strict=True):
            stored = studies[title]["decomposition"][name]
            check_points(cell, [stored["diff"], *stored["ci95"]])
        gap = studies[title]["order_gap"]  # then spectrum-LR's accuracy in % and the order gap in points
        check_points(row.iloc[3], [100 * gap["baseline_accuracy"]])
        check_points(row.iloc[4].split(" (")[0], [gap["gap"]])
