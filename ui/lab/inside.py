"""The Fault lab's look inside the trained models: how much each uses token order, where it attends (for the
runs trained here, whose weights the session holds), and what position signal it got. Model and class names
may come from a file a visitor opened: they are shown as text."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st
import torch

from core.explain.encodings import sinusoidal
from core.lab.figures import inside as figures
from core.lab.models import ModelConfig, build_model, has_position
from core.lab.probes.attention import attention_by_offset, attention_weights
from core.lab.probes.position import cosine_matrix, energy_ratio, learned_table, similarity_by_offset
from core.lab.probes.report import order_table
from core.lab.vibration import DataError, make_windows
from core.lab.vibration.windows import WindowSet
from core.safe_text import markdown_literal
from ui.common import data_section, show_figure, show_table
from ui.lab.data import LoadedData
from ui.lab.keys import WEIGHTS_KEY

STORY = (
    "Model A has no position signal and averages its tokens: it classifies a window as a bag of patches, so "
    "shuffling cannot change a single prediction (the home page shows why, live). A drop for B or B-learned is "
    "read against A's zero and the CNN's, not against chance."
)


def order_section(summary: dict[str, Any], name: str = "order_test") -> None:
    """The order test's table (how much shuffling the tokens moves each model) and how to read it."""
    st.subheader("How much does each model use token order?")
    show_table(order_table(summary), name)
    st.caption(STORY + " [Order blindness, live, on the home page](/)")


def profile_section(profiles: dict[str, Any], width: int | None = None, prefix: str = "") -> None:
    """Attention against offset and the position energy of a study's stored profiles (no weights needed)."""
    if not profiles:
        return
    lines = {model: np.asarray(p["attention_by_offset"]) for model, p in profiles.items()}
    frame = pd.DataFrame(
        [
            {"model": m, "layer": layer + 1, "offset": int(o - (len(row) - 1) // 2), "weight": w}
            for m, profile in lines.items()
            for layer, row in enumerate(profile)
            for o, w in enumerate(row)
        ]
    )
    show_figure(figures.attention_by_offset(lines), frame, f"{prefix}attention_offset")
    ratios = {m: p["energy_ratio"] for m, p in profiles.items() if p["energy_ratio"] is not None}
    if ratios:
        st.caption(
            "Position energy / token energy at the encoder input: "
            + ", ".join(f"{markdown_literal(m)} {r:.2f}" for m, r in ratios.items())
            + " (near 1: the position signal is as loud as the content)."
        )
    learned = {
        m: np.asarray(p["learned_similarity_by_offset"])
        for m, p in profiles.items()
        if p["learned_similarity_by_offset"]
    }
    if learned and width:  # the sinusoids of the same width and length, for comparison
        table = sinusoidal(len(next(iter(learned.values()))), width)
        curves = {"sinusoidal": similarity_by_offset(table), **{f"{m} (learned)": v for m, v in learned.items()}}
        show_figure(
            figures.position_similarity(curves),
            pd.DataFrame(curves).rename_axis("offset").reset_index(),
            f"{prefix}position_similarity",
        )


def _models(results: dict[str, Any]) -> dict[str, torch.nn.Module] | None:
    """The first seed's trained models (the CNN aside) rebuilt from the session's weights; None without weights."""
    weights = st.session_state.get(WEIGHTS_KEY)
    if not weights:
        return None
    state_dicts = torch.load(io.BytesIO(weights), weights_only=True)
    config = ModelConfig(**results["config"]["train"]["model"])
    window, classes = results["config"]["data"]["window"], len(results["class_names"])
    models = {}
    for model in results["config"]["models"]:
        key = f"{model}/seed{results['config']['seeds'][0]}"
        if key in state_dicts and model != "CNN":
            models[model] = build_model(model, window, classes, config)
            models[model].load_state_dict(state_dicts[key])
    return models


def attention_section(results: dict[str, Any], data: LoadedData) -> None:
    """On request: the trained models' attention on one test window, their attention against offset, position
    energy and learned position table (only for runs trained here, on the data still current)."""
    st.subheader("Where do the trained models attend?")
    # on request: it rebuilds the trained models and scores every test window, memory a shared server keeps for
    # the visitors who ask
    if not st.toggle("Show attention maps and position signals of the trained models", key="att_show"):
        return
    models = _models(results)
    if models is None:
        st.info("Attention maps need the trained weights, which a saved results file does not hold: train again.")
        return
    windows = _test_windows(results, data)
    if windows is None:
        st.info("The current data are not the data these models were trained on: train again to see their attention.")
        return
    x = torch.as_tensor(windows.x_test)
    with data_section("attention"):  # one download for the attention maps and position signals
        _attention_maps(models, x, windows.y_test, results["class_names"])
        model_config = results["config"]["train"]["model"]
        profile_section(_profiles(models, x), model_config["d_model"] or model_config["patch"])
        st.caption("Compare with the sinusoids' dot product against offset on the [Similarity page](/similarity).")
        if "B-learned" in models:
            matrix = cosine_matrix(learned_table(models["B-learned"]))
            show_figure(
                figures.similarity_matrix(matrix, "B-learned's trained position table: cosine similarity"),
                pd.DataFrame(matrix),
                "learned_table",
            )


def _test_windows(results: dict[str, Any], data: LoadedData) -> WindowSet | None:
    """The current data's test windows cut as the results were, or None when they are not the data trained on."""
    config = results["config"]["data"]
    try:
        windows = make_windows(data.recordings, window=config["window"], windowing=config["windowing"])
    except DataError:
        return None
    if windows.class_names != results["class_names"] or len(windows.x_test) == 0:
        return None
    return windows


def _attention_maps(models: dict[str, torch.nn.Module], x: torch.Tensor, y: Any, class_names: list[str]) -> None:
    """A slider over the test windows and, per layer, the attention maps of A and B (or every model without them)
    on the chosen window, averaged over heads or per head."""
    left, right = st.columns([3, 1])
    index = left.slider("Test window", 0, len(x) - 1, 0, key="att_window")
    per_head = right.checkbox("Per head", key="att_heads")
    shown = {m: model for m, model in models.items() if m in ("A", "B")} or models
    maps = {
        m: attention_weights(model, x[index : index + 1])[:, 0] for m, model in shown.items()
    }  # (layers, heads, T, T)
    st.caption(f"Window {index}: class {markdown_literal(class_names[int(y[index])])}.")
    for layer in range(next(iter(maps.values())).shape[0]):
        if per_head:
            heads = {f"{m}, head {h + 1}": w[layer, h] for m, w in maps.items() for h in range(w.shape[1])}
        else:
            heads = {f"{m}, layer {layer + 1}": w[layer].mean(axis=0) for m, w in maps.items()}
        frame = pd.DataFrame(
            [
                {"map": k, "query": q, "key": kk, "weight": v[q, kk]}
                for k, v in heads.items()
                for q in range(v.shape[0])
                for kk in range(v.shape[1])
            ]
        )
        show_figure(figures.attention_maps(heads), frame, f"attention_layer{layer + 1}")


def _profiles(models: dict[str, torch.nn.Module], x: torch.Tensor) -> dict[str, dict[str, Any]]:
    """Per model, what profile_section draws: attention against offset, position energy, learned similarity."""
    return {
        m: {
            "attention_by_offset": attention_by_offset(model, x),
            "energy_ratio": energy_ratio(model, x) if has_position(m) else None,
            "learned_similarity_by_offset": None if (t := learned_table(model)) is None else similarity_by_offset(t),
        }
        for m, model in models.items()
    }
