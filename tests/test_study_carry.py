"""A study whose epoch cap is raised after its rates were chosen (protocol 3's amendment for the order-dose
curve): its checkpoint carries the learning-rate trials and every run that stopped before the old cap, the runs
that reached the cap are retrained, and the result is the study a fresh run at the new cap gives."""

from __future__ import annotations

import dataclasses

import pytest

from core.lab.study import run_study
from core.lab.study.checkpoint import carry_to_cap, same_runs
from core.lab.study.cli import build_parser
from tests.study_helpers import three_recordings, tiny_study_plan

MODELS = ["B-noPE", "B", "spectrum-LR"]


def without_seconds(runs):
    return [{k: v for k, v in run.items() if k != "train_seconds"} for run in runs]


@pytest.fixture(scope="module")
def recordings():
    return three_recordings()


def plan(recordings, epochs, path=None, **changes):
    settings = {"models": MODELS, "protocol": 3, "checkpoint": path, **changes}
    study = tiny_study_plan(recordings, epochs=epochs, **settings)
    study.config = dataclasses.replace(study.config, patience=2)
    return study


def test_a_raised_cap_carries_stopped_runs_retrains_capped_ones_and_equals_a_fresh_study(recordings, tmp_path):
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    before = run_study(plan(recordings, 8, old))
    capped = [run for run in before["runs"] if run["epochs"] == 8]
    stopped = [run for run in before["runs"] if 0 < run["epochs"] < 8]
    assert any(run["best_epoch"] == 8 for run in capped) and len(stopped) >= 2  # both kinds, as in the curve
    raised = plan(recordings, 14, new, tune_epochs=8)
    counts = carry_to_cap(old, new, raised.identity())
    trials = len(before["tuning_runs"])
    assert counts["carried"] == trials + len(before["runs"]) - len(capped) - 1
    assert counts["retrain"] == len(capped) + 1 and len(counts["check"]) == 1
    after = run_study(raised)
    fresh = run_study(plan(recordings, 14, tune_epochs=8))
    assert without_seconds(after["runs"]) == without_seconds(fresh["runs"])
    assert after["tuning_runs"] == fresh["tuning_runs"] == before["tuning_runs"]  # the trials' cap is kept
    assert after["config"]["tune_epochs"] == 8 and after["config"]["train"]["epochs"] == 14
    key = counts["check"][0]
    check = [r for r in before["runs"] if (r["repeat"], r["fold"], r["seed"], r["model"]) == tuple(key)]
    again = [r for r in after["runs"] if (r["repeat"], r["fold"], r["seed"], r["model"]) == tuple(key)]
    assert same_runs(check[0], again[0])  # retrained at the higher cap: the same run
    assert any(r["epochs"] > 8 for r in after["runs"])  # a capped run went on


def test_a_carry_refuses_other_studies_a_lower_cap_and_a_schedule_that_reads_the_cap(recordings, tmp_path):
    old = tmp_path / "old.jsonl"
    run_study(plan(recordings, 2, old, models=["B-noPE"]))
    with pytest.raises(ValueError, match="higher epoch cap"):
        carry_to_cap(old, tmp_path / "a.jsonl", plan(recordings, 4, tune_epochs=2, seeds=[1]).identity())
    with pytest.raises(ValueError, match="higher epoch cap"):
        carry_to_cap(old, tmp_path / "b.jsonl", plan(recordings, 4).identity())  # the trials' cap not kept
    cosine = plan(recordings, 4, tune_epochs=2)
    cosine.config = dataclasses.replace(cosine.config, lr_schedule="cosine")
    with pytest.raises(ValueError):
        carry_to_cap(old, tmp_path / "c.jsonl", cosine.identity())


def test_the_cli_takes_the_trials_cap_and_refuses_it_without_rate_trials(recordings):
    assert build_parser().parse_args(["--tune-epochs", "100"]).tune_epochs == 100
    with pytest.raises(ValueError, match="--tune-lr"):
        tiny_study_plan(recordings, tune_epochs=3)
