"""The results JSON contract and the verdict, on hand-made runs with hand-computed statistics."""

import copy
import json
import math
from pathlib import Path

import pytest

from core.lab.evaluations import cross_load, model_sweep, noise, windowing_comparison
from core.lab.experiment.results import (
    RUN_KEYS,
    SCHEMA_VERSION,
    TOP_KEYS,
    build_results,
    load_results,
    save_results,
    validate_results,
)
from core.lab.report import summary_table
from core.lab.stats.summary import mean_sd
from core.lab.study.comparisons import COMPARISON_KEYS
from core.lab.study.migration import migrate

CLASSES = ["normal", "IR007"]
PREVIOUS = Path(__file__).resolve().parent / "data" / "previous"  # files written by earlier schema versions
T_975_2DF = 4.302652729911275  # Student t, 97.5 % quantile, 2 degrees of freedom (statistical tables: 4.303)


def make_run(model: str, seed: int, accuracy: float, n_test: int = 100) -> dict:
    right = round(accuracy * n_test)
    # all errors fall on class 0 predicted as class 1, so the matrix sums to n_test
    half = n_test // 2
    matrix = [[half - (n_test - right), n_test - right], [0, n_test - half]]
    return {
        "model": model,
        "seed": seed,
        "accuracy": accuracy,
        "precision": accuracy,
        "recall": accuracy,
        "f1": accuracy,
        "per_class_f1": [accuracy, accuracy],
        "confusion_matrix": matrix,
        "epochs": 3,
        "best_epoch": 2,
        "converged": True,
        "train_seconds": 1.5,
        "windows_per_second": 900.0,
        "device": "cpu",
        "history": [{"epoch": 1, "train_loss": 0.9, "val_loss": 0.8, "val_accuracy": 0.7}],
        "order_test": {"accuracy": accuracy, "shuffled": accuracy - 0.1, "reversed": accuracy},
        "n_parameters": 1234,  # extra keys from core.lab.training are left out of the JSON
    }


def runs_with_differences(differences, a_scores=(0.90, 0.92, 0.94)):
    runs = [make_run("A", seed, a) for seed, a in enumerate(a_scores)]
    runs += [make_run("B", seed, a + d) for seed, (a, d) in enumerate(zip(a_scores, differences))]
    return runs


def test_mean_sd_uses_ddof_1():
    cell = mean_sd([0.90, 0.92, 0.94])
    assert cell["mean"] == pytest.approx(0.92)
    assert cell["sd"] == pytest.approx(0.02)  # sqrt((0.02² + 0 + 0.02²) / 2)
    assert cell["n"] == 3
    assert mean_sd([0.5]) == {"mean": 0.5, "sd": None, "n": 1}


ONE_SPLIT = (
    "3 seeds on one split, 100 test windows; the test windows are fixed, so only training noise is counted; "
    "training seeds only"
)


def b_against_a(results: dict) -> dict:
    (comparison,) = [c for c in results["comparisons"] if (c["a"], c["b"]) == ("A", "B")]
    return comparison


def test_better_when_the_95_interval_is_above_zero_and_the_90_interval_leaves_the_margin():
    results = build_results({"epochs": 3}, CLASSES, runs_with_differences([0.02, 0.03, 0.04]))
    pair = b_against_a(results)  # in points: differences of 2, 3 and 4 points, sd 1
    assert pair["diff"] == pytest.approx(3.0)
    half_width = T_975_2DF * 1.0 / math.sqrt(3)  # 2.484 points
    assert pair["ci95"] == pytest.approx([3.0 - half_width, 3.0 + half_width])
    assert pair["ci90"] == pytest.approx(
        [3.0 - 2.919985580 * 1.0 / math.sqrt(3), 3.0 + 2.919985580 * 1.0 / math.sqrt(3)]
    )
    assert (pair["metric"], pair["margin"], pair["verdict"], pair["primary"]) == ("accuracy", 2.0, "better", True)
    expected = (
        "B (embedding + sinusoidal encoding) vs A (raw patches, no encoding): B is better, possibly by less than the "
        f"2-point margin, +3.0 points (95 % CI +0.5 to +5.5; B makes 0.6x A's errors; {ONE_SPLIT})."
    )  # A errs on 8 % of the windows, B on 5 %
    assert pair["sentence"] == expected and expected in results["verdict"]


def test_worse_when_the_95_interval_is_below_zero():
    results = build_results({}, CLASSES, runs_with_differences([-0.02, -0.03, -0.04]))
    assert b_against_a(results)["verdict"] == "worse"
    assert (
        "B is worse, possibly by less than the 2-point margin, -3.0 points (95 % CI -5.5 to -0.5;"
        in (results["verdict"])
    )


def test_equivalent_when_the_90_interval_lies_inside_the_margin():
    # differences 0.1, 0.2, 0.3 points: mean 0.2, sd 0.1, 90 % half-width 2.92 * 0.1 / sqrt(3) = 0.17 points
    results = build_results({}, CLASSES, runs_with_differences([0.001, 0.002, 0.003]))
    assert b_against_a(results)["verdict"] == "equivalent"
    assert ": equivalent within ±2 points, +0.2 (90 % CI +0.0 to +0.4;" in results["verdict"]


def test_inconclusive_when_neither_rule_applies_and_it_says_what_could_be_detected():
    # mean 1 point, sd 2.646: the 95 % interval holds 0 and the 90 % interval reaches past the margin
    results = build_results({}, CLASSES, runs_with_differences([-0.01, 0.0, 0.04]))
    pair = b_against_a(results)
    assert pair["verdict"] == "inconclusive" and "within the spread" not in results["verdict"]
    mde = (T_975_2DF + 1.0606601717798212) * 2.6457513110645907 / math.sqrt(3)  # t(0.8, 2 df) = 1.0607
    assert pair["mde80"] == pytest.approx(mde)  # points
    assert f"; this study could only detect differences of {mde:.1f} points or more; " in results["verdict"]


def test_verdict_states_the_test_set_size():
    results = build_results({}, CLASSES, runs_with_differences([0.01, 0.0, 0.02]))
    assert "The test set has 100 windows, so one window is 1.00 points of accuracy." in results["verdict"]


def test_a_single_seed_gives_no_interval_and_says_so():
    results = build_results({}, CLASSES, [make_run("A", 0, 0.9), make_run("B", 0, 0.95)])
    assert b_against_a(results)["ci95"] is None and b_against_a(results)["mde80"] is None
    assert results["summary"]["A"]["accuracy"]["sd"] is None
    assert "one run of each gives no interval" in results["verdict"] and "better" not in results["verdict"]


def test_compares_only_the_seeds_every_model_finished():
    runs = [make_run("A", s, 0.9) for s in (0, 1, 2)] + [make_run("B", s, 0.8) for s in (1, 2, 3)]
    pair = b_against_a(build_results({}, CLASSES, runs))
    assert pair["diff"] == pytest.approx(-10.0)  # points, on seeds 1 and 2
    assert "2 seeds on one split" in pair["sentence"]


def test_without_a_pair_of_models_there_is_nothing_to_compare():
    results = build_results({}, CLASSES, [make_run("B", 0, 0.9), make_run("B", 1, 0.8)])
    assert results["comparisons"] == []
    assert "model A was not run" in results["verdict"]


def test_b_is_compared_with_b_nope_first_then_each_pair_a_study_makes_and_the_rest_against_a():
    scores = {"A": 0.90, "B-noPE": 0.91, "B": 0.95, "B-learned": 0.93, "CNN": 0.92}
    runs = [make_run(model, seed, score + 0.01 * seed) for model, score in scores.items() for seed in (0, 1, 2)]
    results = build_results({}, CLASSES, runs)
    pairs = [(c["b"], c["a"], c["primary"], c["adjusted"]) for c in results["comparisons"]]
    assert pairs == [
        ("B", "B-noPE", True, None),
        ("B", "A", False, "bonferroni"),
        ("B-noPE", "A", False, "bonferroni"),
        ("B-learned", "B", False, "bonferroni"),
        ("CNN", "A", False, "bonferroni"),
    ]
    assert results["verdict"].startswith(results["comparisons"][0]["sentence"])


def test_paired_comparison_can_use_f1():
    runs = runs_with_differences([0.02, 0.03, 0.04])
    for run in runs:
        if run["model"] == "B":
            run["f1"] = run["f1"] - 0.1
    pair = b_against_a(build_results({}, CLASSES, runs, metric="f1"))
    assert pair["metric"] == "f1" and " in f1 (" in pair["sentence"]
    assert pair["diff"] == pytest.approx(-7.0)  # points


def test_results_have_exactly_the_contract_keys():
    results = build_results({"epochs": 3}, CLASSES, runs_with_differences([0.01, 0.02, 0.03]))
    assert tuple(results) == TOP_KEYS
    assert all(tuple(run) == RUN_KEYS for run in results["runs"])
    assert set(results["summary"]) == {"A", "B"}
    assert set(results["summary"]["B"]) == {"accuracy", "precision", "recall", "f1"}
    assert set(results["summary"]["B"]["f1"]) == {"mean", "sd", "n"}
    assert tuple(b_against_a(results)) == COMPARISON_KEYS
    json.dumps(results, allow_nan=False)


def test_repeated_model_and_seed_is_refused():
    with pytest.raises(ValueError, match=r"repeated: \[\('A', 0\)\]"):
        build_results({}, CLASSES, [make_run("A", 0, 0.9), make_run("A", 0, 0.8)])


@pytest.mark.parametrize(
    "breakage, message",
    [
        (lambda r: r.pop("verdict"), "missing \\['verdict'\\]"),
        (lambda r: r.update(extra=1), "unexpected \\['extra'\\]"),
        (lambda r: r["runs"][0].update(accuracy=1.5), r"runs\[0\]\.accuracy"),
        (lambda r: r["runs"][0].update(accuracy=float("nan")), r"runs\[0\]\.accuracy"),
        (lambda r: r["runs"][1].pop("history"), r"runs\[1\] keys"),
        (lambda r: r["runs"][0]["confusion_matrix"].pop(), r"runs\[0\]\.confusion_matrix"),
        (lambda r: r["runs"][0]["history"][0].pop("val_loss"), r"history\[0\] keys"),
        (lambda r: r["summary"].pop("B"), "summary models"),
        (lambda r: r["summary"]["A"]["f1"].pop("sd"), r"summary\['A'\]\['f1'\] keys"),
        (lambda r: r["comparisons"][0].update(ci95=[0.1]), "ci95"),
        (lambda r: r["comparisons"][0].update(b="CNN"), "comparisons name models that did not run"),
        (lambda r: r.update(kind="study"), "its kind is 'study', not \"results\""),
        (lambda r: r.update(schema_version=5), "schema_version 5, but this PE Lab reads schema_version 8"),
        (lambda r: r.update(class_names="normal"), "class_names"),
        (lambda r: r.update(verdict=""), "verdict"),
    ],
)
def test_validate_names_what_breaks_the_contract(breakage, message):
    results = build_results({}, CLASSES, runs_with_differences([0.01, 0.02, 0.03]))
    validate_results(copy.deepcopy(results))
    breakage(results)
    with pytest.raises(ValueError, match=message):
        validate_results(results)


def test_save_and_load_round_trip(tmp_path):
    results = build_results({"window": 1024}, CLASSES, runs_with_differences([0.01, 0.02, 0.03]))
    path = save_results(results, tmp_path / "results.json")
    assert load_results(path) == results


def test_summary_table_one_row_per_model():
    table = summary_table(build_results({}, CLASSES, runs_with_differences([0.02, 0.03, 0.04])))
    assert list(table["model"]) == ["A", "B"]
    b = table.set_index("model").loc["B"]
    assert b["accuracy_mean"] == pytest.approx(0.95)
    assert b["accuracy_sd"] == pytest.approx(0.03)  # B scores 0.92, 0.95, 0.98
    assert b["vs_A"] == "better"  # +3 points, 95 % CI +0.5 to +5.5


def with_blocks() -> dict:
    """Results of A and B on three seeds with one block of each optional kind, built by core.lab.evaluations."""

    runs = runs_with_differences([0.01, 0.02, 0.03])
    for run in runs:
        score = {"accuracy": run["accuracy"] - 0.2, "f1": run["f1"] - 0.2}
        run["extra_tests"] = {"snr 0 dB": score, "load 1 HP": score}
    blocks = {
        "noise": noise.noise_block(runs, ["A", "B"], [0]),
        "cross_load": cross_load.cross_load_block({0: runs}, ["A", "B"], [1], CLASSES, ["OR007"], {1: 50}),
        "windowing_comparison": windowing_comparison.windowing_comparison_block(
            {"time": runs, "random": runs}, ["A", "B"], [0, 1, 2]
        ),
        "d_model_sweep": model_sweep.sweep_block(
            {16: [dict(r, n_parameters=99) for r in runs]}, ["B"], "d_models", True
        ),
    }
    return build_results({}, CLASSES, runs, evaluations=blocks)


def test_optional_blocks_are_accepted_and_checked_when_present():
    results = with_blocks()
    assert tuple(results)[: len(TOP_KEYS)] == TOP_KEYS
    assert set(results) - set(TOP_KEYS) == {"noise", "cross_load", "windowing_comparison", "d_model_sweep"}
    assert results["noise"]["accuracy"]["B"][0]["mean"] == pytest.approx(0.94 - 0.2)  # B: 0.91, 0.94, 0.97
    json.dumps(results, allow_nan=False)
    without = {key: results[key] for key in TOP_KEYS}
    validate_results(without)  # every block is optional


@pytest.mark.parametrize(
    "breakage, message",
    [
        (lambda r: r["noise"]["accuracy"]["A"][0]["values"].pop(), r"noise\.accuracy\['A'\]\[0\]\.n must count"),
        (lambda r: r["noise"]["f1"].pop("B"), r"noise\.f1 models"),
        (lambda r: r["noise"].update(snr_db=[0, 4]), r"noise\.accuracy\['A'\] must be a list of 2"),
        (lambda r: r["cross_load"].update(classes=["normal", "B007"]), "cross_load.classes must equal class_names"),
        (lambda r: r["cross_load"].update(test_windows=[0]), "positive count per test load"),
        (lambda r: r["cross_load"]["accuracy"]["A"].append([]), r"cross_load\.accuracy\['A'\] must be a list of 1"),
        (lambda r: r["windowing_comparison"].update(windowings=["time", "time"]), "windowings must be time and random"),
        (lambda r: r["windowing_comparison"]["leak"]["B"].update(ci95=[2.0, 1.0]), r"leak\['B'\]\.ci95"),
        (lambda r: r["d_model_sweep"].update(models=["CNN"]), "models that were run"),
        (lambda r: r["d_model_sweep"]["n_parameters"].update(B=[99, 99]), "one per d_model"),
        (lambda r: r.update(sweep={}), r"unexpected \['sweep'\]"),
    ],
)
def test_validate_names_what_breaks_an_optional_block(breakage, message):
    results = with_blocks()
    breakage(results)
    with pytest.raises(ValueError, match=message):
        validate_results(results)


def test_unknown_evaluation_blocks_are_refused():
    with pytest.raises(ValueError, match="unknown evaluation blocks"):
        build_results({}, CLASSES, runs_with_differences([0.01, 0.02, 0.03]), evaluations={"robustness": {}})


def test_results_carry_the_schema_version_and_other_versions_are_refused_by_name():
    results = build_results({}, CLASSES, runs_with_differences([0.01, 0.02, 0.03]))
    assert (results["schema_version"], results["kind"]) == (SCHEMA_VERSION, "results") and SCHEMA_VERSION == 8
    older = dict(results, schema_version=0)
    with pytest.raises(
        ValueError, match=r"schema_version 0, but this PE Lab reads schema_version 8 \(and 3, 4, 5, 6, 7, migrated\)"
    ):
        validate_results(older)
    unversioned = {key: value for key, value in results.items() if key != "schema_version"}
    with pytest.raises(ValueError, match=r"has no schema_version .* reads schema_version 8"):
        validate_results(unversioned)
    with pytest.raises(ValueError, match="top level must be an object"):
        validate_results([results])


def test_paired_comparison_refuses_an_unknown_metric():
    with pytest.raises(ValueError, match="metric must be one of"):
        build_results({}, CLASSES, runs_with_differences([0.01, 0.02, 0.03]), metric="auc")


def test_the_order_summary_reads_each_models_drop_under_shuffled_tokens():
    results = build_results({}, CLASSES, runs_with_differences([0.01, 0.02, 0.03]))
    assert set(results["order_summary"]) == {"A", "B"}
    assert results["order_summary"]["B"]["shuffled_drop"]["mean"] == pytest.approx(10.0)
    assert results["order_summary"]["B"]["reversed_drop"]["mean"] == pytest.approx(0.0)
    broken = copy.deepcopy(results)
    broken["runs"][0]["order_test"]["shuffled"] = 1.5
    with pytest.raises(ValueError, match=r"runs\[0\]\.order_test must hold fractions"):
        validate_results(broken)


def stored_version_3() -> dict:
    """A results JSON of schema_version 3 as the CLI wrote it (the every-evaluation fixture before version 4)."""
    return json.loads((PREVIOUS / "results_schema3.json").read_text(encoding="utf-8"))


def test_a_version_3_file_migrates_to_a_valid_current_file_with_the_new_names_and_its_comparisons(tmp_path):
    old = stored_version_3()
    assert old["schema_version"] == 3 and old["paired"]["B"]["margin"] == 0.02
    new = migrate(old)
    validate_results(new)
    assert (new["schema_version"], new["kind"]) == (8, "results") and old["schema_version"] == 3  # old left alone
    (comparison,) = new["comparisons"]  # A and B ran: B against A, computed again from the stored runs
    old_pair = old["paired"]["B"]
    assert (comparison["a"], comparison["b"], comparison["margin"]) == ("A", "B", 2.0) and "paired" not in new
    assert comparison["diff"] == pytest.approx(100 * old_pair["diff_mean"])
    assert comparison["ci95"] == pytest.approx([100 * v for v in old_pair["ci95"]])
    assert comparison["mde80"] == pytest.approx(100 * old_pair["mde80"])
    assert comparison["p"] == pytest.approx(old_pair["p"])
    assert comparison["verdict"] == old_pair["verdict"] == "inconclusive"
    assert new["verdict"].startswith(comparison["sentence"])
    data, model = new["config"]["data"], new["config"]["train"]["model"]
    assert data["windowing"] == old["config"]["data"]["split_mode"] == "time" and "split_mode" not in data
    assert (model["heads"], model["layers"]) == (2, 1) and "n_heads" not in model
    assert new["config"]["evaluations"]["compare_windowings"] is True
    assert list(new)[9] == "windowing_comparison" and "split_comparison" not in new
    block = new["windowing_comparison"]
    assert block["windowings"] == old["split_comparison"]["modes"] == ["time", "random"]
    old_leak = old["split_comparison"]["leak"]["A"]
    assert block["leak"]["A"]["ci90"] == pytest.approx([100 * v for v in old_leak["ci90"]])
    assert block["leak"]["A"]["diff"] == pytest.approx(100 * old_leak["diff_mean"])
    assert new["runs"] == old["runs"] and new["summary"] == old["summary"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    assert load_results(path) == new  # the reader migrates before it validates


def test_a_version_4_file_gets_the_comparisons_a_fresh_build_of_its_runs_gets():
    old = migrate(stored_version_3())
    version_4 = {key: value for key, value in old.items() if key not in ("kind", "comparisons", "schema_version")}
    version_4 = {"schema_version": 4, **version_4, "paired": {"B": {"margin": 2.0}}}
    fresh = build_results(old["config"], old["class_names"], old["runs"], old["config"]["metric"])
    assert migrate(version_4)["comparisons"] == fresh["comparisons"]
    assert migrate(version_4)["verdict"] == fresh["verdict"]


def test_a_current_file_is_not_migrated_and_a_version_2_file_is_refused_by_its_version():
    current = build_results({}, CLASSES, runs_with_differences([0.01, 0.02, 0.03]))
    assert migrate(current) is current
    version_2 = dict(stored_version_3(), schema_version=2)
    assert migrate(version_2) is version_2
    with pytest.raises(ValueError, match=r"^invalid results JSON: schema_version 2, but this PE Lab reads"):
        validate_results(migrate(version_2))
    assert migrate([1, 2]) == [1, 2]  # not ours: left for the validator to refuse
