"""The Fault lab's short answer: one plain sentence per task generated from a study's primary comparison, a colour
per verdict word, and a glossary that explains the methods the tables name."""

from __future__ import annotations

import re

import pytest

from core.lab.answer import GLOSSARY, VERDICT_COLOURS, answer_line
from core.lab.shipped import ANSWER_TOPICS, PAGE_STUDIES, read_shipped_studies
from core.lab.stats.words import answer_lead
from core.lab.study import comparisons_table
from core.lab.study.comparisons import primary_comparison


def comparison(verdict, diff, ci95, ci90=None, mde80=None, a="B-noPE", b="B"):
    return {
        "a": a,
        "b": b,
        "diff": diff,
        "ci95": ci95,
        "ci90": ci90 or ci95,
        "margin": 2.0,
        "verdict": verdict,
        "mde80": mde80,
        "primary": True,
        "sentence": f"the stored sentence of {b} vs {a}.",
    }


@pytest.mark.parametrize(
    ("case", "words"),
    [
        (comparison("better", 74.2, [70.1, 78.3]), "On the rig, B beat B-noPE by more than the 2-point margin."),
        (comparison("better", 1.5, [0.4, 2.6]), "On the rig, B beat B-noPE, possibly by less than the 2-point margin."),
        (
            comparison("worse", -4.8, [-7.0, -2.6]),
            "On the rig, B did worse than B-noPE by more than the 2-point margin.",
        ),
        (
            comparison("equivalent", -0.7, [-1.9, 0.5], [-1.6, 0.2]),
            "On the rig, B and B-noPE scored the same within the ±2-point margin.",
        ),
        (comparison("inconclusive", -2.1, [-4.5, 0.4], mde80=3.4), "On the rig, the lab could not tell B from B-noPE."),
    ],
)
def test_each_verdict_leads_with_its_plain_words(case, words):
    assert answer_lead(case, "On the rig") == words


def test_a_lead_without_a_place_starts_with_a_capital_and_the_ceiling_is_folded_into_it():
    inconclusive = comparison("inconclusive", -2.1, [-4.5, 0.4], mde80=3.4)
    assert answer_lead(inconclusive) == "The lab could not tell B from B-noPE."
    equivalent = comparison("equivalent", -0.1, [-0.6, 0.4], [-0.5, 0.2])
    assert answer_lead(equivalent, "On a gearbox", ceiling=99.7) == (
        "On a gearbox, B and B-noPE scored the same within the ±2-point margin, but both scored 99.7 % or more: the "
        "task is too easy there to show what the encoding does."
    )
    # an order gap at or below 0: the spectrum alone did as well, said after the verdict; the ceiling says more
    assert answer_lead(equivalent, "On a rig", no_room=True) == (
        "On a rig, B and B-noPE scored the same within the ±2-point margin, and a classifier of the spectrum alone, "
        "blind to order, did at least as well: the task left order no room."
    )
    assert "no room" not in answer_lead(equivalent, "On a rig", ceiling=99.7, no_room=True)


def test_every_verdict_word_has_its_own_colour():
    assert set(VERDICT_COLOURS) == {"better", "equivalent", "inconclusive", "worse"}
    assert len(set(VERDICT_COLOURS.values())) == 4


def study(verdict="better", diff=74.0, no_pe_accuracy=0.26, shuffled_drop=70.0, design="time-cv"):
    runs = [{"model": "B-noPE", "accuracy": no_pe_accuracy}, {"model": "B", "accuracy": 1.0}]
    return {
        "config": {"design": design},
        "class_names": ["order0", "order1", "order2", "order3"],
        "runs": runs,
        "comparisons": [comparison(verdict, diff, [diff - 3, diff + 3])],
        "order_summary": {"B": {"shuffled_drop": {"mean": shuffled_drop}}},
    }


def test_fault_size_gives_no_short_answer_and_a_time_cv_study_gives_its_primary():
    assert answer_line("sizes", study(design="fault-size")) is None
    line = answer_line("Where order matters", study())
    assert line.verdict == "better" and line.words == (
        "Where order matters, B beat B-noPE by more than the 2-point margin. the stored sentence of B vs B-noPE."
    )


def test_two_models_at_the_ceiling_are_said_to_show_little_in_the_lead():
    easy = study(verdict="equivalent", diff=0.0, no_pe_accuracy=0.999)
    easy["runs"][1]["accuracy"] = 0.9999  # B: 99.99 %, B-noPE 99.9 %
    words = answer_line("On the second rig", easy).words
    lead = "but both scored 99.9 % or more: the task is too easy there to show what the encoding does."
    assert words == f"On the second rig, B and B-noPE scored the same within the ±2-point margin, {lead} " + (
        "the stored sentence of B vs B-noPE."
    )
    assert len(re.findall(r"\.(?:\s|$)", words)) == 2  # the lead's full stop, then the stored sentence's
    assert "too easy" not in answer_line("Where order matters", study()).words  # B-noPE at chance: no caveat


def test_the_short_answer_shows_each_version_3_tasks_stored_sentence_after_a_plain_lead():
    shipped = read_shipped_studies(files=PAGE_STUDIES)
    assert all(name.endswith("_v3.json.gz") for name in ANSWER_TOPICS)  # the current reading, protocol 3's
    lines = [answer_line(where, shipped[PAGE_STUDIES[name]]) for name, where in ANSWER_TOPICS.items()]
    cwru, gearbox, room = lines
    primary = primary_comparison(shipped[PAGE_STUDIES[next(iter(ANSWER_TOPICS))]])
    lead = (
        "On real bearings (CWRU, each recording cut in time), B and B-noPE scored the same within the ±2-point "
        "margin, and a classifier of the spectrum alone, blind to order, did at least as well: the task left order "
        "no room."
    )
    assert cwru.words == f"{lead} {primary['sentence']}"  # the sentence the study stores, byte for byte
    assert cwru.verdict == primary["verdict"] == "equivalent"
    assert gearbox.words.startswith("On a gearbox (SpectraQuest") and "too easy there" in gearbox.words
    assert "no room" not in gearbox.words  # at the ceiling, the ceiling is what the lead says
    assert room.verdict == "better" and "B beat B-noPE, possibly by less than the 2-point margin." in room.words


def test_every_method_the_tables_and_sentences_name_is_in_the_glossary_and_the_glossary_names_no_other():
    shipped = read_shipped_studies().values()
    tables = [comparisons_table(study["comparisons"]) for study in shipped]
    named = {role.split(", ")[1] for table in tables for role in table["role"] if ", " in role}
    named |= {column[column.index("(") + 1 : -1] for table in tables for column in table.columns if "(Holm)" in column}
    assert named == {"Bonferroni", "Holm"}  # what core.lab.study.comparisons computes and the tables say
    methods = {term for term in GLOSSARY if term in ("Bonferroni", "Holm") or term.startswith("corrected")}
    assert {"Bonferroni", "Holm"} <= methods
    sentences = " ".join(c["sentence"] for study in shipped for c in study["comparisons"])
    for method in methods:  # every method the glossary explains is one a table or a sentence names
        assert method.split(" (")[0] in sentences or method in named, method
    assert "98.3 %" in GLOSSARY["Bonferroni"]  # 1 - 0.05 / 3, from bonferroni_confidence
