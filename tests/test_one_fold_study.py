"""The experiment is a study with one fold: the one-fold design cuts the experiment's own windows (make_windows'
deal, in time blocks or at random), so the same models and seeds train to the same runs, bit for bit, through the
study's pipeline, and the study's comparisons are the experiment's."""

from __future__ import annotations

import pytest

from core.lab.experiment.plan import Plan, experiment_studies, one_fold_study, plan_results, run_plan, train_plan
from core.lab.models import ModelConfig
from core.lab.study import StudyPlan, run_study, validate_study
from core.lab.study.cli import build_parser, make_study_plan
from core.lab.study.sweep import sweep_effects
from core.lab.training import TrainConfig
from core.lab.vibration import make_windows
from core.lab.vibration.windows import DEFAULT_SHARES
from tests.study_helpers import count_training, one_fold_plan, three_recordings

CONFIG = TrainConfig(model=ModelConfig(patch=16, heads=2, layers=1), epochs=2, threads=1)
MODELS, SEEDS = ["B-noPE", "B"], [0, 1]


@pytest.fixture(scope="module")
def recordings():
    return three_recordings()


def one_fold_study_of(recordings, **cut) -> dict:
    plan = one_fold_plan(recordings, MODELS, SEEDS, CONFIG, cutting=cut)
    assert (plan.fold_count(), plan.repeat_count(), plan.run_count()) == (1, 1, len(MODELS) * len(SEEDS))
    return run_study(plan)


@pytest.mark.parametrize("windowing", ["time", "random"])
def test_a_one_fold_study_trains_the_experiments_runs_bit_for_bit_and_compares_them_alike(recordings, windowing):
    cut = {"windowing": windowing, "windowing_seed": 3}
    experiment = run_plan(Plan(recordings, MODELS, SEEDS, config=CONFIG, cutting={"window": 128, **cut}))
    study = one_fold_study_of(recordings, **cut)
    validate_study(study)

    windows = make_windows(recordings, 128, **cut)
    (fold,) = study["folds"]
    assert fold["n_test"] == len(windows.y_test) and fold["n_train"] == len(windows.y_train)
    assert fold["normalisation"] == {"mean": windows.mean, "std": windows.std}  # the same windows, to the bit
    assert study["class_names"] == windows.class_names and fold["name"] == "the one fold"
    assert study["config"]["cutting"] == {"shares": list(DEFAULT_SHARES), **cut}  # make_windows' own default

    by_cell = {(run["model"], run["seed"]): run for run in study["runs"]}
    for run in experiment["runs"]:
        again = by_cell[(run["model"], run["seed"])]
        for key in ("accuracy", "f1", "precision", "recall", "confusion_matrix", "epochs", "best_epoch", "history"):
            assert again[key] == run[key], (run["model"], run["seed"], key)

    ours, theirs = study["comparisons"][0], experiment["comparisons"][0]
    assert (ours["a"], ours["b"], ours["primary"]) == (theirs["a"], theirs["b"], True) == ("B-noPE", "B", True)
    assert ours["verdict"] == theirs["verdict"]
    for key in ("diff", "ci95", "ci90", "mde80", "p"):  # the same cells through the same interval: the same bits
        assert ours[key] == theirs[key], key
    leaky = "(leaky)" in study["config"]["population"]
    assert leaky == (windowing == "random")  # the verdict says when its test windows lie beside training ones


def test_the_study_cli_runs_the_experiments_cut_and_refuses_it_for_another_design():
    parse = build_parser().parse_args
    base = ["--duration", "1", "--loads", "0", "--models", "B-noPE,B", "--data-seed", "4"]
    plan = make_study_plan(
        parse([*base, "--design", "one-fold", "--windowing", "random", "--shares", "0.5,0.25,0.25"]), ""
    )
    assert plan.cutting == {"shares": [0.5, 0.25, 0.25], "windowing": "random", "windowing_seed": 4}
    assert plan.identity()["cutting"] == plan.cutting  # a checkpoint of another cut is refused
    assert make_study_plan(parse([*base, "--design", "one-fold"]), "").cutting["windowing"] == "time"
    assert "cutting" not in make_study_plan(parse(base), "").identity()  # time-cv's checkpoints resume as before
    with pytest.raises(ValueError, match="belong to the one-fold design, not time-cv"):
        make_study_plan(parse([*base, "--windowing", "random"]), "")


def test_the_contract_keeps_a_one_fold_cutting_to_a_one_fold_study(recordings):
    study = one_fold_study_of(recordings)
    cut = study["config"].pop("cutting")
    with pytest.raises(ValueError, match="config.cutting belongs to a one-fold study"):
        validate_study(study)
    study["config"]["cutting"] = {**cut, "windowing": "sideways"}
    with pytest.raises(ValueError, match="windowing must be time or random"):
        validate_study(study)


def test_a_saved_one_fold_study_opens_on_the_page_with_its_one_fold_and_its_verdict(recordings):
    from tests.apptest_utils import open_lab, raw_errors
    from tests.test_page_reopen import open_file
    from tests.test_reopen import encoded

    study = one_fold_study_of(recordings, windowing="random", windowing_seed=1)
    at = open_lab()
    open_file(at, "one_fold.json", encoded(study))
    at.selectbox(key="study_pick").set_value("the study run or opened here").run()
    at.toggle(key="study_more").set_value(True).run()
    assert not at.exception and raw_errors(at) == []
    shown = " ".join(element.value for element in (*at.markdown, *at.caption))
    assert study["comparisons"][0]["sentence"].split(" (")[0] in shown.replace("\\", "")


def test_a_one_fold_sweep_reads_its_intervals_over_seeds_as_its_comparisons_do(recordings):
    plan = StudyPlan(
        recordings, design="one-fold", models=MODELS, seeds=SEEDS, config=CONFIG, window=128, sweep_values=[0.3]
    )
    study = run_study(plan)
    effects = {row["value"]: row for row in sweep_effects(study)}
    primary = study["comparisons"][0]
    assert effects[1.0]["diff"] == primary["diff"] and effects[1.0]["ci95"] == primary["ci95"] is not None
    assert effects[0.3]["ci95"] is not None  # one fold: the corrected resampled t has no folds to resample


def test_an_experiments_own_runs_are_its_one_fold_study_without_training_again(recordings, monkeypatch):
    cut = {"window": 128, "windowing": "random", "windowing_seed": 5}
    plan = Plan(recordings, MODELS, SEEDS, config=CONFIG, cutting=cut, keep_weights=False)
    trained = train_plan(plan)
    results = plan_results(plan, trained)
    counted = count_training(monkeypatch)
    study = one_fold_study(plan, trained, command="python -m core.experiment ...")
    assert counted == []  # the runs are the experiment's, recorded again, not trained again
    validate_study(study)
    again = one_fold_study_of(recordings, windowing="random", windowing_seed=5)
    assert study["folds"] == again["folds"]  # the experiment's windows, placed in the fold, are the fold's own
    for ours, theirs in zip(study["runs"], again["runs"], strict=True):
        assert ours == {**theirs, "train_seconds": ours["train_seconds"]}  # every prediction the same; not the clock
    assert study["comparisons"][0]["ci95"] == again["comparisons"][0]["ci95"] == results["comparisons"][0]["ci95"]
    assert study["config"]["command"] == "python -m core.experiment ..."


@pytest.mark.parametrize(
    "setting, field, values",
    [("pe_scales", "pe_scale", [1.0, 0.0, 0.3]), ("d_models", "d_model", [16, 8])],
)
def test_an_experiments_sweep_is_its_one_fold_studys_sweep_run_for_run(recordings, setting, field, values):
    cut = {"window": 128, "windowing": "time", "windowing_seed": 0}
    plan = Plan(recordings, MODELS, SEEDS, config=CONFIG, cutting=cut, evaluations={setting: values})
    study = one_fold_study(plan, trained := train_plan(plan))
    assert trained.runs  # the experiment trained its sweep once; the study records those runs
    swept = [value for value in values[1:] if value > 0]  # pe_scale 0 is B-noPE itself: a study never trains it
    assert study["config"]["sweep"] == {"field": field, "values": swept}
    again = run_study(
        StudyPlan(
            recordings,
            design="one-fold",
            models=MODELS,
            seeds=SEEDS,
            config=plan.config,  # the experiment's own value of the field is its first
            window=128,
            cutting={"windowing": "time", "windowing_seed": 0},
            sweep_field=field,
            sweep_values=swept,
        )
    )

    def by_cell(runs):
        return {(run["model"], run["seed"], run[field]): run for run in runs}

    ours, theirs = by_cell(study["sweep_runs"]), by_cell(again["sweep_runs"])
    assert set(ours) == set(theirs) and len(ours) == len(study["sweep_runs"]) > 0
    for cell, run in ours.items():
        assert run == {**theirs[cell], "train_seconds": run["train_seconds"]}, cell
    assert sweep_effects(study) == sweep_effects(again)


def test_the_experiment_cli_writes_its_one_fold_study_beside_its_results(tmp_path, capsys):
    from core.lab.experiment.cli import main
    from core.lab.study.contract import load_study

    words = ["--dataset", "synthetic", "--duration", "1", "--models", "B-noPE,B", "--seeds", "0", "--epochs", "1"]
    words += ["--window", "256", "--patch", "16", "--heads", "2", "--layers", "1", "--accept-wide", "--quiet"]
    out = tmp_path / "results.json"
    assert main([*words, "--out", str(out), "--study-out", str(tmp_path / "study.json")]) == 0
    study = load_study(tmp_path / "study.json")
    assert study["config"]["design"] == "one-fold" and len(study["runs"]) == 2
    assert study["config"]["command"].startswith("python -m core.experiment --dataset synthetic")
    capsys.readouterr()
    both = tmp_path / "both.json.gz"  # with the windowing comparison, the other windowing's study beside it
    assert main([*words, "--windowing", "time,random", "--out", str(out), "--study-out", str(both)]) == 0
    printed = capsys.readouterr().out
    random_study = load_study(tmp_path / "both_random.json.gz")
    assert random_study["config"]["cutting"]["windowing"] == "random" and len(random_study["runs"]) == 2
    assert f"python -m core.study --leak {both} {tmp_path / 'both_random.json.gz'}" in printed
    loads = tmp_path / "loads.json"  # with cross-load, each further train load's study beside it, and no leak line
    cross = ["--loads", "0,1,2", "--train-loads", "0,1", "--test-loads", "2"]
    assert main([*words, *cross, "--out", str(out), "--study-out", str(loads)]) == 0
    printed = capsys.readouterr().out
    at_1 = load_study(tmp_path / "loads_load1.json")
    assert (at_1["config"]["train_loads"], at_1["config"]["test_loads"]) == ([1], [2])
    assert load_study(loads)["config"]["train_loads"] == [0]
    assert (
        f"the runs under the time windowing, trained at load 1 as a one-fold study: {tmp_path / 'loads_load1.json'}"
        in printed
    )
    assert "--leak" not in printed
    sweeps = ["--d-model-sweep", "16,32", "--pe-scale-sweep", "0,1"]  # two sweeps: the second is a study of its own
    assert main([*words, *sweeps, "--out", str(out), "--study-out", str(tmp_path / "sweeps.json")]) == 0
    printed = capsys.readouterr().out
    (second,) = [path for path in tmp_path.glob("sweeps_*_sweep.json")]
    field = load_study(second)["config"]["sweep"]["field"]
    assert (
        second.name == f"sweeps_{field}_sweep.json"
        and f"with the {field} sweep as a one-fold study: {second}" in printed
    )
    assert main([*words, "--metric", "precision", "--study-out", str(tmp_path / "no.json")]) == 2
    assert "a study compares on one of accuracy" in capsys.readouterr().err and not (tmp_path / "no.json").exists()
    windows = make_windows(three_recordings(), 128)
    with pytest.raises(ValueError, match="needs its recordings"):
        one_fold_study(Plan(windows, ["B"], [0], config=CONFIG), train_plan(Plan(windows, ["B"], [0], config=CONFIG)))


def test_a_fault_in_the_one_fold_study_loses_no_finished_press(monkeypatch, caplog):
    import core.lab.jobs as jobs

    def broken(*args, **kwargs):
        raise RuntimeError("a fault no check foresaw")

    monkeypatch.setattr(jobs, "experiment_studies", broken)
    windows_plan = Plan(three_recordings(), ["B"], [0], config=CONFIG, cutting={"window": 128})
    job = jobs.start(windows_plan)
    assert job.wait(120) and job.status().state == "done"
    assert job.result()["runs"] and job.one_fold_study() is None
    assert "no one-fold study of its runs (RuntimeError: a fault no check foresaw)" in caplog.text


def test_a_second_sweep_is_a_one_fold_study_of_its_own_holding_the_same_runs(recordings):
    cut = {"window": 128, "windowing": "time", "windowing_seed": 0}
    sweeps = {"pe_scales": [1.0, 0.3], "d_models": [16, 8]}
    plan = Plan(recordings, MODELS, SEEDS, config=CONFIG, cutting=cut, evaluations=sweeps)
    trained = train_plan(plan)
    studies = experiment_studies(plan, trained)
    own = studies["time"]
    first = own["config"]["sweep"]["field"]
    second = ({"pe_scale", "d_model"} - {first}).pop()
    assert list(studies) == ["time", f"{second}_sweep"]  # a study sweeps one field: the second is a study too
    other = studies[f"{second}_sweep"]
    assert other["config"]["sweep"] == {"field": second, "values": [0.3] if second == "pe_scale" else [8]}
    assert other["runs"] == own["runs"] and other["folds"] == own["folds"]  # the experiment's own runs, again
    assert {run[second] for run in other["sweep_runs"]} == set(other["config"]["sweep"]["values"])
    assert sweep_effects(other) and all(row["field"] == second for row in sweep_effects(other))
    with pytest.raises(ValueError, match="has no width sweep"):
        one_fold_study(plan, trained, swept="width")
