"""The study's folds (no window in two roles, every window tested once per seed, the held-out fault size or
load never trained on), a tiny study through run_study, the JSON contract, and the CLI."""

import copy
import gzip
import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from core.lab.runs import RunFinished
from core.lab.study import StudyPlan, compare, read_study, run_study, save_study, validate_study
from core.lab.study.cli import main
from core.lab.study.folds import fault_location, make_folds
from core.lab.study.migration import migrate
from core.lab.vibration import DataError, Recording, synthetic_bearing_set
from tests.study_helpers import WINDOW, three_recordings, tiny_study_plan

ROOT = Path(__file__).resolve().parents[1]
VERSION_2 = Path(__file__).resolve().parent / "data" / "previous" / "study_schema2.json"  # written by version 2


def intervals(starts: list[tuple[int, np.ndarray]], window: int) -> dict[int, list[tuple[int, int]]]:
    by_recording: dict[int, list[tuple[int, int]]] = {}
    for recording, first in starts:
        by_recording.setdefault(recording, []).extend((int(s), int(s) + window) for s in first)
    return by_recording


def nearest(one: list[tuple[int, int]], other: list[tuple[int, int]]) -> float:
    """The smallest gap in samples between any window of `one` and any of `other` (negative: they overlap)."""
    return min((max(b0 - a1, a0 - b1) for a0, a1 in one for b0, b1 in other), default=np.inf)


@pytest.fixture(scope="module")
def recordings():
    return three_recordings()


def test_time_cv_keeps_roles_a_window_apart_and_tests_every_window_once(recordings):
    folds = make_folds("time-cv", recordings, WINDOW, k=5)
    tested: dict[int, list[int]] = {}
    for fold in folds:
        roles = {role: intervals(fold.starts[role], WINDOW) for role in ("train", "val", "test")}
        for recording in roles["test"]:
            test = roles["test"][recording]
            assert nearest(roles["train"].get(recording, []), test) >= WINDOW
            assert nearest(roles["val"].get(recording, []), test) >= WINDOW
            assert nearest(roles["train"].get(recording, []), roles["val"].get(recording, [])) >= WINDOW
            tested.setdefault(recording, []).extend(start for start, _ in test)
        raw = np.concatenate([recordings[i].signal[s[:, None] + np.arange(WINDOW)] for i, s in fold.starts["train"]])
        assert fold.windows.mean == pytest.approx(raw.mean()) and fold.windows.std == pytest.approx(raw.std())
    for recording, starts in tested.items():
        length = len(recordings[recording].signal)
        bounds = [length * j // 5 for j in range(6)]
        universe = [b + i * WINDOW for b, e in zip(bounds, bounds[1:]) for i in range((e - b) // WINDOW)]
        assert sorted(starts) == universe  # each block's windows, each tested exactly once
    with pytest.raises(ValueError, match="at least 3 folds"):
        make_folds("time-cv", recordings, WINDOW, k=2)
    with pytest.raises(DataError, match="too short for 50 time blocks"):  # 18,000 samples: 360 a block < 3 x 128
        make_folds("time-cv", recordings, WINDOW, k=50)


def test_fault_size_never_trains_on_the_tested_size():
    recordings = synthetic_bearing_set(seed=1, loads=(0,), duration_s=1.0)
    folds = make_folds("fault-size", recordings, WINDOW)
    assert [fold.name for fold in folds] == ["test size 007", "test size 014", "test size 021"]
    assert folds[0].windows.class_names == ["normal", "inner race", "ball", "outer race"]
    for fold, size in zip(folds, ("007", "014", "021")):
        trained = {fault_location(recordings[i].label)[1] for i, s in fold.starts["train"] if s.size}
        tested = {fault_location(recordings[i].label)[1] for i, s in fold.starts["test"] if s.size}
        assert size not in trained and tested == {size, None}  # None: the normal recording's block
        normal = next(i for i, r in enumerate(recordings) if r.label == "normal")
        roles = {role: intervals(fold.starts[role], WINDOW).get(normal, []) for role in ("train", "val", "test")}
        assert nearest(roles["train"] + roles["val"], roles["test"]) >= WINDOW
    assert fault_location("OR014") == ("outer race", "014")
    with pytest.raises(DataError, match="names no fault size"):
        fault_location("healthy")


def test_load_out_tests_a_load_it_never_trained_at():
    recordings = [
        r
        for r in synthetic_bearing_set(seed=2, loads=(0, 1, 2), duration_s=0.6)
        if r.label != "normal" or r.meta["load_hp"] == 0
    ]
    folds = make_folds("load-out", recordings, WINDOW)
    assert [fold.name for fold in folds] == ["test at 0 HP", "test at 1 HP", "test at 2 HP"]
    assert "normal" not in folds[0].windows.class_names  # not recorded at every load
    for fold, load in zip(folds, (0, 1, 2)):
        # indices into the recordings given (the study JSON lists them all), the normal recording left out
        assert {recordings[i].meta["load_hp"] for i, s in fold.starts["train"] if s.size} == {0, 1, 2} - {load}
        assert {recordings[i].meta["load_hp"] for i, s in fold.starts["test"]} == {load}
        names = fold.windows.class_names
        assert [names[c] for c in fold.windows.y_test] == [recordings[i].label for i in fold.test_recording]


def tiny_plan(recordings, **changes) -> StudyPlan:
    return tiny_study_plan(recordings, epochs=2, **{"models": ["A", "B"], "seeds": [0, 1], **changes})


def test_a_tiny_study_stores_per_window_predictions_and_its_comparison(recordings, tmp_path):
    study = run_study(tiny_plan(recordings))
    validate_study(study)
    assert len(study["runs"]) == 2 * 2 * 3 and study["config"]["design"] == "time-cv" and "split" not in study["config"]
    assert study["schema_version"] == 8 and study["config"]["train"]["model"]["heads"] == 2
    fold_sizes = {fold["fold"]: fold["n_test"] for fold in study["folds"]}
    for run in study["runs"]:
        assert len(run["predictions"]["p_true"]) == fold_sizes[run["fold"]]
        assert [row["epoch"] for row in run["history"]] == list(range(1, run["epochs"] + 1))  # its training curve
        accuracy = np.mean(np.array(run["predictions"]["true"]) == np.array(run["predictions"]["predicted"]))
        assert run["accuracy"] == pytest.approx(accuracy)
    (primary,) = study["comparisons"]
    assert (primary["a"], primary["b"], primary["p_holm"]) == ("A", "B", primary["p"])
    for breakage, message in (
        (lambda run: run["history"][0].pop("val_loss"), r"runs\[0\]\.history\[0\] keys"),
        (lambda run: run.update(history={}), r"runs\[0\]\.history must be a list"),
    ):
        broken = copy.deepcopy(study)
        breakage(broken["runs"][0])
        with pytest.raises(ValueError, match=message):
            validate_study(broken)
    by_cell = {(r["model"], r["fold"], r["seed"]): r["accuracy"] for r in study["runs"]}
    diffs = [by_cell[("B", f, s)] - by_cell[("A", f, s)] for f in range(3) for s in (0, 1)]
    assert primary["diff"] == pytest.approx(100 * np.mean(diffs))
    assert compare(study, "A", "B", metric="balanced_accuracy")["metric"] == "balanced_accuracy"
    assert "2 seeds × 3 folds" in primary["sentence"]
    # what every visitor sees without weights: the order test and the first seed's profiles on the first fold
    assert set(study["order_summary"]) == {"A", "B"} and study["order_summary"]["A"]["shuffled_drop"]["mean"] == 0
    profiles = study["profiles"]
    assert set(profiles) == {"A", "B"} and (profiles["B"]["fold"], profiles["B"]["seed"]) == (0, 0)
    assert np.array(profiles["A"]["attention_by_offset"]).shape == (1, 15)  # one layer, 128 / 16 = 8 tokens
    assert profiles["A"]["energy_ratio"] is None and profiles["B"]["energy_ratio"] > 0
    path = save_study(study, tmp_path / "study.json")
    assert read_study(path.read_bytes()) == json.loads(path.read_text())
    packed = save_study(study, tmp_path / "study.json.gz")
    assert packed.read_bytes()[:2] == b"\x1f\x8b" and packed.stat().st_size < path.stat().st_size / 3
    assert read_study(packed.read_bytes()) == json.loads(path.read_text())
    assert save_study(study, tmp_path / "again.json.gz").read_bytes() == packed.read_bytes()  # no timestamp inside


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda s: s.update(schema_version=99), "schema_version 99"),
        (lambda s: s.update(kind="results"), "not a PE Lab study"),
        (lambda s: s["runs"][0]["predictions"]["p_true"].pop(), r"runs\[0\]\.predictions\.p_true"),
        (lambda s: s["comparisons"][0].update(verdict="within the spread"), "verdict must be one of"),
    ],
)
def test_a_damaged_study_is_refused_by_name(recordings, damage, message):
    study = run_study(tiny_plan(recordings, models=["A", "B"], seeds=[0]))
    damage(study)
    with pytest.raises(ValueError, match=message):
        validate_study(study)


def test_reading_a_study_refuses_what_is_not_one():
    with pytest.raises(ValueError, match="not valid JSON"):
        read_study(b"{not json")
    with pytest.raises(ValueError, match="over the 20 MB limit"):
        read_study(b" " * 20_000_001)
    # 50 kB that would expand to 50 MB: refused after expanding one byte past the limit, not all of it
    bomb = gzip.compress(b" " * 50_000_000)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="over the 20 MB limit"):
            read_study(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 60_000_000  # about 42 MB expanding 20 MB; expanding all 50 MB peaks at about 100 MB
    with pytest.raises(ValueError, match="not valid gzip"):
        read_study(gzip.compress(b"{}")[:-6])


def test_the_cli_runs_a_study_and_says_one_line_on_bad_settings(tmp_path, capsys):
    out = tmp_path / "study.json"
    argv = (
        "--duration 1.5 --models A,B --seeds 0,1 --folds 3 --window 128 --patch 16 --heads 2 --layers 1 --epochs 1"
    ).split()
    assert main([*argv, "--quiet", "--out", str(out)]) == 0
    study = read_study(out.read_bytes())
    printed = capsys.readouterr().out
    assert study["comparisons"][0]["sentence"] in printed and "B vs A" in printed
    assert study["config"]["command"].startswith("python -m core.study --duration 1.5")
    assert main([*argv, "--folds", "2", "--out", str(tmp_path / "x.json")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "at least 3 folds" in error
    assert main(["--dataset", "csv", "--out", str(tmp_path / "x.json")]) == 2


def test_recordings_of_different_rates_cannot_make_one_study():
    recordings = [
        Recording(np.sin(np.arange(20_000) / 3.0), 12_000, "normal"),
        Recording(np.zeros(20_000) + 1, 48_000, "IR007"),
    ]
    with pytest.raises(DataError, match="share one sample rate"):
        make_folds("time-cv", recordings, WINDOW, k=3)


def test_tune_lr_picks_each_folds_rate_on_its_validation_block(recordings):
    plan = tiny_plan(recordings, models=["A"], seeds=[0], tune_lr=True)
    assert plan.run_count() == (1 + 3) * 3  # the study's runs and three rate trials per fold
    finished = []
    study = run_study(plan, progress=lambda e: finished.append(e.stage.label) if isinstance(e, RunFinished) else None)
    tuned = study["config"]["tuned_learning_rates"]["0"]  # repeat 0, the only one
    assert set(study["config"]["tuned_learning_rates"]) == {"0"} and set(tuned) == {"0", "1", "2"}
    assert all(rate in (1e-3, 3e-3, 1e-2) for rates in tuned.values() for rate in rates.values())
    assert len(finished) == plan.run_count() and sum("rate" in label for label in finished) == 9
    assert [run["fold"] for run in study["runs"]] == [0, 1, 2]
    assert [run["learning_rate"] for run in study["runs"]] == [tuned[str(f)]["A"] for f in range(3)]
    assert len(study["tuning_runs"]) == 9  # three rates per fold, the first seed, kept apart from the runs


def test_the_study_views_read_the_stored_predictions(recordings):
    from core.lab.study.tables import fold_scores, half_widths, per_class, pooled_confusion

    study = run_study(tiny_plan(recordings))
    matrices = pooled_confusion(study)
    windows = sum(fold["n_test"] for fold in study["folds"]) * 2  # two seeds
    right = sum(
        np.sum(np.equal(r["predictions"]["true"], r["predictions"]["predicted"]))
        for r in study["runs"]
        if r["model"] == "B"
    )
    assert matrices["B"].sum() == windows and np.trace(matrices["B"]) == right
    table = fold_scores(study)
    assert list(table.index) == ["A", "B"] and list(table.columns) == ["block 1 of 3", "block 2 of 3", "block 3 of 3"]
    first = [100 * r["accuracy"] for r in study["runs"] if r["model"] == "A" and r["fold"] == 0]
    assert table.iloc[0, 0] == pytest.approx(np.mean(first))
    classes = per_class(study)
    assert classes.groupby("model")["test windows"].sum().tolist() == [windows, windows]
    assert len(half_widths(study)) == 3 * 11


def test_a_saved_study_is_compared_again_from_its_stored_runs(recordings, tmp_path, capsys):
    study = run_study(tiny_plan(recordings))
    path = save_study(study, tmp_path / "study.json")
    out = tmp_path / "again.json"
    assert main(["--reanalyse", str(path), "--margin", "5", "--metric", "balanced_accuracy", "--out", str(out)]) == 0
    again = read_study(out.read_bytes())
    assert again["runs"] == study["runs"] and again["config"]["margin"] == 5.0
    assert again["comparisons"][0]["metric"] == "balanced_accuracy"
    assert again["comparisons"][0] == compare(study, "A", "B", "balanced_accuracy", 5.0)
    assert main(["--reanalyse", str(tmp_path / "missing.json"), "--out", str(out)]) == 2


def test_a_version_2_study_migrates_to_a_valid_current_version_with_the_same_numbers(tmp_path, capsys):
    old = json.loads(VERSION_2.read_text(encoding="utf-8"))
    assert old["schema_version"] == 2 and old["config"]["split"] == "time-cv"
    new = migrate(old)
    validate_study(new)
    assert new["schema_version"] == 8 and old["schema_version"] == 2  # the old document is left alone
    config, old_config = new["config"], old["config"]
    assert config["design"] == "time-cv" and "split" not in config and list(config)[0] == "design"
    assert (config["train"]["model"]["heads"], config["train"]["model"]["layers"]) == (2, 1)
    assert "n_heads" not in config["train"]["model"] and config["margin"] == old_config["margin"] == 2.0
    # in points already: every old field kept; version 4 adds the repeat, the rate and the primary mark
    assert [{k: c[k] for k in old["comparisons"][0]} for c in new["comparisons"]] == old["comparisons"]
    assert [{k: r[k] for k in old["runs"][0]} for r in new["runs"]] == old["runs"]
    rate = old_config["train"]["learning_rate"]
    assert all(r["repeat"] == 0 and r["learning_rate"] == rate for r in new["runs"])
    assert [c["primary"] for c in new["comparisons"]] == [True] + [False] * (len(old["comparisons"]) - 1)
    assert read_study(VERSION_2.read_bytes()) == new  # the reader migrates before it validates
    out = tmp_path / "again.json"
    assert main(["--reanalyse", str(VERSION_2), "--margin", "5", "--out", str(out)]) == 0
    again = read_study(out.read_bytes())
    assert again["config"]["design"] == "time-cv" and again["comparisons"][0]["margin"] == 5.0


def test_a_current_study_is_not_migrated_and_a_version_1_study_is_refused_by_its_version():
    old = json.loads(VERSION_2.read_text(encoding="utf-8"))
    current = migrate(old)
    assert migrate(current) is current
    version_1 = dict(old, schema_version=1)
    assert migrate(version_1) is version_1
    with pytest.raises(ValueError, match=r"^invalid study JSON: schema_version 1, but this PE Lab reads study"):
        read_study(json.dumps(version_1))
    assert migrate({"schema_version": 2}) == {"schema_version": 2}  # no kind "study": not migrated


def test_a_version_4_study_migrates_its_pe_scale_sweep_to_the_sweep_of_one_field_and_keeps_the_rest():
    shipped = json.loads(gzip.decompress((ROOT / "results" / "study_cwru_0hp_time-cv.json.gz").read_bytes()))
    assert shipped["schema_version"] == 5 and shipped["config"]["sweep"] == {"field": "pe_scale", "values": [0.1, 0.3]}
    config = {("pe_scale_sweep" if key == "sweep" else key): value for key, value in shipped["config"].items()}
    version_4 = {**shipped, "schema_version": 4, "config": {**config, "pe_scale_sweep": [0.1, 0.3]}}
    new = migrate(version_4)
    assert new == {**shipped, "schema_version": 8} and list(new["config"]) == list(shipped["config"])  # in place
    assert version_4["schema_version"] == 4 and "sweep" not in version_4["config"]  # the old document is left alone
    validate_study(new)
