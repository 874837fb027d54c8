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
That includes the evaluations beyond one split (core.evaluation): a Plan may ask for a cross-load table
(`train_loads`, `test_loads`), noise robustness (`snr_db`), the split comparison (`compare_splits`) and a
d_model sweep (`d_models`); run_plan trains what they need and adds their blocks to the results JSON.

Data: a finished WindowSet serves one experiment on one split. Cross-load and the split comparison cut the
recordings themselves (per load, or under the other split), so for them `data` must give the recordings,
and `windowing` says how to cut them (the keyword arguments of `core.vibration.make_windows`):

    Plan(data=lambda: load_cwru(folder, loads=(0, 1, 2, 3), allow_missing=True), windowing={"window": 1024},
         models=["A", "B"], seeds=[0, 1, 2], train_loads=[0], test_loads=[1, 2, 3], snr_db=[-4, 0, 4, 8])
"""

from __future__ import annotations

import dataclasses
import itertools
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from core import evaluation
from core.models import MODEL_NAMES
from core.results import METRICS, build_results
from core.training import TrainConfig, TrainingStopped, cpu_threads, pick_device, train

STATES = ("queued", "running", "done", "stopped", "failed")
FINISHED_STATES = ("done", "stopped", "failed")
MAIN_STAGE = "main"  # the experiment itself; the other stages serve the evaluations
WINDOWING_KEYS = ("window", "stride", "split", "mode", "seed")  # keyword arguments of make_windows
DEFAULT_SHARES = (0.7, 0.2, 0.1)  # make_windows' default (train, val, test) shares


@dataclass
class Plan:
    """What to run: the data, the models and seeds to cross, the shared training config and the device.

    `data` is a WindowSet, a list of Recordings, or a callable that returns either (loading then runs on
    the worker, not in the page). Recordings are cut with `windowing` (make_windows keyword arguments:
    window, stride, split, mode, seed); cross-load and `compare_splits` need recordings.
    `data_settings` records how the data was made (dataset, loads, ...) in the JSON config.
    `metric` is the one the paired comparison with A and the verdict use.

    Optional evaluations (core.evaluation), each adding a block to the results JSON:
    `train_loads` + `test_loads`: the cross-load table (recordings need meta["load_hp"]); the experiment
    itself then runs on the first train load, on the classes recorded at every train and test load.
    `snr_db`: noise robustness of every run, on noisy copies of its test windows.
    `compare_splits`: the same experiment again under the other split mode (time <-> random).
    `d_models`: the embedding models again at each width; the experiment itself uses the first.
    """

    data: Any
    models: Sequence[str]
    seeds: Sequence[int]
    config: TrainConfig = field(default_factory=TrainConfig)
    device: str | None = None
    data_settings: Mapping[str, Any] = field(default_factory=dict)
    metric: str = "accuracy"
    keep_weights: bool = True  # a few hundred kB per run; lets the page offer the trained models
    windowing: Mapping[str, Any] = field(default_factory=dict)
    train_loads: Sequence[int] | None = None
    test_loads: Sequence[int] | None = None
    snr_db: Sequence[float] | None = None
    compare_splits: bool = False
    d_models: Sequence[int] | None = None
    workers: int = 1  # runs trained side by side, each in a thread with `config.threads` torch threads

    def __post_init__(self) -> None:
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"workers must be a positive integer, got {self.workers!r}")
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
        unknown_windowing = sorted(set(self.windowing) - set(WINDOWING_KEYS))
        if unknown_windowing:
            raise ValueError(f"windowing takes {WINDOWING_KEYS}, got unknown {unknown_windowing}")
        self.windowing = dict(self.windowing)
        loads = evaluation.check_loads(self.train_loads, self.test_loads)
        self.train_loads, self.test_loads = loads if loads else (None, None)
        if self.snr_db is not None:
            self.snr_db = evaluation.check_snr_list(self.snr_db)
        self.d_models = evaluation.check_d_models(self.d_models, self.config.model.n_heads)
        if self.d_models is not None:
            if not evaluation.embedding_models(self.models):
                raise ValueError("the d_model sweep needs an embedding model among the models (B, B-noPE, B-learned, B-concat)")
            # the experiment itself runs at the first width of the sweep
            self.config = dataclasses.replace(
                self.config, model=dataclasses.replace(self.config.model, d_model=self.d_models[0])
            )

    @property
    def cross_load(self) -> bool:
        return self.train_loads is not None

    @property
    def split_mode(self) -> str:
        return self.windowing.get("mode", "time")

    def run_count(self) -> int:
        """Training runs in all: the experiment, plus those the evaluations need (noise needs none)."""
        per_seed = len(self.models)
        if self.cross_load:
            per_seed += len(self.models) * (len(self.train_loads) - 1)
        if self.compare_splits:
            per_seed += len(self.models)
        if self.d_models is not None:
            per_seed += len(evaluation.embedding_models(self.models)) * (len(self.d_models) - 1)
        return per_seed * len(self.seeds)

    def evaluations(self) -> dict[str, Any]:
        """The evaluation settings, as recorded under config["evaluations"]."""
        return {
            "train_loads": self.train_loads,
            "test_loads": self.test_loads,
            "snr_db": self.snr_db,
            "compare_splits": self.compare_splits,
            "d_models": self.d_models,
        }


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
    stage: str | None = None  # "main", or the evaluation the current run serves ("random split", "d_model 64", ...)


def experiment_config(plan: Plan, windows: Any) -> dict[str, Any]:
    """Every setting of an experiment, as recorded under "config" in the results JSON."""
    cut = {}
    if plan.windowing:
        cut = {"shares": list(plan.windowing.get("split", DEFAULT_SHARES)), "split_seed": int(plan.windowing.get("seed", 0))}
    return {
        "models": list(plan.models),
        "seeds": list(plan.seeds),
        "metric": plan.metric,
        "device": None if plan.device is None else str(plan.device),
        "train": plan.config.to_dict(),
        "data": {
            **dict(plan.data_settings),
            **cut,
            "window": int(windows.window),
            "stride": int(windows.stride),
            "split_mode": windows.mode,
            "sample_rate": float(windows.sample_rate),
            "normalisation": {"mean": float(windows.mean), "std": float(windows.std)},
            "counts": windows.counts,
        },
        "evaluations": plan.evaluations(),
    }


class PlanStopped(TrainingStopped):
    """`should_stop()` turned True during a plan; `results` is the JSON of the runs finished before (or None)."""

    def __init__(self, results: dict[str, Any] | None):
        super().__init__("the experiment was stopped on request")
        self.results = results


@dataclass
class Stage:
    """One batch of training runs: the experiment itself, or the runs one evaluation needs."""

    name: str
    windows: Any
    models: list[str]
    config: TrainConfig
    fixed_test_sets: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # scored by every run
    noise: bool = False  # also score noisy copies of the test windows (they depend on the seed)


def _is_window_set(data: Any) -> bool:
    return hasattr(data, "x_train") and hasattr(data, "class_names")


def plan_stages(plan: Plan, data: Any) -> tuple[list[Stage], dict[str, Any]]:
    """The stages of `plan` on `data` (a WindowSet or recordings), and what the evaluation blocks need to
    know about them. Every window set is cut here, before any training, so bad data fails at once."""
    from core.vibration import make_windows  # lazily: importing jobs should not import every loader

    needs_recordings = plan.cross_load or plan.compare_splits
    if _is_window_set(data):
        if needs_recordings:
            raise ValueError(
                "cross-load and the split comparison cut the recordings themselves: give the plan the "
                "recordings (or a callable returning them) and `windowing`, not a finished WindowSet"
            )
        main_windows, main_recordings, facts = data, None, {}
    else:
        main_recordings = list(data)
        facts = {}
        if plan.cross_load:
            classes, dropped = evaluation.common_classes(main_recordings, plan.train_loads, plan.test_loads)
            facts.update(classes=classes, dropped=dropped, recordings=main_recordings)
            main_recordings = evaluation.recordings_at(main_recordings, plan.train_loads[0], classes)
        main_windows = make_windows(main_recordings, **plan.windowing)

    main = Stage(MAIN_STAGE, main_windows, list(plan.models), plan.config, noise=plan.snr_db is not None)
    stages = [main]
    if plan.cross_load:
        recordings = facts["recordings"]
        main.fixed_test_sets = evaluation.cross_load_test_sets(recordings, main_windows, plan.train_loads[0], plan.test_loads)
        for load in plan.train_loads[1:]:
            at_load = evaluation.recordings_at(recordings, load, facts["classes"])
            windows = make_windows(at_load, **plan.windowing)
            tests = evaluation.cross_load_test_sets(recordings, windows, load, plan.test_loads)
            stages.append(Stage(f"train load {load} HP", windows, list(plan.models), plan.config, tests))
        facts["test_windows"] = {
            load: len(main.fixed_test_sets[evaluation.load_name(load)][1]) for load in plan.test_loads
        }
    if plan.compare_splits:
        other = evaluation.other_split_mode(plan.split_mode)
        windows = make_windows(main_recordings, **{**plan.windowing, "mode": other})
        stages.append(Stage(f"{other} split", windows, list(plan.models), plan.config))
    if plan.d_models is not None:
        for width in plan.d_models[1:]:
            config = dataclasses.replace(plan.config, model=dataclasses.replace(plan.config.model, d_model=width))
            stages.append(Stage(f"d_model {width}", main_windows, evaluation.embedding_models(plan.models), config))
    return stages, facts


def evaluation_blocks(plan: Plan, runs_by_stage: Mapping[str, list[dict[str, Any]]], facts: Mapping[str, Any]) -> dict[str, Any]:
    """The optional blocks of the results JSON (core.results) from the finished stages."""
    main_runs = runs_by_stage[MAIN_STAGE]
    blocks: dict[str, Any] = {}
    if plan.cross_load:
        by_train_load = {plan.train_loads[0]: main_runs}
        by_train_load.update({load: runs_by_stage[f"train load {load} HP"] for load in plan.train_loads[1:]})
        blocks["cross_load"] = evaluation.cross_load_block(
            by_train_load, plan.models, plan.test_loads, facts["classes"], facts["dropped"], facts["test_windows"]
        )
    if plan.snr_db is not None:
        blocks["noise"] = evaluation.noise_block(main_runs, plan.models, plan.snr_db)
    if plan.compare_splits:
        other = evaluation.other_split_mode(plan.split_mode)
        by_mode = {plan.split_mode: main_runs, other: runs_by_stage[f"{other} split"]}
        blocks["split_comparison"] = evaluation.split_comparison_block(by_mode, plan.models)
    if plan.d_models is not None:
        by_width = {plan.d_models[0]: main_runs}
        by_width.update({width: runs_by_stage[f"d_model {width}"] for width in plan.d_models[1:]})
        blocks["d_model_sweep"] = evaluation.d_model_sweep_block(by_width, evaluation.embedding_models(plan.models))
    return blocks


def run_plan(
    plan: Plan,
    on_run_start: Callable[[str, int], None] | None = None,
    progress: Callable[[int, dict[str, float]], None] | None = None,
    on_run_end: Callable[[dict[str, Any]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_stage: Callable[[str, Any], None] | None = None,
) -> dict[str, Any]:
    """Train every model on every seed, then the runs the plan's evaluations need; return the results JSON.

    The experiment itself comes first, seeds as the outer loop, so a plan stopped midway holds whole model
    comparisons for the seeds it finished. Every run passed to `on_run_end` carries "stage" (MAIN_STAGE
    for the experiment itself); `on_stage(name, windows)` announces each stage. If `should_stop()` turns
    True the run in progress is abandoned and PlanStopped is raised, carrying the results of the finished
    runs of the experiment itself (without evaluation blocks).
    """
    data = plan.data() if callable(plan.data) else plan.data
    stages, facts = plan_stages(plan, data)
    main_windows = stages[0].windows
    config = experiment_config(plan, main_windows)
    runs_by_stage: dict[str, list[dict[str, Any]]] = {stage.name: [] for stage in stages}

    def partial_results() -> dict[str, Any] | None:
        runs = runs_by_stage[MAIN_STAGE]
        return build_results(config, main_windows.class_names, runs, plan.metric) if runs else None

    def train_one(stage: Stage, seed: int, model: str, stop: Callable[[], bool] | None) -> dict[str, Any]:
        _this_thread.run = (model, seed)
        if on_run_start is not None:
            on_run_start(model, seed)
        test_sets = dict(stage.fixed_test_sets)
        if stage.noise:
            test_sets.update(evaluation.noisy_test_sets(stage.windows, plan.snr_db, seed))
        keep_weights = plan.keep_weights and stage.name == MAIN_STAGE
        run = train(stage.windows, model, stage.config, seed, plan.device, progress, stop, keep_weights, test_sets or None)
        run["stage"] = stage.name
        return run

    for stage in stages:
        if on_stage is not None:
            on_stage(stage.name, stage.windows)
        tasks = list(itertools.product(plan.seeds, stage.models))
        if plan.workers == 1:
            for seed, model in tasks:
                try:
                    run = train_one(stage, seed, model, should_stop)
                except TrainingStopped:
                    raise PlanStopped(partial_results()) from None
                runs_by_stage[stage.name].append(run)
                if on_run_end is not None:
                    on_run_end(run)
        else:
            runs, stopped = _train_side_by_side(stage, tasks, plan, train_one, should_stop, on_run_end)
            runs_by_stage[stage.name].extend(runs)
            if stopped:
                raise PlanStopped(partial_results())
    blocks = evaluation_blocks(plan, runs_by_stage, facts)
    return build_results(config, main_windows.class_names, runs_by_stage[MAIN_STAGE], plan.metric, blocks)


_this_thread = threading.local()  # which run (model, seed) the calling thread trains, for progress callbacks


def current_run() -> tuple[str, int] | None:
    """The (model, seed) the calling thread is training: lets a `progress` callback of run_plan tell apart
    the epochs of runs trained side by side."""
    return getattr(_this_thread, "run", None)


def _train_side_by_side(
    stage: Stage,
    tasks: list[tuple[int, str]],
    plan: Plan,
    train_one: Callable[..., dict[str, Any]],
    should_stop: Callable[[], bool] | None,
    on_run_end: Callable[[dict[str, Any]], None] | None,
) -> tuple[list[dict[str, Any]], bool]:
    """Train `tasks` (seed, model) in `plan.workers` threads; return the finished runs in the order a
    one-at-a-time loop gives them, and whether a stop was requested.

    Each run draws only from generators seeded by its own seed (core.training), so its result is the one it
    has when trained alone. torch.set_num_threads sets the calling thread's count and the default that new
    threads take: it is set here, before the run threads start, so each gets `threads` and no run changes
    another's. A run that fails, a stop request, or an interrupt of this thread (Ctrl-C) halts the rest:
    no new run starts and those in progress stop before their next batch. The run threads are daemons, so a
    server shutting down does not wait for them. `on_run_end` is called from this thread, as runs finish."""
    halt = threading.Event()

    def stop() -> bool:
        return halt.is_set() or (should_stop is not None and should_stop())

    pending = list(enumerate(tasks))
    pending_lock = threading.Lock()
    outcomes: queue.Queue[tuple[int, dict[str, Any] | None, BaseException | None]] = queue.Queue()

    def work() -> None:
        while True:
            with pending_lock:
                if not pending or stop():
                    return
                index, (seed, model) = pending.pop(0)
            try:
                outcomes.put((index, train_one(stage, seed, model, stop), None))
            except BaseException as error:  # reported to the coordinating thread, which decides
                outcomes.put((index, None, error))

    finished: dict[int, dict[str, Any]] = {}
    stopped, failure = False, None
    threads = cpu_threads(stage.config.threads) if pick_device(plan.device).type == "cpu" else nullcontext()
    with threads:
        workers = [
            threading.Thread(target=work, name=f"pe-lab-run-{n}", daemon=True) for n in range(min(plan.workers, len(tasks)))
        ]
        for worker in workers:
            worker.start()
        try:
            while any(worker.is_alive() for worker in workers) or not outcomes.empty():
                try:
                    index, run, error = outcomes.get(timeout=0.1)
                except queue.Empty:
                    continue
                if isinstance(error, TrainingStopped):
                    stopped = True
                    halt.set()
                elif error is not None:  # the first failure wins; the others are stopped
                    failure = failure or error
                    halt.set()
                else:
                    finished[index] = run
                    if on_run_end is not None:
                        on_run_end(run)
        except BaseException:
            halt.set()
            raise
    if failure is not None:
        raise failure
    stopped = stopped or len(finished) < len(tasks)  # a stop asked between runs: the rest never started
    return [finished[index] for index in sorted(finished)], stopped


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
        self._histories: dict[tuple[str, int], list[dict[str, float]]] = {}
        self._runs: list[dict[str, Any]] = []
        self._finished_runs = 0
        self._stage: str | None = None
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
                on_stage=self._on_stage,
            )
        except PlanStopped as stopped:
            self._finish("stopped", result=stopped.results)
        except Exception as error:  # a failed job reports why; the worker lives on for the next one
            self._finish("failed", error=f"{type(error).__name__}: {error}")
        else:
            self._finish("done", result=results)

    # With runs side by side the status follows one of them: the newest, and when it ends the newest of
    # those still training. `_histories` holds the epochs of every run in progress.

    def _on_run_start(self, model: str, seed: int) -> None:
        with self._lock:
            self._histories[(model, seed)] = []
            self._follow((model, seed))

    def _on_epoch(self, epoch: int, metrics: dict[str, float]) -> None:
        with self._lock:
            history = self._histories.get(current_run())
            if history is not None:
                history.append(dict(metrics))

    def _follow(self, run: tuple[str, int]) -> None:
        self._model, self._seed = run
        self._history = self._histories.get(run, [])

    def _on_stage(self, stage: str, windows: Any) -> None:
        with self._lock:
            self._stage = stage

    def _on_run_end(self, run: dict[str, Any]) -> None:
        with self._lock:
            self._finished_runs += 1
            ended = (run["model"], run["seed"])
            self._histories.pop(ended, None)
            if ended == (self._model, self._seed) and self._histories:
                self._follow(list(self._histories)[-1])  # else it stays shown until the next run starts
            weights = run.pop("weights", None)
            if weights is not None:
                self._weights[f"{run['model']}/seed{run['seed']}"] = weights
            if run.get("stage", MAIN_STAGE) == MAIN_STAGE:  # the runs of the results JSON
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
