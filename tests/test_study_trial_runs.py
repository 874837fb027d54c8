"""A study takes the first seed's run at a model's chosen learning rate from the trial that trained it
(core.lab.study.final_runs): the study is the same, run for run and profile for profile, as one that trains that run
again, one run per tuned model and fold fewer is trained, and nothing is taken where the trials have a cap of
their own."""

from __future__ import annotations

import pytest

from core.lab.study import run_study
from core.lab.study.final_runs import TrialRuns
from tests.study_helpers import count_training, three_recordings, tiny_study_plan

MODELS = ["B-noPE", "B", "spectrum-LR"]
TUNED, FOLDS, SEEDS = 2, 3, [0, 1]


@pytest.fixture(scope="module")
def recordings():
    return three_recordings()


def _without_seconds(study: dict) -> dict:
    runs = [{k: v for k, v in run.items() if k != "train_seconds"} for run in study["runs"]]
    return {**study, "runs": runs, "config": {k: v for k, v in study["config"].items() if k != "git_commit"}}


def test_the_first_seed_at_its_chosen_rate_is_taken_from_its_trial_and_equals_a_run_trained_again(
    recordings, monkeypatch, tmp_path
):
    plan = tiny_study_plan(recordings, epochs=3, models=MODELS, seeds=SEEDS, protocol=3)
    trained = count_training(monkeypatch)
    taken = run_study(plan)
    trials = 3 * TUNED * FOLDS
    assert len(trained) == trials + TUNED * FOLDS * len(SEEDS) - TUNED * FOLDS  # seed 0's runs not trained again
    fits = FOLDS * len(SEEDS)  # spectrum-LR's, counted among the runs but not trained
    assert plan.trained_count() == len(trained) + fits == plan.run_count() - TUNED * FOLDS
    assert [seed for _, seed, _ in trained[trials:]] == [1] * TUNED * FOLDS

    trained.clear()
    monkeypatch.setattr(TrialRuns, "applies", staticmethod(lambda plan: False))
    again = run_study(plan)
    assert len(trained) == trials + TUNED * FOLDS * len(SEEDS)
    assert _without_seconds(taken) == _without_seconds(again)  # runs, profiles, comparisons: all the same
    assert set(taken["profiles"]) == {"B-noPE", "B"}


def test_a_resumed_study_takes_the_kept_trial_from_its_checkpoint(recordings, monkeypatch, tmp_path):
    path = tmp_path / "runs.jsonl"
    plan = tiny_study_plan(recordings, epochs=2, models=MODELS, seeds=[0], protocol=3, checkpoint=path)
    first = run_study(plan)
    lines = path.read_text().splitlines()
    kept = [line for line in lines if '"kind":"run"' not in line]  # the trials (and spectrum-LR's runs go too)
    path.write_text("\n".join(kept) + "\n")
    trained = count_training(monkeypatch)
    again = run_study(plan)
    assert trained == []  # every Transformer run is a kept trial; spectrum-LR is fitted, not trained
    assert _without_seconds(again) == _without_seconds(first)


def test_nothing_is_taken_from_trials_with_an_epoch_cap_of_their_own(recordings, monkeypatch):
    plan = tiny_study_plan(recordings, epochs=3, models=MODELS, seeds=[0], protocol=3, tune_epochs=2)
    assert not TrialRuns.applies(plan)
    trained = count_training(monkeypatch)
    run_study(plan)
    assert len(trained) == 3 * TUNED * FOLDS + TUNED * FOLDS == plan.trained_count() - FOLDS == plan.run_count() - FOLDS
