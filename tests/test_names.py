"""One word per concept, and every old word still accepted (core.lab.names): each old CLI flag parses to the value
its new flag gives, each old URL key maps to a key the page has, each old keyword of a plan or a config means the
same as the new one, and a JSON key is renamed in its place."""

import numpy as np
import pytest

from core.lab import evaluations
from core.lab.cli_args import TRAIN_FLAGS
from core.lab.experiment.cli import _windowing_argv, build_parser, make_plan
from core.lab.experiment.plan import Plan
from core.lab.models import ModelConfig
from core.lab.names import (
    DESIGNS,
    EXPERIMENT_FLAG_ALIASES,
    STUDY_FLAG_ALIASES,
    SWEEP_FLAGS,
    URL_ALIASES,
    new_url_key,
    rename_keys,
    renamed,
)
from core.lab.study.cli import build_parser as build_study_parser
from core.lab.study.runner import StudyPlan
from core.lab.training import TrainConfig
from core.lab.vibration import make_windows, synthetic_bearing_set

TINY = ["--duration", "1.0", "--window", "128", "--patch", "16", "--heads", "2", "--layers", "1", "--threads", "1"]
# a value of each aliased flag other than its default, so that the old flag visibly sets it
EXPERIMENT_VALUES = {
    "--windowing": ["random", "time,random", "random,time"],
    "--windowing-seed": ["7"],
    "--learning-rate": ["0.01"],
}
STUDY_VALUES = {"--design": [design for design in DESIGNS if design != "time-cv"], "--learning-rate": ["0.01"]}


def aliases(table, values):
    return [(new, old, value) for new, olds in table.items() for old in olds for value in values[new]]


@pytest.mark.parametrize(("new", "old", "value"), aliases(EXPERIMENT_FLAG_ALIASES, EXPERIMENT_VALUES))
def test_each_old_experiment_flag_parses_to_what_its_new_flag_gives(new, old, value):
    parser = build_parser()
    with_new, with_old = parser.parse_args([new, value]), parser.parse_args([old, value])
    assert with_old == with_new and with_new != parser.parse_args([])
    assert evaluations.from_args(with_old) == evaluations.from_args(with_new)


def test_the_old_split_flag_turns_the_windowing_comparison_on_as_the_new_flag_does():
    parser = build_parser()
    assert evaluations.from_args(parser.parse_args(["--split", "time,random"]))["compare_windowings"] is True
    assert evaluations.from_args(parser.parse_args(["--windowing", "time"]))["compare_windowings"] is False


@pytest.mark.parametrize(("new", "old", "value"), aliases(STUDY_FLAG_ALIASES, STUDY_VALUES))
def test_each_old_study_flag_parses_to_what_its_new_flag_gives(new, old, value):
    parser = build_study_parser()
    with_new, with_old = parser.parse_args([new, value]), parser.parse_args([old, value])
    assert with_old == with_new and with_new != parser.parse_args([])


@pytest.mark.parametrize(
    ("single", "values", "setting"), [("--d-model", "16,32", "d_models"), ("--pe-scale", "0,0.5", "pe_scales")]
)
def test_a_list_after_the_one_value_flag_is_the_sweep_of_its_sweep_flag(single, values, setting):
    parser = build_parser()
    old = make_plan(parser.parse_args([*TINY, single, values]))
    new = make_plan(parser.parse_args([*TINY, SWEEP_FLAGS[single], values]))
    assert old.evaluations == new.evaluations and old.config == new.config
    assert new.evaluations[setting] == [float(v) for v in values.split(",")]
    # the experiment itself runs at the sweep's first value
    assert (new.config.model.d_model, new.config.model.pe_scale) == (
        (16, 1.0) if setting == "d_models" else (None, 0.0)
    )


def test_one_value_after_the_one_value_flag_sets_it_and_sweeps_nothing():
    plan = make_plan(build_parser().parse_args([*TINY, "--d-model", "32", "--pe-scale", "0.5"]))
    assert (plan.config.model.d_model, plan.config.model.pe_scale) == (32, 0.5)
    assert plan.evaluations["d_models"] is None and plan.evaluations["pe_scales"] is None


def test_a_sweep_given_by_both_spellings_is_refused_in_one_line():
    args = build_parser().parse_args([*TINY, "--d-model", "16,32", "--d-model-sweep", "16,64"])
    with pytest.raises(ValueError, match="a list after --d-model is the sweep: give it once"):
        make_plan(args)


@pytest.mark.parametrize(("old", "new"), list(URL_ALIASES.items()))
def test_each_old_url_key_maps_to_a_key_the_page_reads(old, new):
    from ui.lab.links import LINK_CHOICES, LINK_NUMBERS

    assert new_url_key(old) == new and new in {*LINK_NUMBERS, *LINK_CHOICES}
    assert new_url_key(new) == new  # a current key is its own name


def test_current_and_unknown_url_keys_pass_through_unchanged():
    keys = ("n_seeds", "epochs", "window", "models", "demo_tokens")
    assert [new_url_key(key) for key in keys] == list(keys)


def test_a_count_of_seeds_is_n_seeds_on_the_cli_as_in_the_link_and_seeds_lists_them():
    for parser in (build_parser(), build_study_parser()):
        assert parser.parse_args(["--n-seeds", "3"]).seeds == [0, 1, 2] == parser.parse_args(["--seeds", "0,1,2"]).seeds
        assert parser.parse_args(["--seeds", "3"]).seeds == [3]  # one seed, seed 3
    assert build_parser().parse_args([]).seeds == [0, 1, 2] and build_study_parser().parse_args([]).seeds is None
    for bad in (["--n-seeds", "0"], ["--n-seeds", "two"], ["--seeds", "0", "--n-seeds", "2"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(bad)


def test_the_commands_the_lab_writes_use_the_new_flags():
    plan = make_plan(build_parser().parse_args([*TINY, "--lr", "0.002", "--split-seed", "5", "--windowing", "random"]))
    assert plan.cutting["windowing_seed"] == 5 and plan.config.learning_rate == 0.002
    config = {"data": {"window": 128, "stride": 128, "windowing": "random", "windowing_seed": 5, "data_seed": 0}}
    assert _windowing_argv(config["data"])[:2] == ["--windowing-seed", "5"]
    assert ("--learning-rate", "learning_rate") in TRAIN_FLAGS and not [f for f, _ in TRAIN_FLAGS if f == "--lr"]


@pytest.fixture(scope="module")
def recordings():
    return synthetic_bearing_set(seed=0, duration_s=1.0, classes=("normal", "IR007"))


def test_a_plan_given_its_old_windowing_keywords_cuts_as_with_cutting(recordings):
    old = Plan(
        data=recordings,
        models=["A"],
        seeds=[0],
        windowing={"window": 128, "split": (0.6, 0.2, 0.2), "mode": "random", "seed": 3},
        evaluations={"compare_splits": True},
    )
    new = Plan(
        data=recordings,
        models=["A"],
        seeds=[0],
        cutting={"window": 128, "shares": (0.6, 0.2, 0.2), "windowing": "random", "windowing_seed": 3},
        evaluations={"compare_windowings": True},
    )
    assert old.cutting == new.cutting and old.main_windowing == new.main_windowing == "random"
    assert old.evaluations == new.evaluations and old.evaluations["compare_windowings"] is True
    assert [evaluation.key for evaluation in old.active] == ["windowing_comparison"]
    cut = {"window": 128, "windowing": "random"}
    assert np.array_equal(
        make_windows(recordings, **cut, seed=3).x_train, make_windows(recordings, **cut, windowing_seed=3).x_train
    )


def test_a_study_plan_given_its_old_split_keyword_has_that_design(recordings):
    old = StudyPlan(recordings, split="load-out", window=128)
    assert old.design == "load-out" == StudyPlan(recordings, design="load-out", window=128).design


def test_a_model_config_reads_its_old_field_names():
    assert ModelConfig.from_dict({"n_heads": 2, "n_layers": 3}) == ModelConfig(heads=2, layers=3)
    assert TrainConfig.from_dict({"model": {"patch": 16, "n_heads": 8}}).model == ModelConfig(patch=16, heads=8)
    with pytest.raises(ValueError, match=r"give \['heads'\] or their old names \['n_heads'\], not both"):
        ModelConfig.from_dict({"heads": 2, "n_heads": 2})


def test_renamed_keeps_each_key_in_its_place():
    assert list(renamed({"window": 1, "split": 2, "mode": 3}, {"split": "shares", "mode": "windowing"})) == [
        "window",
        "shares",
        "windowing",
    ]


def test_a_json_key_is_renamed_in_its_place_and_an_absent_path_is_passed_over():
    document = {"config": {"split": "time-cv", "folds": 5, "train": {"model": {"n_heads": 2, "patch": 8}}}}
    renames = {("config", "split"): "design", ("config", "train", "model", "n_heads"): "heads", ("nowhere", "x"): "y"}
    new = rename_keys(document, renames)
    assert new == {"config": {"design": "time-cv", "folds": 5, "train": {"model": {"heads": 2, "patch": 8}}}}
    assert list(new["config"]) == ["design", "folds", "train"] and list(new["config"]["train"]["model"]) == [
        "heads",
        "patch",
    ]
    assert document["config"]["split"] == "time-cv"  # a copy: the document read stays as it was
