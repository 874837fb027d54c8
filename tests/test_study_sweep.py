"""The pe_scale sweep inside a study: A+PE and B trained again at other encoding factors on the same cells, at
their tuned rates, stored as sweep_runs with their factor, resumed from the checkpoint, and summarised against
A and B-noPE (scale 0 is the partner itself, the study's own scale its main runs)."""

from __future__ import annotations

import pytest

import core.lab.runs
from core.lab.study import StudyPlan, run_study, validate_study
from core.lab.study.cli import build_parser
from core.lab.study.comparisons import compare
from core.lab.study.sweep import check_scales, sweep_effects, swept_models
from tests.study_helpers import three_recordings, tiny_study_plan


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

    effects = {(row["model"], row["pe_scale"]): row for row in sweep_effects(study)}
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
    assert check_scales([0.1, 0.3], 1.0) == [0.1, 0.3]
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
