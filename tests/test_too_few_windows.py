"""Too little data gets a clear answer, not a number (issue 31: a CSV of 3 s per class trained without a word and
reported "95 % CI -126.2 to +92.9 ... could only detect 136.5 points").

Before training, the Fault lab and both CLIs estimate from the test windows the difference they could detect
(core.lab.stats.power); past 20 points the page says so in one line and the press asks first, and the CLIs print
the same line and exit 2 unless --accept-wide. Intervals and detectable differences of accuracy stay within
±100 points, in the results JSON, the study JSON and on the page, and the sentences say when they were cut."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.lab.experiment.cli import main as experiment_main
from core.lab.experiment.results import build_results
from core.lab.stats import words
from core.lab.stats.intervals import bounded, paired_interval
from core.lab.stats.power import (
    EXPERIMENT_ADVICE,
    STUDY_ADVICE,
    WIDE_POINTS,
    detectable_difference,
    too_few_windows,
)
from core.lab.study import cli as study_cli
from core.lab.study.comparisons import compare_all
from core.lab.vibration.synthetic import synthetic_bearing_set
from tests.apptest_utils import as_read, open_lab
from tests.test_reopen import fixture_results
from tests.test_study_v2 import fake_study
from ui.lab import keys

CLIPPED = "clipped to ±100 points, the largest difference there can be"
SIX_WINDOWS = (
    "Too few test windows for a clear answer: with 6 test windows, this experiment could only detect differences "
    "of about 49 points or more (80 % power at 90 % accuracy). For a clear answer use longer recordings, a smaller "
    "window, or a study, which tests every window once."
)


def two_class_csv(seconds: float) -> bytes:
    """`signal,label` rows at 12 kHz: the synthetic set's normal and IR007 recordings, `seconds` each."""
    recordings = [r for r in synthetic_bearing_set(seed=0, duration_s=seconds) if r.label in ("normal", "IR007")]
    rows = ["signal,label", *(f"{value:.5f},{r.label}" for r in recordings for value in r.signal)]
    return ("\n".join(rows) + "\n").encode()


# --- the estimate ----------------------------------------------------------------------------------------


def test_the_detectable_difference_is_the_binomial_80_percent_power_difference_at_90_percent_accuracy():
    # by hand: (z_0.975 + z_0.80) sqrt(2 x 0.9 x 0.1 / 100) = (1.959964 + 0.841621) x 0.0424264 = 0.118862
    assert detectable_difference(100) == pytest.approx(11.8862, abs=1e-4)
    assert detectable_difference(6) == pytest.approx(48.525, abs=1e-3)  # 2.801585 x sqrt(0.03) = 0.485249
    assert detectable_difference(35) > WIDE_POINTS >= detectable_difference(36)  # 20.09 and 19.81
    with pytest.raises(ValueError, match="positive number of test windows"):
        detectable_difference(0)


def test_too_few_windows_is_one_line_with_what_to_do_and_nothing_when_enough():
    assert too_few_windows(36, "this experiment", EXPERIMENT_ADVICE) is None
    assert too_few_windows(6, "this experiment", EXPERIMENT_ADVICE) == SIX_WINDOWS
    one = too_few_windows(1, "this study", STUDY_ADVICE)
    assert "with 1 test window, this study could not detect even a difference of 100 points" in one
    assert one.endswith("use longer recordings or a smaller window.") and "\n" not in one


# --- within what accuracy allows ----------------------------------------------------------------------------


def test_an_interval_of_accuracy_stops_at_100_points_and_its_sentence_says_so():
    wild = paired_interval(np.array([[-85.0, 85.0]]))  # two seeds, t on 1 df: ±1080 unclipped
    assert wild.ci(0.95)[1] > 1000 and not wild.clipped
    clipped = bounded(wild, "accuracy")
    assert clipped.ci(0.95) == [-100.0, 100.0] and clipped.ci(0.90) == [-100.0, 100.0]
    assert clipped.mde80 == 100.0 and clipped.clipped and clipped.p == wild.p
    said = clipped_sentence(clipped, "6 test windows")
    assert "(95 % CI -100.0 to +100.0; " in said and "differences of 100.0 points or more; " in said
    assert f"; {CLIPPED}; 2 seeds on one split, 6 test windows; " in said
    assert bounded(wild, "log_loss").ci(0.95) == wild.ci(0.95)  # log loss has no bound
    calm = bounded(paired_interval(np.array([[1.0, 2.0, 3.0]])), "accuracy")
    assert not calm.clipped and CLIPPED not in clipped_sentence(calm, "p")


def clipped_sentence(interval, population: str) -> str:
    """The sentence of an inconclusive B - A of `interval`, stored as a comparison stores it."""
    stored = {"a": "A", "b": "B", "metric": "accuracy", "diff": interval.diff, "ci95": interval.ci(0.95)}
    stored.update(ci90=interval.ci(0.90), margin=2.0, mde80=interval.mde80, verdict="inconclusive")
    design = words.Design(population, interval.seeds, clipped=interval.clipped, bound=interval.bound)
    return words.verdict_sentence(stored, design)


def wild_results() -> dict:
    """A fixture's results built again with A and B swapping 10 % and 95 % accuracy between the seeds."""
    old = fixture_results("pipeline_every_evaluation.json")
    accuracies = {("A", 0): 0.1, ("A", 1): 0.95, ("B", 0): 0.95, ("B", 1): 0.1}
    runs = [{**run, "accuracy": accuracies[run["model"], run["seed"]]} for run in old["runs"]]
    return build_results(old["config"], old["class_names"], runs, "accuracy")


def test_the_results_json_holds_intervals_within_100_points_and_says_so():
    (pair,) = wild_results()["comparisons"]
    assert pair["ci95"] == [-100.0, 100.0] and pair["ci90"] == [-100.0, 100.0] and pair["mde80"] == 100.0
    assert f"; {CLIPPED}; " in pair["sentence"]


def test_the_study_json_holds_intervals_within_100_points_and_says_so():
    a = np.full((1, 3, 2), 0.5)
    b = np.stack([np.full(2, 0.0), np.full(2, 1.0), np.full(2, 0.5)])[None]  # folds at -50, +50 and 0 points
    study = fake_study({"B-noPE": a, "B": b})
    study["config"]["margin"] = 2.0
    (primary,) = compare_all(study, "accuracy", 2.0)
    assert primary["ci95"] == [-100.0, 100.0] and primary["ci95_independent"] == [-100.0, 100.0]
    assert primary["mde80"] == 100.0 and f"; {CLIPPED};" in primary["sentence"]
    assert all(-100.0 <= end <= 100.0 for row in primary["leave_one_fold_out"] for end in row["ci95"])


def test_the_page_shows_the_clipped_interval_and_says_so():
    at = open_lab()
    at.session_state[keys.RESULTS_KEY] = wild_results()
    at.run()
    shown = [as_read(info.value) for info in at.info]
    assert any(CLIPPED in text and "(95 % CI -100.0 to +100.0;" in text for text in shown), shown


# --- before training: the CLIs and the page -------------------------------------------------------------------


def _all_intervals(node) -> list[float]:
    """Every end of every ci95 / ci90 and every mde80 in a JSON tree."""
    if isinstance(node, dict):
        found = [v for k, v in node.items() if k == "mde80" and v is not None]
        for key, value in node.items():
            if key in ("ci95", "ci90", "ci95_independent") and value is not None:
                found += value
            found += _all_intervals(value)
        return found
    return [v for item in node for v in _all_intervals(item)] if isinstance(node, list) else []


def test_the_experiment_cli_on_3_s_per_class_exits_2_and_with_accept_wide_stays_within_100_points(tmp_path, capsys):
    data = tmp_path / "two_classes.csv"
    data.write_bytes(two_class_csv(3.0))
    out = tmp_path / "results.json"
    argv = ["--dataset", "csv", "--data", str(data), "--out", str(out)]
    assert experiment_main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [SIX_WINDOWS, "Add --accept-wide to run it anyway."]
    assert not out.exists()
    tiny = ["--epochs", "1", "--seeds", "0,1", "--layers", "1", "--threads", "1", "--workers", "1", "--quiet"]
    assert experiment_main([*argv, *tiny, "--accept-wide"]) == 0
    results = json.loads(out.read_text())
    ends = _all_intervals(results)
    assert ends and all(-100.0 <= end <= 100.0 for end in ends)


def test_the_study_cli_on_too_few_windows_exits_2_unless_accepted(tmp_path, capsys, monkeypatch):
    data = tmp_path / "two_classes.csv"
    data.write_bytes(two_class_csv(1.5))  # 1.5 s a class: 6 test windows in each of the five folds
    argv = ["--dataset", "csv", "--data", str(data), "--models", "A,B", "--out", str(tmp_path / "s.json")]
    assert study_cli.main(argv) == 2
    line, hint = capsys.readouterr().err.splitlines()
    assert line == too_few_windows(30, "this study", STUDY_ADVICE) and hint == "Add --accept-wide to run it anyway."

    def reached(*args, **kwargs):
        raise ValueError("the study would start here")

    monkeypatch.setattr(study_cli, "run_study", reached)
    assert study_cli.main([*argv, "--accept-wide"]) == 2
    assert capsys.readouterr().err == "error: the study would start here\n"


def _upload(at, content: bytes) -> None:
    at.radio(key="dataset").set_value("csv").run()
    at.file_uploader(key="csv_files").set_value(("two_classes.csv", content, "text/csv")).run()
    at.button(key="load_csv").click().run()
    assert not at.exception, [e.message for e in at.exception]


def test_the_fault_lab_says_in_one_line_that_the_answer_will_be_wide_and_the_press_asks_first():
    at = open_lab()
    assert not at.button(key="train").disabled and "accept_wide" not in [box.key for box in at.checkbox]
    _upload(at, two_class_csv(3.0))
    warnings = [as_read(w.value) for w in at.warning]
    assert SIX_WINDOWS in warnings
    assert at.button(key="train").disabled
    at.checkbox(key="accept_wide").check().run()
    assert not at.button(key="train").disabled


def test_the_shipped_fault_size_study_stores_and_shows_its_left_out_intervals_within_100_points():
    from core.lab.shipped import SHIPPED_STUDIES

    at = open_lab()
    at.selectbox(key="study_pick").set_value(SHIPPED_STUDIES["study_cwru_fault-size.json"]).run()
    at.toggle(key="study_more").set_value(True).run()
    headings = [as_read(m.value) for m in at.markdown if "one (repeat, fold) left out" in m.value]
    assert headings == [
        f"**The primary with one (repeat, fold) left out**: how much one fold moves the answer (95 % CIs {CLIPPED})"
    ]
    (table,) = [frame.value for frame in at.dataframe if "difference (95 % CI)" in frame.value.columns]
    assert list(table["difference (95 % CI)"])[1:] == ["+24.5 (-100.0 to +100.0)", "+19.8 (-100.0 to +100.0)"]
