"""Figures that answer while a control moves: the explainer pages' in-browser redraws.

Each explainer page keeps its Streamlit widgets (bound to the URL, so links, Back and AppTest work as before) and
its Plotly figures drawn by the server from core/. `live_view` then mounts one small components-v2 element whose
JavaScript (kernels.js, axes.js, engine.js and the page's views/<page>.js, shipped here, nothing fetched) watches those
widgets in the browser and restyles the page's figures while a slider is dragged, a number stepped or a toggle
clicked, with no server round trip. On release Streamlit sends the value as usual and the server's rerun draws
the same figures from core/, which stays the source of truth: tests/test_live_kernels.py and
tests/test_live_pages.py compare what the browser computes and shows with core/ to 1e-9.

Plotly itself is the copy Streamlit's own charts load (window.Plotly), so a live view only works on a page that
draws a Plotly figure, which every explainer page does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from ui.first_paint import deferred, mark_painted

_HERE = Path(__file__).resolve().parent
VIEWS = ("home", "encoding_matrix", "wavelengths", "similarity", "softmax_saturation", "walkthrough")


def module_source() -> str:
    """The component's JavaScript module: the kernels, the engine, every page's view, and the mount function."""
    parts = [(_HERE / name).read_text(encoding="utf-8") for name in ("kernels.js", "axes.js", "engine.js")]
    parts += [(_HERE / "views" / f"{view}.js").read_text(encoding="utf-8") for view in VIEWS]
    table = ", ".join(f'"{view}": {_js_name(view)}View' for view in VIEWS)
    parts.append(
        f"""const VIEWS = {{ {table} }};
export default function (component) {{
  const {{ data, parentElement }} = component;
  // the element itself shows nothing: take its slot out of the page's flow
  const slot = parentElement && parentElement.host ? parentElement.host : parentElement;
  const container = slot && slot.closest ? slot.closest('[data-testid="stElementContainer"]') : null;
  if (container) container.style.display = "none";
  if (data && VIEWS[data.view]) engine.mount(data.view, VIEWS[data.view], data);
  // figures this run left out (ui/first_paint.py) are asked for once the first one has painted
  if (data && data.deferred && data.deferred.length) {{
    engine.afterFirstPaint(() => component.setTriggerValue("painted", true));
  }}
}}
"""
    )
    return "\n".join(parts)


def _js_name(view: str) -> str:
    head, *rest = view.split("_")
    return head + "".join(word.capitalize() for word in rest)


def control(kind: str, options: Sequence[Any] | None = None, **extra: Any) -> dict[str, Any]:
    """How the browser reads one widget: `kind` is slider, select_slider, number, toggle, selectbox, radio,
    segmented, multiselect or text; choice widgets list their `options` (and `labels` where a label differs from
    str(option)); a number input gives its min and max."""
    spec: dict[str, Any] = {"kind": kind, **extra}
    if options is not None:
        spec["options"] = list(options)
    return spec


_live_component = st.components.v2.component("pe_lab_live", js=module_source())


def live_view(view: str, controls: Mapping[str, dict[str, Any]], values: Mapping[str, Any], **constants: Any) -> None:
    """Mount the page's live view: `controls` says how to read each widget (see `control`), `values` the value
    each had in this run (the figures the server drew), `constants` anything else the view needs (JSON)."""
    if view not in VIEWS:
        raise ValueError(f"no live view {view!r}; the views are {VIEWS}")
    payload = {"view": view, "controls": dict(controls), "values": dict(values), "deferred": deferred(), **constants}
    _live_component(key=f"live_view_{view}", data=payload, height=0, on_painted_change=mark_painted)
