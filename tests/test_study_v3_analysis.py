"""The analysis of a protocol-3 study, end to end on tiny synthetic studies: version 2's interval stored beside
version 3's (`ci95_resampled`), seeds as the unit where the folds share one training set, a `--reanalyse` that
gives back what was written, and the recount of every score from the per-window predictions."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from scipy import stats

from core.lab.stats.intervals import bounded
from core.lab.stats.resampled import resampled_interval
from core.lab.stats.shared_training import pooled_seed_differences, seed_interval, seed_leave_one_out
from core.lab.study import run_study, validate_study
from core.lab.study.checks import recount_mismatches
from core.lab.study.cli import main
from core.lab.study.comparisons import cell_differences, fold_test_train_ratio
from core.lab.study.contract import load_study
from core.lab.study.runner import reanalyse
from core.lab.vibration import synthetic_bearing_set
from tests.apptest_utils import ROOT
from tests.study_helpers import tiny_study_plan

TINY = "--duration 1.5 --seeds 0,1 --folds 3 --window 128 --patch 16 --heads 2 --layers 1 --epochs 1 --protocol 3"


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A tiny --protocol 3 time-cv study of A, B-noPE, B and spectrum-LR, written by the CLI: (path, study)."""
    out = tmp_path_factory.mktemp("v3") / "tiny_v3.json.gz"
    assert main([*TINY.split(), "--models", "A,B-noPE,B,spectrum-LR", "--quiet", "--out", str(out)]) == 0
    return out, load_study(out)


@pytest.fixture(scope="module")
def shared_training():
    """A tiny --protocol 3 load-out study trained at 0 HP alone and tested at 1 and 2 HP, three seeds."""
    recordings = synthetic_bearing_set(seed=2, loads=(0, 1, 2), duration_s=1.0, classes=("normal", "IR007", "OR007"))
    plan = tiny_study_plan(
        recordings,
        design="load-out",
        train_loads=[0],
        test_loads=[1, 2],
        models=["B-noPE", "B", "spectrum-LR"],
        seeds=[0, 1, 2],
        protocol=3,
    )
    return run_study(plan)


def test_a_reanalysed_protocol_3_study_gives_back_the_bytes_it_was_written_with(written, tmp_path, capsys):
    path, study = written
    again = tmp_path / "again.json.gz"
    assert main(["--reanalyse", str(path), "--out", str(again)]) == 0
    assert "B vs B-noPE" in capsys.readouterr().out
    assert load_study(again)["comparisons"] == study["comparisons"]
    assert again.read_bytes() == path.read_bytes()
    assert all({"ci95_resampled", "variance_components"} <= set(c) for c in study["comparisons"])


def test_every_protocol_3_comparison_keeps_version_2s_interval_at_its_own_level(written):
    _, study = written
    primary, *secondary = study["comparisons"]
    assert [(c["a"], c["b"]) for c in study["comparisons"]] == [("B-noPE", "B"), ("A", "B"), ("A", "B-noPE")]
    ratio = fold_test_train_ratio(study)
    cells, _, _ = cell_differences(study, "B-noPE", "B")
    assert primary["ci95_resampled"] == bounded(resampled_interval(cells, ratio), "accuracy").ci(0.95)
    for comparison in secondary:  # two secondary comparisons: Bonferroni's 97.5 % each
        cells, _, _ = cell_differences(study, comparison["a"], comparison["b"])
        interval = resampled_interval(cells, ratio)
        half = stats.t.ppf(1 - 0.05 / 4, interval.df) * interval.se
        expected = [max(interval.diff - half, -100.0), min(interval.diff + half, 100.0)]
        assert comparison["ci95_resampled"] == pytest.approx(expected, abs=1e-12)
    broken = copy.deepcopy(study)
    broken["comparisons"][0]["ci95_resampled"] = [2.0, 1.0]
    with pytest.raises(ValueError, match=r"comparisons\[0\]\.ci95_resampled must be null or \[low, high\]"):
        validate_study(broken)


def test_a_version_2_study_stores_no_version_3_keys():
    study = load_study(ROOT / "results" / "study_order_control.json")
    assert not any({"ci95_resampled", "variance_components"} & set(c) for c in study["comparisons"])


def test_where_folds_share_one_training_set_the_seed_is_the_unit_of_every_interval(shared_training):
    study = shared_training
    assert study["config"]["train_loads"] == [0] and [f["name"] for f in study["folds"]] == [
        "test at 1 HP",
        "test at 2 HP",
    ]
    windows = np.array([fold["n_test"] for fold in study["folds"]])
    cells, _, _ = cell_differences(study, "B-noPE", "B")
    primary = study["comparisons"][0]
    interval = bounded(seed_interval(cells, windows), "accuracy")
    assert primary["diff"] == interval.diff and primary["ci95"] == interval.ci(0.95)
    assert (primary["ci90"], primary["mde80"], primary["p"]) == (interval.ci(0.90), interval.mde80, interval.p)
    # diff: every test window of each seed counted once, B's right windows minus B-noPE's over all of them
    right: dict[tuple[str, int], int] = {}
    for run in study["runs"]:
        hits = int(np.sum(np.equal(run["predictions"]["true"], run["predictions"]["predicted"])))
        right[run["model"], run["seed"]] = right.get((run["model"], run["seed"]), 0) + hits
    by_seed = [100 * (right["B", seed] - right["B-noPE", seed]) / windows.sum() for seed in (0, 1, 2)]
    assert pooled_seed_differences(cells, windows) == pytest.approx(by_seed, abs=1e-9)
    assert primary["diff"] == pytest.approx(np.mean(by_seed), abs=1e-9)
    assert [row["diff"] for row in primary["by_fold"]] == pytest.approx(cells[0].mean(axis=1).tolist())
    assert primary["leave_one_fold_out"] == seed_leave_one_out(cells, windows, 100.0)
    assert "pooled over every test window" in primary["sentence"] and "ci95_resampled" in primary
    assert reanalyse(study) == study


def test_a_score_that_does_not_recount_from_the_predictions_is_named(written):
    _, study = written
    assert recount_mismatches(study) == []
    doctored = copy.deepcopy(study)
    doctored["runs"][2]["accuracy"] += 1e-12
    run = doctored["runs"][4]
    true, predicted = run["predictions"]["true"][0], run["predictions"]["predicted"][0]
    run["predictions"]["predicted"][0] = (true + 1) % len(study["class_names"]) if predicted == true else true
    first = doctored["runs"][2]
    problems = recount_mismatches(doctored)
    assert problems[0] == (
        f"runs[2] ({first['model']} seed {first['seed']}, repeat {first['repeat']}, fold {first['fold']}): accuracy"
    )
    assert {problem.split(": ")[-1] for problem in problems[1:]} >= {"accuracy", "confusion_matrix"}
    assert all(problem.startswith("runs[4] (") for problem in problems[1:])
