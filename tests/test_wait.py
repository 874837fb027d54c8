"""The one wait estimate (core.lab.wait): rounds of runs side by side x windows x epochs at a rate, the nominal one
or this server's measured one (plus the page's fixed cost), calibrated when the server starts and then following
the presses it has finished; the page, the CLIs and the job queue all tell or check it."""

from __future__ import annotations

import pytest

from core.lab.wait import (
    OBSERVED,
    PAGE_SECONDS,
    RAW_TO_EFFECTIVE,
    SpeedModel,
    Workload,
    calibrate,
    describe_wait,
    estimate,
    training_rounds,
)


def test_runs_side_by_side_make_rounds():
    assert [training_rounds(runs, 2) for runs in (0, 1, 2, 3, 6)] == [0, 1, 1, 2, 3]
    assert training_rounds(6, 1) == 6 and training_rounds(5, 0) == 5


def test_a_fresh_model_tells_the_calibrated_rate_and_a_finished_press_replaces_it():
    model = SpeedModel(1e-4)
    press = Workload(runs=6, windows=800, epochs=40, workers=2)
    # 6 runs on 2 workers: 3 rounds of 800 windows x 40 epochs at 1e-4 s each
    assert estimate(press, model) == pytest.approx(PAGE_SECONDS + 3 * 800 * 40 * 1e-4 * RAW_TO_EFFECTIVE)
    assert "measured when it started" in model.basis()
    model.observe(press, job_seconds=24.0)  # took 24 s: 24 / 96,000 = 2.5e-4 s per window-epoch
    assert model.presses == 1 and model.rate == pytest.approx(2.5e-4)
    assert model.basis() == "from the last 1 press this server finished"
    assert estimate(press, model) == pytest.approx(PAGE_SECONDS + 24.0)  # the same press is told its time
    one_worker = Workload(runs=6, windows=800, epochs=40, workers=1)
    assert estimate(one_worker, model) == pytest.approx(PAGE_SECONDS + 48.0)  # on one worker, twice the rounds
    model.observe(press, job_seconds=48.0)
    model.observe(press, job_seconds=12.0)
    assert model.rate == pytest.approx(2.5e-4)  # the median of 12, 24 and 48 s
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        model.observe(press, job_seconds=bad)
    model.observe(Workload(runs=6, windows=0, epochs=40, workers=2), job_seconds=10.0)
    assert model.presses == 3


def test_a_window_half_as_long_is_told_half_the_wait_at_either_rate():
    model = SpeedModel(1e-4)
    long, short = Workload(2, 500, 10, 1, window=1024), Workload(2, 500, 10, 1, window=512)
    assert estimate(short) == pytest.approx(estimate(long) / 2) == pytest.approx(2 * 500 * 10 / 4_800 / 2)
    assert estimate(short, model) - PAGE_SECONDS == pytest.approx((estimate(long, model) - PAGE_SECONDS) / 2)
    model.observe(short, job_seconds=5.0)  # 10,000 window-epochs of 512 samples in 5 s: 1e-3 s per 1024-sample one
    assert model.rate == pytest.approx(1e-3) and estimate(long, model) == pytest.approx(PAGE_SECONDS + 10.0)


def test_the_model_follows_only_the_latest_presses():
    model = SpeedModel(1e-4)
    press = Workload(runs=1, windows=100, epochs=10)
    for _ in range(OBSERVED):
        model.observe(press, job_seconds=1.0)  # 1e-3 s per window-epoch
    for _ in range(OBSERVED // 2 + 1):
        model.observe(press, job_seconds=2.0)
    assert model.presses == OBSERVED and model.rate == pytest.approx(2e-3)
    with pytest.raises(ValueError, match="positive rate"):
        SpeedModel(0.0)


def test_the_calibration_times_a_real_training_of_model_b():
    rate = calibrate(window=256)
    assert 1e-7 < rate < 1e-2  # seconds per window-epoch: far from zero, far below a second


def test_the_page_tells_its_wait_from_the_calibration_then_from_the_presses_it_finished():
    from tests.apptest_utils import open_lab, set_tiny, train_to_the_end
    from ui.lab.experiment import speed_model

    at = open_lab()
    set_tiny(at, n_seeds=1)
    before = speed_model().presses
    told = [c.value for c in at.caption if "training run" in c.value and "on this server" in c.value]
    assert told, [c.value for c in at.caption]
    train_to_the_end(at)
    assert speed_model().presses == before + 1
    told = [c.value for c in at.caption if "training run" in c.value and "this server finished" in c.value]
    assert told and f"from the last {before + 1} press" in told[0]


def test_a_cli_plans_wait_counts_the_training_windows_of_its_real_cut_or_folds():
    from core.lab.experiment.plan import Plan
    from core.lab.study.folds import make_folds
    from core.lab.study.runner import StudyPlan
    from core.lab.training import TrainConfig
    from core.lab.vibration import make_windows, synthetic_bearing_set
    from core.lab.wait import plan_wait_line, plan_workload

    recordings = synthetic_bearing_set(duration_s=1.0, classes=("normal", "IR007"))
    config = TrainConfig(epochs=3)
    plan = Plan(recordings, ["A", "B"], [0, 1], config, cutting={"window": 256}, workers=2)
    trained = len(make_windows(recordings, window=256).x_train)
    assert plan_workload(plan) == Workload(runs=4, windows=trained, epochs=3, workers=2, window=256)
    study = StudyPlan(recordings, models=("A", "B"), seeds=(0, 1, 2), config=config, folds=3, window=256)
    per_fold = [len(fold.windows.x_train) for fold in make_folds("time-cv", recordings, 256, 3)]
    assert plan_workload(study) == Workload(study.run_count(), sum(per_fold) / 3, 3, 1, 256)
    assert plan_wait_line(study) == (
        f"{study.run_count()} training runs: {describe_wait(estimate(plan_workload(study)))} on this machine "
        "(early stopping often ends runs sooner)."
    )
