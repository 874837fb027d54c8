"""Experiments as background jobs, so a Streamlit rerun cannot kill a training loop.

Streamlit reruns the page script on every click; a training loop inside the script would die with it. Here
one worker thread per process takes jobs from a FIFO queue and runs them one at a time, so a shared link with
several users queues their experiments instead of overloading a 2-core host. The worker never touches
streamlit: a page keeps the `Job` handle (e.g. in st.session_state) and polls `job.status()` from an
`st.fragment(run_every=...)`.

    job = start(Plan(data=windows, models=["A", "B"], seeds=[0, 1, 2], config=TrainConfig()))
    job.status()   # JobStatus snapshot: state, place in the queue, current model/seed/epoch, history, runs
    job.stop()     # a queued job leaves the queue; a running one stops before its next batch
    job.result()   # the results JSON (core.results) once done, or of the finished runs once stopped

`run_plan` is the same loop without the thread; the CLI calls it, so page and CLI share one code path.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.models import MODEL_NAMES
from core.results import METRICS, build_results
from core.training import TrainConfig, TrainingStopped, train

STATES = ("queued", "running", "done", "stopped", "failed")
FINISHED_STATES = ("done", "stopped", "failed")


@dataclass
class Plan:
    """What to run: the data, the models and seeds to cross, the shared training config and the device.

    `data` is a WindowSet, or a callable that builds one (loading runs on the worker, not in the page).
    `data_settings` records how the data was made (dataset, loads, window, split, ...) in the JSON config.
    `metric` is the one the paired comparison with A and the verdict use.
    """

    data: Any
    models: Sequence[str]
    seeds: Sequence[int]
    config: TrainConfig = field(default_factory=TrainConfig)
    device: str | None = None
    data_settings: Mapping[str, Any] = field(default_factory=dict)
    metric: str = "accuracy"
    keep_weights: bool = True  # a few hundred kB per run; lets the page offer the trained models

    def __post_init__(self) -> None:
        self.models, self.seeds = list(self.models), [int(seed) for seed in self.seeds]
        if not self.models or not self.seeds:
            raise ValueError("a plan needs at least one model and one seed")
        unknown = [model for model in self.models if model not in MODEL_NAMES]
        if unknown:
            raise ValueError(f"unknown models {unknown}; choose from {', '.join(MODEL_NAMES)}")
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {self.metric!r}")
        if len(set(self.models)) != len(self.models) or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"models and seeds must not repeat; got models {self.models}, seeds {self.seeds}")


@dataclass(frozen=True)
class JobStatus:
    """A snapshot of one job, safe to read from any thread (nothing in it changes afterwards)."""

    job_id: int
    state: str  # one of STATES
    jobs_ahead: int  # jobs that run before this one starts (0 once it runs)
    model: str | None  # the run in progress (or the last one, once the job has ended)
    seed: int | None
    run_index: int  # runs finished so far
    n_runs: int  # models x seeds
    epoch: int  # epochs finished in the current run
    max_epochs: int
    latest: dict[str, float] | None  # the last history row of the current run
    history: list[dict[str, float]]  # the current run's epochs so far
    runs: list[dict[str, Any]]  # finished runs, as in the results JSON (plus n_parameters, best_epoch)
    error: str | None  # why the job failed
    elapsed_seconds: float  # since the job started running


def experiment_config(plan: Plan, windows: Any) -> dict[str, Any]:
    """Every setting of an experiment, as recorded under "config" in the results JSON."""
    return {
        "models": list(plan.models),
        "seeds": list(plan.seeds),
        "metric": plan.metric,
        "device": None if plan.device is None else str(plan.device),
        "train": plan.config.to_dict(),
        "data": {
            **dict(plan.data_settings),
            "window": int(windows.window),
            "stride": int(windows.stride),
            "split_mode": windows.mode,
            "sample_rate": float(windows.sample_rate),
            "normalisation": {"mean": float(windows.mean), "std": float(windows.std)},
            "counts": windows.counts,
        },
    }


class PlanStopped(TrainingStopped):
    """`should_stop()` turned True during a plan; `results` is the JSON of the runs finished before (or None)."""

    def __init__(self, results: dict[str, Any] | None):
        super().__init__("the experiment was stopped on request")
        self.results = results


def run_plan(
    plan: Plan,
    on_run_start: Callable[[str, int], None] | None = None,
    progress: Callable[[int, dict[str, float]], None] | None = None,
    on_run_end: Callable[[dict[str, Any]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """Train every model on every seed and return the results JSON.

    Seeds are the outer loop, so a plan stopped midway holds whole model comparisons for the seeds it
    finished. If `should_stop()` turns True the run in progress is abandoned and PlanStopped is raised,
    carrying the results of the finished runs.
    """
    windows = plan.data() if callable(plan.data) else plan.data
    config = experiment_config(plan, windows)
    runs: list[dict[str, Any]] = []
    for seed, model in itertools.product(plan.seeds, plan.models):
        if on_run_start is not None:
            on_run_start(model, seed)
        try:
            run = train(windows, model, plan.config, seed, plan.device, progress, should_stop, plan.keep_weights)
        except TrainingStopped:
            partial = build_results(config, windows.class_names, runs, plan.metric) if runs else None
            raise PlanStopped(partial) from None
        runs.append(run)
        if on_run_end is not None:
            on_run_end(run)
    return build_results(config, windows.class_names, runs, plan.metric)


class Job:
    """One queued or running experiment; create it with `start(plan)`."""

    _ids = itertools.count(1)

    def __init__(self, plan: Plan):
        self.plan = plan
        self.job_id = next(Job._ids)
        self._lock = threading.Lock()
        self._stop_requested = threading.Event()
        self._finished = threading.Event()
        self._state = "queued"
        self._model: str | None = None
        self._seed: int | None = None
        self._history: list[dict[str, float]] = []
        self._runs: list[dict[str, Any]] = []
        self._weights: dict[str, dict[str, Any]] = {}
        self._error: str | None = None
        self._result: dict[str, Any] | None = None
        self._started_at: float | None = None
        self._ended_at: float | None = None

    # --- called by the page or the CLI -----------------------------------------------------------

    def status(self) -> JobStatus:
        jobs_ahead = _jobs_ahead(self)  # read before taking the job's lock: the queue lock is never taken inside it
        with self._lock:
            now = self._ended_at or time.perf_counter()
            return JobStatus(
                job_id=self.job_id,
                state=self._state,
                jobs_ahead=jobs_ahead if self._state == "queued" else 0,
                model=self._model,
                seed=self._seed,
                run_index=len(self._runs),
                n_runs=len(self.plan.models) * len(self.plan.seeds),
                epoch=len(self._history),
                max_epochs=self.plan.config.epochs,
                latest=dict(self._history[-1]) if self._history else None,
                history=[dict(row) for row in self._history],
                runs=[dict(run) for run in self._runs],
                error=self._error,
                elapsed_seconds=now - self._started_at if self._started_at else 0.0,
            )

    def stop(self) -> None:
        """Leave the queue, or stop the running job before its next batch; finished runs are kept."""
        self._stop_requested.set()
        if _withdraw(self):
            self._finish("stopped")

    def result(self) -> dict[str, Any] | None:
        """The results JSON: of all runs once done, of the finished runs once stopped; None otherwise."""
        with self._lock:
            return self._result

    def weights(self) -> dict[str, dict[str, Any]]:
        """State dicts of the finished runs (CPU tensors), keyed "A/seed0"; empty unless plan.keep_weights."""
        with self._lock:
            return dict(self._weights)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job has finished (any end state); False if `timeout` seconds passed first."""
        return self._finished.wait(timeout)

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    # --- called by the worker thread -------------------------------------------------------------

    def _run(self) -> None:
        with self._lock:
            if self._state != "queued":
                return
            self._state, self._started_at = "running", time.perf_counter()
        if self._stop_requested.is_set():  # stopped between leaving the queue and starting
            self._finish("stopped")
            return
        try:
            results = run_plan(
                self.plan,
                on_run_start=self._on_run_start,
                progress=self._on_epoch,
                on_run_end=self._on_run_end,
                should_stop=self._stop_requested.is_set,
            )
        except PlanStopped as stopped:
            self._finish("stopped", result=stopped.results)
        except Exception as error:  # a failed job reports why; the worker lives on for the next one
            self._finish("failed", error=f"{type(error).__name__}: {error}")
        else:
            self._finish("done", result=results)

    def _on_run_start(self, model: str, seed: int) -> None:
        with self._lock:
            self._model, self._seed, self._history = model, seed, []

    def _on_epoch(self, epoch: int, metrics: dict[str, float]) -> None:
        with self._lock:
            self._history.append(dict(metrics))

    def _on_run_end(self, run: dict[str, Any]) -> None:
        with self._lock:
            weights = run.pop("weights", None)
            if weights is not None:
                self._weights[f"{run['model']}/seed{run['seed']}"] = weights
            self._runs.append(run)

    def _finish(self, state: str, result: dict[str, Any] | None = None, error: str | None = None) -> None:
        with self._lock:
            self._state, self._result, self._error = state, result, error
            self._ended_at = time.perf_counter()
        self._finished.set()


# --- the one worker per process and its queue ------------------------------------------------------

_queue_lock = threading.Condition()
_waiting: list[Job] = []  # FIFO, the head runs next
_running: Job | None = None
_worker: threading.Thread | None = None


def _worker_loop() -> None:
    global _running
    while True:
        with _queue_lock:
            while not _waiting:
                _queue_lock.wait()
            _running = _waiting.pop(0)
        try:
            _running._run()
        finally:
            with _queue_lock:
                _running = None


def _ensure_worker() -> None:
    global _worker
    if _worker is None or not _worker.is_alive():
        # daemon: a server shutting down should not wait for an experiment to finish
        _worker = threading.Thread(target=_worker_loop, name="pe-lab-training", daemon=True)
        _worker.start()


def _jobs_ahead(job: Job) -> int:
    with _queue_lock:
        if job not in _waiting:
            return 0
        return _waiting.index(job) + (1 if _running is not None else 0)


def _withdraw(job: Job) -> bool:
    """Take a job out of the queue before it starts; False if it is already running or finished."""
    with _queue_lock:
        if job in _waiting:
            _waiting.remove(job)
            return True
        return False


def start(plan: Plan) -> Job:
    """Queue `plan` behind any jobs already waiting and return its handle at once."""
    job = Job(plan)
    with _queue_lock:
        _waiting.append(job)
        _ensure_worker()
        _queue_lock.notify()
    return job


def queue_length() -> int:
    """Jobs waiting or running in this process."""
    with _queue_lock:
        return len(_waiting) + (1 if _running is not None else 0)
