"""The windowing comparison as two one-fold studies (core.lab.study.leak): a study cut in time and one dealt at
random, at the experiment's settings, give the experiment's windowing comparison to the bit, and the leak is the
paired difference over seeds computed by hand; a pair that differs in more than its windowing is refused."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from scipy import stats

from core.lab.experiment.plan import Plan, one_fold_study, plan_results, train_plan
from core.lab.models import ModelConfig
from core.lab.study import run_study
from core.lab.study.cli import main
from core.lab.study.leak import leak_frame, study_leak
from core.lab.training import TrainConfig
from tests.study_helpers import one_fold_plan, three_recordings

CONFIG = TrainConfig(model=ModelConfig(patch=16, heads=2, layers=1), epochs=2, threads=1)
MODELS, SEEDS = ["B-noPE", "B"], [0, 1, 2]


@pytest.fixture(scope="module")
def recordings():
    return three_recordings()


@pytest.fixture(scope="module")
def studies(recordings):
    def one_fold(windowing: str) -> dict:
        plan = one_fold_plan(recordings, MODELS, SEEDS, CONFIG, cutting={"windowing": windowing, "windowing_seed": 0})
        return run_study(plan)

    return one_fold("time"), one_fold("random")


def test_two_one_fold_studies_give_the_experiments_windowing_comparison_to_the_bit(recordings, studies):
    plan = Plan(
        recordings,
        MODELS,
        SEEDS,
        config=CONFIG,
        cutting={"window": 128, "windowing": "time", "windowing_seed": 0},
        evaluations={"compare_windowings": True},
    )
    trained = train_plan(plan)
    block = plan_results(plan, trained)["windowing_comparison"]
    leak = study_leak(*studies)
    assert list(leak) == MODELS
    for model in MODELS:
        for key in ("diff", "ci95", "ci90", "mde80", "p", "verdict", "sentence"):
            assert leak[model][key] == block["leak"][model][key], (model, key)
    # the experiment's own two windowings, as two one-fold studies, are those two studies run for run
    own = {w: one_fold_study(plan, trained, windowing=w) for w in ("time", "random")}
    for windowing, study in zip(("time", "random"), studies):
        assert own[windowing]["folds"] == study["folds"]
        for ours, theirs in zip(own[windowing]["runs"], study["runs"], strict=True):
            assert ours == {**theirs, "train_seconds": ours["train_seconds"]}
    assert study_leak(own["time"], own["random"]) == leak
    assert own["time"] == one_fold_study(plan, trained)  # its own windowing: the study of the experiment itself
    with pytest.raises(ValueError, match="trained no runs under the random windowing"):
        one_fold_study(
            plan_without := Plan(recordings, MODELS, [0], config=CONFIG, cutting={"window": 128}),
            train_plan(plan_without),
            windowing="random",
        )


def test_the_leak_is_the_paired_difference_over_seeds_with_its_t_interval(studies):
    time_study, random_study = studies
    leak = study_leak(time_study, random_study)

    def accuracies(study, model):
        return np.array([r["accuracy"] for r in sorted(study["runs"], key=lambda r: r["seed"]) if r["model"] == model])

    d = 100 * (accuracies(random_study, "B") - accuracies(time_study, "B"))
    half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    assert leak["B"]["diff"] == pytest.approx(d.mean(), abs=1e-9)
    assert leak["B"]["ci95"] == pytest.approx([max(-100, d.mean() - half), min(100, d.mean() + half)], abs=1e-9)
    table = leak_frame(leak)
    assert list(table["model"]) == MODELS and table["leak (random − time), points"].iloc[1] == f"{d.mean():+.2f}"


def test_a_pair_that_differs_beyond_its_windowing_is_refused_in_words(studies):
    time_study, random_study = studies
    with pytest.raises(ValueError, match="the random study given is a one-fold study with time windowing"):
        study_leak(time_study, time_study)
    other_seeds = copy.deepcopy(random_study)
    other_seeds["config"]["seeds"] = [0, 1]
    with pytest.raises(ValueError, match=r"differ in their windowing alone; they differ in \['seeds'\]"):
        study_leak(time_study, other_seeds)
    cross_validated = copy.deepcopy(time_study)
    cross_validated["config"]["design"] = "time-cv"
    with pytest.raises(ValueError, match="the time study given is a time-cv study"):
        study_leak(cross_validated, random_study)


def test_the_study_cli_prints_the_leak_of_two_saved_studies(studies, tmp_path, capsys):
    paths = []
    for study, name in zip(studies, ("time.json", "random.json")):
        paths.append(tmp_path / name)
        paths[-1].write_text(json.dumps(study))
    assert main(["--leak", str(paths[0]), str(paths[1])]) == 0
    printed = capsys.readouterr().out
    leak = study_leak(*studies)
    assert f"{leak['B']['diff']:+.2f}" in printed and leak["B"]["sentence"] in printed
    assert main(["--leak", str(paths[1]), str(paths[0])]) == 2  # the order is time, then random
    assert "the leak compares a one-fold study cut in time" in capsys.readouterr().err
