"""Evaluations beyond one experiment: exact per-window SNR, the classes cross-load may use, the blocks' numbers
against hand-computed ones, and one tiny plan that runs every evaluation through core.lab.experiment.plan.run_plan."""

import math

import numpy as np
import pytest

from core.lab import sweep_fields
from core.lab.evaluations import cross_load, model_sweep, noise, windowing_comparison
from core.lab.experiment.plan import Plan, run_plan
from core.lab.experiment.results import validate_results
from core.lab.models import ModelConfig, embedding_models
from core.lab.runs import RunFinished, StageStarted
from core.lab.training import TrainConfig
from core.lab.vibration import DataError, Recording, loads, make_windows, synthetic_bearing_set
from core.lab.vibration import noise as vibration_noise

T_975_2DF = 4.302652729911275  # Student t, 97.5 % quantile, 2 degrees of freedom


def snr_of(clean: np.ndarray, noisy: np.ndarray) -> np.ndarray:
    """Measured SNR in dB of each row."""
    return 10 * np.log10(np.mean(clean**2, axis=1) / np.mean((noisy - clean) ** 2, axis=1))


# --- noise ---------------------------------------------------------------------------------------------


def test_white_noise_sits_exactly_at_the_snr_in_every_window():
    rng = np.random.default_rng(0)
    # windows of very different power: the SNR is set per window, not over the whole set
    windows = rng.standard_normal((5, 400)) * np.array([[0.01], [0.1], [1.0], [10.0], [100.0]])
    for snr in (-4.0, 0.0, 4.0, 8.0):
        noisy = vibration_noise.add_white_noise(windows, snr, np.random.default_rng(1))
        np.testing.assert_allclose(snr_of(windows, noisy), snr, atol=1e-9)


def test_noise_power_of_a_constant_window_by_hand():
    # a window of constant 2 has power 4; at 0 dB the noise power is 4, at 10 dB it is 0.4
    window = np.full((1, 1000), 2.0)
    for snr, expected_power in ((0.0, 4.0), (10.0, 0.4), (-10.0, 40.0)):
        added = vibration_noise.add_white_noise(window, snr, np.random.default_rng(3)) - window
        assert np.mean(added**2) == pytest.approx(expected_power, rel=1e-12)


@pytest.fixture(scope="module")
def small_windows():
    recordings = synthetic_bearing_set(seed=0, duration_s=1.0, classes=("normal", "IR007", "OR007"))
    return make_windows(recordings, window=128)


def test_noisy_test_sets_set_the_snr_on_the_recorded_signal(small_windows):
    w = small_windows
    sets = vibration_noise.noisy_test_sets(w, [-4, 0, 8], seed=5)
    assert list(sets) == ["snr -4 dB", "snr 0 dB", "snr 8 dB"]
    raw = w.x_test.astype(np.float64) * w.std + w.mean
    for snr, (x, y) in zip((-4, 0, 8), sets.values()):
        assert x.dtype == np.float32 and x.shape == w.x_test.shape
        assert np.array_equal(y, w.y_test)
        noisy_raw = x.astype(np.float64) * w.std + w.mean
        np.testing.assert_allclose(snr_of(raw, noisy_raw), snr, atol=1e-3)  # float32 rounding only


def test_one_noise_draw_per_seed_serves_every_snr(small_windows):
    w = small_windows
    sets = vibration_noise.noisy_test_sets(w, [0, 20], seed=2)
    noise_0 = sets["snr 0 dB"][0].astype(np.float64) - w.x_test
    noise_20 = sets["snr 20 dB"][0].astype(np.float64) - w.x_test
    # the same noise, 20 dB lower: amplitude ratio 10^(20/20) = 10
    np.testing.assert_allclose(noise_0, 10 * noise_20, atol=2e-5)
    again = vibration_noise.noisy_test_sets(w, [0], seed=2)["snr 0 dB"][0]
    other = vibration_noise.noisy_test_sets(w, [0], seed=3)["snr 0 dB"][0]
    assert np.array_equal(again, sets["snr 0 dB"][0]) and not np.array_equal(other, again)


def test_snr_lists_must_be_finite_and_distinct():
    assert vibration_noise.check_snr_list([-4, 0, 4, 8]) == [-4.0, 0.0, 4.0, 8.0]
    with pytest.raises(ValueError, match="must not repeat"):
        vibration_noise.check_snr_list([0, 0])
    with pytest.raises(ValueError, match="finite"):
        vibration_noise.check_snr_list([float("nan")])


# --- cross-load -----------------------------------------------------------------------------------------


def cwru_like_set():
    """All classes at 0 HP, the nine fault classes at 1-3 HP: the shape of the shared CWRU copy."""
    recordings = synthetic_bearing_set(seed=0, loads=(0, 1, 2, 3), duration_s=0.5)
    return [r for r in recordings if r.label != "normal" or r.meta["load_hp"] == 0]


def test_cross_load_uses_the_classes_recorded_at_every_load():
    recordings = cwru_like_set()
    classes, dropped = cross_load.common_classes(recordings, [0], [1, 2, 3])
    assert dropped == ["normal"]
    assert classes == ["IR007", "IR014", "IR021", "B007", "B014", "B021", "OR007", "OR014", "OR021"]
    # at 0 HP alone every class is there
    assert cross_load.common_classes(recordings, [0], [0]) == (
        ["normal", *classes],
        [],
    )


def test_cross_load_refuses_missing_loads_and_recordings_without_a_load():
    recordings = synthetic_bearing_set(seed=0, loads=(0, 1), duration_s=0.5, classes=("normal", "IR007"))
    with pytest.raises(DataError, match=r"No recordings at load\(s\) \[3\] HP; the data holds loads \[0, 1\]"):
        cross_load.common_classes(recordings, [0], [3])
    unknown = [Recording(np.zeros(100), 12_000, "normal"), *recordings]
    with pytest.raises(DataError, match="motor load of every recording"):
        cross_load.common_classes(unknown, [0], [1])
    with pytest.raises(ValueError, match="both train loads and test loads"):
        cross_load.check_loads([0], None)


def test_all_windows_cuts_every_window_and_keeps_the_training_statistics():
    signal = np.arange(1000, dtype=np.float64)
    recordings = [Recording(signal, 1000, "IR007"), Recording(-signal[:500], 1000, "OR007")]
    x, y = loads.all_windows(recordings, ["OR007", "IR007"], window=100, stride=50, mean=10.0, std=2.0)
    # (1000 - 100) / 50 + 1 = 19 windows, then (500 - 100) / 50 + 1 = 9
    assert x.shape == (28, 100) and list(y) == [1] * 19 + [0] * 9
    assert x[1, 0] == pytest.approx((50 - 10.0) / 2.0)  # the second window starts at sample 50
    assert x[19, 0] == pytest.approx((0 - 10.0) / 2.0)


def test_the_train_load_is_scored_on_its_held_out_block_and_other_loads_on_all_windows():
    recordings = cwru_like_set()
    classes, _ = cross_load.common_classes(recordings, [0], [0, 1])
    windows = make_windows(loads.recordings_at(recordings, 0, classes), window=256)
    sets = loads.cross_load_test_sets(recordings, windows, train_load=0, test_loads=[0, 1])
    assert sets["load 0 HP"][0] is windows.x_test
    x, y = sets["load 1 HP"]
    assert len(x) == 9 * (6000 // 256)  # 0.5 s at 12 kHz: 23 whole windows per recording
    assert sorted(set(y)) == list(range(9))


# --- blocks from hand-made runs -----------------------------------------------------------------------------


def run(model, seed, accuracy, **extra):
    return {"model": model, "seed": seed, "accuracy": accuracy, "f1": accuracy - 0.01, **extra}


def test_windowing_comparison_leak_is_the_paired_random_minus_time_difference_in_points():
    time_runs = [run("A", s, a) for s, a in enumerate((0.90, 0.92, 0.94))]
    random_runs = [run("A", s, a) for s, a in enumerate((0.99, 0.99, 1.00))]
    seeds = [0, 1, 2]
    block = windowing_comparison.windowing_comparison_block({"time": time_runs, "random": random_runs}, ["A"], seeds)
    assert block["windowings"] == ["time", "random"]
    assert block["accuracy"]["A"][0]["mean"] == pytest.approx(0.92)
    assert block["accuracy"]["A"][1]["values"] == [0.99, 0.99, 1.00]
    leak = block["leak"]["A"]  # a one-fold comparison (core.lab.study.comparisons.compare): random against time
    assert (leak["a"], leak["b"], leak["metric"], leak["margin"]) == ("time", "random", "accuracy", 2.0)
    # differences 9, 7 and 6 points: mean 7.333, sd 1.528, the t interval on 2 degrees of freedom
    assert leak["diff"] == pytest.approx(22 / 3)
    sd = math.sqrt(((9 - 22 / 3) ** 2 + (7 - 22 / 3) ** 2 + (6 - 22 / 3) ** 2) / 2)
    half = T_975_2DF * sd / math.sqrt(3)
    assert leak["ci95"] == pytest.approx([22 / 3 - half, 22 / 3 + half])
    assert windowing_comparison.windowing_table(block).loc["A", "leak (random - time), points"] == (
        f"+7.3 ({22 / 3 - half:+.1f} to {22 / 3 + half:+.1f})"
    )
    # the experiment's own windowing comes first, the leak stays random minus time
    flipped = windowing_comparison.windowing_comparison_block({"random": random_runs, "time": time_runs}, ["A"], seeds)
    assert flipped["windowings"] == ["random", "time"] and flipped["leak"]["A"]["diff"] == pytest.approx(22 / 3)
    assert flipped["leak"]["A"]["ci95"] == pytest.approx(leak["ci95"])


def test_noise_block_reads_each_runs_extra_tests():
    def noisy_run(seed, at_minus_4, at_8):
        tests = {"snr -4 dB": {"accuracy": at_minus_4, "f1": at_minus_4}, "snr 8 dB": {"accuracy": at_8, "f1": at_8}}
        return run("B", seed, 1.0, extra_tests=tests)

    block = noise.noise_block([noisy_run(0, 0.5, 0.9), noisy_run(1, 0.7, 1.0)], ["B"], [-4, 8])
    assert block["snr_db"] == [-4.0, 8.0]
    low, high = block["accuracy"]["B"]
    assert (low["mean"], low["values"]) == (pytest.approx(0.6), [0.5, 0.7])
    assert high["sd"] == pytest.approx(math.sqrt(0.005))  # 0.9 and 1.0: sd 0.0707
    table = noise.noise_table(block)
    assert table.loc["B", "-4 dB"] == "60.0 ± 14.1" and table.loc["B", "8 dB"] == "95.0 ± 7.1"


def test_d_model_sweep_block_by_width():
    by_width = {
        16: [run("B", 0, 0.8, n_parameters=100), run("B", 1, 0.9, n_parameters=100)],
        64: [run("B", 0, 0.95, n_parameters=900), run("B", 1, 0.97, n_parameters=900)],
    }
    block = model_sweep.sweep_block(by_width, ["B"], "d_models", counts_parameters=True)
    assert block["d_models"] == [16, 64] and block["n_parameters"] == {"B": [100, 900]}
    assert [c["mean"] for c in block["accuracy"]["B"]] == pytest.approx([0.85, 0.96])
    assert model_sweep.sweep_table(block, "d_model", "d_models").loc["B", "d_model 64"] == "96.0 ± 1.4 (900 p)"
    scales = model_sweep.sweep_block({0.0: by_width[16], 0.3: by_width[64]}, ["B"], "scales")
    assert "n_parameters" not in scales  # pe_scale leaves the network's size alone
    assert model_sweep.sweep_table(scales, "pe_scale", "scales").loc["B", "pe_scale 0.3"] == "96.0 ± 1.4"


def test_embedding_models_are_the_ones_with_a_d_model():
    assert embedding_models(["A", "A+PE", "B-noPE", "B", "B-learned", "B-concat", "CNN"]) == [
        "B-noPE",
        "B",
        "B-learned",
        "B-concat",
    ]
    with pytest.raises(ValueError, match=r"heads=4 must divide every d_model of the sweep; \[18\] do not divide"):
        sweep_fields.check_d_models([16, 18], heads=4)


# --- every evaluation through run_plan, on a tiny synthetic set ------------------------------------------------


def tiny_config() -> TrainConfig:
    return TrainConfig(model=ModelConfig(patch=16, heads=2, layers=1), epochs=2, threads=1)


@pytest.fixture(scope="module")
def everything():
    recordings = [
        r
        for r in synthetic_bearing_set(seed=0, loads=(0, 1), duration_s=1.0, classes=("normal", "IR007", "OR007"))
        if r.label != "normal" or r.meta["load_hp"] == 0
    ]
    plan = Plan(
        data=lambda: recordings,
        cutting={"window": 128},
        models=["A", "B"],
        seeds=[0, 1],
        config=tiny_config(),
        evaluations={
            "train_loads": [0],
            "test_loads": [0, 1],
            "snr_db": [300, -10],
            "compare_windowings": True,
            "d_models": [16, 32],
        },
        keep_weights=False,
    )
    stages, runs = [], []

    def progress(event):
        if isinstance(event, StageStarted):
            stages.append(event.stage.label)
        elif isinstance(event, RunFinished):
            runs.append(event.run)

    results = run_plan(plan, progress=progress)
    return plan, results, stages, runs


def test_every_evaluation_lands_in_one_valid_json(everything):
    plan, results, stages, runs = everything
    validate_results(results)
    assert stages == ["main", "random windowing", "d_model 32"]
    assert len(runs) == plan.run_count() == 2 * (2 + 2 + 1)
    assert [(r["model"], r["seed"]) for r in results["runs"]] == [("A", 0), ("B", 0), ("A", 1), ("B", 1)]
    assert results["class_names"] == ["IR007", "OR007"]  # normal is missing at 1 HP
    assert results["cross_load"]["dropped_classes"] == ["normal"]
    assert results["config"]["evaluations"] == {
        "train_loads": [0],
        "test_loads": [0, 1],
        "snr_db": [300.0, -10.0],
        "compare_windowings": True,
        "d_models": [16, 32],
        "pe_scales": None,  # registered, off
    }
    assert results["config"]["train"]["model"]["d_model"] == 16  # the experiment runs at the sweep's first width


def test_the_blocks_agree_with_the_runs_they_come_from(everything):
    _, results, _, _ = everything
    for model in ("A", "B"):
        clean = results["summary"][model]["accuracy"]["mean"]
        # the train load tested on itself is the experiment's own test block
        assert results["cross_load"]["accuracy"][model][0][0]["mean"] == pytest.approx(clean)
        assert results["windowing_comparison"]["accuracy"][model][0]["mean"] == pytest.approx(clean)
        # at 300 dB the noise is 1e-15 of the signal: not one prediction changes
        assert results["noise"]["accuracy"][model][0]["mean"] == pytest.approx(clean)
    assert results["d_model_sweep"]["models"] == ["B"]
    assert results["d_model_sweep"]["accuracy"]["B"][0]["values"] == [
        r["accuracy"] for r in results["runs"] if r["model"] == "B"
    ]
    n_parameters = results["d_model_sweep"]["n_parameters"]["B"]
    assert n_parameters[1] > n_parameters[0]
    # 1 s per recording at 12 kHz: 93 whole 128-sample windows of each of the two classes at 1 HP
    assert results["cross_load"]["test_windows"][1] == 2 * 93


def test_plans_refuse_evaluations_they_cannot_run(small_windows):
    with pytest.raises(ValueError, match="give the plan the recordings"):
        run_plan(
            Plan(
                data=small_windows,
                models=["A"],
                seeds=[0],
                config=tiny_config(),
                evaluations={"compare_windowings": True},
            )
        )
    with pytest.raises(ValueError, match="needs an embedding model"):
        Plan(data=small_windows, models=["A", "CNN"], seeds=[0], evaluations={"d_models": [16, 32]})
    with pytest.raises(ValueError, match=r"unknown evaluation settings \['snr'\]"):
        Plan(data=small_windows, models=["A"], seeds=[0], evaluations={"snr": [0]})
    with pytest.raises(ValueError, match=r"cutting takes .* got unknown \['size'\]"):
        Plan(data=small_windows, models=["A"], seeds=[0], cutting={"size": 128})
    with pytest.raises(ValueError, match="give cutting, or its old name windowing, not both"):
        Plan(data=small_windows, models=["A"], seeds=[0], cutting={"window": 128}, windowing={"window": 128})
