"""Helpers for AppTest page tests: run a page, read back the plotly figures and metrics it showed."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 60


def run_page(path: str, query: dict[str, str] | None = None) -> AppTest:
    """Run a page script (path relative to the repository root), optionally from a deep link's query."""
    at = AppTest.from_file(str(ROOT / path), default_timeout=TIMEOUT)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def figures(at: AppTest) -> list[dict]:
    """The plotly figure JSON of every chart on the page, in order."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def as_array(value) -> np.ndarray:
    """A figure value as an array, decoding plotly's base64 typed arrays ({"dtype", "bdata", "shape"})."""
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:  # "rows, cols" as a string in plotly's JSON
            array = array.reshape([int(size) for size in str(shape).split(",")])
        return array
    return np.asarray(value)


def trace_array(trace: dict, field: str) -> np.ndarray:
    return as_array(trace[field])


def figure_traces(at: AppTest, name: str) -> list[dict]:
    """The traces of the one figure shown with `ui.common.show_figure(..., name)`."""
    charts = [chart for chart in at.get("plotly_chart") if chart.proto.id.endswith(f"fig_{name}")]
    assert len(charts) == 1, [chart.proto.id for chart in at.get("plotly_chart")]
    return json.loads(charts[0].proto.spec)["data"]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}
