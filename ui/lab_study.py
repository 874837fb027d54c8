"""The Fault lab's Study part: the shipped studies' verdicts for every visitor, one study's figures, a study
of the current data as a background job (refused on the page when too large), and opening a saved results or
study JSON again."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import streamlit as st

from core import jobs
from core.figures import fault_lab as lab_figures
from core.figures import study as figures
from core.results import validate_results
from core.study import comparisons_table, read_study
from core.study.contract import MAX_STUDY_BYTES
from core.study.folds import SPLITS
from core.study.runner import StudyPlan
from core.study.views import (
    estimated_seconds,
    fold_scores,
    half_widths,
    paired_frame,
    per_class,
    pooled_confusion,
    primary_by_metric,
)
from ui.common import show_figure, show_table
from ui.fault_lab import (
    JOB_KEY,
    MESSAGE_KEY,
    RESULTS_KEY,
    STUDY_KEY,
    WEIGHTS_KEY,
    LabSettings,
    cluster_address,
    training_workers,
)
from ui.lab_data import LoadedData
from ui.lab_inside import order_section, profile_section
from ui.lab_results import confusion_frame

RESULTS_DIR = Path(__file__).resolve().parents[1] / "results"
SHIPPED = {
    "study_cwru_0hp_time-cv.json": "CWRU 0 HP, each recording cut in time into 5 folds",
    "study_cwru_fault-size.json": "CWRU, tested on a fault size the models never saw",
    "study_cwru_load-out.json.gz": "CWRU, tested at a motor load the models never saw",
}
MAX_PAGE_RUNS = 60
MAX_PAGE_SECONDS = 600


@st.cache_resource(show_spinner=False)  # shared and never copied: every visitor reads the same studies
def shipped_studies() -> dict[str, dict[str, Any]]:
    """The studies shipped with the app (results/), by title; one that is missing or invalid is left out.
    Read-only: nothing on the page changes them."""
    studies = {}
    for name, title in SHIPPED.items():
        try:
            studies[title] = read_study((RESULTS_DIR / name).read_bytes())
        except (OSError, ValueError):
            continue
    return studies


def study_section(data: LoadedData, settings: LabSettings) -> None:
    shipped = shipped_studies()
    st.markdown(
        "One split and three seeds cannot answer the question: a **study** cuts every recording into folds in time, "
        "trains every model on every (fold, seed), and judges B − A against a 2-point equivalence margin "
        "(`results/study_protocol.md`). The studies shipped with the app:"
    )
    for title, study in shipped.items():
        st.markdown(f"**{title}**")
        st.info(study["comparisons"][0]["sentence"])
    own = st.session_state.get(STUDY_KEY)
    options = list(shipped) + (["the study run or opened here"] if own is not None else [])
    if options:
        pick = st.selectbox("Show the comparisons and figures of", options, key="study_pick")
        show_study(own if pick not in shipped else shipped[pick])
    run_controls(data, settings)
    open_saved_file()


def show_study(study: dict[str, Any]) -> None:
    config = study["config"]
    st.caption(
        f"{config['split']} · {config['folds']} folds × {len(config['seeds'])} seeds · "
        f"models {', '.join(config['models'])} · margin ±{config['margin']:g} points · "
        f"commit {config['git_commit'][:10]}"
    )
    st.info(study["comparisons"][0]["sentence"])
    show_table(comparisons_table(study["comparisons"]), "study_comparisons")
    for comparison in study["comparisons"][1:]:
        st.caption(comparison["sentence"])
    # the rest on request: a shared server renders it only for the visitors who ask
    if not st.toggle("More of this study: every metric, the order test, the figures", key="study_more"):
        return
    st.markdown("**B vs A on every metric** (log loss in 0.01 nats, lower is better)")
    show_table(primary_by_metric(study), "study_metrics")
    if config["split"] == "fault-size":
        st.markdown("**Per class**, pooled over folds and seeds (the classes are unbalanced here)")
        show_table(per_class(study), "study_per_class")
    comparisons = study["comparisons"]
    show_figure(figures.equivalence(comparisons), comparisons_table(comparisons), "study_equivalence")
    a, b = comparisons[0]["a"], comparisons[0]["b"]
    paired = paired_frame(study, a, b, config["metric"])
    show_figure(figures.paired_differences(paired, a, b), paired, "study_paired")
    scores = fold_scores(study, config["metric"])
    show_figure(figures.fold_heatmap(scores, config["metric"]), scores.reset_index(), "study_folds")
    widths = half_widths(study, a, b, config["metric"])
    show_figure(figures.half_width_curves(widths), widths, "study_half_widths")
    order_section(study["order_summary"], "study_order_test")
    model_config = config["train"]["model"]
    profile_section(study["profiles"], model_config["d_model"] or model_config["patch"], prefix="study_")
    matrices = pooled_confusion(study)
    show_figure(
        lab_figures.confusion_matrices(matrices, study["class_names"]),
        confusion_frame(matrices, study["class_names"]),
        "study_confusion",
    )


def run_controls(data: LoadedData, settings: LabSettings) -> None:
    st.subheader("Run a study on the current data")
    left, middle, right = st.columns(3)
    split = left.radio("Split", list(SPLITS), horizontal=True, key="study_split")
    folds = middle.slider("Folds (time-cv)", 3, 10, 5, key="study_folds")
    seeds = right.slider("Seeds", 1, 6, 3, key="study_seeds")
    try:
        plan = StudyPlan(
            data.recordings,
            split=split,
            models=settings.models,
            seeds=range(seeds),
            config=settings.train_config(),
            folds=folds,
            window=settings.window,
            workers=training_workers(),
            data_settings=data.settings(),
            command=study_command(data, settings, split, folds, seeds),
        )
    except ValueError as error:
        st.error(str(error))
        return
    windows = sum(len(r.signal) // settings.window for r in data.recordings)
    seconds = estimated_seconds(plan.run_count(), int(0.6 * windows), settings.epochs, settings.window, plan.workers)
    st.caption(
        f"{plan.run_count()} training runs, about {seconds / 60:.0f} min on this server "
        "(early stopping often ends runs sooner)."
    )
    if cluster_address() is None and (plan.run_count() > MAX_PAGE_RUNS or seconds > MAX_PAGE_SECONDS):
        st.warning(
            f"Too large for a shared page (over {MAX_PAGE_RUNS} runs or {MAX_PAGE_SECONDS // 60} minutes), and this "
            "server has no cluster to send it to. Run it where you have the cores:"
        )
        st.code(plan.command, language="bash")
        return
    busy = st.session_state.get(JOB_KEY) is not None
    if st.button("Run a study", key="run_study", disabled=busy):
        st.session_state[JOB_KEY] = jobs.start(plan)
        st.rerun()
    st.caption("It runs in the background through the progress panel above, with Stop. Headless:")
    st.code(plan.command, language="bash")


def study_command(data: LoadedData, settings: LabSettings, split: str, folds: int, seeds: int) -> str:
    config = settings.train_config()
    words = ["python", "-m", "core.study", *data.spec.argv(), "--split", split, "--folds", str(folds)]
    words += ["--seeds", ",".join(str(s) for s in range(seeds)), "--models", ",".join(settings.models)]
    words += ["--window", str(settings.window), "--tokens", settings.tokens, "--patch", str(settings.patch)]
    words += [] if settings.d_model is None else ["--d-model", str(settings.d_model)]
    words += ["--heads", str(settings.n_heads), "--layers", str(settings.n_layers), "--epochs", str(config.epochs)]
    return shlex.join([*words, "--lr", f"{config.learning_rate:g}", "--out", "study.json"])


def open_saved_file() -> None:
    st.subheader("Open a saved results or study file")
    upload = st.file_uploader("A results or study JSON this lab wrote", type=["json"], key="open_json")
    if st.button("Open", key="open_file", disabled=upload is None):
        try:
            kind = open_json(upload.getvalue())
        except ValueError as error:
            st.session_state[MESSAGE_KEY] = ("error", f"{upload.name} cannot be opened: {error}")
        else:
            st.session_state[MESSAGE_KEY] = ("success", f"Opened {upload.name}: {kind}")
        st.rerun()


def open_json(raw: bytes) -> str:
    """Put a saved results or study JSON back on the page; ValueError (nothing changed) when it is refused.
    Nothing in the file is used as a path: it is only read as numbers and text."""
    if len(raw) > MAX_STUDY_BYTES:
        raise ValueError(f"it is {len(raw) / 1e6:.1f} MB, over the {MAX_STUDY_BYTES / 1e6:.0f} MB limit")
    try:
        content = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"it is not valid JSON ({error})") from None
    if isinstance(content, dict) and content.get("kind") == "study":
        st.session_state[STUDY_KEY] = read_study(raw)
        return "the study is under 5 · Study."
    validate_results(content)
    st.session_state[RESULTS_KEY] = content
    st.session_state[WEIGHTS_KEY] = None
    return (
        "its results are under 4 · Results; the trained weights are not in the file, so train again to download them."
    )
