"""The Fault lab's results section: the table and verdict, the figures, each evaluation's tables, the
command that reproduces them, and the downloads. Everything is read from the results JSON alone."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from core import evaluations, report
from core.contract import METRICS
from core.data_spec import FILES_SPEC, DataSpec
from core.experiment import command_line
from core.figures import fault_lab as figures
from ui.common import show_figure, show_table
from ui.fault_lab import WEIGHTS_KEY, files_to_save
from ui.lab_data import LoadedData
from ui.lab_inside import attention_section, order_section


def per_model(results: Mapping[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, list[float]]]:
    """Confusion matrices summed over seeds and per-class F1 averaged over seeds, per model."""
    matrices: dict[str, Any] = {}
    f1: dict[str, list] = {}
    for run in results["runs"]:
        matrices[run["model"]] = matrices.get(run["model"], 0) + np.asarray(run["confusion_matrix"])
        f1.setdefault(run["model"], []).append(run["per_class_f1"])
    return matrices, {model: list(np.mean(scores, axis=0)) for model, scores in f1.items()}


def confusion_frame(matrices: Mapping[str, np.ndarray], class_names: Sequence[str]) -> pd.DataFrame:
    rows = [
        {"model": model, "true": true, "predicted": predicted, "windows": int(matrix[i][j])}
        for model, matrix in matrices.items()
        for i, true in enumerate(class_names)
        for j, predicted in enumerate(class_names)
    ]
    return pd.DataFrame(rows)


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


def results_section(results: Mapping[str, Any], data: LoadedData) -> None:
    config = results["config"]
    cut = config["data"]
    st.caption(
        f"{cut['dataset']} data · {cut['split_mode']} split · window {cut['window']} · seeds {config['seeds']} · "
        f"{results['runs'][0]['device']}"
    )
    if cut["split_mode"] == "random":
        st.warning("These numbers come from the leaky random split.")
    show_table(report.results_table(results), "results_table")
    st.info(results["verdict"])
    margin = next(iter(results["paired"].values()), {}).get("margin", 0.02)
    st.caption(
        f"Each model against A, by the study's rule: equivalent when the 90 % CI of the difference lies within "
        f"±{100 * margin:g} points, better or worse when the 95 % CI excludes 0, otherwise inconclusive. One split's "
        f"test windows are fixed, so this interval counts training noise only; a study (python -m core.study) "
        f"cross-validates in time and counts both."
    )
    show_figure(figures.metric_bars(results["summary"], list(METRICS)), report.summary_table(results), "metrics")
    matrices, per_class = per_model(results)
    names = results["class_names"]
    show_figure(figures.confusion_matrices(matrices, names), confusion_frame(matrices, names), "confusion_matrices")
    show_figure(
        figures.per_class_f1(per_class, names),
        pd.DataFrame(per_class, index=names).rename_axis("class").reset_index(),
        "per_class_f1",
    )
    order_section(results["order_summary"])
    attention_section(results, data)
    for evaluation in evaluations.registered():
        if evaluation.key not in results:
            continue
        st.subheader(evaluation.title)
        for n, (heading, table) in enumerate(evaluation.tables(results[evaluation.key])):
            st.markdown(f"**{heading}**")
            show_table(table, f"{evaluation.key}_{n}", hide_index=False)
        if evaluation.key in EVALUATION_FIGURES:
            EVALUATION_FIGURES[evaluation.key](results[evaluation.key])
        if evaluation.caption:
            st.caption(evaluation.caption)
    st.markdown("**Reproduce these numbers headless** (same code path, same JSON):")
    st.code(command_line(config), language="bash")
    files = files_to_save(config)
    if files:
        st.caption(f"Save your files under these names in the folder you run it from: {', '.join(files)}.")
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
    left, middle, right = st.columns(3)
    left.download_button(
        "Results (JSON)",
        json.dumps(results, indent=1),
        "pe_lab_results.json",
        "application/json",
        key="dl_json",
        on_click="ignore",
        icon=":material/download:",
    )
    middle.download_button(
        "Runs (CSV)",
        report.runs_table(results).to_csv(index=False),
        "pe_lab_runs.csv",
        "text/csv",
        key="dl_runs",
        on_click="ignore",
        icon=":material/download:",
    )
    weights = st.session_state.get(WEIGHTS_KEY)
    if weights:
        right.download_button(
            "Trained weights (torch)",
            weights,
            "pe_lab_weights.pt",
            "application/octet-stream",
            key="dl_weights",
            on_click="ignore",
            icon=":material/download:",
            help="torch.load(path, weights_only=True) gives {'A/seed0': state_dict, ...}",
        )
