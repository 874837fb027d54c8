"""A study's cross-load tests (core.lab.study.cross_load): a one-fold study trained at one motor load whose every run
is also scored at other loads, nothing retrained. The fold is the experiment's cross-load cut, the scores are the
experiment's cross-load block's to the bit, the train load's score is the run's own, another load's is scored on
every window there, the effects table is the paired arithmetic of those scores, and the contract, the plan and the
CLI refuse in words what the cell cannot mean."""

from __future__ import annotations

import copy
import json
import re

import pytest

from core.lab.contract import SCHEMA_VERSION
from core.lab.experiment.plan import Plan, experiment_studies, one_fold_study, plan_results, train_plan
from core.lab.models import ModelConfig
from core.lab.reopen import open_saved
from core.lab.stats import words
from core.lab.study import StudyPlan, run_study, validate_study
from core.lab.study.cli import _runs_line, build_parser, main, make_study_plan
from core.lab.study.comparisons import shares_training
from core.lab.study.contract import load_study
from core.lab.study.cross_load import cross_load_effects, cross_load_frame
from core.lab.study.leak import study_leak
from core.lab.study.migration import migrate
from core.lab.training import TrainConfig
from core.lab.vibration import synthetic_bearing_set
from core.limits import BudgetExceeded
from tests.apptest_utils import errors, open_lab
from tests.study_helpers import WINDOW, assert_hand_computed, assert_refused, one_fold_plan
from ui.lab.study import OWN_STUDY

CONFIG = TrainConfig(model=ModelConfig(patch=16, heads=2, layers=1), epochs=2, threads=1)
MODELS, SEEDS = ["B-noPE", "B"], [0, 1, 2]
CUT = {"windowing": "time", "windowing_seed": 0}
DURATION_S = 1.0


@pytest.fixture(scope="module")
def recordings():
    """Three loads; normal is left out at 2 HP, so only IR007 and OR007 are recorded at every load."""
    every = synthetic_bearing_set(seed=0, loads=(0, 1, 2), duration_s=DURATION_S, classes=("normal", "IR007", "OR007"))
    return [r for r in every if not (r.label == "normal" and r.meta["load_hp"] == 2)]


@pytest.fixture(scope="module")
def study(recordings):
    plan = one_fold_plan(recordings, MODELS, SEEDS, CONFIG, train_loads=[0], test_loads=[2, 0, 1])
    assert plan.run_count() == len(MODELS) * len(SEEDS)  # scoring at other loads trains nothing more
    return run_study(plan)


def test_the_fold_is_cut_at_the_train_load_of_the_common_classes_and_every_run_is_scored_at_each_load(
    recordings, study
):
    validate_study(study)
    config = study["config"]
    assert (config["train_loads"], config["test_loads"]) == ([0], [0, 1, 2])  # in ascending order, as recorded
    assert study["class_names"] == ["IR007", "OR007"]  # normal is not recorded at 2 HP
    at_train_load = {i for i, r in enumerate(recordings) if r.meta["load_hp"] == 0 and r.label != "normal"}
    assert set(study["folds"][0]["recording"]) == at_train_load  # no other recording is tested or trained on
    assert "of these two recordings" in config["population"]
    assert not shares_training(study)  # its one fold's runs: not a load-out study's training shared by every fold
    for run in study["runs"]:
        scores = run["cross_load"]
        # the train load is scored on the fold's own test windows: the run's own scores
        assert (scores["accuracy"][0], scores["f1"][0]) == (run["accuracy"], run["f1"])
        assert all(0 <= value <= 1 for value in scores["accuracy"] + scores["f1"])
    # a load the model never saw is scored on every window there: an accuracy is a count over that many windows
    windows_at_other_load = 2 * (int(DURATION_S * 12_000) // WINDOW)  # two recordings, stride = window
    for run in study["runs"]:
        for accuracy in run["cross_load"]["accuracy"][1:]:
            assert accuracy * windows_at_other_load == pytest.approx(round(accuracy * windows_at_other_load))
    assert any(run["cross_load"]["accuracy"][1] != run["accuracy"] for run in study["runs"])


def test_the_experiments_cross_load_is_the_one_fold_studys_cell_to_the_bit(recordings, study):
    cutting = {"window": WINDOW, **CUT}
    loads = {"train_loads": [0, 1], "test_loads": [0, 1, 2]}
    plan = Plan(recordings, MODELS, SEEDS, config=CONFIG, cutting=cutting, evaluations=loads)
    trained = train_plan(plan)
    block = plan_results(plan, trained)["cross_load"]
    for run in study["runs"]:
        for metric in ("accuracy", "f1"):
            first_train_load = block[metric][run["model"]][0]  # row 0: trained at 0 HP, as the study
            assert run["cross_load"][metric] == [cell["values"][SEEDS.index(run["seed"])] for cell in first_train_load]
    studies = experiment_studies(plan, trained)  # the experiment's runs as one-fold studies, one per train load
    assert list(studies) == ["time", "load1"]
    as_study = studies["time"]
    assert as_study["class_names"] == study["class_names"]
    # it lists the recordings of the classes the experiment kept (normal, absent at 2 HP, takes no part in either)
    assert [r for r in study["recordings"] if r["label"] != "normal"] == as_study["recordings"]
    assert _tested(as_study) == _tested(study)
    assert [(r["model"], r["seed"], r["predictions"], r["cross_load"]) for r in as_study["runs"]] == [
        (r["model"], r["seed"], r["predictions"], r["cross_load"]) for r in study["runs"]
    ]
    assert cross_load_effects(as_study) == cross_load_effects(study)
    at_load_1 = studies["load1"]  # the further train load's runs: a study of their own, with the row of load 1
    assert (at_load_1["config"]["train_loads"], at_load_1["config"]["test_loads"]) == ([1], [0, 1, 2])
    assert {at_load_1["recordings"][i]["load_hp"] for i in at_load_1["folds"][0]["recording"]} == {1}
    for run in at_load_1["runs"]:
        assert run["cross_load"]["accuracy"] == [
            cell["values"][SEEDS.index(run["seed"])] for cell in block["accuracy"][run["model"]][1]
        ]
        assert run["cross_load"]["accuracy"][1] == run["accuracy"]  # load 1 is its own test windows
    with pytest.raises(ValueError, match=r"trained no runs at train load 2 \(--train-loads\)"):
        one_fold_study(plan, trained, train_load=2)


def _tested(study):
    """Each test window of the one fold as (recording file, first sample): the same windows whatever the list."""
    fold = study["folds"][0]
    return [(study["recordings"][i]["file"], start) for i, start in zip(fold["recording"], fold["start"])]


def test_the_effects_are_the_paired_differences_over_seeds_with_their_t_interval(study):
    effects = cross_load_effects(study)
    assert [(row["a"], row["b"], row["test_load"]) for row in effects] == [("B-noPE", "B", load) for load in (0, 1, 2)]
    own, _, far = effects
    primary = study["comparisons"][0]
    assert (own["diff"], own["ci95"]) == (primary["diff"], primary["ci95"])  # the train load: the primary itself
    assert_hand_computed(far, study, "cross_load", 2)
    table = cross_load_frame(effects)
    assert list(table["test set"]) == ["at load 0", "at load 1", "at load 2"]
    assert table["b − a (points)"].iloc[2] == words.points(far["diff"], 2)


def test_a_tuned_study_scores_the_runs_it_takes_from_its_trials_at_every_load(recordings):
    plan = one_fold_plan(recordings, ["B"], [0], CONFIG, train_loads=[0], test_loads=[0, 1], tune_lr=True)
    tuned = run_study(plan)  # validated: the run taken from a trial records its cross-load scores too
    (run,) = tuned["runs"]
    assert run["cross_load"]["accuracy"][0] == run["accuracy"] and len(run["cross_load"]["f1"]) == 2


def test_the_plan_and_the_contract_refuse_in_words_what_the_cell_cannot_mean(recordings, study):
    for loads, message in [
        ({"train_loads": [0, 1], "test_loads": [2]}, "trains at one load"),
        ({"train_loads": [0]}, "trains at one load"),
        ({"test_loads": [1]}, "trains at one load"),
        ({"train_loads": [0], "test_loads": [1, 1]}, "must not repeat"),
    ]:
        with pytest.raises(ValueError, match=message):
            one_fold_plan(recordings, MODELS, SEEDS, CONFIG, **loads)
    with pytest.raises(ValueError, match="belong to the load-out and one-fold designs, not time-cv"):
        StudyPlan(recordings, design="time-cv", models=MODELS, train_loads=[0], test_loads=[1])

    assert_refused(study, lambda s: s["runs"][0].pop("cross_load"), r"runs\[0\]\.cross_load must hold")
    assert_refused(
        study, lambda s: s["runs"][1]["cross_load"]["accuracy"].pop(), r"runs\[1\]\.cross_load\.accuracy must hold"
    )
    assert_refused(study, lambda s: s["config"].update(train_loads=[0, 1]), "config.train_loads holds one load")
    assert_refused(
        study, lambda s: s["config"].update(test_loads=[0, 0, 1]), "config.test_loads must hold distinct loads"
    )
    assert_refused(
        study, lambda s: s["config"].update(train_loads=None, test_loads=None), r"runs\[0\]\.cross_load needs config"
    )


def test_the_study_cli_trains_the_cell_and_prints_its_table(tmp_path, capsys):
    out = tmp_path / "cross_load.json"
    argv = ["--duration", "1", "--loads", "0,1", "--models", "B-noPE,B", "--design", "one-fold", "--window", "128"]
    argv += ["--patch", "16", "--heads", "2", "--layers", "1", "--epochs", "1", "--seeds", "0,1"]
    argv += ["--train-loads", "0", "--test-loads", "1"]
    plan = make_study_plan(build_parser().parse_args(argv), "")
    assert (plan.train_loads, plan.test_loads) == ([0], [1]) and plan.identity()["loads"] == {
        "train_loads": [0],
        "test_loads": [1],
    }
    assert _runs_line(plan, 1, plan.run_count()) == "one-fold study: 4 runs (2 models x 2 seeds x 1 fold x 1 repeat)"
    assert main([*argv, "--accept-wide", "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    saved = load_study(out)
    (row,) = cross_load_effects(saved)
    cells = ["at load 1", words.amount(row["mean_a"]), words.amount(row["mean_b"]), words.points(row["diff"], 2)]
    assert re.search(r"B − B-noPE\s+" + r"\s+".join(map(re.escape, cells)), printed), (cells, printed)


def test_a_reopened_study_shows_its_cell_and_one_of_too_many_loads_is_refused_before_any_table(study):
    kind, reopened = open_saved(json.dumps(study).encode())
    assert kind == "study" and cross_load_effects(reopened) == cross_load_effects(study)
    many = copy.deepcopy(study)
    many["config"]["test_loads"] = list(range(17))
    for run in many["runs"]:
        run["cross_load"] = {metric: [run[metric]] * 17 for metric in ("accuracy", "f1")}
    with pytest.raises(BudgetExceeded, match="The number of test loads is 17, over the limit of 16"):
        open_saved(json.dumps(many).encode())
    at = open_lab()
    at.file_uploader(key="open_json").set_value(("loads.json", json.dumps(study).encode(), "application/json")).run()
    at.button(key="open_file").click().run()
    assert not errors(at), errors(at)
    at.selectbox(key="study_pick").set_value(OWN_STUDY).run()
    assert not any(m.value.startswith("**At other loads**") for m in at.markdown)  # behind "More of this study"
    at.toggle(key="study_more").set_value(True).run()
    assert any(m.value.startswith("**At other loads**: each run trained at 0") for m in at.markdown)
    shown = [frame.value for frame in at.dataframe if "test set" in frame.value.columns]
    assert any(list(frame["test set"]) == ["at load 0", "at load 1", "at load 2"] for frame in shown), shown


def test_a_study_of_the_previous_version_reads_as_the_current_one_unchanged(study):
    previous = copy.deepcopy(study)
    previous["config"] = {k: v for k, v in previous["config"].items() if k not in ("train_loads", "test_loads")}
    previous["runs"] = [{k: v for k, v in run.items() if k != "cross_load"} for run in previous["runs"]]
    previous["schema_version"] = 7
    current = migrate(previous)
    assert current == {**previous, "schema_version": SCHEMA_VERSION} and SCHEMA_VERSION == 8
    validate_study(current)
    assert cross_load_effects(current) == []


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: s["config"].update(train_loads=["<b>0</b>"]), "config.train_loads must be null or a non-empty list"),
        (lambda s: s["config"].update(test_loads=[[1]]), "config.test_loads must be null or a non-empty list"),
        (lambda s: s["runs"][0].update(cross_load={"accuracy": ["x"] * 3, "f1": [0.5] * 3}), "cross_load.accuracy"),
        (lambda s: s["runs"][0].update(cross_load=[1, 2]), r"runs\[0\]\.cross_load must hold"),
    ],
)
def test_a_hostile_file_is_refused_in_words_before_its_loads_reach_the_page(study, change, message):
    hostile = copy.deepcopy(study)
    change(hostile)
    with pytest.raises(ValueError, match=message):
        open_saved(json.dumps(hostile).encode())


def test_the_leak_pairs_the_train_loads_own_studies_and_refuses_another_loads(recordings):
    cutting = {"window": WINDOW, **CUT}
    settings = {"train_loads": [0, 1], "test_loads": [2], "compare_windowings": True}
    plan = Plan(recordings, MODELS, [0, 1], config=CONFIG, cutting=cutting, evaluations=settings)
    trained = train_plan(plan)
    studies = experiment_studies(plan, trained)
    assert list(studies) == ["time", "random", "load1"]
    leak = study_leak(studies["time"], studies["random"])  # the press's own pair: both trained at 0 HP
    block = plan_results(plan, trained)["windowing_comparison"]["leak"]
    assert {model: row["diff"] for model, row in leak.items()} == {model: row["diff"] for model, row in block.items()}
    with pytest.raises(
        ValueError, match="differ in their windowing alone; they differ in \\['the loads trained at'\\]"
    ):
        study_leak(studies["load1"], studies["random"])  # trained at 1 HP against windows dealt at 0 HP
