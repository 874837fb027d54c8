"""Experiments as background jobs, so a Streamlit rerun cannot kill a training loop.

Streamlit reruns the page script on every click; a training loop inside the script would die with it. Here
one worker thread per process takes jobs from a FIFO queue and runs them one at a time, so a shared link with
several users queues their experiments instead of overloading a 2-core host. The worker never touches
streamlit: a page keeps the `Job` handle (e.g. in st.session_state) and polls `job.status()` from an
`st.fragment(run_every=...)`.

    job = start(Plan(data=windows, models=["A", "B"], seeds=[0, 1, 2], config=TrainConfig()))  # or a StudyPlan
    job.status()   # JobStatus snapshot: state, place in the queue, current model/seed/epoch, history, runs
    job.stop()     # a queued job leaves the queue; a running one stops before its next batch
    job.result()   # the results JSON (core.lab.experiment.results) once done, or of the finished runs once stopped

A page passes `owner` (one id per browser session): the queue then holds at most MAX_QUEUED_JOBS jobs and each
owner at most MAX_JOBS_PER_SESSION, refused with core.limits.BudgetExceeded, and an owner's job is cancelled
once its page has stopped asking for its status (the tab was closed) for `abandoned_after_s`. The CLIs pass no
owner: their jobs are bound by nothing here.

The job runs `train_plan` and `plan_results` (core.lab.experiment.plan's `run_plan`, keeping the experiment's runs as
one-fold studies beside its results, `experiment_studies`) or, for a StudyPlan, `run_study` (core.lab.study), as the
CLIs do, and follows it through their progress events; the result is the results JSON or the study JSON.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.lab.experiment.cli import command_line
from core.lab.experiment.plan import Plan, experiment_studies, plan_results, train_plan
from core.lab.report import plural
from core.lab.runs import MAIN, EpochEnded, Event, PlanStopped, RunFinished, RunStarted, StageStarted
from core.lab.study.runner import StudyPlan, run_study
from core.lab.wait import Workload, describe_limit, describe_wait, estimate
from core.limits import (
    ABANDONED_AFTER_S,
    MAX_JOBS_PER_SESSION,
    MAX_PAGE_RUNS,
    MAX_PAGE_SECONDS,
    MAX_QUEUED_JOBS,
    BudgetExceeded,
)

_log = logging.getLogger(__name__)

STATES = ("queued", "running", "done", "stopped", "failed")
FINISHED_STATES = ("done", "stopped", "failed")

# Module settings rather than constants, so a test can shorten the wait or drive the clock.
abandoned_after_s: float = ABANDONED_AFTER_S
clock: Callable[[], float] = time.monotonic


@dataclass(frozen=True)
class JobStatus:
    """A snapshot of one job, safe to read from any thread (nothing in it changes afterwards)."""

    job_id: int
    state: str  # one of STATES
    jobs_ahead: int  # jobs that run before this one starts (0 once it runs)
    model: str | None  # the run in progress (or the last one, once the job has ended)
    seed: int | None
    run_index: int  # training runs finished so far, evaluations' runs included
    n_runs: int  # training runs in all: models x seeds, plus the runs the evaluations need
    epoch: int  # epochs finished in the current run
    max_epochs: int
    latest: dict[str, float] | None  # the last history row of the current run
    history: list[dict[str, float]]  # the current run's epochs so far
    runs: list[dict[str, Any]]  # finished runs of the experiment itself, as in the results JSON (plus extras)
    error: str | None  # why the job failed
    elapsed_seconds: float  # since the job started running
    stage: str | None = None  # "main", or the evaluation stage of the current run ("random windowing", ...)
    workers: int = 1  # runs trained side by side
    reason: str | None = None  # why a job stopped that nobody stopped by hand (its page stopped asking)
    training: list[tuple[str, int]] = field(
        default_factory=list
    )  # (model, seed) of every run in progress, oldest first
    histories: dict[tuple[str, int], list[dict[str, float]]] = field(default_factory=dict)  # their epochs so far


def progress_words(status: JobStatus) -> str:
    """The running job's progress in one sentence: "2 of 6 runs done; training B seed 1 and A seed 2".

    With one run in progress it names its epoch too ("...; training A seed 0, epoch 3 of at most 30"), and an
    evaluation's stage follows in brackets; with none in progress (between runs) only the count is left."""
    words = f"{status.run_index} of {plural(status.n_runs, 'run')} done"
    if not status.training:
        return words
    names = [f"{model} seed {seed}" for model, seed in status.training]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    stage = "" if status.stage in (None, MAIN.label) else f" ({status.stage})"
    epoch = f", epoch {status.epoch} of at most {status.max_epochs}" if len(names) == 1 else ""
    return f"{words}; training {listed}{stage}{epoch}"


class Job:
    """One queued or running experiment; create it with `start(plan)`."""

    _ids = itertools.count(1)

    def __init__(self, plan: Plan | StudyPlan, owner: str | None = None, workload: Workload | None = None):
        self.plan = plan
        self.owner = owner
        self.workload = workload  # what its wait was estimated from (core.lab.wait), when it was
        self.job_id = next(Job._ids)
        self._polled_at = clock()
        self._reason: str | None = None
        self._lock = threading.Lock()
        self._stop_requested = threading.Event()
        self._finished = threading.Event()
        self._state = "queued"
        self._model: str | None = None
        self._seed: int | None = None
        self._history: list[dict[str, float]] = []
        self._histories: dict[tuple[str, int], list[dict[str, float]]] = {}
        self._runs: list[dict[str, Any]] = []
        self._finished_runs = 0
        self._stage: str | None = None
        self._weights: dict[str, dict[str, Any]] = {}
        self._error: str | None = None
        self._result: dict[str, Any] | None = None
        self._one_fold: dict[str, dict[str, Any]] = {}  # a finished experiment's one-fold studies, by windowing
        self._started_at: float | None = None
        self._ended_at: float | None = None

    # --- called by the page or the CLI -----------------------------------------------------------

    def status(self) -> JobStatus:
        """A snapshot; asking for it is what keeps an owner's job alive (see `abandoned_after_s`)."""
        jobs_ahead = _jobs_ahead(self)  # read before taking the job's lock: the queue lock is never taken inside it
        with self._lock:
            self._polled_at = clock()
            now = self._ended_at or time.perf_counter()
            return JobStatus(
                job_id=self.job_id,
                state=self._state,
                jobs_ahead=jobs_ahead if self._state == "queued" else 0,
                model=self._model,
                seed=self._seed,
                run_index=self._finished_runs,
                n_runs=self.plan.run_count(),
                epoch=len(self._history),
                max_epochs=self.plan.config.epochs,
                latest=dict(self._history[-1]) if self._history else None,
                history=[dict(row) for row in self._history],
                runs=[dict(run) for run in self._runs],
                error=self._error,
                elapsed_seconds=now - self._started_at if self._started_at else 0.0,
                stage=self._stage,
                workers=self.plan.workers,
                reason=self._reason,
                training=list(self._histories) if self._state == "running" else [],
                histories={run: [dict(row) for row in rows] for run, rows in self._histories.items()}
                if self._state == "running"
                else {},
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

    def one_fold_study(self, name: str | None = None) -> dict[str, Any] | None:
        """A finished experiment's own runs as a study with one fold (core.lab.experiment.plan.one_fold_study), or
        another of its one-fold studies by name (experiment_studies: the other windowing's "random", a further train
        load's "load1", a second sweep's "pe_scale_sweep"); None for a study, a stopped experiment, one that has no
        such study (finished windows, a metric a study does not compare on) or no runs of that name."""
        with self._lock:
            if not self._one_fold:
                return None
            return self._one_fold.get(name or self.plan.main_windowing)

    def other_studies(self) -> dict[str, dict[str, Any]]:
        """Every one-fold study of a finished experiment but its own, by name (see one_fold_study)."""
        with self._lock:
            main = getattr(self.plan, "main_windowing", None)
            return {name: study for name, study in (self._one_fold or {}).items() if name != main}

    def weights(self) -> dict[str, dict[str, Any]]:
        """State dicts of the finished runs (CPU tensors), keyed "A/seed0"; empty unless plan.keep_weights."""
        with self._lock:
            return dict(self._weights)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job has finished (any end state); False if `timeout` seconds passed first."""
        return self._finished.wait(timeout)

    @property
    def done(self) -> bool:
        """The job has reached one of FINISHED_STATES: done, stopped or failed."""
        return self._finished.is_set()

    @property
    def abandoned(self) -> bool:
        """An owner's unfinished job whose page has not asked for its status for `abandoned_after_s`."""
        with self._lock:
            silent = clock() - self._polled_at
        return self.owner is not None and not self.done and silent > abandoned_after_s

    def _cancel_abandoned(self) -> None:
        with self._lock:
            self._reason = f"cancelled: its page stopped asking for it for over {abandoned_after_s:g} s"
        # in the server's log, so an operator (and bench/hosted.py) sees what freed the queue
        _log.warning("job %d %s", self.job_id, self._reason)
        self._stop_requested.set()

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
            results = self._execute()
        except PlanStopped as stopped:
            self._finish("stopped", result=stopped.results)
        except Exception as error:  # a failed job reports why; the worker lives on for the next one
            self._finish("failed", error=f"{type(error).__name__}: {error}")
        else:
            self._finish("done", result=results)

    def _execute(self) -> dict[str, Any]:
        """The study's JSON, or the experiment's results (keeping its runs as a one-fold study beside them)."""
        if isinstance(self.plan, StudyPlan):
            return run_study(self.plan, progress=self._on_event, should_stop=self._should_stop)
        trained = train_plan(self.plan, progress=self._on_event, should_stop=self._should_stop)
        results = plan_results(self.plan, trained)
        try:
            studies = experiment_studies(self.plan, trained, command_line(results["config"]))
        except ValueError:  # no such study for this plan (see one_fold_study): the results stand alone
            studies = {}
        except Exception as error:  # a fault in the extra files must not lose a finished press: logged, left out
            _log.warning("job %d: no one-fold study of its runs (%s: %s)", self.job_id, type(error).__name__, error)
            studies = {}
        with self._lock:
            self._one_fold = studies
        return results

    def _should_stop(self) -> bool:
        """Asked before every batch: a stop by hand, or nobody asking any more; the queue is swept meanwhile."""
        if not self._stop_requested.is_set() and self.abandoned:
            self._cancel_abandoned()
        with _queue_lock:  # a few waiting jobs at most: microseconds beside a batch's milliseconds
            _sweep()
        return self._stop_requested.is_set()

    # With runs side by side the status follows one of them: the newest, and when it ends the newest of
    # those still training. `_histories` holds the epochs of every run in progress.

    def _on_event(self, event: Event) -> None:
        with self._lock:
            if isinstance(event, StageStarted):
                self._stage = event.stage.label
            elif isinstance(event, RunStarted):
                self._histories[(event.model, event.seed)] = []
                self._follow((event.model, event.seed))
            elif isinstance(event, EpochEnded):
                history = self._histories.get((event.model, event.seed))
                if history is not None:
                    history.append(dict(event.metrics))
            elif isinstance(event, RunFinished):
                self._run_finished(event)

    def _follow(self, run: tuple[str, int]) -> None:
        self._model, self._seed = run
        self._history = self._histories.get(run, [])

    def _run_finished(self, event: RunFinished) -> None:
        run = event.run
        self._finished_runs += 1
        ended = (run["model"], run["seed"])
        self._histories.pop(ended, None)
        if ended == (self._model, self._seed) and self._histories:
            self._follow(list(self._histories)[-1])  # else it stays shown until the next run starts
        weights = run.pop("weights", None)
        if weights is not None:
            self._weights[f"{run['model']}/seed{run['seed']}"] = weights
        if event.stage == MAIN:  # the runs of the results JSON
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
            _sweep()
            while not _waiting:
                _queue_lock.wait()
                _sweep()
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


def _sweep() -> None:
    """Cancel the waiting jobs nobody asks about any more, freeing their places; the caller holds the queue lock
    (taken before a job's lock, never inside it)."""
    for job in [job for job in _waiting if job.abandoned]:
        _waiting.remove(job)
        job._cancel_abandoned()
        job._finish("stopped")


def _active() -> list[Job]:
    """The running job and the waiting ones, those that have not ended yet; the caller holds the queue lock."""
    return [job for job in (_running, *_waiting) if job is not None and not job.done]


def _jobs_ahead(job: Job) -> int:
    with _queue_lock:
        _sweep()
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


def start(plan: Plan | StudyPlan, owner: str | None = None, workload: Workload | None = None) -> Job:
    """Queue `plan` behind any jobs already waiting and return its handle at once; `workload` is what its wait
    was estimated from (core.lab.wait), kept on the job so that the page learns its speed when it ends.

    With an `owner` (a page's session id) the job must fit the page's budgets: BudgetExceeded, in one line,
    when the queue is full, when the owner already has a job running or waiting, or when the plan alone has
    more runs, or its `workload` a longer estimated wait, than one press of the page may start (unless they go
    to a cluster). Without one (the CLIs), nothing here refuses it."""
    job = Job(plan, owner, workload)
    with _queue_lock:
        if owner is not None:
            _sweep()
            _check_budgets(plan, owner, workload)
        _waiting.append(job)
        _ensure_worker()
        _queue_lock.notify()
    return job


def _check_budgets(plan: Plan | StudyPlan, owner: str, workload: Workload | None) -> None:
    active = _active()
    if sum(job.owner == owner for job in active) >= MAX_JOBS_PER_SESSION:
        raise BudgetExceeded(
            "This page already has an experiment running or waiting (one per visitor): stop it, or wait for it to end."
        )
    if len(active) >= MAX_QUEUED_JOBS:
        raise BudgetExceeded(
            f"The server's queue is full ({len(active)} experiments running or waiting, at most {MAX_QUEUED_JOBS}): "
            "try again when one has ended."
        )
    if plan.backend == "local" and plan.run_count() > MAX_PAGE_RUNS:
        raise BudgetExceeded(
            f"{plan.run_count()} training runs are more than one press of the page may start ({MAX_PAGE_RUNS}): "
            "run it from the command line instead."
        )
    seconds = 0.0 if workload is None else estimate(workload)  # the nominal speed, as the page's own check
    if plan.backend == "local" and seconds > MAX_PAGE_SECONDS:
        raise BudgetExceeded(
            f"{describe_wait(seconds).capitalize()} of training is longer than one press of the page may take "
            f"({describe_limit(MAX_PAGE_SECONDS)}): run it from the command line instead."
        )


def queue_length() -> int:
    """Jobs waiting or running in this process."""
    with _queue_lock:
        _sweep()
        return len(_active())
