"""Jobs and a cluster address on a hosted link that visitors cannot take down: the queue's and a session's
budgets refuse in one line, a job whose page stopped asking is cancelled and frees its place (a CLI job never
is), and a cluster address is probed off the page with a bounded connect whose answer is cached."""

from __future__ import annotations

import socket
import time
from types import SimpleNamespace

import pytest

import core.lab.backends as backends
import core.lab.experiment.plan as plans
import core.lab.jobs as jobs
from core.lab.models import ModelConfig
from core.lab.training import TrainConfig
from core.lab.vibration import make_windows, synthetic_bearing_set
from core.lab.wait import Workload, estimate
from core.limits import CLUSTER_PROBE_CACHE_S, MAX_PAGE_RUNS, MAX_PAGE_SECONDS, MAX_QUEUED_JOBS, BudgetExceeded
from tests.job_helpers import WAIT_S, tracked_endless_jobs, wait_until


def fake_plan(runs: int = 1, backend: str = "local") -> SimpleNamespace:
    """What a Job reads of a plan, with the fake runner below in place of core.lab.experiment.plan.train_plan."""
    return SimpleNamespace(run_count=lambda: runs, config=SimpleNamespace(epochs=1), workers=1, backend=backend)


@pytest.fixture
def queue(monkeypatch):
    """Fake plans run until stopped; every job started is stopped and waited for afterwards (the worker is
    shared by the whole test process)."""
    yield from tracked_endless_jobs(monkeypatch)


# --- the queue's budgets ------------------------------------------------------------------------------------


def test_a_full_queue_refuses_a_page_job_in_one_line_but_not_a_cli_job(queue):
    first = jobs.start(fake_plan(), owner="visitor-0")
    for n in range(1, MAX_QUEUED_JOBS):
        jobs.start(fake_plan(), owner=f"visitor-{n}")
    assert jobs.queue_length() == MAX_QUEUED_JOBS
    with pytest.raises(BudgetExceeded) as refused:
        jobs.start(fake_plan(), owner="one-too-many")
    message = str(refused.value)
    assert "\n" not in message and f"queue is full ({MAX_QUEUED_JOBS} experiments" in message
    assert jobs.queue_length() == MAX_QUEUED_JOBS  # the refused job took no place
    cli = jobs.start(fake_plan())  # the command-line tools run in the user's own shell: unbounded here
    assert (cli.status().state, jobs.queue_length()) == ("queued", MAX_QUEUED_JOBS + 1)
    cli.stop()
    first.stop()  # a running job holds its place until it has stopped, before its next batch
    assert first.wait(WAIT_S)
    assert jobs.start(fake_plan(), owner="one-too-many").status().state in ("queued", "running")


def test_one_session_may_have_one_job_running_or_waiting(queue):
    running = jobs.start(fake_plan(), owner="tab")
    wait_until(lambda: running.status().state == "running")
    with pytest.raises(BudgetExceeded, match="already has an experiment running or waiting"):
        jobs.start(fake_plan(), owner="tab")
    other = jobs.start(fake_plan(), owner="another tab")
    with pytest.raises(BudgetExceeded, match="already has an experiment running or waiting"):
        jobs.start(fake_plan(), owner="another tab")  # waiting counts as much as running
    running.stop()
    assert running.wait(WAIT_S)
    again = jobs.start(fake_plan(), owner="tab")  # once its job has ended, the session may start the next
    assert (again.status().state, again.status().jobs_ahead) == ("queued", 1)
    assert other.status().state == "running"


def test_a_page_job_of_more_runs_than_one_press_may_start_is_refused_unless_it_goes_to_a_cluster(queue):
    with pytest.raises(BudgetExceeded, match=f"{MAX_PAGE_RUNS + 1} training runs are more than"):
        jobs.start(fake_plan(runs=MAX_PAGE_RUNS + 1), owner="tab")
    assert jobs.queue_length() == 0
    to_the_cluster = jobs.start(fake_plan(runs=MAX_PAGE_RUNS + 1, backend="ray"), owner="tab")
    cli = jobs.start(fake_plan(runs=10 * MAX_PAGE_RUNS))
    assert to_the_cluster.status().n_runs == MAX_PAGE_RUNS + 1 and cli.status().n_runs == 10 * MAX_PAGE_RUNS


def test_a_page_job_whose_estimated_wait_is_past_the_budget_is_refused_by_the_same_estimate(queue):
    # 4,800 windows a second at 1024 samples: 2 runs x 1,200 windows x 1,250 epochs is 625 s, 25 s past 600
    too_long = Workload(runs=2, windows=1_200, epochs=1_250)
    assert estimate(too_long) == pytest.approx(625.0) and MAX_PAGE_SECONDS == 600
    with pytest.raises(BudgetExceeded, match=r"^About 10 min of training is longer than one press of the page may"):
        jobs.start(fake_plan(runs=2), owner="tab", workload=too_long)
    assert jobs.queue_length() == 0
    fits = Workload(runs=2, windows=1_200, epochs=1_000)  # 500 s
    jobs.start(fake_plan(runs=2), owner="tab", workload=fits).stop()
    assert jobs.start(fake_plan(runs=2), workload=too_long).workload == too_long  # a CLI job: nothing refuses it


# --- jobs nobody asks about any more ------------------------------------------------------------------------


def test_jobs_whose_page_stopped_asking_are_cancelled_and_free_their_place(queue, monkeypatch):
    # 1 s against a poll every 50 ms: only a pause of a whole second on a busy runner could cancel the asked job
    monkeypatch.setattr(jobs, "abandoned_after_s", 1.0)
    asked = jobs.start(fake_plan(), owner="open tab")
    cli = jobs.start(fake_plan())  # never asked about either, but nobody's page
    closed = jobs.start(fake_plan(), owner="closed tab")
    wait_until(lambda: asked.status().state == "running")
    deadline = time.monotonic() + 2.0  # two timeouts of asking once every 50 ms
    while time.monotonic() < deadline:
        assert asked.status().state == "running"
        time.sleep(0.05)
    wait_until(lambda: closed.done)
    gone = closed.status()
    assert (gone.state, gone.error) == ("stopped", None)
    assert "its page stopped asking for it for over 1 s" in gone.reason
    assert asked.status().state == "running"
    assert (cli.status().state, cli.status().jobs_ahead, jobs.queue_length()) == ("queued", 1, 2)

    wait_until(lambda: asked.done)  # no one asks now: the running job stops before its next batch
    assert asked.status().state == "stopped" and "stopped asking" in asked.status().reason
    wait_until(lambda: cli.status().state == "running")
    time.sleep(2.1)  # past the timeout more than twice
    assert cli.status().state == "running" and cli.status().reason is None
    cli.stop()
    assert cli.wait(WAIT_S) and cli.status().reason is None


def test_a_page_job_that_is_asked_about_trains_the_numbers_of_the_plan_run_alone(monkeypatch):
    # bit for bit: the job's extra check before every batch must change nothing of the training itself
    windows = make_windows(synthetic_bearing_set(seed=0, duration_s=0.5, classes=("normal", "IR007")), window=128)
    config = TrainConfig(model=ModelConfig(patch=16, heads=2, layers=1), epochs=2)
    plan = dict(data=windows, models=["A", "B"], seeds=[0], config=config, keep_weights=False)
    alone = plans.run_plan(plans.Plan(**plan))
    job = jobs.start(plans.Plan(**plan, workers=2), owner="tab")
    while not job.wait(0.02):
        job.status()
    assert job.status().state == "done", job.status().error
    for one, other in zip(alone["runs"], job.result()["runs"]):
        assert (one["history"], one["confusion_matrix"]) == (other["history"], other["confusion_matrix"])


# --- the cluster named by PE_LAB_RAY_ADDRESS -------------------------------------------------------------


@pytest.fixture
def fresh_probes(monkeypatch):
    monkeypatch.setattr(backends, "_answers", {})
    monkeypatch.setattr(backends, "_probing", set())


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answer_of(address: str) -> bool:
    wait_until(lambda: backends.cluster_reachable(address) is not None, timeout=2 * backends.CLUSTER_PROBE_TIMEOUT_S)
    return backends.cluster_reachable(address)


@pytest.mark.parametrize(
    ("address", "target"),
    [
        ("auto", None),
        ("local", None),
        ("10.0.0.5:6379", ("10.0.0.5", 6379)),
        ("ray://head.example:10002", ("head.example", 10002)),
        ("ray://head.example", ("head.example", 10001)),
        ("[::1]:6379", ("::1", 6379)),
    ],
)
def test_a_cluster_address_names_the_host_and_port_to_dial(address, target):
    assert backends.probe_target(address) == target


@pytest.mark.parametrize("address", ["head", "head:0", "head:70000", "head:port", "http://head:6379", ":6379"])
def test_an_address_without_a_host_and_port_is_refused_and_never_reachable(address, fresh_probes):
    with pytest.raises(backends.BackendError, match="cannot read a host and port"):
        backends.probe_target(address)
    assert backends.cluster_reachable(address) is False


def test_a_closed_port_answers_unreachable_at_once_without_holding_up_the_caller(fresh_probes):
    address = f"127.0.0.1:{closed_port()}"
    began = time.monotonic()
    assert backends.cluster_reachable(address) is None  # the probe runs in the background
    assert time.monotonic() - began < 0.5
    assert answer_of(address) is False
    assert time.monotonic() - began < 2  # a refused connection, not the probe's timeout


def test_a_listening_port_is_reachable_and_the_answer_is_reused_until_it_is_stale(fresh_probes, monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(backends, "probe_clock", lambda: now[0])
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    address = f"ray://127.0.0.1:{listener.getsockname()[1]}"
    try:
        assert answer_of(address) is True
    finally:
        listener.close()
    now[0] += CLUSTER_PROBE_CACHE_S - 1
    assert backends.cluster_reachable(address) is True and address not in backends._probing  # cached: no probe
    now[0] += 2  # stale: the old answer stands while a new probe finds the port closed
    assert backends.cluster_reachable(address) is True
    wait_until(lambda: backends.cluster_reachable(address) is False, timeout=2 * backends.CLUSTER_PROBE_TIMEOUT_S)


def test_auto_and_local_need_no_probe(fresh_probes):
    assert backends.cluster_reachable("auto") is True and backends.cluster_reachable("local") is True
    assert backends._probing == set() and backends._answers == {}
