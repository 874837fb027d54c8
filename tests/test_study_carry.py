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
CAPS = (8, 6, 10, 12)  # the first cap tried found both kinds of run on the machines this was written on


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


def both_kinds(recordings, folder):
    """A first study at the lowest cap of CAPS whose runs hold both kinds the carry tells apart, as in the curve:
    runs still improving at the cap, and at least two that stopped before it (where training stops depends on
    the CPU's rounding, so the cap is searched, not fixed). Returns (cap, study, its checkpoint)."""
    for cap in CAPS:
        path = folder / f"old-{cap}.jsonl"
        study = run_study(plan(recordings, cap, path))
        improving = any(run["best_epoch"] == cap for run in study["runs"])
        if improving and sum(0 < run["epochs"] < cap for run in study["runs"]) >= 2:
            return cap, study, path
    pytest.fail(f"no cap of {CAPS} gave runs both stopped early and still improving at the cap")


def test_a_raised_cap_carries_stopped_runs_retrains_capped_ones_and_equals_a_fresh_study(recordings, tmp_path):
    cap, before, old = both_kinds(recordings, tmp_path)
    new, higher = tmp_path / "new.jsonl", cap + 6
    capped = [run for run in before["runs"] if run["epochs"] == cap]
    raised = plan(recordings, higher, new, tune_epochs=cap)
    counts = carry_to_cap(old, new, raised.identity())
    trials = len(before["tuning_runs"])
    assert counts["carried"] == trials + len(before["runs"]) - len(capped) - 1
    assert counts["retrain"] == len(capped) + 1 and len(counts["check"]) == 1
    after = run_study(raised)
    fresh = run_study(plan(recordings, higher, tune_epochs=cap))
    assert without_seconds(after["runs"]) == without_seconds(fresh["runs"])
    assert after["tuning_runs"] == fresh["tuning_runs"] == before["tuning_runs"]  # the trials' cap is kept
    assert after["config"]["tune_epochs"] == cap and after["config"]["train"]["epochs"] == higher
    key = counts["check"][0]
    check = [r for r in before["runs"] if (r["repeat"], r["fold"], r["seed"], r["model"]) == tuple(key)]
    again = [r for r in after["runs"] if (r["repeat"], r["fold"], r["seed"], r["model"]) == tuple(key)]
    assert same_runs(check[0], again[0])  # retrained at the higher cap: the same run
    assert any(r["epochs"] > cap for r in after["runs"])  # a capped run went on


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
