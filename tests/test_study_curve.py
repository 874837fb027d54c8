"""The order curve's results file (core.lab.study.curve): accuracies recounted from per-window predictions, the
one-patch RMS check on a study's folds, one study per level assembled, saved within 1 MB and checked."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import core.lab.study.curve as curve_module
from core.lab.data_spec import DataSpec
from core.lab.study import run_study
from core.lab.study.curve import (
    build_curve,
    failed_checks,
    load_curve,
    one_patch_check,
    pooled_accuracies,
    reanalyse_curve,
    save_curve,
    validate_curve,
)
from core.lab.study.folds import make_folds
from core.lab.vibration import Recording
from tests.study_helpers import tiny_study_plan


@pytest.fixture(scope="module")
def level_studies():
    """A tiny study of B-noPE and B at each of the four levels: 3 s per class, 128-sample windows, 3 folds."""
    studies = []
    for level in range(4):
        spec = DataSpec("order_curve", synthetic_duration_s=3.0, order_level=level)
        plan = tiny_study_plan(spec.load(), models=["B-noPE", "B"], data_settings=spec.to_dict())
        studies.append(run_study(plan))
    return studies


def test_a_models_accuracy_counts_every_window_of_every_run_once():
    def run(model, true, predicted):
        return {"model": model, "predictions": {"true": true, "predicted": predicted, "p_true": [0.5] * len(true)}}

    study = {"runs": [run("B", [0, 1, 1], [0, 1, 0]), run("B", [0, 0], [0, 0]), run("A", [1, 0], [0, 1])]}
    # B: 4 of 5 windows (the mean of its two runs' accuracies would be 5/6); A: none
    assert pooled_accuracies(study) == {"B": 0.8, "A": 0.0}


def test_the_one_patch_check_finds_the_one_position_that_carries_the_class():
    rng = np.random.default_rng(0)
    quiet, loud = rng.standard_normal((2, 15 * 1024))
    loud.reshape(15, 32, 32)[:, 5] *= 4  # patch 5 of every window four times louder, in one class only
    recordings = [Recording(quiet, 12_000.0, "quiet"), Recording(loud, 12_000.0, "loud")]
    folds = make_folds("time-cv", recordings, 1024, 3)  # blocks of 5 windows: every window starts on 1024
    study = {"config": {"train": {"model": {"patch": 32}}}}
    check = one_patch_check(study, folds)
    assert check == {"accuracy": 1.0, "n_test": 30, "positions": [5, 5, 5]}


def test_one_study_per_level_makes_a_curve_that_saves_within_a_megabyte_and_reads_back(level_studies, tmp_path):
    curve = build_curve(level_studies[::-1], "python bench/order_curve.py --smoke")
    assert [level["level"] for level in curve["levels"]] == [0, 1, 2, 3]
    first = curve["levels"][0]
    assert first["parameters"]["contrast_samples"] == 48 and first["chance"] == 0.5
    assert set(first["accuracy"]) == {"B", "B-noPE"}
    assert (first["primary"]["a"], first["primary"]["b"]) == ("B-noPE", "B")
    assert first["one_patch_rms"]["n_test"] == sum(f["n_test"] for f in first["study"]["folds"])
    assert set(first["checks"]) == {"one-patch RMS near chance"}  # no spectrum-LR in these studies
    path = save_curve(curve, tmp_path / "curve.json.gz")
    assert path.stat().st_size < curve_module.MAX_CURVE_BYTES
    assert load_curve(path) == curve


def test_a_curve_over_a_megabyte_is_refused_and_not_written(level_studies, tmp_path, monkeypatch):
    curve = build_curve(level_studies)
    monkeypatch.setattr(curve_module, "MAX_CURVE_BYTES", 1000)
    with pytest.raises(ValueError, match="bytes, over 1,000"):
        save_curve(curve, tmp_path / "curve.json")
    assert not (tmp_path / "curve.json").exists()


def test_a_curve_of_fewer_than_four_levels_or_with_numbers_that_do_not_recount_is_refused(level_studies):
    curve = build_curve(level_studies)
    with pytest.raises(ValueError, match="invalid order curve: an order curve has at least 4 levels"):
        validate_curve({**curve, "levels": curve["levels"][:3]})
    with pytest.raises(ValueError, match="distinct, easiest first"):
        validate_curve({**curve, "levels": [curve["levels"][0], *curve["levels"][:3]]})
    tampered = copy.deepcopy(curve)
    tampered["levels"][1]["accuracy"]["B"] += 0.01
    with pytest.raises(ValueError, match=r"levels\[1\].accuracy must recount from the predictions"):
        validate_curve(tampered)
    with pytest.raises(ValueError, match="its study lacks spectrum-LR"):
        validate_curve(curve, models=("B", "B-noPE", "spectrum-LR"))


def test_a_check_that_leaves_chance_by_5_points_or_more_is_named_with_its_level(level_studies):
    checks = [{"accuracy": accuracy, "n_test": 100, "positions": [0]} for accuracy in (0.5, 0.56, 0.44, 0.54)]
    curve = build_curve(level_studies, one_patch=checks)
    assert failed_checks(curve) == ["level 1: one-patch RMS near chance", "level 2: one-patch RMS near chance"]


def test_a_reanalysed_curve_recomputes_every_levels_comparisons_from_its_runs(level_studies):
    curve = build_curve(level_studies, "python bench/order_curve.py --smoke")
    stale = copy.deepcopy(curve)  # as written by older code: other words in a level's comparisons
    stale["levels"][1]["study"]["comparisons"][0]["sentence"] = "written before the re-analysis"
    stale["levels"][1]["primary"]["sentence"] = "written before the re-analysis"
    again = reanalyse_curve(stale)
    assert again == curve and again["levels"][1]["one_patch_rms"] == curve["levels"][1]["one_patch_rms"]
