"""The Fault lab's experiment: its settings, the controls that set them, the background job and its progress.

The running job and the last results live in st.session_state under keys that no widget owns (ui.lab.keys), so
they survive switching pages. The page hands the current data (ui.lab.data) and one `LabSettings` to
`start_experiment`; everything it checks, core checks (the Plan and core.lab.models), so page and CLI refuse the
same settings with the same words. One press starts at most the page's budget of runs (core.lab.wait); a larger
experiment gets its command instead, and a job is started in the name of the browser session (core.lab.jobs
bounds the queue by it).
"""

from __future__ import annotations

import dataclasses
import io
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import streamlit as st
import torch

from core.lab import evaluations, jobs
from core.lab.backends import ADDRESS_VARIABLE, BackendError, backend, cluster_reachable
from core.lab.data_spec import DataSpec
from core.lab.experiment.cli import command_line
from core.lab.experiment.plan import Plan, experiment_config, main_test_windows
from core.lab.figures import fault_lab as figures
from core.lab.models import MODEL_DESCRIPTIONS, MODEL_NAMES, ModelConfig, check_model_settings, has_embedding
from core.lab.names import WINDOWINGS
from core.lab.report import plural
from core.lab.stats.power import EXPERIMENT_ADVICE, too_few_windows
from core.lab.training import TrainConfig, default_workers, describe_device, pick_device
from core.lab.vibration import Recording
from core.lab.wait import (
    BESIDE_MODEL,
    QUESTION_MODELS,
    SpeedModel,
    Workload,
    calibrate,
    estimate,
    plan_training_windows,
    press_models,
    told_wait,
)
from core.lab.wait import page_refusal as budget_refusal
from ui.common import CHART_CONFIG
from ui.lab.data import LoadedData
from ui.lab.keys import (
    DEFAULT_MODELS_KEY,
    JOB_KEY,
    MESSAGE_KEY,
    ONE_FOLD_KEY,
    OTHER_STUDIES_KEY,
    OWNER_KEY,
    RESULTS_KEY,
    STUDY_KEY,
    WEIGHTS_KEY,
)
from ui.lab.links import (
    D_MODEL_OF_PATCH,
    D_MODELS,
    EPOCHS,
    HEADS,
    LAYERS,
    LEARNING_RATES,
    PATCHES,
    SEEDS,
    TOKENS,
    WINDOWS,
)
from ui.lab.press import interim_panel, question_line

# epochs and rate are the CLI's defaults, chosen on the CWRU validation split: at 8 epochs the synthetic
# set's B had not converged and the default verdict read "B worse"
DEFAULT_EPOCHS = TrainConfig().epochs
DEFAULT_LEARNING_RATE = TrainConfig().learning_rate
MAX_TRAINING_WORKERS = 2  # each run side by side adds ~30 MB (bench/memory.py measured 2 against the 1 GB budget)


def device_name() -> str:
    """The device this server trains on, in words."""
    return describe_device(pick_device(None))


def configured_cluster() -> str | None:
    """The Ray cluster named when the server started (PE_LAB_RAY_ADDRESS), answering or not."""
    return os.environ.get(ADDRESS_VARIABLE) or None


def cluster_address() -> str | None:
    """The Ray cluster this server sends training to, or None: it trains itself. A named cluster counts once
    its probe (core.lab.backends, off the page draw) has answered, so a dead address never holds up the page."""
    address = configured_cluster()
    return address if address is not None and cluster_reachable(address) else None


def cluster_note() -> str | None:
    """One line when a named cluster is not (yet) used, saying that training happens here meanwhile."""
    address = configured_cluster()
    if address is None:
        return None
    reachable = cluster_reachable(address)
    if reachable is None:
        return f"The cluster at `{address}` is being checked; until it answers, training happens here."
    return None if reachable else f"The cluster at `{address}` did not answer; training here."


def where_runs_execute() -> str:
    """Where the page's runs train: this server (and its device) or the cluster, in words."""
    address = cluster_address()
    if address is None:
        return f"this server ({device_name()})"
    try:
        return backend("ray", address).where() + f" at {address}"
    except BackendError as error:
        return f"nowhere yet: {error}"


def cluster_backend() -> dict[str, str]:
    """The Plan / StudyPlan fields that send its runs to the cluster in use; none when it trains here."""
    address = cluster_address()
    return {} if address is None else {"backend": "ray", "ray_address": address}


def training_workers() -> int:
    """Runs trained side by side, one torch thread each, at most MAX_TRAINING_WORKERS. One torch thread per
    run matters: two OpenMP threads of one run beside the Streamlit server were measured to slow training
    many-fold on a 2-core host, while single-threaded runs only share the cores."""
    address = cluster_address()
    if address is not None:
        return backend("ray", address).workers(1)
    return default_workers(threads=1, cap=MAX_TRAINING_WORKERS)


@dataclass(frozen=True)
class LabSettings:
    """Every setting of the page's experiment, as its controls hold them."""

    models: tuple[str, ...] = QUESTION_MODELS  # the default press adds A when its wait allows (default_models)
    tokens: str = "time"
    windowing: str = "time"  # "time" or "random": how each recording's windows go to train / val / test
    window: int = 1024
    patch: int = 32
    d_model: int | None = None  # None: the patch width
    heads: int = 4
    layers: int = 2
    epochs: int = DEFAULT_EPOCHS
    n_seeds: int = 3
    learning_rate: float = DEFAULT_LEARNING_RATE
    evaluations: Mapping[str, Any] = field(default_factory=dict)

    def train_config(self) -> TrainConfig:
        """The training settings of the page's runs: one torch thread each (see training_workers)."""
        model = ModelConfig(
            patch=self.patch, tokens=self.tokens, d_model=self.d_model, heads=self.heads, layers=self.layers
        )
        return TrainConfig(model=model, epochs=self.epochs, learning_rate=self.learning_rate, threads=1)

    def plan(self, data: LoadedData) -> Plan:
        """The plan of these settings on `data`: ValueError, in words, when they cannot run."""
        config = self.train_config()
        check_model_settings(self.models, self.window, config.model)
        return Plan(
            data=data.recordings,
            cutting={"window": self.window, "windowing": self.windowing},
            models=list(self.models),
            seeds=list(range(self.n_seeds)),
            config=config,
            data_settings=data.settings(),
            keep_weights=True,
            evaluations=dict(self.evaluations),
            workers=training_workers(),
            **cluster_backend(),
        )

    def problem(self, data: LoadedData) -> str | None:
        """What is wrong with these settings (or these data), in words, or None."""
        if data.refusal:
            return data.refusal
        try:
            self.plan(data)
        except ValueError as error:
            return str(error)
        return None


def experiment_controls(data: LoadedData) -> LabSettings:
    """Every control of the experiment, each bound to its link key; the settings they hold. The shape and training
    controls are folded away (their defaults are the CLI's), and so are the evaluations."""
    chosen = _model_controls(default_models(data))
    with st.expander("Model and training settings: window, patch, d_model, heads, layers, epochs, seeds, rate"):
        chosen.update(_shape_controls(chosen["models"]))
        chosen.update(_training_controls())
    with st.expander("Evaluate beyond one experiment (more runs, same seeds)"):
        chosen["evaluations"] = evaluation_controls(data)
    return LabSettings(**chosen)


def default_models(data: LoadedData) -> tuple[str, ...]:
    """The default press's models (core.lab.wait.press_models): B-noPE and B, with A beside them when the press
    with A is told a short enough wait here. Decided at the first draw of the session and kept: a widget's
    default must not change under it when the server's measured speed moves."""
    chosen = st.session_state.get(DEFAULT_MODELS_KEY)
    if chosen is None:
        chosen = press_models(press_seconds(data, (BESIDE_MODEL, *QUESTION_MODELS)))
        st.session_state[DEFAULT_MODELS_KEY] = chosen
    return chosen


def press_seconds(data: LoadedData, models: tuple[str, ...]) -> float | None:
    """The wait the default press with these models is told (at the page's defaults), or None when the data
    cannot run it."""
    estimate = estimated(data, LabSettings(models=models))
    return None if estimate is None else estimate[1]


def question(data: LoadedData, settings: LabSettings) -> str:
    """What a press of these settings asks, in one line (ui.lab.press.question_line); when A was left out of the
    default press for its wait, the wait with A beside these settings' models."""
    beside = None
    if settings.models == default_models(data) and BESIDE_MODEL not in settings.models:
        estimate = estimated(data, dataclasses.replace(settings, models=(BESIDE_MODEL, *settings.models)))
        beside = None if estimate is None else estimate[1]
    return question_line(settings.models, beside)


def _model_controls(default: tuple[str, ...]) -> dict[str, Any]:
    """Which models, what a token is, and the windowing (the leaky random windowing says so)."""
    left, middle, right = st.columns(3)
    models = left.multiselect(
        "Models",
        list(MODEL_NAMES),
        default=list(default),
        key="models",
        bind="query-params",
        help="\n".join(f"- **{m}**: {h}" for m, h in MODEL_DESCRIPTIONS.items()),
    )
    tokens = middle.radio(
        "Tokens",
        TOKENS,
        horizontal=True,
        key="tokens",
        bind="query-params",
        help="time: the window cut into patches of samples. fft: the window's spectrum cut into "
        "bands, so a token's index means a frequency band.",
    )
    windowing = right.radio(
        "Windowing",
        list(WINDOWINGS),
        horizontal=True,
        key="windowing",
        bind="query-params",
        help="time: each recording cut into train / validation / test blocks in time (honest). "
        "random: windows shuffled (leaky: neighbouring windows are near copies).",
    )
    if windowing == "random":
        st.warning(
            "The random windowing leaks: windows cut from one continuous recording land in both train and test, "
            "so its scores flatter every model. Use it only to see how much."
        )
    return {"models": tuple(models), "tokens": tokens, "windowing": windowing}


def _shape_controls(models: Sequence[str]) -> dict[str, Any]:
    """The window, the tokens' width, the embedding width (shown only when a chosen model has an embedding) and
    the attention heads."""
    left, middle, right, far = st.columns(4)
    window = left.selectbox("Window (samples)", WINDOWS, index=2, key="window", bind="query-params")
    patch = middle.selectbox("Patch (samples or bins per token)", PATCHES, index=2, key="patch", bind="query-params")
    d_model = D_MODEL_OF_PATCH
    if any(has_embedding(model) for model in models):  # A and A+PE take the patch length: no width to choose
        d_model = right.selectbox(
            "d_model (embedding models)",
            D_MODELS,
            key="d_model",
            bind="query-params",
            help="A's d_model is the patch length: it has no embedding.",
        )
    heads = far.selectbox("Heads", HEADS, index=2, key="heads", bind="query-params")
    return {
        "window": int(window),
        "patch": int(patch),
        "d_model": None if d_model == D_MODEL_OF_PATCH else int(d_model),
        "heads": int(heads),
    }


def _training_controls() -> dict[str, Any]:
    """Layers, the epoch cap, the seeds and the learning rate; a caption when the cap is below the default."""
    left, middle, right, far = st.columns(4)
    layers = left.slider("Layers", *LAYERS, 2, key="layers", bind="query-params")
    epochs = middle.slider("Epochs (max; early stopping)", *EPOCHS, DEFAULT_EPOCHS, key="epochs", bind="query-params")
    n_seeds = right.slider("Seeds", *SEEDS, 3, key="n_seeds", bind="query-params")
    rates = list(LEARNING_RATES)
    learning_rate = far.selectbox(
        "Learning rate",
        rates,
        index=rates.index(DEFAULT_LEARNING_RATE),
        key="learning_rate",
        bind="query-params",
        help="AdamW; the CLI's default is the same.",
    )
    if epochs < DEFAULT_EPOCHS:
        st.caption(
            f"{plural(epochs, 'epoch')} {'keeps' if epochs == 1 else 'keep'} a run short, but the models may not "
            f"have converged: on the synthetic set "
            f"B still trails A after 8 epochs and catches up by {DEFAULT_EPOCHS} (the CLI's default, chosen "
            f"on the validation split). Early stopping ends a run sooner when it has converged."
        )
    return {
        "layers": int(layers),
        "epochs": int(epochs),
        "n_seeds": int(n_seeds),
        "learning_rate": float(learning_rate),
    }


def evaluation_controls(data: LoadedData) -> dict[str, Any]:
    """One control per setting of every registered evaluation that has a page key; a setting offering the
    data's motor loads needs two loads or more. Returns the chosen values (empty choices are left out)."""
    values: dict[str, Any] = {}
    for evaluation in evaluations.registered():
        settings = [setting for setting in evaluation.settings if setting.key]
        if not settings:
            continue
        if any(setting.choices == "loads" for setting in settings) and len(data.loads) < 2:
            st.caption(
                f"{evaluation.title}: needs data at two or more motor loads (synthetic or CWRU with several loads)."
            )
            continue
        for setting, column in zip(settings, st.columns(len(settings))):
            values.update(_setting_control(setting, column, data))
        if evaluation.caption:
            st.caption(evaluation.caption)
    return values


def _setting_control(setting: Any, column: Any, data: LoadedData) -> dict[str, Any]:
    """One evaluation setting's control in `column`: {its name: the value} when one is chosen, else {}."""
    if setting.kind == "flag":
        ticked = column.checkbox(setting.label, key=setting.key, bind="query-params", help=setting.help)
        return {setting.name: True} if ticked else {}
    choices = data.loads if setting.choices == "loads" else list(setting.choices)
    picked = column.multiselect(setting.label, choices, default=[], key=setting.key, bind="query-params")
    return {setting.name: sorted(picked)} if picked else {}


def session_owner() -> str:
    """This browser session's id: every tab is a session of its own, and core.lab.jobs allows each one job."""
    return st.session_state.setdefault(OWNER_KEY, uuid.uuid4().hex)


def start_job(plan: Any, workload: Workload | None = None) -> jobs.Job:
    """Queue a Plan or StudyPlan for this session, with the workload its wait was estimated from (core.lab.wait);
    BudgetExceeded (one line) when the queue refuses it."""
    return jobs.start(plan, owner=session_owner(), workload=workload)


def start_experiment(data: LoadedData, settings: LabSettings) -> jobs.Job:
    """Queue the experiment of these settings on `data` for this session (see start_job); the job keeps what its
    wait was told from, so that the server learns its speed from the press when it ends."""
    planned = workload(data, settings)
    return start_job(settings.plan(data) if planned is None else planned[0], None if planned is None else planned[1])


def wide_answer(data: LoadedData, settings: LabSettings) -> str | None:
    """The line saying that the experiment's test windows are too few for a clear answer (core.lab.stats.power),
    or None when they are enough, or when the settings or the data cannot run (the page says why elsewhere)."""
    try:
        plan = settings.plan(data)
        tested = main_test_windows(plan, data.recordings)
    except ValueError:  # DataError among them: the data cannot be cut for training
        return None
    return too_few_windows(tested, "this experiment", EXPERIMENT_ADVICE)


def confirm_wide(line: str | None, key: str) -> bool:
    """Show `line` (too few test windows) and ask for a confirmation; whether the press may go ahead (always,
    without a line). The box is not in the link: a shared link never accepts a wide answer for its visitor."""
    if line is None:
        return True
    st.warning(line)
    return st.checkbox("Run anyway: I accept an answer this wide", key=key)


def page_refusal(runs: int, seconds: float) -> str | None:
    """Why one press of the page may not start `runs` runs of about `seconds` in all (core.lab.wait), in one
    line; None when it may, and always with a cluster to send them to."""
    return None if cluster_address() is not None else budget_refusal(runs, seconds)


def too_large(data: LoadedData, settings: LabSettings) -> tuple[str, str] | None:
    """(why, the command to run instead) when the experiment is past the page's budget; None otherwise. The
    budget is judged at the nominal speed (core.lab.wait), not this server's measured one: whether a press may
    start must not depend on how busy the server happened to be when it calibrated."""
    planned = workload(data, settings)
    if planned is None:
        return None
    plan, work = planned
    reason = page_refusal(work.runs, estimate(work))
    return None if reason is None else (reason, training_command(plan, settings))


def training_command(plan: Plan, settings: LabSettings) -> str:
    """The `python -m core.experiment` command of `plan`, without cutting a window: of the windows, the
    command reads only their length, stride and windowing."""
    cut = SimpleNamespace(
        window=settings.window,
        stride=settings.window,
        windowing=settings.windowing,
        sample_rate=0.0,
        mean=0.0,
        std=1.0,
        counts={},
    )
    return command_line(experiment_config(plan, cut))


PROGRESS_EVERY_S = 1.0  # the progress line, and how soon a finished job is collected
# The curves redraw less often: each redraw rebuilds every run's figure on the server and re-renders it in the
# browser, CPU that a server training side by side on all its cores takes from the runs
CURVES_EVERY_S = 3.0


def progress_panel() -> None:
    """The running job's place in the queue or its progress, the interim result of its finished seeds
    (ui.lab.press), and Stop; collects it when done."""
    job = st.session_state.get(JOB_KEY)
    if job is None:
        return
    status = job.status()
    if status.state == "queued":
        ahead = status.jobs_ahead
        st.info(
            f"Waiting in the queue: {plural(ahead, 'job')} ahead of yours. This server trains one "
            "job at a time, in the order they were started; yours starts when the one before it ends."
        )
    elif status.state == "running" and status.model is None:
        st.progress(
            0.0, text=f"Getting ready: cutting the windows, building the models · {status.elapsed_seconds:.0f} s"
        )
    elif status.state == "running":
        done = status.run_index + (status.epoch / max(1, status.max_epochs))
        st.progress(
            min(1.0, done / status.n_runs),
            text=f"{jobs.progress_words(status)} · {status.elapsed_seconds:.0f} s",
        )
    interim_panel(job, status)
    if status.state in ("queued", "running") and st.button("Stop", key="stop"):
        job.stop()
    if job.done:
        collect(job)
        st.rerun(scope="app")


def curves_panel() -> None:
    """The running job's training curves: every finished run's and every run training side by side."""
    job = st.session_state.get(JOB_KEY)
    if job is None:
        return
    status = job.status()
    histories = {f"{run['model']} · seed {run['seed']}": run["history"] for run in status.runs}
    for (model, seed), history in status.histories.items():  # every run training side by side
        if history:
            histories[f"{model} · seed {seed}"] = history
    if histories:
        # the house style keeps its own readable colours: Streamlit's chart theme would repaint them
        st.plotly_chart(figures.training_curves(histories), key="training_curves", config=CHART_CONFIG, theme=None)


def collect(job: jobs.Job) -> None:
    """Move a finished job's results (and weights, when it kept them) into the session; report failures. A press
    that ran to its end teaches the server's speed model how long it took."""
    status = job.status()
    result = job.result()
    if job.workload is not None and status.state == "done":
        speed_model().observe(job.workload, status.elapsed_seconds)
    if status.state == "failed":
        st.session_state[MESSAGE_KEY] = ("error", f"The experiment failed: {status.error}")
    elif result is not None and result.get("kind") == "study":
        st.session_state[STUDY_KEY] = result
        st.session_state[MESSAGE_KEY] = ("success", "The study finished: its verdicts are under 5 · Study.")
    elif result is not None:
        st.session_state[RESULTS_KEY] = result
        st.session_state[WEIGHTS_KEY] = _weights_bytes(job.weights())
        st.session_state[ONE_FOLD_KEY] = job.one_fold_study()
        st.session_state[OTHER_STUDIES_KEY] = job.other_studies()
        if status.state == "stopped":
            st.session_state[MESSAGE_KEY] = (
                "success",
                f"{_stopped(status)}: the results of the finished runs are shown.",
            )
    elif status.state == "stopped":
        st.session_state[MESSAGE_KEY] = ("success", f"{_stopped(status)} before it finished; earlier results are kept.")
    st.session_state.pop(JOB_KEY, None)


def _stopped(status: jobs.JobStatus) -> str:
    return "Stopped" if status.reason is None else f"Stopped by the server ({status.reason})"


def _weights_bytes(state_dicts: dict[str, Any]) -> bytes | None:
    if not state_dicts:
        return None
    buffer = io.BytesIO()
    torch.save(state_dicts, buffer)
    return buffer.getvalue()


def files_to_save(config: Mapping[str, Any]) -> list[str]:
    """The uploaded files a reproduced run reads, by the names the command gives them."""
    return [ref.name for ref in DataSpec.from_dict(config["data"]).files]


def expected_wait(data: LoadedData, settings: LabSettings) -> str:
    """The wait before a click, in words (core.lab.wait.told_wait): runs x the windows they train on x the epoch
    cap, at this server's measured training speed, side by side (early stopping usually ends runs sooner)."""
    planned = workload(data, settings)
    return "" if planned is None else told_wait(planned[1], where_runs_execute(), speed_model())


def estimated(data: LoadedData, settings: LabSettings) -> tuple[Plan, float] | None:
    """The plan of the settings and the wait it is told at this server's measured speed (core.lab.wait.estimate),
    or None when the settings or the data cannot run."""
    planned = workload(data, settings)
    return None if planned is None else (planned[0], estimate(planned[1], speed_model()))


def workload(data: LoadedData, settings: LabSettings) -> tuple[Plan, Workload] | None:
    """The plan of the settings and what its wait is estimated from, or None when the settings or the data
    cannot run."""
    try:
        plan = settings.plan(data)
        windows = training_windows(data.uid, data.recordings, dict(plan.cutting))
    except ValueError:  # DataError among them: the data cannot be cut for training
        return None
    return plan, Workload(plan.run_count(), windows, settings.epochs, plan.workers, settings.window)


@st.cache_resource(show_spinner=False)
def speed_model() -> SpeedModel:
    """This server's speed model (core.lab.wait), calibrated once when the first visitor opens the Fault lab
    (a training of about a second) and then learning from every press that finishes, for every session."""
    return SpeedModel(calibrate(threads=1, workers=default_workers(threads=1, cap=MAX_TRAINING_WORKERS)))


@st.cache_data(max_entries=8, show_spinner=False)
def training_windows(data_uid: str, _recordings: list[Recording], cutting: dict[str, Any]) -> int:
    """The training windows of one run of a plan cut with `cutting`, cached per data set (keyed by its uid)."""
    return plan_training_windows(_recordings, cutting)
