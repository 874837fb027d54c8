"""A sweep inside a study. pe_scale: A+PE and B trained again at other encoding factors on the same cells, at
their tuned rates, stored as sweep_runs with their factor, resumed from the checkpoint, and summarised against
A and B-noPE (scale 0 is the partner itself, the study's own scale its main runs). d_model: the same sweep over
the width, where the partner B-noPE changes too and is trained again beside B. The field is the experiment's
sweep's own (core.lab.sweep_fields), so both refuse a bad value in the same words."""

from __future__ import annotations

import pytest

import core.lab.runs
from core.lab.evaluations.model_sweep import DModelSweep
from core.lab.experiment.plan import Plan
from core.lab.models import ModelConfig
from core.lab.study import StudyPlan, run_study, validate_study
from core.lab.study.cli import build_parser, make_study_plan
from core.lab.study.comparisons import compare
from core.lab.study.sweep import check_sweep, sweep_effects, swept_models
from core.lab.sweep_fields import swept_field
from core.lab.training import TrainConfig
from tests.study_helpers import count_training, three_recordings, tiny_study_plan


@pytest.fixture(scope="module")
def recordings():
    return three_recordings()


def tiny_plan(recordings, **changes) -> StudyPlan:
    settings = {"models": ["A", "A+PE", "B-noPE", "B"], "seeds": [0, 1], "pe_scale_sweep": [0.3]}
    return tiny_study_plan(recordings, **{**settings, **changes})


def test_the_sweep_retrains_each_encoded_model_at_each_factor_on_every_cell_at_its_tuned_rate(recordings, tmp_path):
    plan = tiny_plan(recordings, tune_lr=True, checkpoint=tmp_path / "runs.jsonl")
    # 4 models x (2 seeds + 3 rate trials) + 2 swept models x 1 factor x 2 seeds, per fold
    assert plan.run_count() == (4 * 5 + 2 * 2) * 3
    study = run_study(plan)
    validate_study(study)
    sweep = study["sweep_runs"]
    assert len(sweep) == 2 * 2 * 3 and {run["pe_scale"] for run in sweep} == {0.3}
    assert {run["model"] for run in sweep} == {"A+PE", "B"} and study["config"]["sweep"] == {
        "field": "pe_scale",
        "values": [0.3],
    }
    rates = study["config"]["tuned_learning_rates"]
    assert all(run["learning_rate"] == rates["0"][str(run["fold"])][run["model"]] for run in sweep)
    main = {(r["model"], r["fold"], r["seed"]): r for r in study["runs"]}
    assert any(run["predictions"] != main[(run["model"], run["fold"], run["seed"])]["predictions"] for run in sweep)

    effects = {(row["model"], row["value"]): row for row in sweep_effects(study)}
    assert set(effects) == {(m, s) for m in ("A+PE", "B") for s in (0.0, 0.3, 1.0)}
    assert effects[("B", 0.0)]["diff"] == 0.0 and effects[("B", 0.0)]["partner"] == "B-noPE"
    assert effects[("B", 1.0)]["diff"] == pytest.approx(compare(study, "B-noPE", "B")["diff"])
    assert effects[("A+PE", 1.0)]["diff"] == pytest.approx(compare(study, "A", "A+PE")["diff"])
    hand = [
        100 * (r["accuracy"] - main[("A", r["fold"], r["seed"])]["accuracy"]) for r in sweep if r["model"] == "A+PE"
    ]
    assert effects[("A+PE", 0.3)]["diff"] == pytest.approx(sum(hand) / len(hand))

    trained = []
    real_train = core.lab.runs.train

    def counting_train(*args, **kwargs):
        trained.append(args[1])
        return real_train(*args, **kwargs)

    core.lab.runs.train, saved = counting_train, core.lab.runs.train
    try:
        assert run_study(plan)["sweep_runs"] == sweep and trained == []  # resumed: nothing trained again
    finally:
        core.lab.runs.train = saved


def test_a_sweep_needs_a_partner_and_distinct_positive_factors_other_than_the_studys_own(recordings):
    assert swept_models(["A", "B", "A+PE"]) == ["A+PE"] and swept_models(["A", "B"]) == []
    assert check_sweep("pe_scale", [0.1, 0.3], TrainConfig()) == [0.1, 0.3]
    for scales, message in (([0.0], "above 0"), ([0.1, 0.1], "distinct"), ([1.0], "own pe_scale 1")):
        with pytest.raises(ValueError, match=message):
            tiny_plan(recordings, pe_scale_sweep=scales)
    with pytest.raises(ValueError, match="A\\+PE with A, or B with B-noPE"):
        tiny_plan(recordings, models=["A", "B"])
    assert build_parser().parse_args(["--pe-scale-sweep", "0.1,0.3"]).pe_scale_sweep == [0.1, 0.3]
    assert sweep_effects({"sweep_runs": []}) == []


def test_a_sweep_run_without_its_factor_is_refused_by_the_contract(recordings):
    study = run_study(tiny_plan(recordings, models=["B-noPE", "B"], seeds=[0]))
    del study["sweep_runs"][0]["pe_scale"]
    with pytest.raises(ValueError, match="pe_scale"):
        validate_study(study)


def test_the_decomposition_table_and_the_leave_one_out_table_read_the_studys_own_numbers(recordings):
    from core.lab.study.tables import decomposition_table, leave_one_out_table

    study = run_study(tiny_plan(recordings, models=["A", "B-noPE", "B"], pe_scale_sweep=[]))
    parts = study["decomposition"]
    sizes = {**study, "config": {**study["config"], "design": "fault-size"}}
    table = decomposition_table({"tiny": study, "sizes": sizes})
    assert list(table["study"]) == ["tiny"]  # a fault-size study has no pooled number to show
    encoding = parts["encoding"]
    low, high = encoding["ci95"]
    assert table.iloc[0]["the encoding (B − B-noPE)"] == f"{encoding['diff']:+.1f} ({low:+.1f} to {high:+.1f})"
    rows = leave_one_out_table(study)
    assert list(rows["left out"]) == ["block 1 of 3", "block 2 of 3", "block 3 of 3"]
    first = study["comparisons"][0]["leave_one_fold_out"][0]
    assert rows.iloc[0]["difference (95 % CI)"].startswith(f"{first['diff']:+.1f}")


def test_a_d_model_sweep_retrains_b_and_its_partner_at_each_width_and_compares_them_width_by_width(
    recordings, monkeypatch
):
    plan = tiny_study_plan(
        recordings, models=["A", "B-noPE", "B"], seeds=[0, 1], sweep_field="d_model", sweep_values=[8]
    )
    assert swept_models(plan.models, "d_model") == ["B", "B-noPE"]  # A has no embedding: its width is the patch
    assert plan.run_count() == (3 * 2 + 2 * 2) * 3 and plan.identity()["sweep"] == {"field": "d_model", "values": [8]}
    trained, trained_widths = count_training(monkeypatch), []
    real_train = core.lab.runs.train  # count_training's: it counts, this records each run's width

    def train_recording_width(windows, model, config, *args, **kwargs):
        trained_widths.append((model, config.model.d_model))
        return real_train(windows, model, config, *args, **kwargs)

    monkeypatch.setattr(core.lab.runs, "train", train_recording_width)
    study = run_study(plan)
    assert len(trained) == plan.run_count()
    validate_study(study)
    assert study["config"]["sweep"] == {"field": "d_model", "values": [8]}
    sweep = study["sweep_runs"]
    assert {(run["model"], run["d_model"]) for run in sweep} == {("B", 8), ("B-noPE", 8)} and len(sweep) == 2 * 2 * 3
    widths = {(model, width) for model, width in trained_widths}
    assert widths == {("A", None), ("B-noPE", None), ("B", None), ("B-noPE", 8), ("B", 8)}

    effects = {row["value"]: row for row in sweep_effects(study)}
    assert set(effects) == {8, 16}  # the sweep's width and the study's own (the patch, d_model unset); no 0 row
    assert effects[16]["diff"] == pytest.approx(compare(study, "B-noPE", "B")["diff"])
    cell = {(r["model"], r["fold"], r["seed"]): r["accuracy"] for r in sweep}
    hand = [100 * (cell[("B", f, s)] - cell[("B-noPE", f, s)]) for f in range(3) for s in (0, 1)]
    assert effects[8]["diff"] == pytest.approx(sum(hand) / len(hand))  # B at 8 against B-noPE at 8, not at 16
    assert effects[8]["partner"] == "B-noPE" and effects[8]["field"] == "d_model"


def test_the_study_and_the_experiment_refuse_a_bad_sweep_value_in_the_same_words(recordings):
    bad = [12, 8]  # 3 heads divide 12, not 8
    words = "heads=3 must divide every d_model of the sweep; \\[8\\] do not"
    config = TrainConfig(model=ModelConfig(patch=16, d_model=24, heads=3, layers=1), epochs=1)
    with pytest.raises(ValueError, match=words):
        tiny_study_plan(recordings, models=["B-noPE", "B"], config=config, sweep_field="d_model", sweep_values=bad)
    with pytest.raises(ValueError, match=words):
        Plan(recordings, ["B"], [0], config=config, cutting={"window": 128}, evaluations={"d_models": bad})
    assert DModelSweep.swept_field is swept_field("d_model")  # one field, one check, for both pipelines
    with pytest.raises(ValueError, match="own d_model 16"):
        tiny_study_plan(recordings, sweep_field="d_model", sweep_values=[16])
    with pytest.raises(ValueError, match="a sweep varies one of pe_scale, d_model, not 'heads'"):
        tiny_study_plan(recordings, sweep_field="heads", sweep_values=[1])
    with pytest.raises(ValueError, match="a d_model sweep needs B with B-noPE"):
        tiny_study_plan(recordings, models=["A", "A+PE"], sweep_field="d_model", sweep_values=[8])


def test_the_study_cli_takes_one_sweep_of_either_field(recordings):
    parse = build_parser().parse_args
    plan = make_study_plan(
        parse(["--duration", "1", "--loads", "0", "--models", "B-noPE,B", "--d-model-sweep", "16,64"]), ""
    )
    assert (plan.sweep_field, plan.sweep_values) == ("d_model", [16, 64])
    plan = make_study_plan(
        parse(["--duration", "1", "--loads", "0", "--models", "A,A+PE", "--pe-scale-sweep", "0.3"]), ""
    )
    assert (plan.sweep_field, plan.sweep_values) == ("pe_scale", [0.3])
    with pytest.raises(ValueError, match="one field"):
        make_study_plan(parse(["--duration", "1", "--pe-scale-sweep", "0.3", "--d-model-sweep", "16"]), "")
