"""The Fault lab's short answer: plain sentences generated from a study's primary comparison, a colour per
verdict word, and the positive control's pass criteria of the protocol."""

from __future__ import annotations

import pytest

from core.lab.answer import VERDICT_COLOURS, answer_line, control_check, plain_sentence


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
    }


@pytest.mark.parametrize(
    ("case", "words"),
    [
        (comparison("better", 74.2, [70.1, 78.3]), "by more than the margin: 74.2 points (95 % CI +70.1"),
        (comparison("better", 1.5, [0.4, 2.6]), "B beats B-noPE possibly by less than the 2-point margin: 1.5 points"),
        (comparison("worse", -4.8, [-7.0, -2.6]), "B does worse than B-noPE by more than the margin: 4.8 points"),
        (
            comparison("equivalent", -0.7, [-1.9, 0.5], [-1.6, 0.2]),
            "B and B-noPE score the same within the ±2-point margin (B − B-noPE -0.7 points, 90 % CI -1.6 to +0.2)",
        ),
        (
            comparison("inconclusive", -2.1, [-4.5, 0.4], mde80=3.4),
            "Inconclusive: B − B-noPE is -2.1 points (95 % CI -4.5 to +0.4); it could only have detected a "
            "difference of about 3.4 points.",
        ),
    ],
)
def test_each_verdict_reads_in_plain_words_with_its_numbers(case, words):
    assert words in plain_sentence(case)


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


def test_the_control_passes_only_with_a_10_point_gain_b_nope_near_chance_and_b_using_order():
    ok, words = control_check(study())
    assert ok and "B beats B-noPE by 74.0 points" in words and "B-noPE scores 26.0 %, chance is 25.0 %" in words
    assert not control_check(study(diff=8.0))[0]  # a gain under 10 points
    assert not control_check(study(no_pe_accuracy=0.31))[0]  # 6 points above chance
    assert not control_check(study(shuffled_drop=1.0))[0]  # shuffling the tokens barely matters
    assert not control_check(study(verdict="inconclusive"))[0]


def test_fault_size_gives_no_short_answer_and_a_time_cv_study_gives_its_primary():
    assert answer_line("sizes", study(design="fault-size")) is None
    line = answer_line("the control", study())
    assert line.verdict == "better" and line.words.startswith("B beats B-noPE")


def test_two_models_at_the_ceiling_are_said_to_show_little():
    easy = study(verdict="equivalent", diff=0.0, no_pe_accuracy=0.999)
    easy["runs"][1]["accuracy"] = 0.9999  # B: 99.99 %, B-noPE 99.9 %
    assert answer_line("the second rig", easy).note.startswith("Both score 99.9 % or more: at this ceiling")
    assert answer_line("the control", study()).note is None  # B-noPE at chance: no caveat
