"""AppTest of the Fault lab's Study part: the shipped studies' verdicts at defaults, a tiny study run as a
background job, a study too large for the page refused with its command, and saved files opened again."""

from __future__ import annotations

import json
import time

import pytest

from core.lab.reopen import sentence_markdown
from core.lab.shipped import ANSWER_TOPICS, CURRENT_STUDIES, PAGE_STUDIES, STUDY_HEADINGS
from tests.apptest_utils import errors, open_lab, set_tiny
from ui.lab import keys
from ui.lab.answer import study_anchor, verdict_badge
from ui.lab.study import shipped_studies

WAIT_S = 240


def successes(at) -> list[str]:
    return [s.value for s in at.success]


def test_defaults_show_each_shipped_studys_verdict_once_and_the_short_answer_links_to_it():
    shipped = shipped_studies()
    if len(shipped) < len(PAGE_STUDIES):
        pytest.fail(f"shipped studies missing or invalid in results/: have {sorted(shipped)}")
    at = open_lab()
    shown = [element.value for kind in (at.markdown, at.caption, at.info) for element in kind]
    for name, title in PAGE_STUDIES.items():  # version 3's, then version 2's
        primary = shipped[title]["comparisons"][0]
        assert (primary["a"], primary["b"], primary["primary"]) == ("B-noPE", "B", True)
        sentence = sentence_markdown(primary["sentence"])
        assert sum(sentence in value for value in shown) == 1, title  # once on the page, under its heading
        heading = shown.index(f"##### {STUDY_HEADINGS[name]}")
        assert shown[heading + 1] == f"{verdict_badge(primary['verdict'])} {sentence}"
    assert at.selectbox(key="study_pick").value == next(iter(shipped))
    # the short answer leads the page: per version-3 task, a plain lead and the stored sentence, linked
    card = [value for value in shown if "-badge[" in value and "[details](#" in value]
    assert [line.split("](#")[1].rstrip(")") for line in card] == [study_anchor(name) for name in ANSWER_TOPICS]
    assert "On real bearings" in card[0] and "On a gearbox" in card[1] and "Where order has room" in card[2]
    # version 2's verdicts are folded away, version 3's first: the current reading leads
    first_v2 = shown.index(f"##### {STUDY_HEADINGS['study_order_control.json']}")
    assert all(shown.index(f"##### {STUDY_HEADINGS[name]}") < first_v2 for name in CURRENT_STUDIES)
    assert any(expander.label.startswith("Version 2's verdicts") for expander in at.expander)
    checks = "At every control level a classifier of the spectrum and one of the best single patch's RMS stay within"
    assert any(value.startswith(checks) for value in shown)  # the curve's order-blind checks, under the map


def test_the_glossary_explains_the_methods_the_comparisons_table_names():
    at = open_lab()
    glossary = next(value for value in (m.value for m in at.markdown) if "\n- **points**: " in value)
    table = next(frame.value for frame in at.dataframe if "p (Holm)" in frame.value.columns)
    assert "secondary, Bonferroni" in set(table["role"])
    assert "- **Bonferroni**: " in glossary and "- **Holm**: " in glossary  # the two corrections the table names
    assert glossary.startswith(f"- {verdict_badge('better')}: the 95 % interval lies above zero")  # colours first


def test_b_nope_is_defined_where_the_page_first_names_it():
    at = open_lab()
    first = next(value for value in (m.value for m in at.markdown) if "B-noPE" in value)
    assert "model **B-noPE** is B without the encoding" in first


def test_a_tiny_study_runs_as_a_job_and_shows_its_comparisons_and_figures():
    at = open_lab({"models": ["B-noPE", "B"]})
    set_tiny(at, n_seeds=1)
    at.slider(key="study_seeds").set_value(1).run()
    at.slider(key="study_folds").set_value(3).run()
    assert any("6 training runs" in c.value for c in at.caption)
    at.multiselect(key="snr").set_value([0]).run()  # the noise chosen for the experiment scores the study too
    assert any("also scored with white noise at 0 dB" in c.value for c in at.caption)
    assert "--snr=0" in at.code[-1].value.split()
    at.button(key="run_study").click().run()
    deadline = time.time() + WAIT_S
    while keys.JOB_KEY in at.session_state and time.time() < deadline:
        time.sleep(0.3)
        at.run()
    assert not at.exception, [e.message for e in at.exception]
    study = at.session_state[keys.STUDY_KEY]
    assert len(study["runs"]) == 6 and study["config"]["design"] == "time-cv" and study["config"]["snr_db"] == [0]
    at.selectbox(key="study_pick").set_value("the study run or opened here").run()
    assert not at.exception
    shown = [markdown.value for markdown in at.markdown]
    assert any(value.endswith(sentence_markdown(study["comparisons"][0]["sentence"])) for value in shown)
    at.toggle(key="study_more").set_value(True).run()
    assert not at.exception
    names = [chart.proto.id for chart in at.get("plotly_chart")]
    for name in ("study_equivalence", "study_paired", "study_folds", "study_half_widths", "study_confusion"):
        assert any(chart_id.endswith(f"fig_{name}") for chart_id in names), name
    assert any(m.value.startswith("**With noise**") for m in at.markdown)  # the noise tests' table


def test_a_study_too_large_for_the_page_is_refused_with_its_command():
    at = open_lab({"models": ["A", "B", "B-noPE", "CNN"]})
    at.slider(key="study_seeds").set_value(6).run()
    at.slider(key="study_folds").set_value(10).run()
    assert any("Too large for a shared page" in w.value for w in at.warning)
    assert not [b for b in at.button if b.key == "run_study"]
    assert at.code[-1].value.startswith("python -m core.study --dataset synthetic")
    assert "--folds 10" in at.code[-1].value and "--seeds 0,1,2,3,4,5" in at.code[-1].value


def test_saved_files_open_again_and_bad_ones_are_refused_keeping_what_was_there():
    at = open_lab()
    shipped = next(iter(shipped_studies().values()), None)
    if shipped is None:
        pytest.fail("no shipped study in results/ to open")
    at.file_uploader(key="open_json").set_value(("saved.json", json.dumps(shipped).encode(), "application/json")).run()
    at.button(key="open_file").click().run()
    assert not errors(at), errors(at)
    assert at.session_state[keys.STUDY_KEY] == shipped
    assert any("Opened saved.json" in s for s in successes(at))
    for content, message in (
        (b"{broken", "not valid JSON"),
        (json.dumps({**shipped, "schema_version": 0}).encode(), "schema_version 0"),
        (json.dumps({"config": {}}).encode(), "schema_version"),
    ):
        at.file_uploader(key="open_json").set_value(("bad.json", content, "application/json")).run()
        at.button(key="open_file").click().run()
        assert not at.exception
        assert any("bad.json cannot be opened" in e and message in e for e in errors(at)), errors(at)
        assert at.session_state[keys.STUDY_KEY] == shipped  # nothing lost
