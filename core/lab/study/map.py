"""The map's data (protocol 3, issue 36): where each task sits between "order has no room" and "order has room",
and what the encoding does there.

    points = map_points(studies, curve)        # one point per real study and per level of the order-dose curve
    map_sentence(points)                        # one plain sentence of what the map shows, from the points alone
    core.lab.figures.study.order_map(points)    # the figure

Each point: tag, what the figure writes beside it ("level 0" for a curve level, the study's number, from 1, for a
real task: longer words ran into each other on a phone, so map_key names the numbers), and label, its full
name; kind ("control level" of the order-dose curve, or "real task"; a control level also lists its
failed_checks, the order-blind checks of core.lab.study.curve it failed); x, the order gap in points
(core.lab.study.order_gap: the best mean accuracy of a model that sees order minus spectrum-LR's), computed from
the runs of each study and of each curve level's study alike; best, the model that gives it; y, the primary
comparison B - B-noPE in points with its 95 % CI (`ci95`) and verdict, as the study (or the curve level) stores
them, by the study's own interval. A study without spectrum-LR or without B vs B-noPE as its primary cannot be
placed: ValueError, naming it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.lab.report import plural
from core.lab.stats.words import amount, with_interval
from core.lab.stats.words import points as signed_points
from core.lab.study.comparisons import PRIMARY
from core.lab.study.order_gap import order_gap

CONTROL, REAL = "control level", "real task"
POINT_KEYS = ("tag", "label", "kind", "x", "y", "ci95", "verdict", "best")
DATASET_NAMES = {"cwru": "CWRU", "spectraquest": "SpectraQuest", "seu": "SEU"}
LOAD_UNITS = {"cwru": " HP", "spectraquest": " %"}
NO_POINTS = "The map has no points: no study with spectrum-LR and B vs B-noPE was given."


def _loads(loads: Sequence[Any], unit: str) -> str:
    """ "0 HP", "0, 2 HP", "1-3 HP" (a run of more than two loads as its first and last)."""
    values = sorted(loads)
    if len(values) > 2:
        return f"{values[0]}-{values[-1]}{unit}"
    return ", ".join(str(v) for v in values) + unit


def study_label(study: Mapping[str, Any]) -> str:
    """A real study's label from its config: "CWRU 0 HP time-cv", "SpectraQuest a2 load-out", "CWRU, trained at
    0 HP, tested at 1-3 HP"."""
    config = study["config"]
    data = config["data"]
    dataset = data.get("dataset") or "synthetic"
    name = DATASET_NAMES.get(dataset, dataset)
    if dataset == "spectraquest" and data.get("channel"):
        name += f" {data['channel']}"
    unit = LOAD_UNITS.get(dataset, "")
    if config.get("train_loads") is not None and config["design"] == "load-out":
        trained = config["train_loads"]
        tested = config.get("test_loads") or sorted(
            {r["load_hp"] for r in study.get("recordings", [])} - set(trained) - {None}
        )
        return f"{name}, trained at {_loads(trained, unit)}, tested at {_loads(tested, unit)}"
    if config["design"] == "time-cv" and data.get("loads"):
        return f"{name} {_loads(data['loads'], unit)} time-cv"
    return f"{name} {config['design']}"


def level_label(level: Mapping[str, Any]) -> str:
    """A curve level's label: "order curve, level 0 (contrast 48 samples)"."""
    contrast = level["parameters"].get("contrast_samples")
    return f"order curve, level {level['level']}" + ("" if contrast is None else f" (contrast {contrast} samples)")


def _point(
    study: Mapping[str, Any], primary: Mapping[str, Any] | None, label: str, tag: str, kind: str
) -> dict[str, Any]:
    gap = order_gap(study)
    if gap is None:
        raise ValueError(f"{label}: no order gap (the study ran no spectrum-LR, or no model that sees order)")
    if primary is None or (primary["a"], primary["b"]) != PRIMARY:
        raise ValueError(f"{label}: its primary comparison is not {PRIMARY[1]} vs {PRIMARY[0]}")
    return {
        "tag": tag,
        "label": label,
        "kind": kind,
        "x": gap["gap"],
        "y": primary["diff"],
        "ci95": primary["ci95"],
        "verdict": primary["verdict"],
        "best": gap["best"],
    }


def _primary(study: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return next((c for c in study.get("comparisons", []) if c.get("primary")), None)


def map_points(
    studies: Sequence[Mapping[str, Any]],
    curve: Mapping[str, Any] | None = None,
    labels: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """The map's points (see the module docstring): the curve's levels first, easiest first, then `studies` in
    their order, each labelled by `labels` (one per study) or study_label."""
    if labels is not None and len(labels) != len(studies):
        raise ValueError(f"give one label per study: {len(labels)} labels for {len(studies)} studies")
    names = list(labels) if labels is not None else [study_label(study) for study in studies]
    levels = [] if curve is None else sorted(curve["levels"], key=lambda level: level["level"])
    points = [
        _point(level["study"], level["primary"], level_label(level), f"level {level['level']}", CONTROL)
        | {"failed_checks": [name for name, ok in level.get("checks", {}).items() if not ok]}
        for level in levels
    ]
    real = [
        _point(study, _primary(study), name, str(i), REAL) for i, (study, name) in enumerate(zip(studies, names), 1)
    ]
    return points + real


def map_key(points: Sequence[Mapping[str, Any]]) -> str:
    """What the real tasks' numbers on the map stand for: "1 CWRU 0 HP time-cv · 2 SpectraQuest a2 load-out"."""
    return " · ".join(f"{p['tag']} {p['label']}" for p in points if p["kind"] == REAL)


def _kinds(points: Sequence[Mapping[str, Any]]) -> str:
    """ "2 control levels and 1 real task"."""
    counts = [(kind, sum(p["kind"] == kind for p in points)) for kind in (CONTROL, REAL)]
    return " and ".join(plural(n, kind) for kind, n in counts if n)


def _span(values: Sequence[float], signed: bool = True) -> str:
    """ "+0.3 points" for one value, "-0.4 to +0.2 points" for several (lowest to highest)."""
    form = signed_points if signed else amount
    low, high = min(values), max(values)
    if len(values) == 1 or form(low) == form(high):
        return f"{form(low)} points"
    return f"{form(low)} to {form(high)} points"


def _verdicts(points: Sequence[Mapping[str, Any]]) -> str:
    """ "2 equivalent, 1 better", verdicts in the order first met."""
    words = list(dict.fromkeys(p["verdict"] for p in points))
    return ", ".join(f"{sum(p['verdict'] == word for p in points)} {word}" for word in words)


def map_sentence(points: Sequence[Mapping[str, Any]]) -> str:
    """What the map shows, in one sentence built from the points alone: where the order gap is at or below 0,
    the range of B - B-noPE there; where it is above 0 and B reads better, by how much B beats B-noPE; where it
    is above 0 and B does not read better, the range there; each with how many points of which kind."""
    if not points:
        return NO_POINTS
    blind = [p for p in points if p["x"] <= 0]
    better = [p for p in points if p["x"] > 0 and p["verdict"] == "better"]
    rest = [p for p in points if p["x"] > 0 and p["verdict"] != "better"]
    clauses = []
    if blind:
        clauses.append(
            f"where the order gap is at or below 0 ({_kinds(blind)}), B - B-noPE is "
            f"{_span([p['y'] for p in blind])} ({_verdicts(blind)})"
        )
    if better:
        clauses.append(
            f"where order has room and B reads better ({_kinds(better)}, order gap {_span([p['x'] for p in better])}"
            f"), B beats B-noPE by {_span([p['y'] for p in better], signed=False)}"
        )
    if rest:
        clauses.append(
            f"where order has room but B does not read better ({_kinds(rest)}, order gap "
            f"{_span([p['x'] for p in rest])}), B - B-noPE is {_span([p['y'] for p in rest])} ({_verdicts(rest)})"
        )
    return "On the map, " + "; ".join(clauses) + "."


MAP_TABLE_HEADER = (
    "| on the map | task | kind | order gap, points (the best model that sees order) | B − B-noPE, points (95 % CI) "
    "| verdict |\n|---|---|---|---|---|---|"
)


def map_table(points: Sequence[Mapping[str, Any]]) -> str:
    """The map's points as a markdown table, one row per point in the map's order (the README shows it under the
    map, and a test compares it with the shipped files)."""
    rows = [
        f"| {p['tag']} | {p['label']} | {p['kind']} | {signed_points(p['x'])} ({p['best']}) "
        f"| {with_interval(p['y'], p['ci95'])} | {p['verdict']} |"
        for p in points
    ]
    return "\n".join([MAP_TABLE_HEADER, *rows])
