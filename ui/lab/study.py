"""The Fault lab's Study part: the shipped studies' verdicts for every visitor (core.lab.shipped), one study's
figures, a study of the current data as a background job (refused on the page when too large, core.lab.wait),
and opening a saved results or study JSON again."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import streamlit as st

from core.lab.figures import fault_lab as lab_figures
from core.lab.figures import study as figures
from core.lab.names import DESIGNS, ONE_FOLD
from core.lab.reopen import open_saved, sentence_markdown
from core.lab.report import confusion_frame, format_list, plural
from core.lab.shipped import CURRENT_STUDIES, PAGE_STUDIES, SHIPPED_STUDIES, STUDY_HEADINGS, read_shipped_studies
from core.lab.stats import words
from core.lab.stats.power import STUDY_ADVICE, reaches_bound, too_few_windows
from core.lab.study import comparisons_table
from core.lab.study.command import study_command
from core.lab.study.comparisons import primary_comparison
from core.lab.study.cross_load import cross_load_effects, cross_load_frame
from core.lab.study.folds import windows_tested_per_fold
from core.lab.study.noise import noise_effects, noise_frame
from core.lab.study.runner import StudyPlan
from core.lab.study.sweep import sweep_effects, sweep_frame
from core.lab.study.tables import (
    decomposition_table,
    fold_scores,
    half_widths,
    leave_one_out_table,
    model_table,
    order_gap_line,
    paired_frame,
    per_class,
    pooled_confusion,
    primary_by_metric,
)
from core.lab.vibration import Recording
from core.lab.wait import Workload, estimate, fold_training_windows, told_wait
from core.safe_text import markdown_literal, markdown_text
from ui.common import data_section, show_figure, show_table
from ui.lab.answer import verdict_badge
from ui.lab.data import LoadedData
from ui.lab.experiment import (
    LabSettings,
    cluster_address,
    cluster_backend,
    confirm_wide,
    page_refusal,
    start_job,
    training_workers,
)
from ui.lab.inside import order_section, profile_section
from ui.lab.keys import JOB_KEY, MESSAGE_KEY, ONE_FOLD_KEY, OTHER_STUDIES_KEY, RESULTS_KEY, STUDY_KEY, WEIGHTS_KEY
from ui.lab.results import draw_or_close

OWN_STUDY = "the study run or opened here"  # the option that shows the session's own study
FOLDS_DEFAULT = 5  # time-cv's folds unless chosen (StudyPlan's default)


@st.cache_resource(show_spinner=False)  # read once per server, shared and never copied: every visitor reads them
def shipped_studies() -> MappingProxyType[str, dict[str, Any]]:
    """The studies shipped with the app (core.lab.shipped.PAGE_STUDIES: version 3's, then version 2's), by title;
    read-only: the mapping cannot be changed, and nothing on the page writes into a study."""
    return MappingProxyType(read_shipped_studies(files=PAGE_STUDIES))


def study_section(data: LoadedData, settings: LabSettings) -> None:
    """The decomposition, the shipped studies' verdicts (each once, under the anchor the short answer links to),
    one study's comparisons and figures, a study of the current data, Open."""
    shipped = shipped_studies()
    st.markdown(
        "One experiment and three seeds cannot answer the question: a **study** cuts every recording into folds "
        "(in time, or by a load or fault size held out), trains every model on each, and judges **B − B-noPE** "
        "against a 2-point equivalence margin (`results/study_protocol.md`). B − A, the article's comparison, "
        "adds an embedding too; its two parts in the current studies (the map's real tasks), in points with 95 % CIs:"
    )
    parts = decomposition_table({title: shipped[title] for title in CURRENT_STUDIES.values() if title in shipped})
    if len(parts):  # the long study names get a medium column, so the numbers show beside them on a phone
        st.dataframe(parts, hide_index=True, column_config={"study": st.column_config.TextColumn(width="medium")})
    shipped_verdicts(shipped)
    own = st.session_state.get(STUDY_KEY)
    options = list(shipped) + ([OWN_STUDY] if own is not None else [])
    if options:
        pick = st.selectbox("Show the comparisons and figures of", options, key="study_pick")
        if pick in shipped:  # its verdict is shown above, once
            draw_or_close(lambda: show_study(shipped[pick], verdict_shown=True), (), "The shipped study")
        else:  # a study opened from a file is dropped, not drawn again, if it cannot be drawn
            draw_or_close(lambda: show_study(own), (STUDY_KEY,), "The study")
    with st.expander("Run a study on the current data"):
        run_controls(data, settings)
    with st.expander("Open a saved results or study file"):
        open_saved_file()


def shipped_verdicts(shipped: Mapping[str, dict[str, Any]]) -> None:
    """Each shipped study's primary verdict, version 3's in the order of the map, then version 2's folded away:
    its sentence under a heading whose anchor the short answer links to (ui.lab.answer.study_anchor)."""
    _verdicts(shipped, CURRENT_STUDIES)
    with st.expander("Version 2's verdicts (the protocol's previous version, kept as it ran)"):
        _verdicts(shipped, SHIPPED_STUDIES)


def _verdicts(shipped: Mapping[str, dict[str, Any]], files: Mapping[str, str]) -> None:
    for name, title in files.items():
        study = shipped.get(title)
        primary = None if study is None else primary_comparison(study)
        if primary is None:
            continue
        st.markdown(f"##### {STUDY_HEADINGS[name]}")  # its anchor: ui.lab.answer.study_anchor(name)
        st.markdown(f"{verdict_badge(primary['verdict'])} {sentence_markdown(primary['sentence'])}")


def _study_summary(study: dict[str, Any], comparisons: list[dict], verdict_shown: bool) -> None:
    """The primary's sentence (unless the page showed it above), every model's accuracy, the order gap and the
    comparisons, the secondary ones in words on request."""
    if comparisons and not verdict_shown:
        st.markdown(f"{verdict_badge(comparisons[0]['verdict'])} {sentence_markdown(comparisons[0]['sentence'])}")
    st.markdown("**Every model's accuracy** over its runs (spectrum-LR, where run, is blind to order)")
    show_table(model_table(study), "study_models")
    if (gap := order_gap_line(study)) is not None:
        st.caption(sentence_markdown(gap))
    if comparisons:
        show_table(comparisons_table(comparisons), "study_comparisons")
    else:
        st.info("This study holds no comparison: it ran none of the pairs of models a study compares.")
    if len(comparisons) > 1:
        with st.expander("The secondary comparisons in words"):
            for comparison in comparisons[1:]:
                st.caption(sentence_markdown(comparison["sentence"]))


EXTRA_TEST_TABLES = (  # a study's extra tests (core.lab.study.extra_tests): effects, table, its key, its lead
    (
        noise_effects,
        noise_frame,
        "study_noise",
        lambda config: "**With noise**: each run scored again on its test windows with white noise at each SNR",
    ),
    (
        cross_load_effects,
        cross_load_frame,
        "study_cross_load",
        lambda config: (
            f"**At other loads**: each run trained at {config['train_loads'][0]} scored again on every "
            "window at each test load"
        ),
    ),
)


def show_study(study: dict[str, Any], verdict_shown: bool = False) -> None:
    """A study's comparisons, and on request its figures; every string of it is shown as text (it may come from
    a file a visitor opened). With `verdict_shown` (a shipped study, whose verdict the page shows above) its
    primary sentence is not repeated."""
    config, comparisons = study["config"], study["comparisons"]
    st.caption(
        f"{markdown_literal(config['design'])} · {plural(config['folds'], 'fold')} × "
        + (f"{plural(config['repeats'], 'repeat')} × " if config.get("repeats", 1) > 1 else "")
        + f"{plural(len(config['seeds']), 'seed')} · "
        f"models {', '.join(markdown_literal(m) for m in config['models'])} · margin ±{config['margin']:g} "
        f"points · commit {markdown_literal(config['git_commit'][:10])}"
    )
    _study_summary(study, comparisons, verdict_shown)
    # the rest on request: a shared server renders it only for the visitors who ask
    if not st.toggle("More of this study: every metric, the order test, the figures", key="study_more"):
        return
    if (primary := primary_comparison(study)) is not None:
        pair = markdown_literal(f"{primary['b']} vs {primary['a']}")
        st.markdown(f"**{pair}, the primary comparison, on every metric** (log loss in 0.01 nats, lower is better)")
        show_table(primary_by_metric(study), "study_metrics")
    if config["design"] == "fault-size":
        st.markdown("**Per class**, pooled over folds and seeds (the classes are unbalanced here)")
        show_table(per_class(study), "study_per_class")
    left_out = leave_one_out_table(study)
    if len(left_out):
        rows = (primary or {}).get("leave_one_fold_out") or []
        cut = f" (95 % CIs {words.clipped_words()})" if any(reaches_bound(row["ci95"]) for row in rows) else ""
        st.markdown(f"**The primary with one (repeat, fold) left out**: how much one fold moves the answer{cut}")
        show_table(left_out, "study_leave_one_out")
    if effects := sweep_effects(study, config["metric"]):
        field = effects[0]["field"]
        at = "strengths (`pe_scale`; 0 is the model without it)" if field == "pe_scale" else f"values of `{field}`"
        st.markdown(
            f"**The encoding's effect at other {at}**, in points against its partner without it on the same cells, "
            "95 % CI unadjusted: a description, not a verdict"
        )
        show_table(sweep_frame(effects), f"study_{field}")
    for effects_of, frame, key, lead in EXTRA_TEST_TABLES:
        if effects := effects_of(study, config["metric"]):
            st.markdown(
                f"{lead(config)} (nothing retrained), {markdown_literal(effects[0]['metric'])} in %, the pairs "
                "compared on the same cells, 95 % CI unadjusted: a description, not a verdict"
            )
            show_table(frame(effects), key)
    with data_section("study_figures"):  # one download for the study's figures (the tables keep their own)
        _study_figures(study, comparisons)


def _study_figures(study: dict[str, Any], comparisons: list[dict[str, Any]]) -> None:
    """The study's figures: the equivalence plot, the paired differences, the folds, the half-widths, the order
    test, the stored profiles and the pooled confusion matrices."""
    config = study["config"]
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
    """The design, folds and seeds of a study of the current data, its wait, and Run (or its command when the
    page may not start it)."""
    left, middle, right = st.columns(3)
    # the one-fold design is the experiment's own cutting: Train and compare above runs it
    design = left.radio("Design", [d for d in DESIGNS if d != ONE_FOLD], horizontal=True, key="study_design")
    folds = FOLDS_DEFAULT
    if design == "time-cv":  # load-out and fault-size take one fold per load or fault size: no count to choose
        folds = middle.slider("Folds", 3, 10, FOLDS_DEFAULT, key="study_folds")
    seeds = right.slider("Seeds", 1, 6, 3, key="study_seeds")
    try:
        plan = study_plan(data, settings, design, folds, seeds)
        work = study_workload(data, settings, plan)
    except ValueError as error:  # a setting the plan refuses, or data these folds cannot cut (DataError)
        st.error(markdown_text(error, 2_000))
        return
    st.caption(told_wait(work, "this server" if cluster_address() is None else "the cluster"))
    if plan.snr_db:
        st.caption(f"Every run is also scored with white noise at {format_list(plan.snr_db)} dB, as chosen above.")
    refusal = page_refusal(work.runs, estimate(work))
    if refusal:
        st.warning(refusal)
        st.code(plan.command, language="bash", wrap_lines=True)
        return
    confirmed = confirm_wide(study_wide_answer(data, plan), "accept_wide_study")
    busy = st.session_state.get(JOB_KEY) is not None
    if st.button("Run a study", key="run_study", disabled=busy or not confirmed):
        try:
            st.session_state[JOB_KEY] = start_job(plan, work)
        except ValueError as error:  # core.limits.BudgetExceeded: the queue is full, or this session has a job
            st.error(str(error))
        else:
            st.rerun()
    st.caption("It runs in the background through the progress panel above, with Stop. Headless:")
    st.code(plan.command, language="bash", wrap_lines=True)


def study_plan(data: LoadedData, settings: LabSettings, design: str, folds: int, seeds: int) -> StudyPlan:
    """The study of the current data with the experiment's model and training settings; ValueError in words."""
    config = settings.train_config()
    snr_db = settings.evaluations.get("snr_db") or ()  # the noise robustness chosen above scores a study's runs too
    command = study_command(
        data.spec, design, folds, range(seeds), settings.models, settings.window, config, snr_db=snr_db
    )
    return StudyPlan(
        recordings=data.recordings,
        design=design,
        models=settings.models,
        seeds=range(seeds),
        config=config,
        folds=folds,
        window=settings.window,
        workers=training_workers(),
        data_settings=data.settings(),
        command=command,
        snr_db=snr_db,
        **cluster_backend(),
    )


def study_wide_answer(data: LoadedData, plan: StudyPlan) -> str | None:
    """The line saying that the study's test windows (every window of one cutting, over its folds) are too few
    for a clear answer (core.lab.stats.power), or None."""
    tested = fold_windows(data.uid, data.recordings, plan.design, plan.window, plan.folds, "test")
    return too_few_windows(sum(tested), "this study", STUDY_ADVICE)


def study_workload(data: LoadedData, settings: LabSettings, plan: StudyPlan) -> Workload:
    """What the study's wait is estimated from (core.lab.wait): its runs over the mean of its folds' real
    training windows; DataError when the data cannot be cut into these folds."""
    per_fold = fold_windows(data.uid, data.recordings, plan.design, plan.window, plan.folds)
    return Workload(plan.trained_count(), sum(per_fold) / len(per_fold), settings.epochs, plan.workers, plan.window)


@st.cache_data(max_entries=8, show_spinner=False)
def fold_windows(
    data_uid: str, _recordings: list[Recording], design: str, window: int, folds: int, role: str = "train"
) -> list[int]:
    """The training (or, with role "test", the test) windows of each fold, cached per data set (keyed by its uid)
    and design."""
    if role == "test":
        return windows_tested_per_fold(design, _recordings, window, folds)
    return fold_training_windows(_recordings, design, window, folds)


def open_saved_file() -> None:
    """The Open control: a saved results or study file back on the page, or one line saying why not."""
    upload = st.file_uploader(
        "A results or study JSON this lab wrote (.json, or .json.gz)", type=["json", "gz"], key="open_json"
    )
    if st.button("Open", key="open_file", disabled=upload is None):
        try:
            kind = open_json(upload.getvalue())
        except Exception as error:  # core.lab.reopen refuses with a ValueError; anything else is a bug: one line
            why = error if isinstance(error, ValueError) else type(error).__name__
            line = f"{upload.name} cannot be opened: {why}"
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
    st.session_state[ONE_FOLD_KEY] = None
    st.session_state[OTHER_STUDIES_KEY] = {}
    return (
        "its results are under 4 · Results; the trained weights are not in the file, so train again to download them."
    )
