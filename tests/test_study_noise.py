"""A study's noise tests (core.lab.study.noise): every run of a study also scored on its test windows with white
noise at set SNRs, nothing retrained. The scores are the experiment's noise evaluation's to the bit (one noise maker,
core.lab.vibration.noise), a vanishing noise scores what the clean windows score, the effects table is the paired
arithmetic of those scores, and the contract, the checkpoint, both CLIs' commands and the migration know the cell."""

from __future__ import annotations

import copy
import json
import re

import pytest

from core.lab.contract import SCHEMA_VERSION
from core.lab.data_spec import DataSpec
from core.lab.experiment.plan import Plan, one_fold_study, run_plan, train_plan
from core.lab.models import ModelConfig
from core.lab.reopen import open_saved
from core.lab.stats import words
from core.lab.study import StudyPlan, run_study, validate_study
from core.lab.study.cli import build_parser, main, make_study_plan
from core.lab.study.command import study_command
from core.lab.study.contract import load_study
from core.lab.study.migration import migrate
from core.lab.study.noise import noise_effects, noise_frame
from core.lab.training import TrainConfig
from core.limits import BudgetExceeded
from tests.study_helpers import assert_hand_computed, assert_refused, one_fold_plan, three_recordings

CONFIG = TrainConfig(model=ModelConfig(patch=16, heads=2, layers=1), epochs=2, threads=1)
MODELS, SEEDS = ["B-noPE", "B"], [0, 1, 2]
SNR = [-4.0, 6.0, 300.0]  # 300 dB: noise 1e-15 of the signal's RMS, below a float32's resolution of it
CUT = {"windowing": "time", "windowing_seed": 0}


@pytest.fixture(scope="module")
def recordings():
    return three_recordings()


@pytest.fixture(scope="module")
def noisy_study(recordings):
    plan = one_fold_plan(recordings, MODELS, SEEDS, CONFIG, snr_db=SNR)
    assert plan.run_count() == len(MODELS) * len(SEEDS)  # scoring with noise trains nothing more
    return run_study(plan)


def test_every_run_records_its_score_at_each_snr_and_a_vanishing_noise_scores_the_clean_windows(noisy_study):
    validate_study(noisy_study)
    assert noisy_study["config"]["snr_db"] == SNR
    for run in noisy_study["runs"]:
        assert set(run["noise"]) == {"accuracy", "f1"}
        assert len(run["noise"]["accuracy"]) == len(SNR)
        assert run["noise"]["accuracy"][2] == run["accuracy"] and run["noise"]["f1"][2] == run["f1"]
    # at -4 dB the windows are scored noisy: a cell that scored the clean windows again would match everywhere
    assert any(run["noise"]["accuracy"][0] != run["accuracy"] for run in noisy_study["runs"])


def test_the_experiments_noise_evaluation_scores_the_same_noise_to_the_bit(recordings, noisy_study):
    plan = Plan(recordings, MODELS, SEEDS, config=CONFIG, cutting={"window": 128, **CUT}, evaluations={"snr_db": SNR})
    trained = train_plan(plan)
    experiment = run_plan(plan)
    block = experiment["noise"]["accuracy"]
    for run in noisy_study["runs"]:
        seed_index = SEEDS.index(run["seed"])
        for i in range(len(SNR)):
            assert run["noise"]["accuracy"][i] == block[run["model"]][i]["values"][seed_index]
    # the experiment's own runs as a study carry the same noise tests, and so the same effects table
    as_study = one_fold_study(plan, trained)
    assert as_study["config"]["snr_db"] == SNR
    assert [run["noise"] for run in as_study["runs"]] == [run["noise"] for run in noisy_study["runs"]]
    assert noise_effects(as_study) == noise_effects(noisy_study)


def test_the_effects_are_the_paired_differences_over_seeds_with_their_t_interval(noisy_study):
    effects = noise_effects(noisy_study)
    assert [(row["a"], row["b"], row["snr_db"]) for row in effects] == [("B-noPE", "B", snr) for snr in (None, *SNR)]
    clean, loud, _, vanishing = effects
    primary = noisy_study["comparisons"][0]
    assert (clean["diff"], clean["ci95"]) == (primary["diff"], primary["ci95"])  # the primary is unadjusted
    assert (vanishing["diff"], vanishing["ci95"]) == (clean["diff"], clean["ci95"])
    assert_hand_computed(loud, noisy_study, "noise", 0)
    table = noise_frame(effects)
    assert list(table["test set"]) == ["clean", "-4 dB", "6 dB", "300 dB"]
    assert table["b − a (points)"].iloc[1] == f"{loud['diff']:+.2f}"


def test_a_tuned_study_takes_its_first_seeds_runs_from_the_trials_with_their_noise(recordings):
    plan = one_fold_plan(recordings, MODELS, [0], CONFIG, snr_db=[300.0], tune_lr=True)
    study = run_study(plan)  # validated: every run, those taken from a trial too, records its noise
    assert all(run["noise"]["accuracy"] == [run["accuracy"]] for run in study["runs"])


def test_the_contract_refuses_noise_tests_that_do_not_match_their_snrs(noisy_study):
    assert_refused(noisy_study, lambda s: s["runs"][0].pop("noise"), r"runs\[0\]\.noise must hold")
    assert_refused(
        noisy_study,
        lambda s: s["runs"][1]["noise"]["accuracy"].pop(),
        r"runs\[1\]\.noise\.accuracy must hold a fraction per",
    )
    assert_refused(noisy_study, lambda s: s["runs"][1]["noise"]["f1"].__setitem__(0, 1.5), r"runs\[1\]\.noise\.f1")
    assert_refused(noisy_study, lambda s: s["config"].pop("snr_db"), r"runs\[0\]\.noise needs config\.snr_db")
    assert_refused(
        noisy_study,
        lambda s: s["config"].update(snr_db=[0, 0, 1]),
        "config.snr_db must be a non-empty list of distinct",
    )
    with pytest.raises(ValueError, match="must not repeat"):
        StudyPlan(three_recordings(), design="one-fold", models=MODELS, snr_db=[0, 0])


def test_the_checkpoint_the_cli_and_the_pages_command_know_the_snrs():
    base = ["--duration", "1", "--loads", "0", "--models", "B-noPE,B", "--design", "one-fold"]
    plan = make_study_plan(build_parser().parse_args([*base, "--snr=-4,0,8"]), "")
    assert plan.snr_db == [-4.0, 0.0, 8.0] and plan.identity()["snr_db"] == plan.snr_db
    assert "snr_db" not in make_study_plan(build_parser().parse_args(base), "").identity()  # old checkpoints resume
    command = study_command(DataSpec(dataset="synthetic"), "time-cv", 3, [0], MODELS, 128, CONFIG, snr_db=[-4.0, 0.0])
    assert "--snr=-4,0" in command.split()
    args = build_parser().parse_args(command.split()[3:])
    assert args.snr_db == [-4.0, 0.0]


def test_a_study_of_the_previous_version_reads_as_the_current_one_unchanged(noisy_study):
    previous = {key: value for key, value in copy.deepcopy(noisy_study).items()}
    previous["config"] = {k: v for k, v in previous["config"].items() if k != "snr_db"}
    previous["runs"] = [{k: v for k, v in run.items() if k != "noise"} for run in previous["runs"]]
    previous["schema_version"] = 6
    current = migrate(previous)
    assert current == {**previous, "schema_version": SCHEMA_VERSION} and SCHEMA_VERSION == 8
    validate_study(current)
    assert noise_effects(current) == []


def test_the_study_cli_prints_the_noise_table_and_writes_the_noise_cell(tmp_path, capsys):
    out = tmp_path / "noisy.json"
    argv = ["--duration", "1.5", "--loads", "0", "--models", "B-noPE,B", "--design", "one-fold", "--window", "128"]
    argv += ["--patch", "16", "--heads", "2", "--layers", "1", "--epochs", "1", "--seeds", "0,1", "--snr=-4,300"]
    assert main([*argv, "--accept-wide", "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    study = load_study(out)
    assert study["config"]["snr_db"] == [-4.0, 300.0] and "--snr=-4,300" in study["config"]["command"]
    rows = noise_effects(study)
    assert len(rows) == 3
    for row in rows:
        test_set = "clean" if row["snr_db"] is None else f"{row['snr_db']:g} dB"
        cells = [test_set, words.amount(row["mean_a"]), words.amount(row["mean_b"]), words.points(row["diff"], 2)]
        assert re.search(r"B − B-noPE\s+" + r"\s+".join(map(re.escape, cells)), printed), (cells, printed)


def test_a_study_of_too_many_snrs_or_swept_values_is_refused_before_any_table_is_made(noisy_study):
    with pytest.raises(BudgetExceeded, match="The number of SNRs is 17, over the limit of 16"):
        StudyPlan(three_recordings(), design="one-fold", models=MODELS, snr_db=range(17))
    many = copy.deepcopy(noisy_study)
    many["config"]["snr_db"] = [float(snr) for snr in range(17)]
    for run in many["runs"]:
        run["noise"] = {metric: [run[metric]] * 17 for metric in ("accuracy", "f1")}
    with pytest.raises(BudgetExceeded, match="The number of SNRs is 17, over the limit of 16"):
        open_saved(json.dumps(many).encode())
    swept = copy.deepcopy(noisy_study)
    swept["config"]["sweep"] = {"field": "pe_scale", "values": [0.01 * (i + 1) for i in range(17)]}
    swept["sweep_runs"] = [{**swept["runs"][0], "pe_scale": value} for value in swept["config"]["sweep"]["values"]]
    for run in swept["sweep_runs"]:
        run.pop("noise")
    with pytest.raises(BudgetExceeded, match="The number of swept values is 17, over the limit of 16"):
        open_saved(json.dumps(swept).encode())
    kind, reopened = open_saved(json.dumps(noisy_study).encode())  # within budget: opens, its tables drawable
    assert kind == "study" and noise_effects(reopened) == noise_effects(noisy_study)
