"""Every figure every page draws is readable (tests/figure_checks.py): at most 30 tick labels an axis, a legend
or direct labels where traces share a plot (a legend entry in its traces' colour, beside their panel), a title on
every labelled axis, and no annotation or panel title cut at the figure's edge, drawn by plotly.js in Chromium.

The pages are found from app.py's navigation and each is run with its defaults; the Fault lab also shows a
fixture's results and a shipped study's figures (they appear after a press or on request)."""

from __future__ import annotations

import pytest

from tests import figure_checks
from tests.test_reopen import fixture_results
from ui.lab import keys

pytestmark = pytest.mark.slow  # every page runs, and the figures are drawn in Chromium


def _fault_lab_results_and_study(at) -> None:
    at.session_state[keys.RESULTS_KEY] = fixture_results("pipeline_every_evaluation.json")
    at.run()
    at.toggle(key="study_more").set_value(True).run()


@pytest.fixture(scope="module")
def page_figures() -> dict[str, dict]:
    return figure_checks.page_figures({"pages/fault_lab.py": _fault_lab_results_and_study})


@pytest.fixture(scope="module")
def plotly_page():
    with figure_checks.plotly_page() as page:
        yield page


def test_every_page_is_found_and_draws_its_figures(page_figures):
    pages = {name.split()[0] for name in page_figures}
    assert pages == {
        "home",
        "walkthrough",
        "encoding_matrix",
        "wavelengths",
        "similarity",
        "softmax_saturation",
        "fault_lab",
    }
    # the Fault lab's results and study figures came on screen too
    assert {"fault_lab fig_confusion_matrices", "fault_lab fig_study_confusion"} <= set(page_figures)


def test_every_figure_names_its_axes_and_tells_its_traces_apart(page_figures):
    problems = {name: figure_checks.figure_problems(figure) for name, figure in page_figures.items()}
    assert {name: found for name, found in problems.items() if found} == {}


def test_every_figure_drawn_in_chromium_has_readable_ticks_and_uncut_titles(page_figures, plotly_page):
    problems = {
        name: figure_checks.rendered_problems(figure_checks.rendered(plotly_page, figure))
        for name, figure in page_figures.items()
    }
    assert {name: found for name, found in problems.items() if found} == {}


# --- the checks find what they look for -------------------------------------------------------------------


def _line(y, **extra) -> dict:
    return {"type": "scatter", "x": list(range(len(y))), "y": y, **extra}


def test_the_figure_checks_find_an_untitled_axis_unlabelled_traces_and_a_legend_group_in_two_colours():
    bare = {"data": [_line([1, 2]), _line([2, 1])], "layout": {"showlegend": False, "xaxis": {"title": "x"}}}
    assert figure_checks.figure_problems(bare) == [
        "yaxis draws tick labels but has no title",
        "2 traces share ('xaxis', 'yaxis') without a legend or direct labels",
    ]
    grouped = {
        "data": [_line([1, 2], legendgroup="a", line={"color": "red"}), _line([2, 1], legendgroup="a")],
        "layout": {"xaxis": {"title": "x"}, "yaxis": {"title": {"text": "y"}, "tickvals": list(range(31))}},
    }
    assert figure_checks.figure_problems(grouped) == [
        "yaxis states 31 tick labels (at most 30)",
        "legend group 'a' is drawn in ['None', 'red'], not one colour",
    ]


def test_the_figure_checks_find_a_legend_above_a_panel_none_of_its_entries_is_on():
    layout = {
        "xaxis": {"title": "x", "anchor": "y"},
        "yaxis": {"title": "top", "domain": [0.6, 1.0]},
        "xaxis2": {"title": "x", "anchor": "y2"},
        "yaxis2": {"title": "bottom", "domain": [0.0, 0.4]},
        "legend": {"y": 1.02, "orientation": "h"},
    }
    top = {"type": "heatmap", "z": [[0, 1]]}
    waves = [_line([1, 2], xaxis="x2", yaxis="y2", name=name) for name in ("a", "b")]
    assert figure_checks.figure_problems({"data": [top, *waves], "layout": layout}) == [
        "the legend (y 1.02) sits by yaxis, its entries are on ['yaxis2']"
    ]
    layout["legend"]["y"] = 0.42
    assert figure_checks.figure_problems({"data": [top, *waves], "layout": layout}) == []


def test_the_drawing_checks_find_crowded_ticks_and_a_cut_title(plotly_page):
    crowded = {
        "data": [_line([1e-300, 1.0])],
        "layout": {"yaxis": {"type": "log", "dtick": 2}, "margin": {"t": 10}},
    }
    cut = {
        "data": [_line([1, 2])],
        "layout": {"margin": {"t": 10}, "annotations": [{"text": "A", "x": 0.5, "y": 1.0, "xref": "paper",
                                                          "yref": "paper", "yanchor": "bottom", "showarrow": False,
                                                          "font": {"size": 16}}]},
    }  # fmt: skip
    crowded_problems = figure_checks.rendered_problems(figure_checks.rendered(plotly_page, crowded))
    assert len(crowded_problems) == 1 and crowded_problems[0].startswith("y axis draws 1")  # 150 decades, padded
    cut_problems = figure_checks.rendered_problems(figure_checks.rendered(plotly_page, cut))
    assert len(cut_problems) == 1 and cut_problems[0].startswith("'A' is cut at the edge of the figure")
