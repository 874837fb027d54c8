"""Checks every plotly figure of the app must pass, reusable by any page's tests (tests/test_figures_readable.py
runs them on every figure every page draws):

- `page_figures`: every figure the app's pages draw with their defaults, found by running each page of app.py's
  navigation (ui.page_registry) in AppTest, so a page or a figure added later is checked without naming it here.
- `figure_problems`: what can be read from the figure JSON alone: no axis with more than MAX_TICK_LABELS explicit
  tick labels (tickvals / ticktext), a legend or direct labels (annotations, text) wherever two traces share one
  plot, a title on every axis that draws tick labels (a panel that shares its neighbour's labels may leave both
  to the neighbour).
- `rendered_problems`: what only the drawing shows: the figures drawn by plotly.js (the copy the plotly package
  ships) in Debian's Chromium, one page for all of them, where Plotly chose the ticks itself: no axis draws more
  than MAX_TICK_LABELS tick labels, and no annotation (a subplot title, a direct label) lies outside the SVG.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import plotly
from streamlit.testing.v1 import AppTest

from tests import live_server
from ui.page_registry import built_rooms

ROOT = Path(__file__).resolve().parents[1]
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
HOME = "pages/home.py"
MAX_TICK_LABELS = 30
RENDER_WIDTH = 700  # px: about one column of the wide layout at 1400 px; Plotly's own tick spacing scales with it
SLACK_PX = 1.0
NO_AXES = ("pie", "table", "sunburst", "treemap", "sankey", "parcoords", "indicator")  # trace types off the axes
NO_LEGEND = ("heatmap", "histogram2d", "contour")  # trace types Plotly leaves out of the legend by default


def _page_run(path: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    if path != HOME:
        at.switch_page(path).run()
    assert not at.exception, (path, [e.message for e in at.exception])
    return at


def charts(at: AppTest, page: str) -> dict[str, dict]:
    """{"<page> <chart key>": figure JSON} of every plotly chart the AppTest run shows."""
    stem = Path(page).stem
    return {f"{stem} {chart.proto.id.split('-')[-1]}": json.loads(chart.proto.spec) for chart in at.get("plotly_chart")}


def page_figures(extra_runs: Mapping[str, Any] | None = None) -> dict[str, dict]:
    """Every figure of every page of app.py's navigation, drawn with its defaults: {"<page> <chart key>": JSON}.
    `extra_runs` maps a page path to a function (AppTest -> None) that brings more of that page on screen
    (content that appears only after a press or an opened file); its figures are added after a rerun."""
    found: dict[str, dict] = {}
    for path in [HOME, *(room.path for room in built_rooms())]:
        at = _page_run(path)
        found.update(charts(at, path))
        if extra_runs and path in extra_runs:
            extra_runs[path](at)
            assert not at.exception, (path, [e.message for e in at.exception])
            found.update(charts(at, path))
    return found


# --- what the figure JSON says ------------------------------------------------------------------------------


def _axis_key(trace: Mapping[str, Any], letter: str) -> str:
    """ "xaxis2" for a trace on x2: the layout key of the trace's axis."""
    return f"{letter}axis{trace.get(f'{letter}axis', letter)[1:]}"


def plotted_traces(figure: Mapping[str, Any]) -> list[dict]:
    """The traces drawn on cartesian axes, hidden ones left out."""
    return [t for t in figure["data"] if t.get("type", "scatter") not in NO_AXES and t.get("visible", True) is True]


def used_axes(figure: Mapping[str, Any]) -> dict[str, dict]:
    """{layout key: axis layout} of every axis a drawn trace sits on (an axis the template merely defines is not
    drawn)."""
    layout = figure["layout"]
    keys = {_axis_key(trace, letter) for trace in plotted_traces(figure) for letter in "xy"}
    return {key: layout.get(key, {}) for key in sorted(keys) if layout.get(key, {}).get("visible", True)}


def _title(axis: Mapping[str, Any]) -> str:
    title = axis.get("title")
    text = title.get("text") if isinstance(title, Mapping) else title
    return (text or "").strip()


def explicit_tick_labels(axis: Mapping[str, Any]) -> int | None:
    """The tick labels an axis states itself (ticktext, else tickvals), or None where Plotly chooses them."""
    for field in ("ticktext", "tickvals"):
        if isinstance(axis.get(field), list):
            return len(axis[field])
    return None


def has_legend_or_labels(figure: Mapping[str, Any]) -> bool:
    """Whether the figure tells its traces apart: a legend with an entry, annotations, or text on a trace."""
    layout, traces = figure["layout"], plotted_traces(figure)
    if layout.get("annotations"):
        return True
    if any("text" in t.get("mode", "") or t.get("texttemplate") or t.get("type") == "bar" and t.get("text")
           for t in traces):  # fmt: skip
        return True
    entries = [t for t in traces if t.get("showlegend", t.get("type", "scatter") not in NO_LEGEND)]
    return layout.get("showlegend", True) is not False and bool(entries)


def shared_plots(figure: Mapping[str, Any]) -> dict[tuple[str, str], int]:
    """How many drawn traces each (x axis, y axis) plot holds."""
    counts: dict[tuple[str, str], int] = {}
    for trace in plotted_traces(figure):
        plot = (_axis_key(trace, "x"), _axis_key(trace, "y"))
        counts[plot] = counts.get(plot, 0) + 1
    return counts


def _colour(trace: Mapping[str, Any]) -> str | None:
    line, marker = trace.get("line") or {}, trace.get("marker") or {}
    colour = line.get("color") or marker.get("color")
    return colour if isinstance(colour, str) else None


def legend_group_problems(figure: Mapping[str, Any]) -> list[str]:
    """Traces that one legend entry stands for (a legendgroup) must be drawn in one colour, set on each: a trace
    left to Plotly's colour cycle takes the next colour, not its entry's."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for trace in plotted_traces(figure):
        if trace.get("legendgroup"):
            groups.setdefault(str(trace["legendgroup"]), []).append(trace)
    problems = []
    for group, traces in groups.items():
        colours = {_colour(trace) for trace in traces}
        if len(traces) > 1 and (None in colours or len(colours) > 1):
            problems.append(f"legend group {group!r} is drawn in {sorted(map(str, colours))}, not one colour")
    return problems


def _legend(figure: Mapping[str, Any]) -> dict[str, Any]:
    template = (figure["layout"].get("template") or {}).get("layout", {})
    return {**template.get("legend", {}), **figure["layout"].get("legend", {})}


def legend_panel_problems(figure: Mapping[str, Any]) -> list[str]:
    """In a figure of panels stacked in height, a legend must sit nearest a panel its entries are drawn on:
    a legend above a panel that has no entry reads as belonging to that panel."""
    layout, legend = figure["layout"], _legend(figure)
    entries = [
        t
        for t in plotted_traces(figure)
        if t.get("showlegend", t.get("type", "scatter") not in NO_LEGEND) and layout.get("showlegend", True)
    ]
    domains = {key: tuple(axis.get("domain", (0.0, 1.0))) for key, axis in used_axes(figure).items() if key[0] == "y"}
    if not entries or len(set(domains.values())) < 2 or not isinstance(legend.get("y"), int | float):
        return []
    y = legend["y"]
    distance = {key: max(low - y, y - high, 0.0) for key, (low, high) in domains.items()}
    nearest = min(distance.values())
    holding = {_axis_key(trace, "y") for trace in entries}
    if any(distance[key] == nearest for key in holding if key in distance):
        return []
    return [f"the legend (y {y:g}) sits by {min(distance, key=distance.get)}, its entries are on {sorted(holding)}"]


def figure_problems(figure: Mapping[str, Any]) -> list[str]:
    """What is wrong with a figure, read from its JSON alone (see the module docstring); [] when nothing."""
    problems = []
    for key, axis in used_axes(figure).items():
        explicit = explicit_tick_labels(axis)
        if explicit is not None and explicit > MAX_TICK_LABELS:
            problems.append(f"{key} states {explicit} tick labels (at most {MAX_TICK_LABELS})")
        if axis.get("showticklabels", True) and not _title(axis):
            problems.append(f"{key} draws tick labels but has no title")
    crowded = [plot for plot, count in shared_plots(figure).items() if count > 1]
    if crowded and not has_legend_or_labels(figure):
        problems.append(f"{len(figure['data'])} traces share {crowded[0]} without a legend or direct labels")
    return problems + legend_group_problems(figure) + legend_panel_problems(figure)


# --- what the drawing shows -----------------------------------------------------------------------------------

_MEASURE = """async ([figure, width]) => {
    const div = document.createElement('div');
    div.style.width = width + 'px';
    document.body.appendChild(div);
    await Plotly.newPlot(div, figure.data, figure.layout, {displayModeBar: false, staticPlot: true});
    const svg = div.querySelector('svg.main-svg').getBoundingClientRect();
    const ticks = {};
    for (const text of div.querySelectorAll('g[class$="tick"] > text, g[class$="tick2"] > text')) {
        const axis = text.parentNode.getAttribute('class');
        if (text.textContent.trim()) ticks[axis] = (ticks[axis] || 0) + 1;
    }
    const outside = [];
    for (const note of div.querySelectorAll('g.annotation, text.gtitle')) {
        const box = note.getBoundingClientRect();
        if (box.width === 0 && box.height === 0) continue;
        if (box.left < svg.left - SLACK || box.top < svg.top - SLACK ||
            box.right > svg.right + SLACK || box.bottom > svg.bottom + SLACK) {
            outside.push({text: note.textContent, left: box.left - svg.left, top: box.top - svg.top,
                          right: svg.right - box.right, bottom: svg.bottom - box.bottom});
        }
    }
    Plotly.purge(div);
    div.remove();
    return {ticks, outside};
}"""


@contextmanager
def plotly_page() -> Iterator[Any]:
    """One Chromium page with plotly.js loaded, to draw figures in; skips (fails under CI) without Chromium."""
    with live_server.chromium_page({"width": RENDER_WIDTH + 100, "height": 900}) as page:
        page.set_content("<!doctype html><html><body style='margin:0'></body></html>")
        page.add_script_tag(path=str(PLOTLY_JS))
        yield page


def rendered(page: Any, figure: Mapping[str, Any], width: int = RENDER_WIDTH) -> dict[str, Any]:
    """{"ticks": {tick class: labels drawn}, "outside": [annotations or titles not wholly inside the SVG]} of
    one figure drawn at `width` px."""
    script = _MEASURE.replace("SLACK", str(SLACK_PX))
    return page.evaluate(script, [json.loads(json.dumps(figure)), width])


def rendered_problems(drawing: Mapping[str, Any]) -> list[str]:
    """What is wrong with a drawn figure (`rendered`'s answer); [] when nothing."""
    problems = [
        f"{re.sub('tick$', '', axis) or axis} axis draws {count} tick labels (at most {MAX_TICK_LABELS})"
        for axis, count in drawing["ticks"].items()
        if count > MAX_TICK_LABELS
    ]
    problems += [f"{box['text']!r} is cut at the edge of the figure ({box})" for box in drawing["outside"]]
    return problems
