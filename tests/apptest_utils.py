"""Helpers for AppTest page tests: run a page, read back the plotly figures and metrics it showed."""

from __future__ import annotations

import base64
import json
import re
import time
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


# --- the Fault lab ----------------------------------------------------------------------------------------
TINY = {"epochs": 1, "n_seeds": 2, "window": 256, "patch": 32, "layers": 1}


def open_lab(query: dict[str, str] | None = None, through_app: bool = False) -> AppTest:
    """The Fault lab alone (a deep link's query applies), or through app.py's navigation (pages can switch)."""
    at = AppTest.from_file(str(ROOT / ("app.py" if through_app else "pages/fault_lab.py")), default_timeout=120)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if through_app:
        at.switch_page("pages/fault_lab.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def set_tiny(at: AppTest, **overrides) -> None:
    """Shrink the Fault lab's experiment to seconds (TINY, with `overrides`)."""
    unknown = set(overrides) - set(TINY)
    assert not unknown, f"set_tiny sets {sorted(TINY)}, not {sorted(unknown)}"
    settings = {**TINY, **overrides}
    at.slider(key="epochs").set_value(settings["epochs"])
    at.slider(key="n_seeds").set_value(settings["n_seeds"])
    at.slider(key="layers").set_value(settings["layers"])
    at.selectbox(key="window").set_value(settings["window"])
    at.selectbox(key="patch").set_value(settings["patch"])
    at.run()


def train_to_the_end(at: AppTest, timeout_s: float = 240) -> dict:
    """Press Train and rerun until the background job has finished (AppTest does not drive run_every)."""
    at.button(key="train").click().run()
    assert not at.exception, [e.message for e in at.exception]
    return finish_job(at, timeout_s)


def finish_job(at: AppTest, timeout_s: float = 240) -> dict:
    """Rerun until the session's background job has finished (AppTest does not drive run_every); its results."""
    from ui.lab import keys

    deadline = time.time() + timeout_s
    while keys.JOB_KEY in at.session_state and time.time() < deadline:
        time.sleep(0.3)
        at.run()
        assert not at.exception, [e.message for e in at.exception]
    assert keys.JOB_KEY not in at.session_state, "the job did not finish in time"
    at.run()
    return at.session_state[keys.RESULTS_KEY]


_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def as_read(markdown: str) -> str:
    """Markdown source as a visitor reads it rendered: backslash escapes undone, zero-width spaces gone."""
    return _ESCAPE.sub(r"\1", markdown).replace("\u200b", "")


def errors(at: AppTest) -> list[str]:
    """The page's error boxes as a visitor reads them."""
    return [as_read(e.value) for e in at.error]


def raw_errors(at: AppTest) -> list[str]:
    """The page's error boxes as markdown source (for checks that visitor text was escaped)."""
    return [e.value for e in at.error]
