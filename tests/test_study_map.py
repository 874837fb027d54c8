"""The map (core.lab.study.map, core.lab.figures.study.order_map): one point per order-curve level and per real
study, x the order gap and y B - B-noPE, and the one sentence built from the points."""

from __future__ import annotations

import json

import pytest

from core.lab.figures.study import order_map
from core.lab.study.map import NO_POINTS, map_key, map_points, map_sentence, study_label
from core.plotting import PHONE_PLOT_PIXELS, PLOT_PIXELS, label_places
from tests.figure_checks import figure_problems
from tests.study_helpers import curve_stub, study_stub

SPECTRAQUEST = {"dataset": "spectraquest", "channel": "a2", "loads": [0, 10, 20, 30]}


def easy_level():
    return study_stub({"B-noPE": 0.5, "B": 1.0, "spectrum-LR": 0.5}, 50.0, [45.0, 55.0], "better")


def hard_level():
    return study_stub({"B-noPE": 0.50, "B": 0.52, "spectrum-LR": 0.49}, 2.0, [-1.0, 5.0], "inconclusive")


def time_cv():
    accuracy = {"A": 0.998, "B-noPE": 0.997, "B": 0.995, "spectrum-LR": 0.999}
    return study_stub(accuracy, -0.2, [-0.9, 0.5], "equivalent")


def load_shift():
    accuracy = {"A": 0.80, "A+PE": 0.82, "B-noPE": 0.84, "B": 0.85, "spectrum-LR": 0.839}
    return study_stub(
        accuracy, 1.0, [-0.5, 2.5], "inconclusive", design="load-out", train_loads=[0], test_loads=[1, 2, 3]
    )


def load_out():
    accuracy = {"A+PE": 0.99, "B": 0.995, "B-noPE": 0.996, "spectrum-LR": 1.0}
    return study_stub(accuracy, -0.1, [-0.6, 0.4], "equivalent", design="load-out", data=SPECTRAQUEST)


@pytest.fixture
def points():
    curve = curve_stub([(3, 16, hard_level()), (0, 48, easy_level())])  # any order: easiest first on the map
    return map_points([time_cv(), load_shift(), load_out()], curve)


def test_each_level_and_study_is_a_point_at_its_order_gap_and_its_primary_difference(points):
    expected = [  # (label, kind, x = best seeing order - spectrum-LR, y, ci95, verdict, best), by hand
        ("order curve, level 0 (contrast 48 samples)", "control level", 50.0, 50.0, [45.0, 55.0], "better", "B"),
        ("order curve, level 3 (contrast 16 samples)", "control level", 3.0, 2.0, [-1.0, 5.0], "inconclusive", "B"),
        ("CWRU 0 HP time-cv", "real task", -0.4, -0.2, [-0.9, 0.5], "equivalent", "B"),  # A sees no order
        ("CWRU, trained at 0 HP, tested at 1-3 HP", "real task", 1.1, 1.0, [-0.5, 2.5], "inconclusive", "B"),
        ("SpectraQuest a2 load-out", "real task", -0.5, -0.1, [-0.6, 0.4], "equivalent", "B"),  # B above A+PE
    ]
    assert len(points) == len(expected)
    for point, (label, kind, x, y, ci95, verdict, best) in zip(points, expected):
        assert (point["label"], point["kind"], point["verdict"], point["best"]) == (label, kind, verdict, best)
        assert point["x"] == pytest.approx(x) and point["y"] == y and point["ci95"] == ci95
    assert [point["tag"] for point in points] == ["level 0", "level 3", "1", "2", "3"]


def test_the_sentence_says_what_each_part_of_the_map_shows(points):
    assert map_sentence(points) == (
        "On the map, where the order gap is at or below 0 (2 real tasks), B - B-noPE is -0.2 to -0.1 points "
        "(2 equivalent); where order has room and B reads better (1 control level, order gap +50.0 points), B beats "
        "B-noPE by 50.0 points; where order has room but B does not read better (1 control level and 1 real task, "
        "order gap +1.1 to +3.0 points), B - B-noPE is +1.0 to +2.0 points (2 inconclusive)."
    )


def test_the_sentence_names_only_the_parts_the_points_have():
    blind = map_points([time_cv()])
    assert map_sentence(blind) == (
        "On the map, where the order gap is at or below 0 (1 real task), B - B-noPE is -0.2 points (1 equivalent)."
    )
    better = map_points([], curve_stub([(0, 48, easy_level()), (1, 24, easy_level())]))
    assert map_sentence(better) == (
        "On the map, where order has room and B reads better (2 control levels, order gap +50.0 points), B beats "
        "B-noPE by 50.0 points."
    )
    assert map_sentence([]) == NO_POINTS


def test_a_study_that_cannot_be_placed_is_named_in_the_error():
    without_baseline = study_stub({"B-noPE": 0.9, "B": 0.9}, 0.0, [-1.0, 1.0], "equivalent")
    with pytest.raises(ValueError, match="CWRU 0 HP time-cv: no order gap"):
        map_points([without_baseline])
    other_primary = time_cv()
    other_primary["comparisons"][0]["a"] = "A"
    with pytest.raises(ValueError, match="its own name: its primary comparison is not B vs B-noPE"):
        map_points([other_primary], labels=["its own name"])
    with pytest.raises(ValueError, match="one label per study"):
        map_points([time_cv()], labels=[])


def test_a_studys_label_says_its_data_and_design():
    a4 = load_shift()
    a4["config"].update(data={**SPECTRAQUEST, "channel": "a4"}, train_loads=[0, 10, 20], test_loads=None)
    a4["recordings"] = [{"load_hp": load} for load in (0, 10, 20, 30, 50, 90)]  # untested: the others
    assert study_label(a4) == "SpectraQuest a4, trained at 0-20 %, tested at 30-90 %"
    two = time_cv()
    two["config"]["data"]["loads"] = [0, 2]
    assert study_label(two) == "CWRU 0, 2 HP time-cv"


def test_the_map_figure_draws_both_kinds_with_their_intervals_a_zero_line_and_titles(points):
    figure = order_map(points)
    control, real = figure.data
    assert (control.name, real.name) == ("control levels (order-dose curve)", "real tasks")
    assert control.marker.color != real.marker.color and figure.layout.showlegend
    assert list(control.x) == [50.0, pytest.approx(3.0)] and list(control.y) == [50.0, 2.0]
    assert list(control.error_y.array) == [5.0, 3.0] and list(control.error_y.arrayminus) == [5.0, 3.0]
    assert list(real.error_y.array) == pytest.approx([0.7, 1.5, 0.5])
    assert list(real.error_y.arrayminus) == pytest.approx([0.7, 1.5, 0.5])
    # beside each point its tag (a phone has no room for more); its full label and verdict on hover
    assert list(control.text) == ["level 0", "level 3"] and list(real.text) == ["1", "2", "3"]
    assert [list(pair) for pair in real.customdata] == [
        ["CWRU 0 HP time-cv", "equivalent"],
        ["CWRU, trained at 0 HP, tested at 1-3 HP", "inconclusive"],
        ["SpectraQuest a2 load-out", "equivalent"],
    ]
    assert "%{customdata[0]}" in real.hovertemplate
    assert map_key(points) == (
        "1 CWRU 0 HP time-cv · 2 CWRU, trained at 0 HP, tested at 1-3 HP · 3 SpectraQuest a2 load-out"
    )
    lines = {(shape.x0, shape.x1, shape.y0, shape.y1) for shape in figure.layout.shapes}
    assert (0, 1, 0, 0) in lines  # y = 0 across the plot (x in paper units)
    assert "order gap" in figure.layout.xaxis.title.text and "B − B-noPE" in figure.layout.yaxis.title.text
    assert figure_problems(json.loads(figure.to_json())) == []


def test_a_map_of_real_tasks_alone_draws_one_trace():
    figure = order_map(map_points([time_cv()]))
    assert [trace.name for trace in figure.data] == ["real tasks"]


def test_the_maps_axes_hold_both_zero_lines_every_interval_and_room_for_the_labels():
    figure = order_map(map_points([time_cv()]))  # one point, its gap below 0: the range Plotly chose cut its label
    (point,) = figure.data
    x_low, x_high = figure.layout.xaxis.range
    y_low, y_high = figure.layout.yaxis.range
    x, y = point.x[0], point.y[0]
    assert x_low <= x - 1.0 and x_high >= 1.0  # a point of free space past the point and past x = 0
    assert y_low <= y - point.error_y.arrayminus[0] - 1.0 and y_high >= max(0.0, y + point.error_y.array[0]) + 1.0
    assert point.cliponaxis is False


def test_labels_of_points_that_would_collide_take_other_places():
    # two points on one spot (plot 0..10 by 0..10): the first keeps the preferred place, the second takes the next
    # free one; a point at the right edge does not put its label past the plot
    here = [(5.0, 5.0, "first", (5.0, 5.0)), (5.0, 5.0, "second", (5.0, 5.0))]
    assert label_places(here, (0, 10), (0, 10)) == ["top center", "bottom center"]
    (edge,) = label_places([(10.0, 5.0, "a long label at the edge", (5.0, 5.0))], (0, 10), (0, 10))
    assert edge == "middle left"
    # a point whose error bar runs far above and below it: its label goes beside the bar, not on it
    (barred,) = label_places([(5.0, 5.0, "wide bar", (0.0, 10.0))], (0, 10), (0, 10))
    assert barred == "middle right"


def test_a_label_is_placed_where_it_fits_on_every_plot_it_is_drawn_for():
    # at x = 8 of 0..10 a 24-character label (about 162 px) fits above its point on a wide plot (820 px), but on a
    # phone's (250 px) it would run 31 px past the right edge: placed for both, it goes to the point's left
    point = [(8.0, 5.0, "a label of two dozen chr", (5.0, 5.0))]
    assert label_places(point, (0, 10), (0, 10)) == ["top center"]
    assert label_places(point, (0, 10), (0, 10), (PLOT_PIXELS, PHONE_PLOT_PIXELS)) == ["middle left"]


def test_a_label_with_no_free_place_beside_its_crowded_point_stands_apart_with_a_leader_line():
    # the map's three easiest control levels: beside level 1 every place meets level 0's or level 2's marker, bar
    # or label on a wide plot or a phone's; its label goes to the left, apart, where it meets nothing
    cluster = [
        (47.4, 49.4, "level 0", (47.1, 51.7)),
        (45.1, 46.5, "level 1", (43.3, 49.7)),
        (43.3, 40.8, "level 2", (34.9, 46.6)),
    ]
    x_range, y_range = (-16.0, 60.0), (-12.0, 57.0)
    places = label_places(cluster, x_range, y_range, (PLOT_PIXELS, PHONE_PLOT_PIXELS))
    assert isinstance(places[1], tuple) and all(isinstance(place, str) for place in places[::2])
    ax, ay = places[1]
    assert ax < 0 and ay == 0
    for width, height in (PLOT_PIXELS, PHONE_PLOT_PIXELS):  # by hand: pixels with y up, the label 7 x 6.6 + 4 wide
        scale = (width / (x_range[1] - x_range[0]), height / (y_range[1] - y_range[0]))
        px, py = (45.1 - x_range[0]) * scale[0], (46.5 - y_range[0]) * scale[1]
        left, right, low, high = px + ax - 25.1, px + ax + 25.1, py - 7.5, py + 7.5
        assert right < px - 6 and left > 0  # clear of its own marker, inside the plot
        for x, _, _, (bar_low, bar_high) in (cluster[0], cluster[2]):
            qx = (x - x_range[0]) * scale[0]
            bottom, top = ((end - y_range[0]) * scale[1] for end in (bar_low, bar_high))
            assert right < qx - 6 or left > qx + 6 or high < bottom or low > top
    # the shipped map has this cluster: level 1's label stands apart there, drawn as an annotation with its line
    from core.lab.shipped import read_map

    figure = order_map(read_map()[0])
    (annotation,) = figure.layout.annotations
    assert (annotation.text, annotation.showarrow) == ("level 1", True) and annotation.ax < 0
    assert list(figure.data[0].text) == ["level 0", "", "level 2", "level 3"]
    assert figure_problems(json.loads(figure.to_json())) == []
