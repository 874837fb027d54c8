"""Shared by the job tests: a fake run that lasts until it is stopped, a tracker that stops every job a test
started (the worker thread is shared by the whole test process), and a bounded wait."""

from __future__ import annotations

import time
from collections.abc import Iterator

import core.lab.jobs as jobs
import core.lab.runs as runs

WAIT_S = 30  # a guard against a hung test, not a speed requirement


def run_until_stopped(plan, progress=None, should_stop=None):
    """Stands in for core.lab.experiment.plan.train_plan: asks to stop as often as training asks before its batches."""
    while not should_stop():
        time.sleep(0.005)
    raise runs.PlanStopped(None)


def tracked_endless_jobs(monkeypatch) -> Iterator[list[jobs.Job]]:
    """For a fixture: every job started runs until stopped; afterwards all are stopped and waited for."""
    started: list[jobs.Job] = []
    real_start = jobs.start

    def tracking_start(plan, owner=None, workload=None):
        job = real_start(plan, owner, workload)
        started.append(job)
        return job

    monkeypatch.setattr(jobs, "train_plan", run_until_stopped)
    monkeypatch.setattr(jobs, "start", tracking_start)
    yield started
    for job in started:
        job.stop()
    for job in started:
        assert job.wait(WAIT_S), "a job did not end after stop()"


def wait_until(condition, timeout: float = WAIT_S) -> None:
    """Return once `condition()` holds; AssertionError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)
