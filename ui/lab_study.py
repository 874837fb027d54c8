"""The Fault lab's Study part: the shipped studies' verdicts for every visitor, one study's figures, a study
of the current data as a background job (refused on the page when too large), and opening a saved results or
study JSON again."""

from __future__ import annotations

import shlex
from pathlib import Path
from types import MappingProxyType
from typing import Any

import streamlit as st

from core.lab import jobs
from core.lab.figures import fault_lab as lab_figures
from core.lab.figures import study as figures
from core.lab.reopen import open_saved, sentence_markdown
from core.lab.study import comparisons_table
from core.lab.study.comparisons import PRIMARY
from core.lab.study.folds import SPLITS
from core.lab.study.runner import StudyPlan
from core.lab.study.views import (
    estimated_seconds,
    fold_scores,
    half_widths,
    paired_frame,
    per_class,
    pooled_confusion,
    primary_by_metric,
)
from core.safe_text import markdown_literal
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
from ui.lab_results import confusion_frame, draw_or_close

RESULTS_DIR = Path(__file__).resolve().parents[1] / "results"
SHIPPED = {
    "study_cwru_0hp_time-cv.json": "CWRU 0 HP, each recording cut in time into 5 folds",
    "study_cwru_fault-size.json": "CWRU, tested on a fault size the models never saw",
    "study_cwru_load-out.json.gz": "CWRU, tested at a motor load the models never saw",
}


@st.cache_resource(show_spinner=False)  # read once per server, shared and never copied: every visitor reads them
def shipped_studies() -> MappingProxyType[str, dict[str, Any]]:
    """The studies shipped with the app (results/), by title, read like any reopened file (core.lab.reopen); one
    that is missing or refused is left out. Read-only: the mapping cannot be changed, and nothing on the page
    writes into a study."""
    studies = {}
    for name, title in SHIPPED.items():
        try:
            studies[title] = open_saved((RESULTS_DIR / name).read_bytes())[1]
        except (OSError, ValueError):
            continue
    return MappingProxyType(studies)


def study_section(data: LoadedData, settings: LabSettings) -> None:
    shipped = shipped_studies()
    st.markdown(
        "One split and three seeds cannot answer the question: a **study** cuts every recording into folds in time, "
        "trains every model on every (fold, seed), and judges B − A against a 2-point equivalence margin "
        "(`results/study_protocol.md`). The studies shipped with the app:"
    )
    for title, study in shipped.items():
        st.markdown(f"**{title}**")
        st.info(sentence_markdown(study["comparisons"][0]["sentence"]))
    own = st.session_state.get(STUDY_KEY)
    options = list(shipped) + (["the study run or opened here"] if own is not None else [])
    if options:
        pick = st.selectbox("Show the comparisons and figures of", options, key="study_pick")
        if pick in shipped:
            draw_or_close(lambda: show_study(shipped[pick]), (), "The shipped study")
        else:  # a study opened from a file is dropped, not drawn again, if it cannot be drawn
            draw_or_close(lambda: show_study(own), (STUDY_KEY,), "The study")
    run_controls(data, settings)
    open_saved_file()


def show_study(study: dict[str, Any]) -> None:
    """A study's comparisons, and on request its figures; every string of it is shown as text (it may come from
    a file a visitor opened)."""
    config, comparisons = study["config"], study["comparisons"]
    st.caption(
        f"{markdown_literal(config['split'])} · {config['folds']} folds × {len(config['seeds'])} seeds · "
        f"models {', '.join(markdown_literal(m) for m in config['models'])} · margin ±{config['margin']:g} "
        f"points · commit {markdown_literal(config['git_commit'][:10])}"
    )
    if comparisons:
        st.info(sentence_markdown(comparisons[0]["sentence"]))
        show_table(comparisons_table(comparisons), "study_comparisons")
    else:
        st.info("This study holds no comparison: it ran none of the pairs of models a study compares.")
    for comparison in comparisons[1:]:
        st.caption(sentence_markdown(comparison["sentence"]))
    # the rest on request: a shared server renders it only for the visitors who ask
    if not st.toggle("More of this study: every metric, the order test, the figures", key="study_more"):
        return
    if set(PRIMARY) <= {run["model"] for run in study["runs"]}:
        st.markdown("**B vs A on every metric** (log loss in 0.01 nats, lower is better)")
        show_table(primary_by_metric(study), "study_metrics")
    if config["split"] == "fault-size":
        st.markdown("**Per class**, pooled over folds and seeds (the classes are unbalanced here)")
        show_table(per_class(study), "study_per_class")
    if comparisons:
        show_figure(figures.equivalence(comparisons), comparisons_table(comparisons), "study_equivalence")
        a, b = comparisons[0]["a"], comparisons[0]["b"]
        paired = paired_frame(study, a, b, config["metric"])
        show_figure(figures.paired_differences(paired, a, b), paired, "study_paired")
    scores = fold_scores(study, config["metric"])
    show_figure(figures.fold_heatmap(scores, config["metric"]), scores.reset_index(), "study_folds")
    if comparisons:
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
    from ui.fault_lab import cluster_backend, page_refusal, session_owner

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
            **cluster_backend(),
        )
    except ValueError as error:
        st.error(str(error))
        return
    windows = sum(len(r.signal) // settings.window for r in data.recordings)
    seconds = estimated_seconds(plan.run_count(), int(0.6 * windows), settings.epochs, settings.window, plan.workers)
    where = "this server" if cluster_address() is None else "the cluster"
    st.caption(
        f"{plan.run_count()} training runs, about {seconds / 60:.0f} min on {where} "
        "(early stopping often ends runs sooner)."
    )
    refusal = page_refusal(plan.run_count(), seconds)
    if refusal:
        st.warning(refusal)
        st.code(plan.command, language="bash")
        return
    busy = st.session_state.get(JOB_KEY) is not None
    if st.button("Run a study", key="run_study", disabled=busy):
        try:
            st.session_state[JOB_KEY] = jobs.start(plan, owner=session_owner())
        except ValueError as error:  # core.limits.BudgetExceeded: the queue is full, or this session has a job
            st.error(str(error))
        else:
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
    upload = st.file_uploader(
        "A results or study JSON this lab wrote (.json, or .json.gz)", type=["json", "gz"], key="open_json"
    )
    if st.button("Open", key="open_file", disabled=upload is None):
        try:
            kind = open_json(upload.getvalue())
        except (
            Exception
        ) as error:  # core.lab.reopen refuses with a ValueError; anything else is a bug, told in one line
            line = f"{upload.name} cannot be opened: {error if isinstance(error, ValueError) else type(error).__name__}"
            st.session_state[MESSAGE_KEY] = ("error", sentence_markdown(line))
        else:
            st.session_state[MESSAGE_KEY] = ("success", sentence_markdown(f"Opened {upload.name}: {kind}"))
        st.rerun()


def open_json(raw: bytes) -> str:
    """Put a saved results or study file (JSON, or gzip-compressed JSON) back on the page; ValueError of one
    line (nothing changed) when core.lab.reopen refuses it. Nothing in the file is used as a path: it is only read
    as numbers and text."""
    kind, content = open_saved(raw)
    if kind == "study":
        st.session_state[STUDY_KEY] = content
        return "the study is under 5 · Study."
    st.session_state[RESULTS_KEY] = content
    st.session_state[WEIGHTS_KEY] = None
    return (
        "its results are under 4 · Results; the trained weights are not in the file, so train again to download them."
    )
