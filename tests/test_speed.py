"""The wait a press is told: a fixed page cost plus rounds of runs side by side at this server's measured rate,
calibrated when the server starts and then following the presses it has finished."""

from __future__ import annotations

import pytest

from core.lab.speed import OBSERVED, PAGE_SECONDS, RAW_TO_EFFECTIVE, SpeedModel, calibrate, training_rounds


def test_runs_side_by_side_make_rounds():
    assert [training_rounds(runs, 2) for runs in (0, 1, 2, 3, 6)] == [0, 1, 1, 2, 3]
    assert training_rounds(6, 1) == 6 and training_rounds(5, 0) == 5


def test_a_fresh_model_tells_the_calibrated_rate_and_a_finished_press_replaces_it():
    model = SpeedModel(1e-4)
    # 6 runs on 2 workers: 3 rounds of 800 windows x 40 epochs at 1e-4 s each
    assert model.seconds(800, 6, 40, 2) == pytest.approx(PAGE_SECONDS + 3 * 800 * 40 * 1e-4 * RAW_TO_EFFECTIVE)
    model.observe(800, 6, 40, 2, job_seconds=24.0)  # took 24 s: 24 / 96,000 = 2.5e-4 s per window-epoch
    assert model.presses == 1 and model.rate == pytest.approx(2.5e-4)
    assert model.seconds(800, 6, 40, 2) == pytest.approx(PAGE_SECONDS + 24.0)  # the same press is told its time
    assert model.seconds(800, 6, 40, 1) == pytest.approx(PAGE_SECONDS + 48.0)  # on one worker, twice the rounds
    model.observe(800, 6, 40, 2, job_seconds=48.0)
    model.observe(800, 6, 40, 2, job_seconds=12.0)
    assert model.rate == pytest.approx(2.5e-4)  # the median of 12, 24 and 48 s
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        model.observe(800, 6, 40, 2, job_seconds=bad)
    model.observe(0, 6, 40, 2, job_seconds=10.0)
    assert model.presses == 3


def test_the_model_follows_only_the_latest_presses():
    model = SpeedModel(1e-4)
    for _ in range(OBSERVED):
        model.observe(100, 1, 10, 1, job_seconds=1.0)  # 1e-3 s per window-epoch
    for _ in range(OBSERVED // 2 + 1):
        model.observe(100, 1, 10, 1, job_seconds=2.0)
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
    set_tiny(at, seeds=1)
    before = speed_model().presses
    told = [c.value for c in at.caption if "training run" in c.value and "on this server" in c.value]
    assert told, [c.value for c in at.caption]
    train_to_the_end(at)
    assert speed_model().presses == before + 1
    told = [c.value for c in at.caption if "training run" in c.value and "this server finished" in c.value]
    assert told and f"from the last {before + 1} press" in told[0]
