"""AppTest of the Fault lab's Train button on a shared server: an experiment past the page's budget gets its
command instead, a queue that is full or a second job of the same session is refused in one line keeping the
page, a queued job says how many wait ahead, and a cluster address where nothing listens neither holds up the
page nor is dialled through Ray."""

from __future__ import annotations

import socket
import time
from types import SimpleNamespace

import pytest

import core.lab.backends as backends
import core.lab.jobs as jobs
from core.limits import MAX_PAGE_RUNS, MAX_QUEUED_JOBS
from tests.apptest_utils import errors, open_lab
from tests.job_helpers import tracked_endless_jobs
from ui.lab import experiment as lab
from ui.lab import keys

ALL_MODELS = ["A", "A+PE", "B-noPE", "B", "B-learned", "B-concat", "CNN"]


@pytest.fixture
def endless_jobs(monkeypatch):
    """Every job, the page's included, runs until stopped; all are stopped afterwards (one worker per process)."""
    yield from tracked_endless_jobs(monkeypatch)


def test_a_deep_link_past_the_pages_budget_disables_train_and_shows_the_command():
    at = open_lab({"models": ALL_MODELS, "n_seeds": "5", "epochs": "50", "compare_windowings": "true"})
    runs = len(ALL_MODELS) * 5 * 2  # every model, each seed, on the time split and the random split
    assert runs > MAX_PAGE_RUNS
    assert any(c.value.startswith(f"{runs} training runs: about") for c in at.caption)
    refusal = next(w.value for w in at.warning if w.value.startswith("Too large for a shared page"))
    assert f"({runs} training runs" in refusal and "\n" not in refusal
    assert at.button(key="train").disabled
    command = at.code[0].value
    assert command.startswith("python -m core.experiment --dataset synthetic")
    assert f"--models {','.join(ALL_MODELS)}" in command and "--seeds 0,1,2,3,4" in command
    assert "--epochs 50" in command and "--windowing time,random" in command


def test_a_queued_job_says_how_many_wait_ahead_and_refusals_keep_the_page(endless_jobs):
    ahead = [
        jobs.start(
            SimpleNamespace(run_count=lambda: 1, config=SimpleNamespace(epochs=1), workers=1, backend="local"),
            owner=f"other visitor {n}",
        )
        for n in range(2)
    ]
    at = open_lab({"models": ["A", "CNN"], "n_seeds": "1", "epochs": "1"})
    at.button(key="train").click().run()
    job = at.session_state[keys.JOB_KEY]
    assert job.status().jobs_ahead == 2 and ahead[0].status().state == "running"
    assert any(info.value.startswith("Waiting in the queue: 2 jobs ahead of yours.") for info in at.info)
    at.run()
    assert at.button(key="train").disabled and job.status().jobs_ahead == 2

    # The same session asks again (its job handle lost): one line, and the job it has keeps its place.
    del at.session_state[keys.JOB_KEY]
    at.run()
    at.button(key="train").click().run()
    assert not at.exception
    assert errors(at) == [
        "This page already has an experiment running or waiting (one per visitor): stop it, or wait for it to end."
    ]
    assert keys.JOB_KEY not in at.session_state and job.status().state == "queued"
    assert at.multiselect(key="models").value == ["A", "CNN"]

    # Another session's press while the queue is full: refused in one line, nothing else changes.
    for n in range(MAX_QUEUED_JOBS - jobs.queue_length()):
        jobs.start(ahead[0].plan, owner=f"one more visitor {n}")
    assert jobs.queue_length() == MAX_QUEUED_JOBS
    at.session_state[keys.OWNER_KEY] = "a visitor arriving now"
    at.run()
    at.button(key="train").click().run()
    assert not at.exception
    (refusal,) = errors(at)
    assert refusal.startswith(f"The server's queue is full ({MAX_QUEUED_JOBS} experiments running or waiting")
    assert keys.JOB_KEY not in at.session_state and jobs.queue_length() == MAX_QUEUED_JOBS


def test_a_cluster_address_where_nothing_listens_leaves_train_here_and_says_so(monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"  # closed again at once: nothing listens there
    monkeypatch.setenv("PE_LAB_RAY_ADDRESS", address)
    dialled = []
    monkeypatch.setattr(backends, "require_ray", lambda: dialled.append(address))
    began = time.monotonic()
    at = open_lab()
    deadline = time.monotonic() + 2 * backends.CLUSTER_PROBE_TIMEOUT_S
    while backends.cluster_reachable(address) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    at.run()
    assert time.monotonic() - began < 30  # the page drew twice; ray.init on a dead address waited over 90 s
    assert f"The cluster at `{address}` did not answer; training here." in [c.value for c in at.caption]
    assert any("Runs execute on this server (cpu)" in c.value for c in at.caption)
    assert not at.button(key="train").disabled
    assert lab.LabSettings().plan(at.session_state[keys.DATA_KEY]).backend == "local"
    assert dialled == []
