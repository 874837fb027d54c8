"""The study, protocol 3: validation slices spread over every training block, the epoch and one learning rate
per model chosen by validation accuracy, spectrum-LR beside the Transformers, the order gap in every verdict,
train and test loads for load-out; and protocol 2 left exactly as every stored command ran it."""

from __future__ import annotations

import gzip
import json
import shlex

import numpy as np
import pytest

from core.lab.data_spec import DataSpec
from core.lab.epochs import BestEpoch
from core.lab.study import save_study, validate_study
from core.lab.study.cli import build_parser, main, make_study_plan
from core.lab.study.contract import load_study
from core.lab.study.folds import fold_options, make_folds, time_blocks
from core.lab.study.order_gap import order_gap
from core.lab.study.runner import reanalyse
from core.lab.study.tuning import pooled_rates
from core.lab.study.validation import slice_positions
from core.lab.training import TrainConfig, train
from core.lab.vibration import DataError, synthetic_bearing_set
from tests.apptest_utils import ROOT
from tests.study_helpers import WINDOW, three_recordings, tiny_study_plan
from tests.test_study import intervals, nearest

SHIPPED = ["study_order_control.json", "study_cwru_0hp_time-cv.json.gz", "study_spectraquest_load-out.json"]
SHIPPED += ["study_cwru_load-out.json.gz", "study_cwru_fault-size.json"]


@pytest.fixture(scope="module")
def recordings():
    return three_recordings()


# --- validation slices --------------------------------------------------------------------------------------


def test_slices_take_a_share_of_a_block_in_evenly_spread_runs_of_about_six_windows():
    assert [list(p) for p in slice_positions(23, 0.25)] == [[8, 9, 10, 11, 12, 13]]  # one run, centred
    runs = slice_positions(100, 0.25)
    assert [len(p) for p in runs] == [6, 6, 7, 6] and [int(p[0]) for p in runs] == [10, 34, 59, 84]
    assert [list(p) for p in slice_positions(2, 0.25)] == [[0]] and slice_positions(0, 0.25) == []


@pytest.mark.parametrize("repeats", [1, 2])
def test_protocol_3_time_cv_validates_in_every_training_block_apart_from_training_and_tests_every_window_once(
    recordings, repeats
):
    k = 5
    folds = make_folds("time-cv", recordings, WINDOW, k=k, repeats=repeats, validation="slices")
    block_folds = make_folds("time-cv", recordings, WINDOW, k=k, repeats=repeats)
    tested: dict[tuple[int, int], list[int]] = {}
    for fold, old in zip(folds, block_folds):
        roles = {role: intervals(fold.starts[role], WINDOW) for role in ("train", "val", "test")}
        for recording, test in roles["test"].items():
            train, val = roles["train"][recording], roles["val"][recording]
            # no sample in two roles: at least one window length between any two windows of different roles
            assert min(nearest(train, test), nearest(val, test), nearest(train, val)) >= WINDOW
            tested.setdefault((fold.repeat, recording), []).extend(start for start, _ in test)
            length = len(recordings[recording].signal)
            shift = round(fold.repeat * length / (k * repeats))
            for j, block in enumerate(time_blocks(length, k, shift)):
                if j != fold.index:  # every training block holds validation windows
                    assert any(a <= s and e <= b for s, e in val for a, b in block), (fold.name, recording, j)
        assert np.array_equal(fold.test_start, old.test_start)  # the test windows are protocol 2's
        assert abs(len(fold.windows.x_val) - len(old.windows.x_val)) <= 0.1 * len(old.windows.x_val)
    for (repeat, recording), starts in tested.items():
        length = len(recordings[recording].signal)
        bounds = [length * j // k for j in range(k + 1)]
        if repeat == 0:  # each block's windows, each tested exactly once (a later repeat's grid moves with it)
            assert sorted(starts) == [
                b + i * WINDOW for b, e in zip(bounds, bounds[1:]) for i in range((e - b) // WINDOW)
            ]
        assert len(starts) == len(set(starts))


def test_protocol_3_load_out_spreads_validation_over_each_training_recording():
    recordings = synthetic_bearing_set(seed=2, loads=(0, 1), duration_s=1.5, classes=("normal", "IR007"))
    (fold, _) = make_folds("load-out", recordings, WINDOW, validation="slices")
    for (i, starts), (j, val) in zip(fold.starts["train"], fold.starts["val"]):
        assert i == j and recordings[i].meta["load_hp"] == 1
        assert nearest(intervals([(i, starts)], WINDOW)[i], intervals([(i, val)], WINDOW)[i]) >= WINDOW
        grid = len(recordings[i].signal) // WINDOW
        assert abs(val.size - 0.2 * grid) <= 1 and np.ptp(val) > grid * WINDOW / 2  # a fifth, spread, not at the end


# --- train and test loads -----------------------------------------------------------------------------------


def test_load_out_with_train_loads_trains_there_alone_and_tests_each_other_load_as_a_fold():
    recordings = synthetic_bearing_set(seed=2, loads=(0, 1, 2, 3), duration_s=0.6, classes=("IR007", "OR007"))
    folds = make_folds("load-out", recordings, WINDOW, train_loads=[0], test_loads=[2, 3])
    assert [fold.name for fold in folds] == ["test at 2 HP", "test at 3 HP"]
    for fold, load in zip(folds, (2, 3)):
        assert {recordings[i].meta["load_hp"] for i, s in fold.starts["train"] if s.size} == {0}
        assert {recordings[i].meta["load_hp"] for i, s in fold.starts["test"]} == {load}
    assert np.array_equal(folds[0].windows.x_train, folds[1].windows.x_train)  # one training set for every fold
    default = make_folds("load-out", recordings, WINDOW, train_loads=[0, 1])
    assert [fold.name for fold in default] == ["test at 2 HP", "test at 3 HP"]
    with pytest.raises(DataError, match=r"No recordings at load\(s\) \[5\]"):
        make_folds("load-out", recordings, WINDOW, train_loads=[0], test_loads=[5])
    with pytest.raises(ValueError, match="disjoint"):
        make_folds("load-out", recordings, WINDOW, train_loads=[0, 1], test_loads=[1])
    with pytest.raises(ValueError, match="load-out and one-fold designs, not time-cv"):
        make_folds("time-cv", recordings, WINDOW, train_loads=[0])


# --- the epoch and the learning rate ------------------------------------------------------------------------


def test_the_accuracy_rule_keeps_the_most_accurate_epoch_and_breaks_ties_by_loss():
    epochs = [(0.9, 0.6), (0.7, 0.6), (0.8, 0.8), (0.5, 0.8), (0.6, 0.8), (0.4, 0.7)]  # (loss, accuracy)
    by_accuracy, by_loss = BestEpoch("accuracy"), BestEpoch("loss")
    for epoch, (loss, accuracy) in enumerate(epochs, start=1):
        by_accuracy.update(epoch, loss, accuracy)
        by_loss.update(epoch, loss, accuracy)
    assert (by_accuracy.epoch, by_loss.epoch) == (4, 6)  # 0.8 first at epoch 3, at a lower loss at 4
    strict = BestEpoch("accuracy", min_delta=0.35)
    for epoch, (loss, accuracy) in enumerate(epochs, start=1):
        strict.update(epoch, loss, accuracy)
    assert strict.epoch == 3  # epoch 4 is only 0.3 below epoch 3 in loss
    with pytest.raises(ValueError, match="select_by"):
        TrainConfig(select_by="f1")


def test_a_run_under_the_accuracy_rule_restores_the_epoch_its_history_says(recordings):
    plan = tiny_study_plan(recordings, epochs=6)
    (fold, *_) = make_folds("time-cv", recordings, WINDOW, k=3, validation="slices")
    config = TrainConfig(model=plan.config.model, epochs=6, patience=6, select_by="accuracy", learning_rate=0.01)
    run = train(fold.windows, "B", config, seed=0, device="cpu")
    history = run["history"]
    best = max(history, key=lambda row: (row["val_accuracy"], -row["val_loss"]))
    assert run["best_epoch"] == best["epoch"]
    assert "select_by" not in TrainConfig().to_dict() and config.to_dict()["select_by"] == "accuracy"


def test_protocol_3_picks_one_rate_per_model_by_validation_accuracy_pooled_over_folds():
    class Fold:  # what pooled_rates reads of a fold
        def __init__(self, index, n_val):
            self.repeat, self.index, self.windows = 0, index, type("W", (), {"x_val": np.zeros((n_val, 1))})()

    def trial(fold, rate, accuracy, loss):
        return {
            "model": "B",
            "repeat": 0,
            "fold": fold,
            "learning_rate": rate,
            "val_accuracy": accuracy,
            "val_loss": loss,
        }

    # fold 0 (300 windows) favours 1e-3, fold 1 (100) favours 1e-2: pooled, 1e-3 is right on 0.85, 1e-2 on 0.775
    trials = [trial(0, 1e-3, 0.9, 0.3), trial(1, 1e-3, 0.7, 0.9), trial(0, 1e-2, 0.7, 0.5), trial(1, 1e-2, 1.0, 0.1)]
    assert pooled_rates(trials, [Fold(0, 300), Fold(1, 100)]) == {(0, 0): {"B": 1e-3}, (0, 1): {"B": 1e-3}}
    tie = [trial(0, 1e-3, 0.8, 0.5), trial(0, 3e-3, 0.8, 0.4), trial(0, 1e-2, 0.8, 0.4)]
    assert pooled_rates(tie, [Fold(0, 10)]) == {(0, 0): {"B": 3e-3}}  # tie: the lower loss, then the lower rate


# --- a protocol-3 study end to end ---------------------------------------------------------------------------


def test_a_protocol_3_study_stores_its_version_one_rate_per_model_spectrum_lr_and_the_order_gap(tmp_path, capsys):
    out = tmp_path / "v3.json"
    argv = "--duration 1.5 --models B-noPE,B,spectrum-LR --seeds 0 --folds 3 --window 128 --patch 16 --heads 2"
    assert main([*argv.split(), "--layers", "1", "--epochs", "2", "--protocol", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    study = load_study(out)
    config = study["config"]
    assert config["protocol_version"] == 3 and config["train"]["select_by"] == "accuracy"
    rates = config["tuned_learning_rates"]["0"]
    assert len({json.dumps(rates[fold], sort_keys=True) for fold in rates}) == 1  # one rate per model, every fold
    assert "spectrum-LR" not in rates["0"] and len(study["tuning_runs"]) == 3 * 3 * 2  # folds x rates x models
    assert all(0 <= run["val_accuracy"] <= 1 for run in study["tuning_runs"])
    baseline = [run for run in study["runs"] if run["model"] == "spectrum-LR"]
    assert len(baseline) == 3 and all(run["learning_rate"] is None and run["epochs"] == 0 for run in baseline)
    gap = study["order_gap"]
    accuracy = {m: np.mean([r["accuracy"] for r in study["runs"] if r["model"] == m]) for m in ("B", "spectrum-LR")}
    assert gap["best"] == "B" and gap["gap"] == pytest.approx(100 * (accuracy["B"] - accuracy["spectrum-LR"]))
    assert all("the room order has: " in comparison["sentence"] for comparison in study["comparisons"])
    assert "spectrum-LR" in printed and "Order gap:" in printed
    assert reanalyse(study) == study  # the order gap and the sentences come back from the stored runs
    # its folds come back from its config alone (what a retrain of a stored cell needs)
    options = fold_options(config)
    folds = make_folds("time-cv", DataSpec.from_dict(config["data"]).load(), WINDOW, 3, **options)
    assert [len(f.windows.x_val) for f in folds] == [fold["n_val"] for fold in study["folds"]]
    assert options["validation"] == "slices" and fold_options({})["validation"] == "block"


def test_an_order_gap_needs_spectrum_lr_and_a_model_that_sees_order():
    runs = [{"model": m, "accuracy": a} for m, a in [("A", 0.9), ("B", 0.8), ("A+PE", 0.85), ("spectrum-LR", 0.7)]]
    gap = order_gap({"runs": runs + [{"model": "B", "accuracy": 0.96}]})
    assert gap["best"] == "B" and gap["best_accuracy"] == pytest.approx(0.88)  # A scores more but sees no order
    assert gap["gap"] == pytest.approx(18.0) and gap["accuracy"]["A+PE"] == 0.85
    assert order_gap({"runs": runs[:3]}) is None and order_gap({"runs": [runs[0], runs[3]]}) is None


# --- protocol 2, unchanged ----------------------------------------------------------------------------------


def test_a_protocol_2_command_plans_the_stored_study_exactly():
    study = load_study(ROOT / "results" / "study_order_control.json")
    words = shlex.split(study["config"]["command"])
    plan = make_study_plan(build_parser().parse_args(words[3:]), study["config"]["command"])
    assert (plan.protocol, plan.validation, plan.config.select_by) == (2, "block", "loss")
    assert plan.config.to_dict() == study["config"]["train"] and plan.seeds == study["config"]["seeds"]
    assert set(plan.identity()) == {"design", "folds", "repeats", "seeds", "models", "window", "stride", "train"} | {
        "data",
        "tune_lr",
        "pe_scale_sweep",
    }  # a protocol-2 checkpoint made before protocol 3 still resumes
    folds = make_folds(plan.design, plan.recordings, plan.window, plan.folds, plan.stride, plan.repeat_count())
    for fold, stored in zip(folds, study["folds"], strict=True):
        sizes = (len(fold.windows.x_train), len(fold.windows.x_val), len(fold.windows.x_test))
        assert sizes == (stored["n_train"], stored["n_val"], stored["n_test"])
        assert fold.test_start.tolist() == stored["start"] and fold.test_recording.tolist() == stored["recording"]
        assert fold.windows.mean == pytest.approx(stored["normalisation"]["mean"], abs=1e-12)
    assert build_parser().parse_args([]).seeds is None  # the plan's default: six seeds under 2, five under 3
    assert make_study_plan(build_parser().parse_args(["--duration", "1"]), "").seeds == [0, 1, 2, 3, 4, 5]
    assert make_study_plan(build_parser().parse_args(["--duration", "1", "--protocol", "3"]), "").seeds == [
        0,
        1,
        2,
        3,
        4,
    ]


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_version_2_study_reanalyses_to_the_same_bytes(name, tmp_path):
    path = ROOT / "results" / name
    study = load_study(path)
    assert "protocol_version" not in study["config"] and "order_gap" not in study
    again = save_study(reanalyse(study), tmp_path / name)
    # the file as it reads (its schema_version 5 read as 6, nothing else changes) saved again: the same bytes
    assert json.loads(gzip.decompress(path.read_bytes()) if name.endswith(".gz") else path.read_bytes()) == {
        **study,
        "schema_version": 5,
    }
    assert again.read_bytes() == save_study(study, tmp_path / f"read-{name}").read_bytes()
    validate_study(study)
