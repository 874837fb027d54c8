"""The Fault lab's results section: the table and verdict, the figures, each evaluation's tables, the
command that reproduces them, and the downloads. Everything is read from the results JSON alone, and every
string of it is shown as text (it may come from a file a visitor opened). `draw_or_close` is the last line of
defence for a results or study file that core.lab.reopen let through and that still cannot be drawn."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from core.lab import evaluations, report
from core.lab.contract import METRICS
from core.lab.data_spec import FILES_SPEC, DataSpec
from core.lab.experiment.cli import command_line
from core.lab.figures import fault_lab as figures
from core.lab.reopen import sentence_markdown
from core.lab.report import confusion_frame, mean_per_class_f1, summed_confusion
from core.lab.stats.summary import DEFAULT_MARGIN, PRIMARY_PAIR, REFERENCE_MODEL
from core.lab.stats.words import rule_caption
from core.lab.study.cross_load import cross_load_effects, cross_load_frame
from core.lab.study.noise import noise_effects, noise_frame
from core.lab.study.sweep import sweep_effects, sweep_frame
from core.safe_text import markdown_literal
from ui.common import data_section, show_figure, show_table
from ui.lab.data import LoadedData
from ui.lab.experiment import files_to_save
from ui.lab.inside import attention_section, order_section
from ui.lab.keys import MESSAGE_KEY, ONE_FOLD_KEY, OTHER_STUDIES_KEY, RESULTS_KEY, WEIGHTS_KEY


def _noise_figure(block: Mapping[str, Any]) -> None:
    cells = block["accuracy"]
    show_figure(
        figures.noise_curve(
            block["snr_db"],
            {m: [c["mean"] for c in row] for m, row in cells.items()},
            {m: [c["sd"] or 0.0 for c in row] for m, row in cells.items()},
        ),
        pd.DataFrame(
            [
                {"model": m, "snr_db": snr, "accuracy_mean": c["mean"], "accuracy_sd": c["sd"]}
                for m, row in cells.items()
                for snr, c in zip(block["snr_db"], row)
            ]
        ),
        "noise_curve",
    )


EVALUATION_FIGURES = {"noise": _noise_figure}  # evaluations whose block also gets a figure on the page


def draw_or_close(draw: Callable[[], None], keys: Sequence[str], what: str) -> None:
    """Run `draw`; if it fails, the content it drew from (the session `keys`) is closed and one line says so at
    the top of the page, instead of a traceback on every rerun below which the page's later parts (the Open
    control among them) would never be drawn. With no keys (shipped content) the line is shown in place."""
    try:
        draw()
    except Exception as error:  # the last line of defence: core.lab.reopen refuses what it can foresee
        line = f"{what} could not be drawn: {' '.join(filter(None, (type(error).__name__, str(error))))}"
        if not any(st.session_state.get(key) is not None for key in keys):
            st.error(sentence_markdown(line))
            return
        for key in keys:
            st.session_state.pop(key, None)
        st.session_state[MESSAGE_KEY] = ("error", sentence_markdown(f"{line}. It was closed."))
        st.rerun()


def results_section(results: Mapping[str, Any], data: LoadedData) -> None:
    """Everything the page shows of a results JSON (trained here or opened), closed when it cannot be drawn."""
    # results that cannot be drawn are closed with their weights, so the rest of the page stays usable
    keys = (RESULTS_KEY, WEIGHTS_KEY, ONE_FOLD_KEY, OTHER_STUDIES_KEY)
    draw_or_close(lambda: _draw_results(results, data), keys, "The results")


def _draw_results(results: Mapping[str, Any], data: LoadedData) -> None:
    _summary(results)
    _figures(results)
    order_section(results["order_summary"])
    attention_section(results, data)
    for evaluation in evaluations.registered():
        if evaluation.key in results:
            _evaluation_block(evaluation, results[evaluation.key])
            _effects_of(evaluation.key, results["config"]["metric"])
    _reproduce(results["config"])
    _downloads(results)


def _summary(results: Mapping[str, Any]) -> None:
    """What the results are of, the results table, the verdict and the rule it was reached by."""
    config = results["config"]
    cut = config["data"]
    names = results["class_names"]
    st.caption(
        f"{markdown_literal(cut['dataset'])} data · {markdown_literal(cut['windowing'])} windowing · window "
        f"{cut['window']} · seeds {', '.join(str(seed) for seed in config['seeds'])} · "
        f"{markdown_literal(results['runs'][0]['device'])} · classes {', '.join(markdown_literal(n) for n in names)}"
    )
    if cut["windowing"] == "random":
        st.warning("These numbers come from the leaky random windowing.")
    show_table(report.results_table(results), "results_table")
    st.info(sentence_markdown(results["verdict"]))
    margin = next(iter(results["comparisons"]), {}).get("margin", DEFAULT_MARGIN)  # points, as the JSON stores it
    st.caption(rule_caption(_judged(results), margin))


def _judged(results: Mapping[str, Any]) -> str:
    """Which comparisons the results' verdict makes: "B against B-noPE" (both ran), "each model against A"."""
    models = set(results["summary"])
    judged = ["B against B-noPE"] if set(PRIMARY_PAIR) <= models else []
    judged += ["each model against A"] if REFERENCE_MODEL in models and len(models) > 1 else []
    words = ", and ".join(judged) or "No comparison"
    return words[:1].upper() + words[1:]


def _figures(results: Mapping[str, Any]) -> None:
    """The metrics per model, the confusion matrices summed over seeds and the per-class F1 (core.lab.report)."""
    names = results["class_names"]
    matrices, per_class = summed_confusion(results), mean_per_class_f1(results)
    with data_section("result_figures"):  # one download for the three figures
        show_figure(figures.metric_bars(results["summary"], list(METRICS)), report.summary_table(results), "metrics")
        show_figure(figures.confusion_matrices(matrices, names), confusion_frame(matrices, names), "confusion_matrices")
        show_figure(
            figures.per_class_f1(per_class, names),
            pd.DataFrame(per_class, index=names).rename_axis("class").reset_index(),
            "per_class_f1",
        )


SAME_SEEDS = "b − a on the same seeds, 95 % CI over seeds, unadjusted"
EXTRA_TEST_HEADINGS = {
    "noise": f"**The pairs compared with noise**: {SAME_SEEDS}",
    "cross_load": f"**The pairs compared at each test load**, by the load trained at: {SAME_SEEDS}",
}


def _noise_table(study: Mapping[str, Any], metric: str) -> pd.DataFrame | None:
    """The noise tests' effects of the press's own study (core.lab.study.noise), None without it."""
    effects = noise_effects(study, metric)
    return noise_frame(effects) if effects else None


def _cross_load_table(study: Mapping[str, Any], metric: str) -> pd.DataFrame | None:
    """The cross-load tests' effects of the press's own study and of each further train load's (its other
    one-fold studies, core.lab.study.cross_load), a row per train load, pair and test load; None without it."""
    others = (st.session_state.get(OTHER_STUDIES_KEY) or {}).values()
    frames = []
    for each in [study, *others]:
        if effects := cross_load_effects(each, metric):
            frame = cross_load_frame(effects)
            frame.insert(0, "trained at", f"load {each['config']['train_loads'][0]}")
            frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else None


EXTRA_TEST_TABLES = {
    "noise": _noise_table,
    "cross_load": _cross_load_table,
}  # evaluations that are extra tests of a study


def _effects_of(key: str, metric: str) -> None:
    """The pairs compared under an evaluation, from the press's own runs as one-fold studies (its noise or
    cross-load tests, core.lab.study.extra_tests, or a sweep, core.lab.study.sweep, the second one's in a study of its
    own): b − a on the same seeds with a 95 % CI over them; nothing for a reopened results file, which holds the
    means alone."""
    study = st.session_state.get(ONE_FOLD_KEY)
    if not study:
        return
    if key in EXTRA_TEST_TABLES and (table := EXTRA_TEST_TABLES[key](study, metric)) is not None:
        st.markdown(EXTRA_TEST_HEADINGS[key])
        show_table(table, f"{key}_effects")
    others = (st.session_state.get(OTHER_STUDIES_KEY) or {}).values()
    swept = next((s for s in (study, *others) if key == f"{s['config'].get('sweep', {}).get('field')}_sweep"), None)
    if swept is not None and (effects := sweep_effects(swept, metric)):
        sweep = swept["config"]["sweep"]
        st.markdown(
            f"**The encoding's effect at each {markdown_literal(sweep['field'])}**: each model against its partner "
            "without the encoding on the same seeds, 95 % CI over seeds, unadjusted"
        )
        show_table(sweep_frame(effects), f"{key}_effects")


def _evaluation_block(evaluation: Any, block: Mapping[str, Any]) -> None:
    """One evaluation's tables (and figure, when it has one) from its block of the results."""
    st.subheader(evaluation.title)
    for n, (heading, table) in enumerate(evaluation.tables(block)):
        st.markdown(f"**{sentence_markdown(heading)}**")
        show_table(table, f"{evaluation.key}_{n}", hide_index=False)
    if evaluation.key in EVALUATION_FIGURES:
        EVALUATION_FIGURES[evaluation.key](block)
    if evaluation.caption:
        st.caption(evaluation.caption)


def _reproduce(config: Mapping[str, Any]) -> None:
    """The command that reproduces the results, the names to save uploaded files under, their choices' JSON."""
    st.markdown("**Reproduce these numbers headless** (same code path, same JSON):")
    st.code(command_line(config), language="bash", wrap_lines=True)
    files = files_to_save(config)
    if files:
        shown = ", ".join(markdown_literal(name) for name in files)
        st.caption(f"Save your files under these names in the folder you run it from: {shown}.")
    choices = DataSpec.from_dict(config["data"]).files_spec()
    if choices:
        st.download_button(
            f"Per-file choices ({FILES_SPEC}, save it beside them)",
            json.dumps(choices, indent=1),
            FILES_SPEC,
            "application/json",
            key="dl_files_spec",
            on_click="ignore",
            icon=":material/download:",
        )


MIME_TYPES = {"json": "application/json", "csv": "text/csv", "pt": "application/octet-stream"}


def _study_downloads() -> list[tuple[str, Any, str, str, str]]:
    """The press's runs as a one-fold study, and its other one-fold studies: with a windowing comparison the other
    windowing's runs (the two `python -m core.study --leak` compares), with cross-load each further train load's, with
    two sweeps the second's: (label, data, file name, key, help) of each kept."""
    offered = []
    if study := st.session_state.get(ONE_FOLD_KEY):
        study_help = "The same runs as a study with one fold, each window's prediction kept: 5 · Study opens it"
        offered.append(
            (
                "As a study (JSON)",
                lambda: json.dumps(study, indent=1),
                "pe_lab_one_fold_study.json",
                "dl_one_fold",
                study_help,
            )
        )
    for name, other in (st.session_state.get(OTHER_STUDIES_KEY) or {}).items():
        offered.append(_other_download(name, other))
    return offered


def _other_download(name: str, study: Mapping[str, Any]) -> tuple[str, Any, str, str, str]:
    """The download of one of the press's other one-fold studies (core.lab.experiment.plan.experiment_studies)."""
    windowing, loads = study["config"]["cutting"]["windowing"], study["config"].get("train_loads")
    data = functools.partial(json.dumps, study, indent=1)  # written when clicked
    if name == windowing:
        leak = f"The {windowing} windowing's runs as a one-fold study; `python -m core.study --leak` compares the two"
        label = f"The {windowing} windowing as a study (JSON)"
        return label, data, f"pe_lab_one_fold_study_{windowing}.json", "dl_one_fold_other", leak
    if name.endswith("_sweep"):
        field = study["config"]["sweep"]["field"]
        label, about = (
            f"The {field} sweep as a study (JSON)",
            f"The same runs with the {field} sweep's, as a one-fold study",
        )
        return label, data, f"pe_lab_one_fold_study_{name}.json", f"dl_{name}", about
    at = f"The runs trained at load {loads[0]} as a one-fold study, with their scores at each test load"
    return f"Trained at load {loads[0]} as a study (JSON)", data, f"pe_lab_one_fold_study_{name}.json", f"dl_{name}", at


def _downloads(results: Mapping[str, Any]) -> None:
    """The results JSON, the runs as CSV and (trained here) the weights and the runs as one-fold studies."""
    # each written when clicked, not on every rerun: a reopened file near the size limit takes seconds and several
    # hundred MB to serialise again
    offered = [
        ("Results (JSON)", lambda: json.dumps(results, indent=1), "pe_lab_results.json", "dl_json", None),
        ("Runs (CSV)", lambda: report.runs_table(results).to_csv(index=False), "pe_lab_runs.csv", "dl_runs", None),
    ]
    if weights := st.session_state.get(WEIGHTS_KEY):
        weights_help = "torch.load(path, weights_only=True) gives {'A/seed0': state_dict, ...}"
        offered.append(("Trained weights (torch)", weights, "pe_lab_weights.pt", "dl_weights", weights_help))
    offered += _study_downloads()
    for column, (label, data, file_name, key, help_text) in zip(st.columns(len(offered)), offered, strict=True):
        column.download_button(
            label,
            data,
            file_name,
            MIME_TYPES[file_name.rsplit(".", 1)[1]],
            key=key,
            on_click="ignore",
            icon=":material/download:",
            help=help_text,
        )
