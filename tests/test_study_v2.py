"""The study, version 2: repeats of time-cv at other block boundaries, the learning rate of every run, the
primary comparison B vs B-noPE with Bonferroni-adjusted secondaries, the decomposition, fault-size without a
pooled verdict, the migration of a version-3 file and a checkpoint that resumes without retraining."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from core.lab.cli_args import train_config
from core.lab.data_spec import DataSpec
from core.lab.names import STUDY_KEY_RENAMES, rename_keys
from core.lab.study import StudyPlan, run_study, validate_study
from core.lab.study.cli import build_parser
from core.lab.study.command import study_command
from core.lab.study.comparisons import compare, compare_all, decomposition
from core.lab.study.folds import make_folds
from core.lab.study.migration import migrate
from core.lab.study.runner import reanalyse
from core.lab.training import TrainConfig
from core.lab.vibration import synthetic_bearing_set
from tests.study_helpers import WINDOW, count_training, three_recordings, tiny_study_plan

VERSION_2 = Path(__file__).resolve().parent / "data" / "previous" / "study_schema2.json"


@pytest.fixture(scope="module")
def recordings():
    return three_recordings()


def tiny_plan(recordings, **changes) -> StudyPlan:
    return tiny_study_plan(recordings, **changes)


# --- repeats ---------------------------------------------------------------------------------------------------


def test_time_cv_with_three_repeats_cuts_nine_folds_whose_blocks_move_by_a_third_of_a_block(recordings):
    folds = make_folds("time-cv", recordings, WINDOW, k=3, repeats=3)
    assert [(f.repeat, f.index) for f in folds] == [(r, k) for r in range(3) for k in range(3)]
    assert folds[0].name == "block 1 of 3" and folds[4].name == "block 2 of 3, repeat 2"
    assert all(f.index == g.index for f, g in zip(folds[:3], make_folds("time-cv", recordings, WINDOW, k=3)))
    length = len(recordings[0].signal)  # 18,000 samples: blocks of 6,000, moved by 2,000 and 4,000
    for repeat, shift in ((0, 0), (1, 2_000), (2, 4_000)):
        first = dict(folds[3 * repeat].starts["test"])[0]
        assert first[0] == shift and first[-1] + WINDOW <= shift + length // 3
    for repeat in range(3):  # within a repeat every window is tested once, and roles keep a window apart
        tested = np.concatenate([dict(f.starts["test"])[0] for f in folds[3 * repeat : 3 * repeat + 3]])
        assert len(np.unique(tested)) == len(tested)
        for fold in folds[3 * repeat : 3 * repeat + 3]:
            test, train = dict(fold.starts["test"])[0], dict(fold.starts["train"])[0]
            gaps = np.abs(test[:, None] - train[None, :])
            assert gaps.min() >= 2 * WINDOW  # a window apart: starts differ by the window plus the gap
    last = dict(folds[5].starts["test"])[0]  # repeat 1's last block wraps: the end, then the first 2,000 samples
    assert last.min() == 0 and last.max() + WINDOW <= length and set(last) & set(range(2_000, 14_000)) == set()
    fixed = make_folds("load-out", synthetic_bearing_set(seed=2, loads=(0, 1), duration_s=0.4), WINDOW, repeats=3)
    assert len(fixed) == 2 and {f.repeat for f in fixed} == {0}  # fixed by the data: one set of folds


def test_a_study_of_two_repeats_stores_each_runs_repeat_and_rate_and_one_primary(recordings):
    plan = tiny_plan(recordings, repeats=2)
    assert plan.run_count() == 3 * 1 * 3 * 2 and tiny_plan(recordings, design="fault-size").repeat_count() == 1
    study = run_study(plan)
    validate_study(study)
    assert study["config"]["repeats"] == 2 and study["config"]["folds"] == 3 and len(study["folds"]) == 6
    cells = {(r["model"], r["repeat"], r["fold"], r["seed"]) for r in study["runs"]}
    assert cells == {(m, r, k, 0) for m in ("A", "B-noPE", "B") for r in (0, 1) for k in range(3)}
    assert all(run["learning_rate"] == 3e-3 for run in study["runs"]) and study["tuning_runs"] == []
    primary = [c for c in study["comparisons"] if c["primary"]]
    assert [(c["a"], c["b"]) for c in primary] == [("B-noPE", "B")] and study["comparisons"][0] is primary[0]
    assert [(c["a"], c["b"], c["adjusted"]) for c in study["comparisons"][1:]] == [
        ("A", "B", "bonferroni"),
        ("A", "B-noPE", "bonferroni"),
    ]
    table = primary[0]["leave_one_fold_out"]
    assert [(row["repeat"], row["fold"]) for row in table] == [(r, k) for r in (0, 1) for k in range(3)]
    by_cell = {(r["model"], r["repeat"], r["fold"]): r["accuracy"] for r in study["runs"]}
    diffs = [100 * (by_cell[("B", r, k)] - by_cell[("B-noPE", r, k)]) for r in (0, 1) for k in range(3)]
    assert primary[0]["diff"] == pytest.approx(np.mean(diffs), abs=1e-12)
    assert table[0]["diff"] == pytest.approx(np.mean(diffs[1:]), abs=1e-12)  # repeat 0, fold 0 left out
    parts = study["decomposition"]
    assert parts["total"]["diff"] == pytest.approx(parts["embedding"]["diff"] + parts["encoding"]["diff"], abs=1e-9)
    assert parts["encoding"]["diff"] == pytest.approx(primary[0]["diff"], abs=1e-12)
    assert "1 seed × 3 folds × 2 repeats" in primary[0]["sentence"]


# --- the comparisons on studies of known cells (no training) -------------------------------------------------


def fake_study(scores: dict[str, np.ndarray], design: str = "time-cv", n_test: int = 100, n_train: int = 300):
    """A study JSON holding what the comparisons read: per model a (repeats, folds, seeds) table of accuracies."""
    repeats, folds, seeds = next(iter(scores.values())).shape
    runs = [
        {"model": m, "repeat": r, "fold": k, "seed": s, **{key: float(table[r, k, s]) for key in ("accuracy", "f1")}}
        for m, table in scores.items()
        for r in range(repeats)
        for k in range(folds)
        for s in range(seeds)
    ]
    names = ["test size 007", "test size 014", "test size 021"] if design == "fault-size" else None
    study_folds = [
        {"repeat": r, "fold": k, "name": names[k] if names else f"block {k + 1}", "n_test": n_test, "n_train": n_train}
        for r in range(repeats)
        for k in range(folds)
    ]
    return {"config": {"design": design, "population": "these windows"}, "runs": runs, "folds": study_folds}


def test_the_interval_counts_correlated_fold_means_and_the_independent_one_is_narrower():
    rng = np.random.default_rng(0)
    repeats, folds, seeds = 3, 5, 4
    a = np.full((repeats, folds, seeds), 0.90)
    shared = rng.normal(0, 0.01, folds)  # a fold's windows move every repeat's mean alike: correlated means
    b = a + 0.01 + shared[None, :, None] + rng.normal(0, 0.002, (repeats, folds, seeds))
    study = fake_study({"B-noPE": a, "B": b})
    (primary,) = compare_all(study, "accuracy", 2.0)
    means = (100 * (b - a)).mean(axis=2).ravel()
    j, ratio = means.size, 100 / 300
    half = stats.t.ppf(0.975, j - 1) * np.sqrt((1 / j + ratio) * np.var(means, ddof=1))
    assert primary["diff"] == pytest.approx(means.mean(), abs=1e-12)
    assert primary["ci95"] == pytest.approx([means.mean() - half, means.mean() + half], abs=1e-9)
    width = primary["ci95"][1] - primary["ci95"][0]
    independent = primary["ci95_independent"][1] - primary["ci95_independent"][0]
    assert independent < width / 2  # 1/J + 1/3 against 1/J: the corrected interval is about 2.4x as wide
    assert primary["error_rate_ratio"] == pytest.approx((1 - b.mean()) / (1 - a.mean()))


def test_secondary_intervals_hold_at_the_bonferroni_level_and_the_primary_at_its_own():
    rng = np.random.default_rng(1)
    shape = (2, 4, 3)
    scores = {m: 0.9 + rng.normal(0, 0.01, shape) for m in ("A", "A+PE", "B-noPE", "B")}
    study = fake_study(scores)
    comparisons = compare_all(study, "accuracy", 2.0)
    assert [(c["a"], c["b"]) for c in comparisons] == [("B-noPE", "B"), ("A", "A+PE"), ("A", "B"), ("A", "B-noPE")]
    alone = compare(study, "A", "A+PE", "accuracy", 2.0)  # as a primary: its own 95 %
    adjusted = comparisons[1]
    df = 2 * 4 - 1
    ratio = stats.t.ppf(1 - 0.025 / 3, df) / stats.t.ppf(0.975, df)  # three secondary comparisons
    width = adjusted["ci95"][1] - adjusted["ci95"][0]
    assert width == pytest.approx(ratio * (alone["ci95"][1] - alone["ci95"][0]))
    assert adjusted["diff"] == alone["diff"] and adjusted["p"] == alone["p"] and adjusted["adjusted"] == "bonferroni"
    assert "Bonferroni-adjusted for 3 secondary comparisons" in adjusted["sentence"]
    ps = sorted(c["p"] for c in comparisons[1:])
    assert min(c["p_holm"] for c in comparisons[1:]) == pytest.approx(min(1.0, 3 * ps[0]))
    assert comparisons[0]["p_holm"] == comparisons[0]["p"] and comparisons[0]["leave_one_fold_out"] is not None
    assert all(c["leave_one_fold_out"] is None for c in comparisons[1:])


def test_the_decomposition_adds_up_and_needs_all_three_models():
    rng = np.random.default_rng(2)
    scores = {m: 0.8 + rng.uniform(0, 0.1, (3, 3, 2)) for m in ("A", "B-noPE", "B")}
    parts = decomposition(fake_study(scores))
    assert parts["embedding"]["diff"] + parts["encoding"]["diff"] == pytest.approx(parts["total"]["diff"], abs=1e-12)
    assert parts["total"]["diff"] == pytest.approx(100 * (scores["B"] - scores["A"]).mean(), abs=1e-12)
    assert all(p["ci95"][0] < p["diff"] < p["ci95"][1] for p in (parts["embedding"], parts["encoding"]))
    assert decomposition(fake_study({m: scores[m] for m in ("A", "B")})) is None


def test_a_fault_size_study_reports_each_size_and_no_pooled_verdict():
    a = np.full((1, 3, 2), 0.80)
    b = a + np.array([0.10, -0.05, 0.02])[None, :, None] + np.array([0.0, 0.01])[None, None, :]
    (primary,) = compare_all(fake_study({"B-noPE": a, "B": b}, design="fault-size"), "accuracy", 2.0)
    assert primary["verdict"] == "inconclusive"
    assert [round(row["diff"], 6) for row in primary["by_fold"]] == [10.5, -4.5, 2.5]
    assert primary["by_fold"][0]["sd"] == pytest.approx(np.std([10, 11], ddof=1))
    text = primary["sentence"]
    assert text.startswith("No pooled verdict for B - B-noPE") and "test size 014: -4.5" in text
    assert "the sizes span 15.0" in text and "only 3 fold means" in text


# --- the contract ---------------------------------------------------------------------------------------------


def version_3_study() -> dict:
    """The version-2 fixture renamed to version 3 (as the previous migration wrote it), with tuned rates."""
    old = rename_keys(json.loads(VERSION_2.read_text(encoding="utf-8")), STUDY_KEY_RENAMES)
    old["schema_version"] = 3
    old["config"]["tuned_learning_rates"] = {"0": {"A": 0.01, "B": 0.001}, "1": {"A": 0.001, "B": 0.001}}
    return old


def test_a_version_3_study_migrates_with_repeat_zero_its_rates_and_b_vs_a_as_primary():
    old = version_3_study()
    new = migrate(old)
    validate_study(new)
    assert new["schema_version"] == 8 and old["schema_version"] == 3 and "repeat" not in old["runs"][0]
    assert new["config"]["repeats"] == 1 and all(f["repeat"] == 0 for f in new["folds"])
    default = old["config"]["train"]["learning_rate"]
    expected = {(0, "A"): 0.01, (0, "B"): 0.001, (1, "A"): 0.001, (1, "B"): 0.001}
    for run in new["runs"]:
        assert run["repeat"] == 0 and run["learning_rate"] == expected.get((run["fold"], run["model"]), default)
    assert [(c["a"], c["b"], c["primary"]) for c in new["comparisons"]] == [("A", "B", True)]
    assert new["comparisons"][0]["ci95"] == old["comparisons"][0]["ci95"]  # every stored number kept
    assert (new["decomposition"], new["tuning_runs"], new["sweep_runs"]) == (None, [], [])
    again = reanalyse(new)  # compared again by version 4's engine: B vs A stays primary without B-noPE
    assert again["comparisons"][0]["primary"] and again["comparisons"][0]["ci95_independent"] is not None


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda s: s["runs"][0].update(learning_rate=0), r"runs\[0\]\.learning_rate must be a positive number"),
        (lambda s: s["runs"][0].update(repeat="0"), r"runs\[0\]\.repeat must be an integer"),
        (lambda s: s["comparisons"][0].update(primary=False), "exactly one comparison must be primary, got 0"),
        (lambda s: s["comparisons"][0].update(adjusted="holm"), r"adjusted must be null or 'bonferroni'"),
        (lambda s: s.update(decomposition={"metric": "accuracy"}), "decomposition keys: missing"),
        (lambda s: s["config"].update(repeats=0), "config.repeats must be a positive integer"),
    ],
)
def test_a_version_4_field_of_the_wrong_type_is_refused_by_name(damage, message):
    study = migrate(version_3_study())
    damage(study)
    with pytest.raises(ValueError, match=message):
        validate_study(study)


def test_the_cli_and_the_command_builder_speak_repeats_and_checkpoint():
    args = build_parser().parse_args(["--repeats", "3", "--checkpoint", "runs.jsonl"])
    assert (args.repeats, str(args.checkpoint)) == (3, "runs.jsonl")
    assert build_parser().parse_args([]).repeats == 1
    one = study_command(DataSpec(), "time-cv", 5, range(3), ("A", "B"), 1024, TrainConfig())
    three = study_command(DataSpec(), "time-cv", 5, range(3), ("A", "B"), 1024, TrainConfig(), repeats=3)
    assert "--repeats" not in one and three == one.replace("--folds 5", "--folds 5 --repeats 3")


def test_min_delta_reaches_the_study_command_only_when_set():
    assert build_parser().parse_args(["--min-delta", "0.001"]).min_delta == 0.001
    plain = study_command(DataSpec(), "time-cv", 5, range(3), ("A", "B"), 1024, TrainConfig())
    strict = study_command(DataSpec(), "time-cv", 5, range(3), ("A", "B"), 1024, TrainConfig(min_delta=0.001))
    assert "--min-delta" not in plain  # the commands of studies made before the setting are unchanged
    assert strict == plain.replace(" --out", " --min-delta 0.001 --out")
    rebuilt = train_config(build_parser().parse_args(shlex.split(strict)[3:]))
    assert rebuilt.min_delta == 0.001


# --- the checkpoint -------------------------------------------------------------------------------------------


def test_a_study_resumes_from_its_checkpoint_without_retraining_finished_cells(recordings, tmp_path, monkeypatch):
    trained = count_training(monkeypatch)
    path = tmp_path / "runs.jsonl"
    plan = tiny_plan(recordings, models=["A", "B"], seeds=[0, 1], tune_lr=True, checkpoint=path)
    first = run_study(plan)
    assert plan.run_count() == 2 * (2 + 3) * 3  # the runs and three rate trials per fold
    # seed 0's run at its fold's rate is that rate's trial (core.lab.study.final_runs): trained once
    assert len(trained) == plan.run_count() - 2 * 3
    lines = path.read_text().splitlines()
    kinds = [json.loads(line)["kind"] for line in lines[1:]]
    assert (kinds.count("tuning"), kinds.count("trial run"), kinds.count("run")) == (18, 18, 12)
    trained.clear()
    assert run_study(plan) == first and trained == []  # all finished: nothing trained again
    lost = [json.loads(line)["key"] for line in lines[-3:]]
    assert {kind for kind in kinds[-3:]} == {"run"}
    path.write_text("\n".join(lines[:-3] + [lines[-3][: len(lines[-3]) // 2]]) + "\n")  # stopped mid-write
    again = run_study(plan)
    # the two lost runs and the one cut short, but for seed 0's, which its kept trial gives again
    assert sorted((model, seed) for model, seed, _ in trained) == sorted((m, s) for _, _, s, m in lost if s != 0)
    assert {k: v for k, v in again.items() if k != "runs"} == {k: v for k, v in first.items() if k != "runs"}
    strip = [{k: v for k, v in run.items() if k != "train_seconds"} for run in first["runs"]]
    assert [{k: v for k, v in run.items() if k != "train_seconds"} for run in again["runs"]] == strip
    with pytest.raises(ValueError, match="checkpoint of another study .*seeds"):
        run_study(tiny_plan(recordings, models=["A", "B"], seeds=[0], tune_lr=True, checkpoint=path))


def test_the_study_cli_reports_learning_rate_trials_and_final_runs_line_by_line(tmp_path, capsys):
    from core.lab.study.cli import main

    argv = "--duration 1.5 --models A,B --seeds 0 --folds 3 --window 128 --patch 16 --heads 2 --layers 1 --epochs 1"
    assert main([*argv.split(), "--tune-lr", "--out", str(tmp_path / "tuned.json")]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.lstrip().startswith("[")]
    trials = [line for line in lines if "validation loss" in line]
    finals = [line for line in lines if "accuracy" in line]
    assert len(trials) == 3 * 3 * 2  # 3 folds x 3 rates x 2 models, seed 0
    assert len(finals) == 3 * 2 and all("rate" not in line.split(",")[0] for line in finals)
