"""Background jobs driven without streamlit: run to the end, stop midway, queue, fail without killing the worker."""

import threading
import time

import pytest

import core.lab.experiment.plan as plans
import core.lab.jobs as jobs
import core.lab.runs as runs
from core.lab.experiment.results import validate_results
from core.lab.models import ModelConfig
from core.lab.training import TrainConfig, TrainingStopped
from core.lab.vibration import DataError, make_windows, synthetic_bearing_set
from tests import job_helpers

WAIT_S = 60  # a guard against a hung test, not a speed requirement (training runs here, unlike job_helpers)


def wait_until(condition, timeout: float = WAIT_S) -> None:
    job_helpers.wait_until(condition, timeout)


@pytest.fixture(scope="module")
def windows():
    return make_windows(synthetic_bearing_set(seed=0, duration_s=1.0, classes=("normal", "IR007", "OR007")), window=128)


@pytest.fixture(autouse=True)
def stop_leftover_jobs(monkeypatch):
    """The worker is shared by the whole process: leave nothing running for the next test."""
    started = []
    real_start = jobs.start

    def tracking_start(plan):
        job = real_start(plan)
        started.append(job)
        return job

    monkeypatch.setattr(jobs, "start", tracking_start)
    yield
    for job in started:
        job.stop()
    for job in started:
        assert job.wait(WAIT_S), "a job did not end after stop()"


def tiny_config(**overrides) -> TrainConfig:
    return TrainConfig(**{"model": ModelConfig(patch=16, heads=2, layers=1), "epochs": 2, **overrides})


def endless_config() -> TrainConfig:
    return tiny_config(epochs=100_000, patience=100_000)


def test_a_job_runs_to_the_end_and_reports_as_it_goes(windows):
    job = jobs.start(plans.Plan(data=windows, models=["A", "B"], seeds=[0, 1], config=tiny_config()))
    seen_states = set()
    while not job.done:
        status = job.status()
        seen_states.add(status.state)
        assert status.state in jobs.STATES
        time.sleep(0.005)
    status = job.status()
    assert status.state == "done" and status.error is None
    assert seen_states <= {"queued", "running", "done"}
    assert status.run_index == status.n_runs == 4
    assert [(run["model"], run["seed"]) for run in status.runs] == [("A", 0), ("B", 0), ("A", 1), ("B", 1)]
    assert status.epoch == len(status.history) == 2 and status.latest == status.history[-1]
    results = job.result()
    validate_results(results)
    assert len(results["runs"]) == 4
    assert results["config"]["models"] == ["A", "B"] and results["config"]["train"]["epochs"] == 2
    assert results["config"]["data"]["window"] == 128
    assert set(job.weights()) == {"A/seed0", "B/seed0", "A/seed1", "B/seed1"}


def test_the_data_can_be_a_callable_built_on_the_worker(windows):
    built_on = []

    def build():
        built_on.append(threading.current_thread().name)
        return windows

    job = jobs.start(plans.Plan(data=build, models=["A"], seeds=[0], config=tiny_config(epochs=1)))
    assert job.wait(WAIT_S)
    assert job.status().state == "done"
    assert built_on == ["pe-lab-training"]


def test_stop_midway_keeps_the_finished_runs(windows, monkeypatch):
    # Make the second run endless: the job is stopped inside it, after the first run has finished.
    real_train = runs.train

    def train_with_endless_b(windows, model, config, seed, device, progress, should_stop, keep_weights, extra_sets):
        if model == "A":
            return real_train(windows, model, tiny_config(epochs=1), seed, device, progress, should_stop, keep_weights)
        while True:
            if should_stop():
                raise TrainingStopped("stopped")
            progress(1, {"epoch": 1, "train_loss": 1.0, "val_loss": 1.0, "val_accuracy": 0.5})
            time.sleep(0.001)

    monkeypatch.setattr(runs, "train", train_with_endless_b)
    job = jobs.start(plans.Plan(data=windows, models=["A", "B"], seeds=[0], config=tiny_config()))
    wait_until(lambda: job.status().model == "B" and job.status().epoch > 0)
    job.stop()
    assert job.wait(WAIT_S)
    status = job.status()
    assert status.state == "stopped"
    assert [run["model"] for run in status.runs] == ["A"]
    partial = job.result()
    validate_results(partial)
    assert [run["model"] for run in partial["runs"]] == ["A"]


def test_stopping_a_real_training_run(windows):
    job = jobs.start(plans.Plan(data=windows, models=["A"], seeds=[0], config=endless_config()))
    wait_until(lambda: job.status().epoch >= 1)
    epochs_at_stop = job.status().epoch
    job.stop()
    assert job.wait(WAIT_S)
    assert job.status().state == "stopped"
    assert job.status().epoch <= epochs_at_stop + 1  # train() checks before every batch (test_training)
    assert job.result() is None  # no run finished


def test_jobs_queue_one_at_a_time_and_see_their_place(windows):
    first = jobs.start(plans.Plan(data=windows, models=["A"], seeds=[0], config=endless_config()))
    wait_until(lambda: first.status().state == "running")
    second = jobs.start(plans.Plan(data=windows, models=["A"], seeds=[0], config=tiny_config(epochs=1)))
    third = jobs.start(plans.Plan(data=windows, models=["CNN"], seeds=[0], config=tiny_config(epochs=1)))
    assert first.status().jobs_ahead == 0
    assert (second.status().state, second.status().jobs_ahead) == ("queued", 1)
    assert (third.status().state, third.status().jobs_ahead) == ("queued", 2)
    assert jobs.queue_length() == 3

    second.stop()  # leaves the queue at once
    assert second.status().state == "stopped" and second.done
    assert third.status().jobs_ahead == 1

    first.stop()
    assert third.wait(WAIT_S)
    assert first.status().state == "stopped"
    assert third.status().state == "done"


def test_a_failing_job_reports_why_and_the_worker_runs_the_next(windows):
    def broken_data():
        raise DataError("CWRU files missing from /nowhere: 97.mat")

    failing = jobs.start(plans.Plan(data=broken_data, models=["A"], seeds=[0], config=tiny_config()))
    bad_heads = jobs.start(
        plans.Plan(data=windows, models=["A"], seeds=[0], config=tiny_config(model=ModelConfig(patch=16, heads=3)))
    )
    after = jobs.start(plans.Plan(data=windows, models=["A"], seeds=[0], config=tiny_config(epochs=1)))
    assert after.wait(WAIT_S)
    assert failing.status().state == "failed"
    assert failing.status().error == "DataError: CWRU files missing from /nowhere: 97.mat"
    assert failing.result() is None
    assert bad_heads.status().state == "failed" and "must divide d_model=16" in bad_heads.status().error
    assert after.status().state == "done"


def test_a_plan_refuses_unknown_models_and_repeats(windows):
    with pytest.raises(ValueError, match="unknown models"):
        plans.Plan(data=windows, models=["A", "Z"], seeds=[0])
    with pytest.raises(ValueError, match="must not repeat"):
        plans.Plan(data=windows, models=["A"], seeds=[0, 0])


def test_a_job_with_evaluations_counts_their_runs_but_lists_only_the_experiments():
    recordings = synthetic_bearing_set(seed=0, duration_s=1.0, classes=("normal", "IR007", "OR007"))
    plan = plans.Plan(
        data=lambda: recordings,
        windowing={"window": 128},
        models=["A", "B"],
        seeds=[0],
        config=tiny_config(epochs=1),
        evaluations={"compare_splits": True, "snr_db": [0], "d_models": [16, 32]},
    )
    assert plan.run_count() == 2 + 2 + 1  # experiment, random split, B at d_model 32
    job = jobs.start(plan)
    stages = set()
    while not job.done:
        stages.add(job.status().stage)
        time.sleep(0.005)
    status = job.status()
    assert status.state == "done", status.error
    assert (status.run_index, status.n_runs) == (5, 5)
    assert status.stage == "d_model 32" and stages <= {None, "main", "random windowing", "d_model 32"}
    assert [run["model"] for run in status.runs] == ["A", "B"]
    assert set(job.weights()) == {"A/seed0", "B/seed0"}
    results = job.result()
    validate_results(results)
    assert {"windowing_comparison", "noise", "d_model_sweep"} <= set(results)


# --- runs side by side -----------------------------------------------------------------------------------


def test_runs_side_by_side_give_the_numbers_of_runs_one_at_a_time(windows):
    plan = dict(data=windows, models=["A", "B"], seeds=[0, 1], config=tiny_config(epochs=3), keep_weights=False)
    ended = []
    alone = plans.run_plan(plans.Plan(**plan))
    side_by_side = plans.run_plan(
        plans.Plan(**plan, workers=3),
        progress=lambda event: ended.append(event.run) if isinstance(event, runs.RunFinished) else None,
    )
    assert [(run["model"], run["seed"]) for run in side_by_side["runs"]] == [("A", 0), ("B", 0), ("A", 1), ("B", 1)]
    for one, other in zip(alone["runs"], side_by_side["runs"]):
        for key in ("accuracy", "f1", "confusion_matrix", "history", "epochs"):
            assert one[key] == other[key], (one["model"], one["seed"], key)
    assert sorted((run["model"], run["seed"]) for run in ended) == [("A", 0), ("A", 1), ("B", 0), ("B", 1)]
    assert alone["summary"] == side_by_side["summary"]


def test_a_failing_run_side_by_side_stops_the_others_and_raises(windows, monkeypatch):
    stopped_by_the_failure = threading.Event()

    def train_failing_a(windows, model, config, seed, device, progress, should_stop, keep_weights, extra_sets):
        if model == "A":
            raise FloatingPointError("A diverged")
        wait_until(should_stop)  # B runs until the failure of A stops it
        stopped_by_the_failure.set()
        raise TrainingStopped("stopped")

    monkeypatch.setattr(runs, "train", train_failing_a)
    with pytest.raises(FloatingPointError, match="A diverged"):
        # one seed: B and A start together on the two workers (with two seeds both B runs would start first)
        plans.run_plan(plans.Plan(data=windows, models=["A", "B"], seeds=[0], config=tiny_config(), workers=2))
    assert stopped_by_the_failure.is_set()


def test_a_stop_side_by_side_keeps_the_runs_that_finished(windows, monkeypatch):
    real_train = runs.train
    stop = threading.Event()

    def train_endless_b(windows, model, config, seed, device, progress, should_stop, keep_weights, extra_sets):
        if model == "A":
            run = real_train(windows, model, tiny_config(epochs=1), seed, device, progress, should_stop, keep_weights)
            stop.set()  # the user presses stop once A has finished
            return run
        wait_until(should_stop)
        raise TrainingStopped("stopped")

    monkeypatch.setattr(runs, "train", train_endless_b)
    plan = plans.Plan(data=windows, models=["A", "B"], seeds=[0], config=tiny_config(), workers=2)
    with pytest.raises(runs.PlanStopped) as stopped:
        plans.run_plan(plan, should_stop=stop.is_set)
    assert [run["model"] for run in stopped.value.results["runs"]] == ["A"]


@pytest.mark.parametrize("workers", [0, -1, 1.5, True])
def test_workers_must_be_a_positive_integer(windows, workers):
    with pytest.raises(ValueError, match="workers"):
        plans.Plan(data=windows, models=["A"], seeds=[0], workers=workers)


def test_a_job_side_by_side_shows_one_runs_curve_at_a_time(windows):
    plan = plans.Plan(
        data=windows, models=["A", "B"], seeds=[0, 1], config=tiny_config(epochs=4, patience=4), workers=2
    )
    job = jobs.start(plan)
    histories = []
    deadline = time.monotonic() + WAIT_S
    while not job.done and time.monotonic() < deadline:
        status = job.status()
        if status.history:
            histories.append((status.model, status.seed, [row["epoch"] for row in status.history]))
        time.sleep(0.002)
    assert job.status().state == "done", job.status().error
    assert histories, "no live curve was seen"
    for model, seed, epochs in histories:  # never the epochs of two runs mixed in one curve
        assert epochs == list(range(1, len(epochs) + 1)), (model, seed, epochs)
    assert sorted((run["model"], run["seed"]) for run in job.status().runs) == [("A", 0), ("A", 1), ("B", 0), ("B", 1)]


def test_when_the_followed_run_ends_the_status_follows_one_still_training(windows, monkeypatch):
    # A (started first) trains until B has ended; the status must then show A's epochs, not B's finished curve
    real_train = runs.train
    b_ended = threading.Event()

    def train_slow_a(windows, model, config, seed, device, progress, should_stop, keep_weights, extra_sets):
        if model == "A":
            progress(1, {"epoch": 1, "train_loss": 1.0, "val_loss": 1.0, "val_accuracy": 0.5})
            wait_until(b_ended.is_set)
            progress(2, {"epoch": 2, "train_loss": 0.9, "val_loss": 0.9, "val_accuracy": 0.6})
            wait_until(should_stop)
            raise TrainingStopped("stopped")
        wait_until(lambda: job.status().model == "B")  # both started, B last
        run = real_train(windows, model, tiny_config(epochs=1), seed, device, progress, should_stop, keep_weights)
        return run

    monkeypatch.setattr(runs, "train", train_slow_a)
    job = jobs.start(plans.Plan(data=windows, models=["A", "B"], seeds=[0], config=tiny_config(), workers=2))
    wait_until(lambda: job.status().run_index == 1)
    b_ended.set()
    wait_until(lambda: job.status().epoch == 2)
    status = job.status()
    assert (status.model, status.seed) == ("A", 0)
    assert [row["epoch"] for row in status.history] == [1, 2]
    assert [run["model"] for run in status.runs] == ["B"]
    job.stop()
    assert job.wait(WAIT_S)


def test_a_job_with_two_workers_lists_both_runs_while_they_train(windows, monkeypatch):
    # each run reports one epoch, then trains on until it is stopped: both are in progress at once
    def train_until_stopped(windows, model, config, seed, device, progress, should_stop, keep_weights, extra_sets):
        progress(1, {"epoch": 1, "train_loss": 1.0, "val_loss": 1.0, "val_accuracy": 0.5 if model == "A" else 0.6})
        wait_until(should_stop)
        raise TrainingStopped("stopped")

    monkeypatch.setattr(runs, "train", train_until_stopped)
    job = jobs.start(plans.Plan(data=windows, models=["A", "B"], seeds=[0], config=tiny_config(), workers=2))
    wait_until(lambda: all(job.status().histories.get(run) for run in [("A", 0), ("B", 0)]))
    status = job.status()
    assert sorted(status.training) == [("A", 0), ("B", 0)]
    assert status.histories[("A", 0)][0]["val_accuracy"] == 0.5 and status.histories[("B", 0)][0]["val_accuracy"] == 0.6
    assert jobs.progress_words(status) in (
        "0 of 2 runs done; training A seed 0 and B seed 0",
        "0 of 2 runs done; training B seed 0 and A seed 0",
    )
    job.stop()
    assert job.wait(WAIT_S)
    assert job.status().training == [] and job.status().histories == {}
